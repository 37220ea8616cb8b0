"""Readers for the human-judgment data sets used in meta-evaluation.

The data are read at run time from a folder (``$NLGSCORE_DATA``, else ``../shared/data``
next to the repository) and never shipped with the package. Formats:

* ``wmt-<lp>.jsonl``: WMT19 daRR pairs, ``{id, lp, src, ref, better: {system, text}, worse:
  {system, text}}`` (COMET's relative-ranks version, as in the BARTScore paper).
* ``sum-summeval.jsonl``: ``{id, src, refs, systems: {name: {text, scores: {aspect: x}}}}``.
* ``d2t-bagel.jsonl``: ``{id, src, refs, text, scores: {aspect: x}}``.
* WMT21 folder: ``src.<sl>``, ``ref.A.<tl>``, ``hyp.<SYSTEM>.<tl>`` (one segment a line) and
  space-separated ``da-seg-scores.csv`` (``SYS SID RAW.SCR Z.SCR N``, SID 1-based) and
  ``da-sys-scores.csv`` (same names, columns in any order).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

PathLike = Union[str, "os.PathLike[str]"]

# WMT21 DA files name a system by its submission name plus ".<submission id>"; the system
# output files use the team name. Only names that differ are listed; an unknown name is an
# error rather than a silently dropped system. HUMAN is the second human translation
# (reference B), judged like a system against reference A.
WMT21_SYSTEM_FILES: Dict[str, Dict[str, str]] = {
    "de-en": {"Nemo": "hyp.NVIDIA-NeMo", "HUMAN": "ref.B"},
}


def default_data_dir() -> Path:
    """``$NLGSCORE_DATA`` if set, else ``../shared/data`` relative to the repository root.

    >>> isinstance(default_data_dir(), Path)
    True
    """
    env = os.environ.get("NLGSCORE_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _require(record: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(record, Mapping) or key not in record:
        raise ValueError(f"{where}: missing field {key!r}")
    return record[key]


def _jsonl(path: PathLike) -> Iterator[Tuple[str, Dict[str, Any]]]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{where}: not valid JSON ({err.msg})") from None


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

    def __len__(self) -> int:
        return len(self.ref)

    def head(self, limit: Optional[int]) -> "DarrData":
        """The first ``limit`` pairs (all when None), for quick runs."""
        if limit is None:
            return self
        return DarrData(self.lp, *(getattr(self, f)[:limit] for f in _DARR_LISTS))


_DARR_LISTS = ("src", "ref", "better", "worse", "better_system", "worse_system")


def load_darr(path: PathLike) -> DarrData:
    """Read a ``wmt-<lp>.jsonl`` daRR file; ValueError naming file and line on a bad record."""
    data: Optional[DarrData] = None
    for where, record in _jsonl(path):
        lp = _require(record, "lp", where)
        if data is None:
            data = DarrData(lp)
        elif lp != data.lp:
            raise ValueError(f"{where}: language pair {lp!r} differs from {data.lp!r}")
        data.src.append(_require(record, "src", where))
        data.ref.append(_require(record, "ref", where))
        for side in ("better", "worse"):
            entry = _require(record, side, where)
            getattr(data, side).append(_require(entry, "text", f"{where} ({side})"))
            getattr(data, f"{side}_system").append(_require(entry, "system", f"{where} ({side})"))
    if data is None:
        raise ValueError(f"{path}: no daRR pairs")
    return data


def darr_path(lp: str, data_dir: Optional[PathLike] = None) -> Path:
    """Path of the daRR file of language pair ``lp`` in ``data_dir`` (default data folder)."""
    return Path(data_dir or default_data_dir()) / f"wmt-{lp}.jsonl"


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
            raise ValueError(f"{where}: systems differ from the first document's {systems}")
        ids.append(str(_require(record, "id", where)))
        srcs.append(_require(record, "src", where))
        refs.append(list(_require(record, "refs", where)))
        row_texts, row_scores = [], {}
        for name in systems:
            entry = outputs[name]
            row_texts.append(_require(entry, "text", f"{where} (system {name})"))
            for aspect, value in _require(entry, "scores", f"{where} (system {name})").items():
                row_scores.setdefault(aspect, []).append(float(value))
        if scores and set(row_scores) != set(scores):
            raise ValueError(f"{where}: aspects {sorted(row_scores)} differ from {sorted(scores)}")
        for aspect, values in row_scores.items():
            if len(values) != len(systems):
                raise ValueError(f"{where}: aspect {aspect!r} is not scored for every system")
            scores.setdefault(aspect, []).append(values)
        texts.append(row_texts)
    if systems is None:
        raise ValueError(f"{path}: no documents")
    human = {aspect: np.array(rows) for aspect, rows in scores.items()}
    return SummaryData(ids, srcs, refs, systems, texts, human)


@dataclass
class Data2TextData:
    """Data-to-text samples: one output each, several references, human scores per aspect."""

    ids: List[str]
    srcs: List[str]
    refs: List[List[str]]
    texts: List[str]
    human: Dict[str, np.ndarray]


def load_bagel(path: PathLike) -> Data2TextData:
    """Read ``d2t-bagel.jsonl``."""
    ids, srcs, refs, texts = [], [], [], []
    scores: Dict[str, List[float]] = {}
    for where, record in _jsonl(path):
        ids.append(str(_require(record, "id", where)))
        srcs.append(_require(record, "src", where))
        refs.append(list(_require(record, "refs", where)))
        texts.append(_require(record, "text", where))
        aspects = _require(record, "scores", where)
        if scores and set(aspects) != set(scores):
            raise ValueError(f"{where}: aspects {sorted(aspects)} differ from {sorted(scores)}")
        for aspect, value in aspects.items():
            scores.setdefault(aspect, []).append(float(value))
    if not ids:
        raise ValueError(f"{path}: no samples")
    return Data2TextData(ids, srcs, refs, texts, {a: np.array(v) for a, v in scores.items()})


@dataclass
class Wmt21Data:
    """One WMT21 language pair: texts and DA scores keyed by output-file system name.

    ``seg_raw[s]`` / ``seg_z[s]`` are arrays over segments with NaN where system ``s`` has
    no DA judgment; ``sys_raw`` / ``sys_z`` hold the official system scores.
    """

    lp: str
    src: List[str]
    ref: List[str]
    hyps: Dict[str, List[str]]
    seg_raw: Dict[str, np.ndarray]
    seg_z: Dict[str, np.ndarray]
    sys_raw: Dict[str, float]
    sys_z: Dict[str, float]


def wmt21_system_file(da_name: str, lp: str, target: str) -> str:
    """File name of the outputs of a DA-file system (``UF.15`` -> ``hyp.UF.en``).

    >>> wmt21_system_file("Nemo.7", "de-en", "en")
    'hyp.NVIDIA-NeMo.en'
    """
    base = da_name.rsplit(".", 1)[0] if "." in da_name else da_name
    stem = WMT21_SYSTEM_FILES.get(lp, {}).get(base, f"hyp.{base}")
    return f"{stem}.{target}"


def _read_table(path: Path, required: Sequence[str]) -> List[Tuple[str, Dict[str, str]]]:
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise ValueError(f"{path}: empty file")
    header = lines[0].split()
    missing = [c for c in required if c not in header]
    if missing:
        raise ValueError(f"{path}:1: header lacks column(s) {missing}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        values = line.split()
        if len(values) < len(header):
            raise ValueError(f"{path}:{number}: expected {len(header)} fields, got {len(values)}")
        rows.append((f"{path}:{number}", dict(zip(header, values))))
    return rows


def _number(value: str, where: str, column: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{where}: {column} is not a number: {value!r}") from None


def _lines(path: Path) -> List[str]:
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    # split("\n"), not splitlines(): segments may contain U+2028 and similar separators.
    text = path.read_text(encoding="utf-8")
    return text[:-1].split("\n") if text.endswith("\n") else (text.split("\n") if text else [])


def load_wmt21(folder: PathLike, lp: str = "de-en", reference: str = "A") -> Wmt21Data:
    """Read a WMT21 to-English folder (texts + DA), keyed by DA system name without suffix.

    Every DA system must map to an existing output file (``WMT21_SYSTEM_FILES`` lists the
    names that differ); SIDs must lie within the segment count.
    """
    folder = Path(folder)
    source_lang, target_lang = lp.split("-")
    src = _lines(folder / f"src.{source_lang}")
    ref = _lines(folder / f"ref.{reference}.{target_lang}")
    if len(src) != len(ref):
        raise ValueError(f"{folder}: src has {len(src)} lines but ref.{reference} has {len(ref)}")
    n = len(src)
    hyps: Dict[str, List[str]] = {}
    seg_raw: Dict[str, np.ndarray] = {}
    seg_z: Dict[str, np.ndarray] = {}

    def system_of(da_name: str, where: str) -> str:
        name = da_name.rsplit(".", 1)[0] if "." in da_name else da_name
        if name in hyps:
            return name
        file_name = wmt21_system_file(da_name, lp, target_lang)
        if not (folder / file_name).is_file():
            raise ValueError(
                f"{where}: DA system {da_name!r} has no output file {file_name} in {folder}; "
                "add its name to WMT21_SYSTEM_FILES"
            )
        hyps[name] = _lines(folder / file_name)
        if len(hyps[name]) != n:
            raise ValueError(f"{folder / file_name}: {len(hyps[name])} lines, expected {n}")
        seg_raw[name], seg_z[name] = np.full(n, np.nan), np.full(n, np.nan)
        return name

    for where, row in _read_table(folder / "da-seg-scores.csv", ("SYS", "SID", "RAW.SCR", "Z.SCR")):
        system = system_of(row["SYS"], where)
        sid = int(_number(row["SID"], where, "SID"))
        if not 1 <= sid <= n:
            raise ValueError(f"{where}: SID {sid} outside 1..{n}")
        seg_raw[system][sid - 1] = _number(row["RAW.SCR"], where, "RAW.SCR")
        seg_z[system][sid - 1] = _number(row["Z.SCR"], where, "Z.SCR")
    sys_raw: Dict[str, float] = {}
    sys_z: Dict[str, float] = {}
    for where, row in _read_table(folder / "da-sys-scores.csv", ("SYS", "RAW.SCR", "Z.SCR")):
        system = system_of(row["SYS"], where)
        sys_raw[system] = _number(row["RAW.SCR"], where, "RAW.SCR")
        sys_z[system] = _number(row["Z.SCR"], where, "Z.SCR")
    return Wmt21Data(lp, src, ref, hyps, seg_raw, seg_z, sys_raw, sys_z)
