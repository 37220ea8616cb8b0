"""Corpora of any size: read lazily, scored window by window, written resumably.

* :mod:`nlgscore.runs.stream.readers`: text files, JSONL, TSV/CSV, Parquet and 🤗 ``datasets``
  (``streaming=True`` included) as row iterators with a file identity (size + SHA-256);
* :mod:`nlgscore.runs.stream.row_windows`: :func:`score_stream`, per-item score rows in input order,
  one ``compute`` call per window of rows (memory bounded by the window);
* :mod:`nlgscore.runs.stream.to_file`: :func:`score_to_file`, the same into a TSV/JSONL file that a
  re-run resumes after a kill (:mod:`nlgscore.runs.outputs.resumable` does the checkpointing).
"""

from importlib import import_module
from typing import Any

# name -> module: imported on first use, so the CLI's parser can read DEFAULT_WINDOW cheaply
_LAZY = {
    "Inputs": "readers", "dataset": "readers", "lists": "readers", "table_file": "readers", "text_files": "readers",
    "Summary": "to_file", "score_to_file": "to_file",
    "DEFAULT_WINDOW": "windows", "score_stream": "windows", "score_windows": "windows",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlgscore.runs.stream' has no attribute {name!r}")
    return getattr(import_module(f"nlgscore.runs.stream.{_LAZY[name]}"), name)
