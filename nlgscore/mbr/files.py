"""The files of ``nlgscore mbr``: JSONL items in, JSONL choices and ``.npz`` utility matrices out.

Input, one JSON object a line (blank lines are skipped)::

    {"id": "s1", "source": "...", "candidates": ["...", "..."], "pseudo_references": ["...", "..."]}

``source`` and ``pseudo_references`` are optional. Output, one line per item in input order:
``{"id", "best", "best_index", "expected_utility"}``. Matrices go to one ``.npz`` keyed by id
(``str(id)``), written through per-chunk part files so that a resumed run keeps the finished ones.

>>> import json, tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> path = folder / "items.jsonl"
>>> _ = path.write_text(json.dumps({"id": 7, "candidates": ["a", "b"]}) + "\\n\\n")
>>> items, digest = read_items(str(path))
>>> items[0].id, items[0].candidates, len(digest)
(7, ['a', 'b'], 64)
>>> _ = path.write_text('{"id": 1, "candidates": "a"}\\n')
>>> read_items(str(path))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nlgscore.errors.DataError: .../items.jsonl:1: item 1: candidates must be a list of ..., got str
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from nlgscore.corpus.outputs.jsonl import json_records
from nlgscore.errors import DataError, NlgscoreError
from nlgscore.mbr.items import MBRItem, as_items

STDIN = "-"
FIELDS = ("id", "source", "candidates", "pseudo_references")


def read_items(path: str) -> Tuple[List[MBRItem], str]:
    """The items of a JSONL file (``-``: stdin) and the SHA-256 of its bytes (for resume checks).

    Each error is a :class:`DataError` naming ``file:line``.
    """
    if path == STDIN:
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        # A named pipe or a process substitution (/dev/fd/63) is read once like a file: the items
        # are held whole anyway, and their bytes' SHA-256 is what a resume checks.
        if not Path(path).exists():
            raise DataError(f"input file not found: {path}")
        if Path(path).is_dir():
            raise DataError(f"{path} is a folder, not a JSONL file of items")
        data, name = Path(path).read_bytes(), path
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataError(f"{name} is not UTF-8: byte {err.start} cannot be decoded") from None
    items: List[MBRItem] = []
    for where, record in json_records(text.split("\n"), name):
        unknown = sorted(set(record) - set(FIELDS))
        if unknown:
            raise DataError(
                f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; fields are {', '.join(FIELDS)}"
            )
        for field in ("id", "candidates"):
            if record.get(field) is None:
                raise DataError(f"{where}: {field!r} is required")
        try:
            items.append(
                MBRItem(record["candidates"], record.get("pseudo_references"), record.get("source"), record["id"])
            )
        except NlgscoreError as err:
            raise DataError(f"{where}: {err}") from None
    try:
        as_items(items)  # ids unique
    except NlgscoreError as err:
        raise DataError(f"{name}: {err}") from None
    return items, hashlib.sha256(data).hexdigest()


def jsonl_rows(choices: Sequence[Any]) -> str:
    """The output lines of ``choices`` (each ending in a newline)."""
    return "".join(json.dumps(choice.to_dict(), ensure_ascii=False) + "\n" for choice in choices)


def parts_folder(matrix_out: str) -> Path:
    """Where the per-chunk matrices of ``--matrix-out`` wait until the run finishes."""
    path = Path(matrix_out)
    return path.with_name(path.name + ".parts")


def save_part(matrix_out: str, start: int, choices: Sequence[Any]) -> None:
    """The matrices of one chunk (items from ``start``), written atomically."""
    folder = parts_folder(matrix_out)
    folder.mkdir(exist_ok=True)
    _save_npz(_part(matrix_out, start), {str(c.id): c.matrix for c in choices})


def check_part(matrix_out: str, start: int, ids: Sequence[str]) -> None:
    """Refuse a part (the chunk of items from ``start``) that is missing or does not hold
    exactly the matrices of ``ids``: a resume must not finish with matrices missing."""
    path = _part(matrix_out, start)
    span = f"items {start + 1}-{start + len(ids)}"
    try:
        with np.load(path) as arrays:
            keys = set(arrays.files)
    except FileNotFoundError:
        raise DataError(f"the matrices of {span} ({path}) are missing (was {path.parent} deleted?)") from None
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise DataError(f"the matrices of {span} ({path}) are unreadable ({err})") from None
    if keys != set(ids):
        missing = sorted(set(ids) - keys)
        raise DataError(
            f"{path} should hold the matrices of {span}, ids {sorted(ids)[:5]}...; missing {missing[:5]}, "
            f"unexpected {sorted(keys - set(ids))[:5]}"
        )


def merge_parts(matrix_out: str, parts: Sequence[Tuple[int, Sequence[str]]]) -> None:
    """Join ``parts`` (each its first item's number and its ids), each checked by
    :func:`check_part`, into ``matrix_out`` (atomic). The parts stay until the caller has
    published its output too (a kill in between merges them again)."""
    merged: Dict[str, np.ndarray] = {}
    for start, ids in parts:
        check_part(matrix_out, start, ids)
        with np.load(_part(matrix_out, start)) as arrays:
            merged.update((key, arrays[key]) for key in arrays.files)
    _save_npz(Path(matrix_out), merged)


def _part(matrix_out: str, start: int) -> Path:
    return parts_folder(matrix_out) / f"{start:012d}.npz"


def _save_npz(path: Path, arrays: Dict[str, np.ndarray]) -> None:
    """``np.savez`` layout (one ``KEY.npy`` per array) written by hand: ``np.savez(**arrays)``
    would break on an id named ``file`` or ``allow_pickle``."""
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in arrays.items():
            with archive.open(key + ".npy", "w", force_zip64=True) as handle:
                np.lib.format.write_array(handle, np.asarray(array), allow_pickle=False)
    os.replace(tmp, path)
