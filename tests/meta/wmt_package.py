"""Writes a small WMT metrics-task package (WMT16-18 layout) into a folder, in the official formats:
``manual-evaluation/RR-seglevel.csv`` (WMT18's header, one column name short),
``DA-seglevel.csv`` (a shared ``A+B`` output included), ``DA-syslevel.csv``,
``final-metric-scores/`` (a gzipped ``.seg.score`` and a ``.sys.score``, tab-separated with the
trailing ensemble column) and ``txt/`` with sources, references and system outputs. The values are
kept in a ``Written`` record, so that tests compare what the readers and tasks give with what was
written."""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

PAIRS = {"de-en": ("de", "en"), "cs-en": ("cs", "en")}
SYSTEMS = ["online-A", "uedin", "KIT", "LMU", "RWTH"]
LINES = 8
WORDS = "the cat sat on a mat while dogs ran past the old house near our park".split()


@dataclass
class Written:
    """What the package holds, per language pair."""

    root: Path
    test_set: str
    refs: Dict[str, List[str]] = field(default_factory=dict)
    hyps: Dict[str, Dict[str, List[str]]] = field(default_factory=dict)
    da_seg: Dict[str, Dict[Tuple[str, int], float]] = field(default_factory=dict)  # (system, 1-based sid)
    da_sys: Dict[str, Dict[str, float]] = field(default_factory=dict)
    rr: Dict[str, List[Tuple[int, str, str]]] = field(default_factory=dict)
    metric: Dict[str, Dict[Tuple[str, int], float]] = field(default_factory=dict)  # "mine" segment scores
    metric_sys: Dict[str, Dict[str, float]] = field(default_factory=dict)


def write_package(root: Path, year: str = "wmt18", nested: bool = False, seed: int = 0) -> Written:
    """A package of two to-English pairs, five systems (one of them without a DA system score), eight
    segments; ``nested``: the texts under ``input/<year>-metrics-task-nohybrids/`` as the packages ship."""
    rng = np.random.default_rng(seed)
    test_set = f"newstest20{year[-2:]}"
    written = Written(root, test_set)
    txt = root / (f"input/{year}-metrics-task-nohybrids" if nested else "txt")
    manual = root / "manual-evaluation"
    manual.mkdir(parents=True)
    rr_lines, seg_lines, sys_lines = ["DATA SID BETTER WORSE"], ["LP DATA SYSTEM SID HUMAN"], ["LP HUMAN SYSTEM"]
    metric_lines, metric_sys_lines = [], []
    for lp, (source, target) in PAIRS.items():
        refs = [" ".join(rng.choice(WORDS, size=6)) for _ in range(LINES)]
        hyps = {}
        for k, system in enumerate(SYSTEMS):
            # system k keeps 6 - k words of the reference, then random ones: quality falls with k
            hyps[system] = [" ".join(r.split()[: 6 - k] + list(rng.choice(WORDS, size=k))) for r in refs]
        hyps["KIT"][3] = hyps["uedin"][3]  # one output two systems share: DA-seglevel's "uedin+KIT"
        quality = {s: 1.0 - 0.4 * k + rng.normal(scale=0.2) for k, s in enumerate(SYSTEMS)}
        da_seg: Dict[Tuple[str, int], float] = {}
        for sid in range(1, LINES + 1):
            for system in SYSTEMS:
                if (system, sid) in da_seg or rng.random() < 0.2:
                    continue  # about one translation in five is not judged
                score = round(float(quality[system] + rng.normal(scale=0.5)), 6)
                if sid == 4 and system == "uedin":
                    da_seg["uedin", 4] = da_seg["KIT", 4] = score
                    seg_lines.append(f"{lp} {test_set} uedin+KIT 4 {score!r}")
                    continue
                da_seg[system, sid] = score
                seg_lines.append(f"{lp} {test_set} {system} {sid} {score!r}")
        da_sys = {s: round(float(np.mean([v for (x, _), v in da_seg.items() if x == s])), 6) for s in SYSTEMS[:-1]}
        sys_lines += [f"{lp} {score!r} {system}" for system, score in da_sys.items()]  # RWTH: no system score
        rr = []
        for sid in range(1, LINES + 1):
            judged = [s for s in SYSTEMS if (s, sid) in da_seg]
            for a in judged:
                for b in judged:
                    if da_seg[a, sid] - da_seg[b, sid] > 0.4:  # daRR: clearly apart by DA
                        rr.append((sid, a, b))
                        rr_lines.append(f"{lp} {test_set} {sid} {a} {b}")
        metric = {(s, sid): round(float(quality[s] + rng.normal(scale=0.6)), 6) for s in SYSTEMS for sid in range(1, 9)}
        metric_lines += [f"mine\t{lp}\t{test_set}\t{s}\t{sid}\t{v!r}\tnon-ensemble" for (s, sid), v in metric.items()]
        metric_sys = {s: round(float(np.median([metric[s, i] for i in range(1, 9)])), 6) for s in SYSTEMS}
        metric_sys_lines += [f"mine\t{lp}\t{test_set}\t{s}\t{v!r}\tnon-ensemble" for s, v in metric_sys.items()]
        # texts
        _write(txt / "sources" / f"{test_set}-{source}{target}-src.{source}", [f"q{i}" for i in range(LINES)])
        _write(txt / "references" / f"{test_set}-{source}{target}-ref.{target}", refs)
        for system, lines in hyps.items():
            _write(txt / "system-outputs" / test_set / lp / f"{test_set}.{system}.{lp}", lines)
        written.refs[lp], written.hyps[lp], written.da_seg[lp], written.da_sys[lp] = refs, hyps, da_seg, da_sys
        written.rr[lp], written.metric[lp], written.metric_sys[lp] = rr, metric, metric_sys
    _write(manual / "RR-seglevel.csv", rr_lines)
    _write(manual / "DA-seglevel.csv", seg_lines)
    _write(manual / "DA-syslevel.csv", sys_lines)
    scores = root / "final-metric-scores" / "submissions-processed"
    scores.mkdir(parents=True)
    with gzip.open(scores / "mine.seg.score.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(metric_lines) + "\n")
    _write(scores / "mine.sys.score", metric_sys_lines)
    return written


def _write(path: Path, lines: List[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
