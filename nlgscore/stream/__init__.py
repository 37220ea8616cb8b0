"""Corpora of any size: read lazily, scored window by window, written resumably.

The readers give a corpus as rows with a file identity (size + SHA-256): :func:`text_files`
(one text per line), :func:`table_file` (JSONL, TSV/CSV, Parquet), :func:`dataset` (a 🤗
``datasets`` split, ``streaming=True`` included) and :func:`lists`. :func:`score_stream` yields
per-item score rows in input order, one ``compute`` call per window of rows (memory bounded by
the window); :func:`score_to_file` writes them to a TSV/JSONL file that a re-run resumes after a
kill.

>>> import os, tempfile
>>> import nlgscore
>>> from nlgscore.stream import lists, score_stream, score_to_file
>>> scorer = nlgscore.load("chrf")
>>> corpus = lists(["The cat sat.", "It rains."], ["A cat sat.", "It is raining."])
>>> [round(row["score"], 2) for row in score_stream(scorer, corpus, window=1)]
[74.06, 24.11]
>>> out = os.path.join(tempfile.mkdtemp(), "scores.tsv")
>>> score_to_file(scorer, corpus, out).items, open(out).readline().split()
(2, ['score'])

Internal modules (paths may change): ``readers.py`` (the readers), ``row_windows.py`` (windows of
rows -> compute calls), ``to_file.py`` (the resumable file, on the one driver of
:mod:`nlgscore.corpus.outputs`).
"""

from importlib import import_module
from typing import Any

# name -> module: imported on first use, so the CLI's parser can read DEFAULT_WINDOW cheaply
_LAZY = {
    "Inputs": "readers",
    "dataset": "readers",
    "lists": "readers",
    "table_file": "readers",
    "text_files": "readers",
    "Summary": "to_file",
    "score_to_file": "to_file",
    "DEFAULT_WINDOW": "row_windows",
    "score_stream": "row_windows",
    "score_windows": "row_windows",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlgscore.stream' has no attribute {name!r}")
    value = getattr(import_module(f"nlgscore.stream.{_LAZY[name]}"), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
