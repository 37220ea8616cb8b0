"""Precomputed metric scores from files, so any metric can be meta-evaluated without nlgscore
running it (``nlgscore meta ... --scores NAME=FILE``; ``scores={name: path}`` in the task API).

Formats (one item per line; every item of the data set exactly once):

* WMT19 daRR: JSONL ``{"id": <pair id of the data file>, "better": <score>, "worse": <score>}``.
* WMT21: TSV ``system<TAB>line<TAB>score`` (``line`` 1-based in the text files, ``system`` as in
  the ``hyp.<system>.en`` file name, ``HUMAN`` for the human translation), every line of every
  evaluated system; optionally a system-level TSV ``system<TAB>score`` (``NAME=SEG.tsv,SYS.tsv``),
  else the system score is the mean of the segment scores.
* SummEval: JSONL ``{"id": <document id>, "system": <name>, "score": <score>}``.

Missing or extra items, NaN, non-numbers and duplicate keys are ValueErrors naming the file, the
line and the key.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import (
    Any,
    Dict,
    Hashable,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy as np

from nlgscore.corpus.outputs.jsonl import json_records
from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError
from nlgscore.meta.data.files import read_lines

PathLike = Union[str, "os.PathLike[str]"]
Item = Tuple[str, Any, Any]  # (where, key: a hashable, values: a sequence of numbers)


def parse_scores_option(values: Iterable[str]) -> Dict[str, str]:
    """``["NAME=FILE", ...]`` as ``{NAME: FILE}``; ValueError on a bad or repeated NAME.

    >>> parse_scores_option(["mine=scores.jsonl"])
    {'mine': 'scores.jsonl'}
    """
    out: Dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise ArgumentError(f"--scores takes NAME=FILE, got {value!r}")
        if name in out:
            raise ArgumentError(f"--scores name {name!r} is given twice")
        out[name] = path
    return out


def segment_and_system(name: str, value: object) -> Tuple[PathLike, Optional[PathLike]]:
    """A ``scores`` entry with system scores: ``(segment file, system file or None)``.

    Takes a path, ``"SEG,SYS"``, or a tuple/list of one or two paths; anything else is an
    ArgumentTypeError naming ``scores[name]``.

    >>> segment_and_system("mine", "seg.tsv,sys.tsv"), segment_and_system("mine", ("seg.tsv",))
    (('seg.tsv', 'sys.tsv'), ('seg.tsv', None))
    >>> segment_and_system("mine", ("a", "b", "c"))  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentTypeError: scores['mine'] must be a score file, 'SEG,SYS' or a (segment file, system file) pair,
    got ('a', 'b', 'c')
    """
    if isinstance(value, (str, os.PathLike)):
        if isinstance(value, str) and "," in value:
            seg, system = value.split(",", 1)
            return seg, system
        return value, None
    paths = tuple(value) if isinstance(value, (tuple, list)) else ()
    if 1 <= len(paths) <= 2 and all(isinstance(p, (str, os.PathLike)) for p in paths):
        return paths[0], paths[1] if len(paths) == 2 else None
    raise ArgumentTypeError(
        f"scores[{name!r}] must be a score file, 'SEG,SYS' or a (segment file, system file) pair, got {value!r}"
    )


def _text_lines(path: Path) -> Iterator[Tuple[str, str]]:
    if not path.is_file():
        raise FileNotFoundError(f"scores file not found: {path}")
    for number, line in enumerate(read_lines(path, "scores file"), start=1):
        if line.strip():
            yield f"{path}:{number}", line


def _json_items(path: Path, key_fields: Sequence[str], value_fields: Sequence[str]) -> Iterator[Item]:
    if not path.is_file():
        raise FileNotFoundError(f"scores file not found: {path}")
    for where, record in json_records(read_lines(path, "scores file"), str(path)):
        missing = [f for f in (*key_fields, *value_fields) if f not in record]
        if missing:
            raise DataError(f"{where}: missing field(s) {missing}")
        key = tuple(str(record[f]) for f in key_fields)
        yield where, key[0] if len(key) == 1 else key, tuple(record[f] for f in value_fields)


def _tsv_items(path: Path, n_keys: int) -> Iterator[Item]:
    for where, line in _text_lines(path):
        fields = line.split("\t")
        if len(fields) != n_keys + 1:
            raise DataError(f"{where}: expected {n_keys + 1} tab-separated fields, got {len(fields)}")
        key = tuple(fields[:n_keys])
        yield where, key[0] if n_keys == 1 else key, (fields[-1],)


def _number(value: object, where: str, key: Hashable) -> float:
    if isinstance(value, bool):
        raise DataError(f"{where}: score of {key!r} is not a number: {value!r}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataError(f"{where}: score of {key!r} is not a number: {value!r}") from None
    if not math.isfinite(number):
        raise DataError(f"{where}: score of {key!r} is {value} (NaN or infinite)")
    return number


def collect(path: PathLike, items: Iterable[Item], expected: Mapping[Any, int]) -> List[Tuple[float, ...]]:
    """Scores of every expected key, in ``expected``'s index order; errors name file, line and key.

    ``expected`` maps each key to its position. Keys outside it are extra items.
    """
    found: List[Optional[Tuple[float, ...]]] = [None] * len(expected)
    first_seen: Dict[Hashable, str] = {}
    for where, key, values in items:
        if key not in expected:
            raise DataError(f"{where}: unknown item {key!r} (not in the data set)")
        if key in first_seen:
            raise DataError(f"{where}: duplicate item {key!r} (first at {first_seen[key].rsplit(':', 1)[-1]})")
        first_seen[key] = where
        found[expected[key]] = tuple(_number(v, where, key) for v in values)
    missing = [key for key, i in expected.items() if found[i] is None]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise DataError(
            f"{path}: no score for {', '.join(repr(k) for k in missing[:3])}{more} "
            f"({len(missing)} of {len(expected)} items missing)"
        )
    return found  # type: ignore[return-value]


def _index(keys: Iterable[Hashable], what: str) -> Dict[Hashable, int]:
    index: Dict[Hashable, int] = {}
    for key in keys:
        if key in index:
            raise DataError(f"the data set has the {what} {key!r} twice: its items cannot be keyed")
        index[key] = len(index)
    return index


def read_darr_scores(path: PathLike, ids: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """``(better, worse)`` score arrays in the order of the data file's pair ``ids``.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = f.write_text('{"id": 1, "better": 0.5, "worse": 0.2}\\n{"id": 0, "better": 1, "worse": 2}\\n')
    >>> [a.tolist() for a in read_darr_scores(f, ["0", "1"])]
    [[1.0, 0.5], [2.0, 0.2]]
    """
    path = Path(path)
    values = collect(path, _json_items(path, ("id",), ("better", "worse")), _index(ids, "pair id"))
    return np.array([v[0] for v in values]), np.array([v[1] for v in values])


def read_wmt21_scores(path: PathLike, systems: Sequence[str], n_lines: int, ignored: Iterable[str] = ()) -> np.ndarray:
    """``(systems, n_lines)`` scores from ``system<TAB>line<TAB>score`` rows.

    Rows of ``ignored`` systems (in the folder but not evaluated, such as ``HUMAN``) are skipped.
    """
    path = Path(path)
    expected = {(s, str(line)): i * n_lines + line - 1 for i, s in enumerate(systems) for line in range(1, n_lines + 1)}
    skip = set(ignored) - set(systems)
    items = (item for item in _tsv_items(path, 2) if item[1][0] not in skip)
    values = collect(path, items, expected)
    return np.array([v[0] for v in values]).reshape(len(systems), n_lines)


def read_system_scores(path: PathLike, systems: Sequence[str], ignored: Iterable[str] = ()) -> np.ndarray:
    """One score per system from ``system<TAB>score`` rows, in the order of ``systems``."""
    path = Path(path)
    skip = set(ignored) - set(systems)
    items = (item for item in _tsv_items(path, 1) if item[1] not in skip)
    values = collect(path, items, _index(systems, "system"))
    return np.array([v[0] for v in values])


def read_summeval_scores(path: PathLike, doc_ids: Sequence[str], systems: Sequence[str]) -> np.ndarray:
    """``(documents, systems)`` scores from ``{"id", "system", "score"}`` lines."""
    path = Path(path)
    _index(doc_ids, "document id")
    expected = {(d, s): i * len(systems) + j for i, d in enumerate(doc_ids) for j, s in enumerate(systems)}
    values = collect(path, _json_items(path, ("id", "system"), ("score",)), expected)
    return np.array([v[0] for v in values]).reshape(len(doc_ids), len(systems))
