"""Readers for the human-judgment data sets used in meta-evaluation.

The data are read at run time from a folder and never shipped with the package
(``data_file``: an explicit folder, else ``$NLGSCORE_DATA``, else the per-user folder
``$XDG_DATA_HOME/nlgscore`` or ``~/.cache/nlgscore/data``; never a path inside the installed
package). Formats:

* ``wmt-<lp>.jsonl``: WMT19 daRR pairs, ``{id, lp, src, ref, better: {system, text}, worse:
  {system, text}}`` (COMET's relative-ranks version, as in the BARTScore paper).
* ``sum-summeval.jsonl``: ``{id, src, refs, systems: {name: {text, scores: {aspect: x}}}}``.
* WMT21 folders ``wmt21-<xx>-en``: read by ``nlgscore.meta.data.wmt21.load_wmt21``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

import numpy as np

from nlgscore import envs
from nlgscore.errors import DataError
from nlgscore.meta.data.files import read_lines

PathLike = Union[str, "os.PathLike[str]"]


def default_data_dir() -> Path:
    """The data folder used when none is given, and nothing else.

    ``$NLGSCORE_DATA`` if set; else ``$XDG_DATA_HOME/nlgscore`` if ``XDG_DATA_HOME`` is set;
    else ``~/.cache/nlgscore/data``.

    >>> isinstance(default_data_dir(), Path)
    True
    """
    return _default_data_dir()[0]


def _default_data_dir() -> Tuple[Path, str]:
    env = envs.DATA.get()
    if env is not None:
        return env, "$NLGSCORE_DATA"
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser() / "nlgscore", "$XDG_DATA_HOME/nlgscore; NLGSCORE_DATA is not set"
    return Path.home() / ".cache" / "nlgscore" / "data", "the per-user default; NLGSCORE_DATA is not set"


def data_file(name: str, data_dir: Optional[PathLike] = None) -> Path:
    """Path of data file or folder ``name`` in ``data_dir`` (default: ``default_data_dir()``).

    A missing one is a FileNotFoundError that says where it looked and how to point elsewhere.

    >>> data_file("README.md", ".").name
    'README.md'
    """
    if data_dir is not None:
        folder, origin = Path(data_dir), "the folder given"
    else:
        folder, origin = _default_data_dir()
    path = folder / name
    if not path.exists():
        raise FileNotFoundError(
            f"data set {name!r} not found: looked in {folder} ({origin}); pass the data folder "
            "(--data / data_dir=) or set NLGSCORE_DATA"
        )
    return path


def _require(record: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(record, Mapping) or key not in record:
        raise DataError(f"{where}: missing field {key!r}")
    return record[key]


def _text(record: Mapping[str, Any], key: str, where: str) -> str:
    """Field ``key`` of ``record`` as a text: a null or a number is a DataError naming ``where``."""
    value = _require(record, key, where)
    if not isinstance(value, str):
        raise DataError(f"{where}: field {key!r} must be a string, got {value!r}")
    return value


def _human_score(value: Any, where: str) -> float:
    """A human score: a finite number (not a bool, a text, NaN or infinity); DataError naming ``where``.

    >>> _human_score(3, "f.jsonl:2")
    3.0
    >>> _human_score("high", "f.jsonl:2")
    Traceback (most recent call last):
    ...
    nlgscore.errors.DataError: f.jsonl:2: human score must be a number, got 'high'
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"{where}: human score must be a number, got {value!r}")
    if not math.isfinite(value):
        raise DataError(f"{where}: human score is {value!r} (NaN or infinite)")
    return float(value)


def _jsonl(path: PathLike) -> Iterator[Tuple[str, Dict[str, Any]]]:
    # The text-file rule of nlgscore.meta.data.files: UTF-8, a leading BOM dropped, other encodings named.
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{where}: not valid JSON ({err.msg})") from None


@dataclass
class DarrData:
    """daRR pairs as parallel lists (one entry per pair)."""

    lp: str
    src: List[str] = field(default_factory=list)
    ref: List[str] = field(default_factory=list)
    better: List[str] = field(default_factory=list)
    worse: List[str] = field(default_factory=list)
    better_system: List[str] = field(default_factory=list)
    worse_system: List[str] = field(default_factory=list)
    ids: List[str] = field(default_factory=list)  # the file's pair ids, as strings

    def __len__(self) -> int:
        return len(self.ref)

    def head(self, limit: Optional[int]) -> "DarrData":
        """The first ``limit`` pairs (all when None), for quick runs."""
        if limit is None:
            return self
        return DarrData(self.lp, *(getattr(self, f)[:limit] for f in _DARR_LISTS))


_DARR_LISTS = ("src", "ref", "better", "worse", "better_system", "worse_system", "ids")


def load_darr(path: PathLike) -> DarrData:
    """Read a ``wmt-<lp>.jsonl`` daRR file; ValueError naming file and line on a bad record."""
    data: Optional[DarrData] = None
    for where, record in _jsonl(path):
        lp = _require(record, "lp", where)
        if data is None:
            data = DarrData(lp)
        elif lp != data.lp:
            raise DataError(f"{where}: language pair {lp!r} differs from {data.lp!r}")
        data.ids.append(str(record.get("id", len(data.ids))))
        data.src.append(_text(record, "src", where))
        data.ref.append(_text(record, "ref", where))
        for side in ("better", "worse"):
            entry = _require(record, side, where)
            getattr(data, side).append(_text(entry, "text", f"{where} ({side})"))
            getattr(data, f"{side}_system").append(_require(entry, "system", f"{where} ({side})"))
    if data is None:
        raise DataError(f"{path}: no daRR pairs")
    return data


def darr_path(lp: str, data_dir: Optional[PathLike] = None) -> Path:
    """Path of the daRR file of language pair ``lp`` in ``data_dir`` (default data folder).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "wmt-kk-en.jsonl").write_text("")
    >>> darr_path("kk-en", folder).name
    'wmt-kk-en.jsonl'
    >>> darr_path("xx-en", folder)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    FileNotFoundError: data set 'wmt-xx-en.jsonl' not found: looked in ... (the folder given);
    pass the data folder (--data / data_dir=) or set NLGSCORE_DATA
    """
    return data_file(f"wmt-{lp}.jsonl", data_dir)


@dataclass
class SummaryData:
    """Per-document texts and human scores of a fixed set of systems.

    ``texts[d][s]`` is system ``systems[s]``'s summary of document ``d``;
    ``human[aspect]`` is a ``(documents, systems)`` array.
    """

    ids: List[str]
    srcs: List[str]
    refs: List[List[str]]
    systems: List[str]
    texts: List[List[str]]
    human: Dict[str, np.ndarray]


def _references(record: Mapping[str, Any], where: str) -> List[str]:
    refs = _require(record, "refs", where)
    if isinstance(refs, str) or not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
        raise DataError(f"{where}: refs must be a non-empty list of reference texts, got {refs!r}")
    return refs


def load_summeval(path: PathLike) -> SummaryData:
    """Read ``sum-summeval.jsonl``: every document must have the same systems and aspects."""
    ids, srcs, refs, texts = [], [], [], []
    scores: Dict[str, List[List[float]]] = {}
    systems: Optional[List[str]] = None
    for where, record in _jsonl(path):
        outputs = _require(record, "systems", where)
        if systems is None:
            systems = sorted(outputs)
        elif sorted(outputs) != systems:
            raise DataError(f"{where}: systems differ from the first document's {systems}")
        ids.append(str(_require(record, "id", where)))
        srcs.append(_text(record, "src", where))
        refs.append(_references(record, where))
        row_texts: List[str] = []
        row_scores: Dict[str, List[float]] = {}
        for name in systems:
            entry, at = outputs[name], f"{where} (system {name})"
            row_texts.append(_text(entry, "text", at))
            for aspect, value in _require(entry, "scores", at).items():
                row_scores.setdefault(aspect, []).append(_human_score(value, f"{at}, {aspect}"))
        if scores and set(row_scores) != set(scores):
            raise DataError(f"{where}: aspects {sorted(row_scores)} differ from {sorted(scores)}")
        for aspect, values in row_scores.items():
            if len(values) != len(systems):
                raise DataError(f"{where}: aspect {aspect!r} is not scored for every system")
            scores.setdefault(aspect, []).append(values)
        texts.append(row_texts)
    if systems is None:
        raise DataError(f"{path}: no documents")
    human = {aspect: np.array(rows) for aspect, rows in scores.items()}
    return SummaryData(ids, srcs, refs, systems, texts, human)
