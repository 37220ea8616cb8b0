"""WMT21 to-English DA data as the meta-evaluation uses them.

A folder laid out like the WMT21 news-systems repository (``wmt21-de-en``, ``wmt21-ru-en``, ...):
``src.<xx>``, ``ref.A.en``, optional ``ref.B.en``, ``hyp.<system>.en`` (one segment a line) and the
space-separated ``da-seg-scores.csv`` (``SYS SID RAW.SCR Z.SCR ...``; SID = 1-based line of the
text files) and ``da-sys-scores.csv`` (same column names, any order).

System names: a DA name is the system name plus ``.<submission id>`` (``UF.15``); its outputs are
``hyp.<name without the final .N>.en`` unless ``nlgscore/data/wmt_system_aliases.json`` says
otherwise (``Nemo`` -> ``NVIDIA-NeMo``; ``HUMAN`` -> ``ref.B``, the second human translation,
judged as a system against reference A). Systems are named as in their ``hyp.<system>.en`` file
(``HUMAN`` for the human translation). From the judgments: daRR pairs built from raw DA (WMT18
protocol: two outputs of the same source more than 25 points apart), DA z per segment and the
official system z scores.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.backend.tables import table
from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.data.files import finite_number, read_lines
from nlgscore.meta.stats import pearson
from nlgscore.meta.stats.wmt import (
    DarrPair,
    darr_outcomes,
    darr_pairs_from_da,
    tau_from_outcomes,
)

PathLike = Union[str, "os.PathLike[str]"]
HUMAN = "HUMAN"
REPEATS = ("error", "average")  # a repeated (system, SID) DA row: refuse, or average the judgments


@dataclass
class Wmt21Data:
    """One WMT21 language pair: texts and DA scores keyed by system name (as in the file names).

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

    def head(self, limit: Optional[int]) -> "Wmt21Data":
        """The first ``limit`` segments (all when None), for a quick run."""
        if limit is None:
            return self
        cut = lambda values: {name: v[:limit] for name, v in values.items()}  # noqa: E731
        return replace(
            self,
            src=self.src[:limit],
            ref=self.ref[:limit],
            hyps=cut(self.hyps),
            seg_raw=cut(self.seg_raw),
            seg_z=cut(self.seg_z),
        )


def wmt21_system_name(da_name: str) -> Tuple[str, str]:
    """``(system name, file stem)`` of a DA-file system: the final ``.N`` goes, then the alias table.

    >>> wmt21_system_name("UF.15"), wmt21_system_name("Nemo.7"), wmt21_system_name("HUMAN.0")
    (('UF', 'hyp.UF'), ('NVIDIA-NeMo', 'hyp.NVIDIA-NeMo'), ('HUMAN', 'ref.B'))
    """
    base, _, suffix = da_name.rpartition(".")
    if not (base and suffix.isdigit()):
        base = da_name
    target = table("wmt_system_aliases").get(base, base)
    if target.startswith("ref."):
        return base, target
    return target, f"hyp.{target}"


def _lines(path: Path) -> List[str]:
    return read_lines(path)


def _read_table(path: Path, required: Sequence[str]) -> List[Tuple[str, Dict[str, str]]]:
    lines = _lines(path)
    if not lines or not lines[0].strip():
        raise DataError(f"{path}: empty file")
    header = lines[0].split()
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(f"{path}:1: header lacks column(s) {missing}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        values = line.split()
        if len(values) < len(header):
            raise DataError(f"{path}:{number}: expected {len(header)} fields, got {len(values)}")
        rows.append((f"{path}:{number}", dict(zip(header, values))))
    return rows


def _sid(value: str, where: str, n: int) -> int:
    if not value.isdigit():
        raise DataError(f"{where}: SID must be an integer line number, got {value!r}")
    sid = int(value)
    if not 1 <= sid <= n:
        raise DataError(f"{where}: SID {sid} outside 1..{n}")
    return sid


def _language_pair(folder: Path) -> str:
    sources = sorted(p.name.split(".", 1)[1] for p in folder.glob("src.*"))
    if len(sources) != 1:
        raise DataError(f"{folder}: expected one src.<language> file, found {len(sources)}; pass lp=")
    return f"{sources[0]}-en"


def load_wmt21(folder: PathLike, lp: Optional[str] = None, reference: str = "A", repeats: str = "error") -> Wmt21Data:
    """Read a WMT21 to-English folder (texts + DA); ``lp`` defaults to ``<xx>-en`` from ``src.<xx>``.

    Every DA system must have its output file (a HUMAN system whose ``ref.B`` file is absent is
    left out); SIDs must be integers within the segment count; scores finite. A second row for the
    same (system, SID) is a DataError naming both lines unless ``repeats="average"`` (several
    raters' judgments averaged, raw and z alike); two submissions of one system (``Alpha.1`` and
    ``Alpha.7``) are an error either way.
    """
    if repeats not in REPEATS:
        raise ArgumentError(f"repeats must be one of {REPEATS}, got {repeats!r}")
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such WMT21 folder: {folder}")
    lp = lp or _language_pair(folder)
    source_lang, target_lang = lp.split("-")
    src = _lines(folder / f"src.{source_lang}")
    ref = _lines(folder / f"ref.{reference}.{target_lang}")
    if len(src) != len(ref):
        raise DataError(f"{folder}: src has {len(src)} lines but ref.{reference} has {len(ref)}")
    n = len(src)
    hyps: Dict[str, List[str]] = {}
    seg_raw: Dict[str, np.ndarray] = {}
    seg_z: Dict[str, np.ndarray] = {}
    absent = set()
    submission: Dict[str, Tuple[str, str]] = {}  # system -> (DA name, where first seen)

    def system_of(da_name: str, where: str) -> Optional[str]:
        name, stem = wmt21_system_name(da_name)
        first = submission.setdefault(name, (da_name, where))
        if first[0] != da_name:
            raise DataError(
                f"{where}: DA system {da_name!r} and {first[0]!r} ({first[1]}) are both system {name!r}: "
                "two submissions of one system cannot be told apart; keep one"
            )
        if name in hyps or name in absent:
            return name if name in hyps else None
        path = folder / f"{stem}.{target_lang}"
        if not path.is_file():
            if stem.startswith("ref."):
                absent.add(name)
                return None
            raise DataError(
                f"{where}: DA system {da_name!r} has no output file {path.name} in {folder}; "
                "add its name to nlgscore/data/wmt_system_aliases.json"
            )
        hyps[name] = _lines(path)
        if len(hyps[name]) != n:
            raise DataError(f"{path}: {len(hyps[name])} lines, expected {n}")
        seg_raw[name], seg_z[name] = np.full(n, np.nan), np.full(n, np.nan)
        return name

    seen: Dict[Tuple[str, int], str] = {}
    counts: Dict[Tuple[str, int], int] = {}
    for where, row in _read_table(folder / "da-seg-scores.csv", ("SYS", "SID", "RAW.SCR", "Z.SCR")):
        system = system_of(row["SYS"], where)
        sid = _sid(row["SID"], where, n)
        raw, z = finite_number(row["RAW.SCR"], where, "RAW.SCR"), finite_number(row["Z.SCR"], where, "Z.SCR")
        if system is None:
            continue
        key = (system, sid)
        if key in seen and repeats == "error":
            raise DataError(
                f"{where}: second DA row for system {row['SYS']!r}, SID {sid} (first at line "
                f"{seen[key].rsplit(':', 1)[1]}); pass repeats='average' (--average-repeats) to average them"
            )
        seen.setdefault(key, where)
        k = counts[key] = counts.get(key, 0) + 1
        for values, value in ((seg_raw, raw), (seg_z, z)):  # running mean of the repeated judgments
            old = values[system][sid - 1]
            values[system][sid - 1] = value if k == 1 else old + (value - old) / k
    sys_raw: Dict[str, float] = {}
    sys_z: Dict[str, float] = {}
    for where, row in _read_table(folder / "da-sys-scores.csv", ("SYS", "RAW.SCR", "Z.SCR")):
        system = system_of(row["SYS"], where)
        if system in sys_z:
            raise DataError(f"{where}: second system score for {row['SYS']!r}")
        if system is not None:
            sys_raw[system] = finite_number(row["RAW.SCR"], where, "RAW.SCR")
            sys_z[system] = finite_number(row["Z.SCR"], where, "Z.SCR")
    return Wmt21Data(lp, src, ref, hyps, seg_raw, seg_z, sys_raw, sys_z)


@dataclass
class Wmt21Judgments:
    """Human judgments of the evaluated systems of a WMT21 language pair.

    ``raw`` / ``z`` are ``(systems, segments)`` with NaN where unjudged; ``pairs`` are the daRR
    pairs built from raw DA (segment = column index); ``sys_z`` follows ``systems``.
    """

    systems: List[str]
    raw: np.ndarray
    z: np.ndarray
    pairs: List[DarrPair]
    sys_z: np.ndarray

    @property
    def judged(self) -> np.ndarray:
        return ~np.isnan(self.raw)


def wmt21_judgments(data: Wmt21Data, include_human: bool = False, limit: Optional[int] = None) -> Wmt21Judgments:
    """Judgments of ``data``'s systems (sorted; HUMAN only if ``include_human``).

    ``limit`` keeps the first ``limit`` segments only (a quick run).
    """
    systems = sorted(s for s in data.hyps if include_human or s != HUMAN)
    if len(systems) < 2:
        raise DataError(f"{data.lp}: meta-evaluation needs at least 2 systems, got {systems}")
    unscored = [s for s in systems if s not in data.sys_z]
    if unscored:
        raise DataError(f"{data.lp}: da-sys-scores.csv has no system score for {unscored}")
    n = min(len(data.ref), limit or len(data.ref))
    raw = np.array([data.seg_raw[s][:n] for s in systems])
    z = np.array([data.seg_z[s][:n] for s in systems])
    judged = ~np.isnan(raw)
    da = {(int(seg), systems[i]): raw[i, seg] for i, seg in zip(*np.nonzero(judged))}
    pairs = darr_pairs_from_da(da)
    return Wmt21Judgments(systems, raw, z, pairs, np.array([data.sys_z[s] for s in systems]))


def wmt21_inputs(data: Wmt21Data, judgments: Wmt21Judgments) -> Tuple[List[str], List[str]]:
    """Hypotheses (system-major, every segment) and their references, for scoring."""
    n = judgments.raw.shape[1]
    hyps = [h for s in judgments.systems for h in data.hyps[s][:n]]
    return hyps, list(data.ref[:n]) * len(judgments.systems)


@dataclass(frozen=True)
class Wmt21Items:
    """The items each WMT21 measure is computed on, for one metric (for bootstrap CIs)."""

    seg_raw: np.ndarray  # raw DA of judged segments
    seg_human: np.ndarray  # z of judged segments
    seg_metric: np.ndarray
    outcomes: np.ndarray  # +1 / 0 (metric tie) / -1 per daRR pair
    sys_human: np.ndarray
    sys_metric: np.ndarray


def wmt21_items(
    judgments: Wmt21Judgments, scores: np.ndarray, sys_scores: Optional[Sequence[float]] = None
) -> Wmt21Items:
    """Split a metric's ``(systems, segments)`` scores into the items of each measure.

    The system score is ``sys_scores`` when given (a corpus-level metric such as BLEU), else
    the mean over all segments, judged or not.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.shape != judgments.raw.shape:
        raise ArgumentError(f"scores must have shape {judgments.raw.shape}, got {scores.shape}")
    row = {s: i for i, s in enumerate(judgments.systems)}
    better = [scores[row[p.better], p.segment] for p in judgments.pairs]
    worse = [scores[row[p.worse], p.segment] for p in judgments.pairs]
    outcomes = darr_outcomes(better, worse) if judgments.pairs else np.zeros(0, dtype=np.int64)
    system = scores.mean(axis=1) if sys_scores is None else np.asarray(sys_scores, dtype=float)
    judged = judgments.judged
    return Wmt21Items(judgments.raw[judged], judgments.z[judged], scores[judged], outcomes, judgments.sys_z, system)


@dataclass(frozen=True)
class Wmt21Measure:
    """One Pearson measure of WMT21 DA: the items it correlates and the calibration key it fills."""

    level: str
    measure: str
    items: Callable[[Wmt21Items], Tuple[np.ndarray, np.ndarray]]
    key: Optional[str] = None  # name in ``wmt21_measures`` (layer calibration), if it is one of those


# The one definition of the WMT21 Pearson measures: the task's rows and the calibration read it.
WMT21_PEARSON = (
    Wmt21Measure("segment", "pearson-raw", lambda items: (items.seg_raw, items.seg_metric)),
    Wmt21Measure("segment", "pearson-z", lambda items: (items.seg_human, items.seg_metric), "seg_pearson"),
    Wmt21Measure("system", "pearson-z", lambda items: (items.sys_human, items.sys_metric), "sys_pearson"),
)


def wmt21_measures(items: Wmt21Items, ties: str = "discordant") -> Dict[str, float]:
    """``seg_pearson`` (DA z), ``seg_tau`` (daRR from DA), ``ties`` (share) and ``sys_pearson``."""
    values = {m.key: pearson(*m.items(items)) for m in WMT21_PEARSON if m.key}
    return {
        "seg_pearson": values["seg_pearson"],
        "seg_tau": tau_from_outcomes(items.outcomes, ties),
        "ties": float(np.mean(items.outcomes == 0)),
        "sys_pearson": values["sys_pearson"],
    }
