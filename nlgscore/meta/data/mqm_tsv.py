"""WMT24 MQM annotations (``humeval/mqm_generalMT2024_<pair>.tsv``) reduced to a score per segment.

A TSV with a header naming at least ``system``, ``doc``, ``globalSegId``, ``rater``, ``severity``
and ``category``; one row per error (a row with an empty or ``No-error`` severity marks a segment
rated without errors). ``globalSegId`` is 1-based over the lines after the CANARY line, so it is
the line number of ``txt/sources/<LP>.txt`` counted from 0 with the CANARY at 0.

WMT's weights (upstream ``humeval/tools.py``, ``mqm_weights``): ``No-error``, ``neutral``,
``Reinterpretation`` and ``Source issue`` 0; ``Non-translation!`` -25; minor -1, minor
``Fluency/Punctuation`` -0.1; major and critical -5. A segment's score per rater is the sum of its
rows' weights; the segment's score the mean over its raters. An unknown severity, a missing
column, a segment id outside the sources or a system without outputs is a ``DataError`` naming
``file:line``.

>>> import pathlib, tempfile
>>> f = pathlib.Path(tempfile.mkdtemp()) / "mqm.tsv"
>>> rows = ["system\\tdoc\\tglobalSegId\\trater\\tseverity\\tcategory",
...         "S1\\td1\\t1\\tr1\\tmajor\\tAccuracy/Mistranslation", "S1\\td1\\t1\\tr1\\tminor\\tFluency/Punctuation",
...         "S1\\td1\\t1\\tr2\\tNo-error\\tNo-error", "S2\\td1\\t2\\tr1\\tminor\\tNon-translation!"]
>>> _ = f.write_text("\\n".join(rows) + "\\n")
>>> {s: v.tolist() for s, v in read_mqm_tsv(f, 3, {"S1", "S2"}).items()}
{'S1': [nan, -2.55, nan], 'S2': [nan, nan, -25.0]}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Collection, Dict, Tuple, Union

import numpy as np

from nlgscore.errors import DataError
from nlgscore.meta.data.files import read_lines

PathLike = Union[str, "os.PathLike[str]"]
COLUMNS = ("system", "doc", "globalSegId", "rater", "severity", "category")
NO_ERROR = ("", "No-error", "no-error", "neutral")
CATEGORY_WEIGHTS = {"Non-translation!": -25.0, "Source issue": 0.0}
SEVERITY_WEIGHTS = {"minor": -1.0, "major": -5.0, "critical": -5.0}
PUNCTUATION_WEIGHT = -0.1  # a minor Fluency/Punctuation error


def mqm_weight(severity: str, category: str, where: str = "MQM row") -> float:
    """WMT's weight of one MQM error.

    >>> mqm_weight("major", "Accuracy/Omission"), mqm_weight("minor", "Fluency/Punctuation")
    (-5.0, -0.1)
    """
    if severity in NO_ERROR or "Reinterpretation" in category:
        return 0.0
    if category in CATEGORY_WEIGHTS:
        return CATEGORY_WEIGHTS[category]
    if severity == "minor" and "Fluency/Punctuation" in category:
        return PUNCTUATION_WEIGHT
    if severity not in SEVERITY_WEIGHTS:
        raise DataError(f"{where}: unknown MQM severity {severity!r} (minor, major, critical, No-error, neutral)")
    return SEVERITY_WEIGHTS[severity]


def read_mqm_tsv(path: PathLike, lines: int, systems: Collection[str]) -> Dict[str, np.ndarray]:
    """Per rated system, ``lines`` segment scores (NaN where unrated) from a WMT24 MQM TSV."""
    path = Path(path)
    rows = read_lines(path, "MQM file")
    if not rows:
        raise DataError(f"{path}:1: empty MQM file (a header row naming {', '.join(COLUMNS)} is expected)")
    header = rows[0].split("\t")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise DataError(f"{path}:1: the header lacks column(s) {missing} (found: {header})")
    at = {c: header.index(c) for c in COLUMNS}
    totals: Dict[Tuple[str, int, str], float] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row.strip():
            continue
        where = f"{path}:{number}"
        fields = row.split("\t")
        if len(fields) != len(header):
            raise DataError(f"{where}: {len(fields)} tab-separated fields, the header has {len(header)}")
        system, segment = fields[at["system"]], fields[at["globalSegId"]]
        if not segment.isdigit() or not 1 <= int(segment) < lines:
            raise DataError(f"{where}: globalSegId {segment!r} is not a segment line of the sources (1..{lines - 1})")
        if system not in systems:
            raise DataError(f"{where}: system {system!r} has no output file")
        key = (system, int(segment), fields[at["rater"]])
        totals[key] = totals.get(key, 0.0) + mqm_weight(fields[at["severity"]], fields[at["category"]], where)
    if not totals:
        raise DataError(f"{path}: no MQM rating")
    sums: Dict[str, np.ndarray] = {}
    counts: Dict[str, np.ndarray] = {}
    for (system, line, _), value in sorted(totals.items()):
        if system not in sums:
            sums[system], counts[system] = np.zeros(lines), np.zeros(lines)
        sums[system][line] += value
        counts[system][line] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return {s: np.where(counts[s] > 0, sums[s] / counts[s], np.nan) for s in sorted(sums)}
