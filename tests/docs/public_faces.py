"""The public faces the documentation is written against, and which of them this tree lacks.

The pages and the API reference import only these names. While a face is missing from the tree
(a checkout older than the faces), the pages that use it cannot run and the site cannot build: the
tests say so by name instead of failing on an import.
"""

from __future__ import annotations

import importlib
import re

FACES = {
    "nlgscore": ("load", "Result", "Signature", "evaluate_module", "bertscore", "map_function", "compute_metrics",
                 "NlgscoreError", "ArgumentError", "ArgumentTypeError", "DataError", "__version__"),
    "nlgscore.mbr": ("decode", "decode_to_file", "MBRItem"),
    "nlgscore.stream": ("score_stream", "score_to_file", "table_file", "text_files", "dataset"),
    "nlgscore.serve": ("create_app", "RemoteScorer", "MicroBatcher", "freeze_heap"),
    "nlgscore.meta": ("tasks", "EvalSet", "run"),
    "nlgscore.extend": ("Scorer", "Call", "Item", "run_batches", "resolve", "tables"),
}


def lacking(module: str, name: str) -> bool:
    try:
        return not hasattr(importlib.import_module(module), name)
    except ImportError:
        return True


def missing(code: str | None = None) -> list[str]:
    """The face names ``code`` uses (every face name when None) that this tree does not have."""
    gone = []
    for module, names in FACES.items():
        for name in names:
            used = code is None or re.search(rf"\b{re.escape(module)}\.{re.escape(name)}\b", code) or (
                module != "nlgscore" and re.search(rf"from {re.escape(module)} import [^\n]*\b{re.escape(name)}\b", code))
            if used and lacking(module, name):
                gone.append(f"{module}.{name}")
    return gone
