"""A human-scores folder: the test set, each system's outputs and their human scores (MQM, DA, ...).

Layout (one segment a line, every text file aligned)::

    src.<sl>               the source
    ref.<X>.<tl>           reference X (several allowed: ref.A.de, ref.B.de)
    hyp.<SYSTEM>.<tl>      system SYSTEM's outputs
    <kind>-seg-scores.tsv  system<TAB>seg<TAB>score, seg = 1-based line; rated segments only
    <kind>-sys-scores.tsv  optional: system<TAB>score (else: the mean over the rated segments)

A system whose outputs equal a reference file is a human translation (``hyp.refA`` = ``ref.A``).
Score files are checked like score files everywhere: an unknown system, a segment id that is not
an integer in 1..lines, a score that is not a finite number, or a second row for the same
(system, segment) is a ``DataError`` naming ``file:line``. Repeated judgments of a segment (WMT
DA's several raters) are averaged only when asked (``repeats="average"``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.data.files import finite_number, read_lines

PathLike = Union[str, "os.PathLike[str]"]
REPEATS = ("error", "average")
_INTEGER = re.compile(r"[0-9]+")


@dataclass
class RatingsFolder:
    """A loaded human-scores folder: texts, ``seg[system]`` (NaN where unrated), ``sys[system]``."""

    path: Path
    kind: str
    lp: str
    reference: str
    src: List[str]
    refs: Dict[str, List[str]]
    hyps: Dict[str, List[str]]
    seg: Dict[str, np.ndarray]
    sys: Dict[str, float]
    human_systems: List[str]  # outputs equal to a reference file
    reference_system: List[str]  # outputs equal to the reference in use: never scored as a system

    @property
    def ref(self) -> List[str]:
        return self.refs[self.reference]

    def systems(self, include_human: bool = False) -> List[str]:
        """The evaluated systems (sorted): rated ones, never the reference in use, humans only if asked."""
        return sorted(
            s for s in self.seg if s not in self.reference_system and (include_human or s not in self.human_systems)
        )


def _segment(text: str, where: str, n: int) -> int:
    if not _INTEGER.fullmatch(text.strip()):
        raise DataError(f"{where}: segment id must be an integer line number, got {text!r}")
    seg = int(text)
    if not 1 <= seg <= n:
        raise DataError(f"{where}: segment id {seg} outside 1..{n}")
    return seg


def _rows(path: Path, fields: int) -> List[Tuple[str, List[str]]]:
    rows = []
    for number, line in enumerate(read_lines(path, "score file"), start=1):
        if not line.strip():
            continue
        values = line.split("\t")
        if len(values) != fields:
            raise DataError(f"{path}:{number}: expected {fields} tab-separated fields, got {len(values)}")
        rows.append((f"{path}:{number}", values))
    return rows


def read_segment_scores(
    path: PathLike, systems: Dict[str, int], n: int, repeats: str = "error"
) -> Dict[str, np.ndarray]:
    """``{system: scores over the n lines, NaN where unrated}`` from a ``system<TAB>seg<TAB>score`` file.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "mqm-seg-scores.tsv"
    >>> _ = f.write_text("A\\t1\\t-1\\nA\\t1\\t-3\\n")
    >>> read_segment_scores(f, {"A": 0}, 2, repeats="average")["A"].tolist()
    [-2.0, nan]
    >>> read_segment_scores(f, {"A": 0}, 2)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    nlgscore.errors.DataError: ...mqm-seg-scores.tsv:2: second score for system 'A', segment 1 (first at line 1);
    pass repeats='average' (--average-repeats) to average repeated judgments
    """
    if repeats not in REPEATS:
        raise ArgumentError(f"repeats must be one of {REPEATS}, got {repeats!r}")
    path = Path(path)
    totals = {s: np.zeros(n) for s in systems}
    counts = {s: np.zeros(n, dtype=int) for s in systems}
    first: Dict[Tuple[str, int], str] = {}
    for where, (system, seg_text, score_text) in _rows(path, 3):
        if system not in systems:
            raise DataError(f"{where}: system {system!r} has no hyp.{system}.* output file in {path.parent}")
        seg = _segment(seg_text, where, n)
        score = finite_number(score_text, where, "score")
        if (system, seg) in first and repeats == "error":
            raise DataError(
                f"{where}: second score for system {system!r}, segment {seg} "
                f"(first at line {first[system, seg].rsplit(':', 1)[1]}); pass repeats='average' "
                "(--average-repeats) to average repeated judgments"
            )
        first.setdefault((system, seg), where)
        totals[system][seg - 1] += score
        counts[system][seg - 1] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return {s: np.where(counts[s] > 0, totals[s] / counts[s], np.nan) for s in systems if counts[s].any()}


def read_system_scores(path: PathLike, systems: Dict[str, int]) -> Dict[str, float]:
    """``{system: score}`` from a ``system<TAB>score`` file (same checks as segment files)."""
    path = Path(path)
    out: Dict[str, float] = {}
    seen: Dict[str, str] = {}
    for where, (system, score_text) in _rows(path, 2):
        if system not in systems:
            raise DataError(f"{where}: system {system!r} has no hyp.{system}.* output file in {path.parent}")
        if system in seen:
            raise DataError(
                f"{where}: second score for system {system!r} (first at line {seen[system].rsplit(':', 1)[1]})"
            )
        seen[system] = where
        out[system] = finite_number(score_text, where, "score")
    return out


def _kind(folder: Path, kind: Optional[str]) -> str:
    if kind is not None:
        if not (folder / f"{kind}-seg-scores.tsv").is_file():
            raise FileNotFoundError(f"{folder}: no {kind}-seg-scores.tsv")
        return kind
    kinds = sorted(p.name[: -len("-seg-scores.tsv")] for p in folder.glob("*-seg-scores.tsv"))
    if len(kinds) != 1:
        raise DataError(f"{folder}: expected one <kind>-seg-scores.tsv, found {kinds or 'none'}; pass kind= (--kind)")
    return kinds[0]


def load_ratings(
    folder: PathLike, reference: Optional[str] = None, kind: Optional[str] = None, repeats: str = "error"
) -> RatingsFolder:
    """Read a human-scores folder (layout in the module doc); ``reference`` defaults to the only
    ``ref.<X>`` file, else ``A``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such human-scores folder: {folder}")
    kind = _kind(folder, kind)
    sources = sorted(folder.glob("src.*"))
    if len(sources) != 1:
        raise DataError(f"{folder}: expected one src.<language> file, found {len(sources)}")
    source_lang = sources[0].name.split(".", 1)[1]
    refs: Dict[str, List[str]] = {}
    target_lang = None
    for path in sorted(folder.glob("ref.*.*")):
        name, target_lang = path.name[len("ref.") :].rsplit(".", 1)
        refs[name] = read_lines(path)
    if not refs:
        raise DataError(f"{folder}: no ref.<X>.<language> reference file")
    if reference is None:
        reference = next(iter(refs)) if len(refs) == 1 else "A"
    if reference not in refs:
        raise ArgumentError(f"reference {reference!r} not in {folder}: it has {sorted(refs)} (--ref)")
    src = read_lines(sources[0])
    hyps = {
        p.name[len("hyp.") : -len(f".{target_lang}")]: read_lines(p)
        for p in sorted(folder.glob(f"hyp.*.{target_lang}"))
    }
    for name, lines in [
        ("src", src),
        *((f"ref.{k}", v) for k, v in refs.items()),
        *((f"hyp.{k}", v) for k, v in hyps.items()),
    ]:
        if len(lines) != len(src):
            raise DataError(f"{folder}: {name} has {len(lines)} lines but src.{source_lang} has {len(src)}")
    index = {s: i for i, s in enumerate(hyps)}
    seg = read_segment_scores(folder / f"{kind}-seg-scores.tsv", index, len(src), repeats)
    sys_path = folder / f"{kind}-sys-scores.tsv"
    sys_scores = read_system_scores(sys_path, index) if sys_path.is_file() else {}
    for system in seg:  # WMT convention: a system's human score is the mean over its rated segments
        sys_scores.setdefault(system, float(np.nanmean(seg[system])))
    human = sorted(s for s, lines in hyps.items() if any(lines == r for r in refs.values()))
    in_use = sorted(s for s, lines in hyps.items() if lines == refs[reference])
    return RatingsFolder(
        folder, kind, f"{source_lang}-{target_lang}", reference, src, refs, hyps, seg, sys_scores, human, in_use
    )
