"""WMT24 ESA ratings (Error Span Annotation) as WMT publishes them, reduced to a score per segment.

``humeval/esa_generalMT2024_wave{0..3}.csv`` in ``wmt-conference/wmt24-news-systems``: no header,
12 comma-separated fields per row::

    annotator, system, line_id, TGT|BAD, src_lang3, tgt_lang3, esa_score (0-100),
    document_id[#bad|#dup|#incomplete], <flag>, spans (JSON), t_start, t_end

``line_id`` indexes the lines of ``txt/sources/<LP>.txt`` (line 0 is the CANARY line). The
upstream rules (``humeval/merge_to_jsonl.py``, ``tools.load_data``, ``convert_to_metrics.py``):

* dropped before any statistic: ``BAD`` rows (quality-control items), documents ending in
  ``#bad``, ``#dup`` or ``#incomplete``, and tutorial documents (``-tutorial``) and systems;
* one annotator rating one (system, line) twice keeps the later rating (latest ``t_end``);
* a segment's score is the mean over its annotators; the CANARY line scores 100 for every rated
  system; a system's score is the mean over its rated segments.

Anything else is refused with ``file:line``: a row without 12 fields, a line id that is not a line
of the sources, a score outside 0-100, a document id that is not the document of its line, a system
with no output file.

>>> import pathlib, tempfile
>>> f = pathlib.Path(tempfile.mkdtemp()) / "esa.csv"
>>> rows = ["a1,S1,1,TGT,eng,ces,80,d1,False,[],1,2", "a2,S1,1,TGT,eng,ces,60,d1,False,[],1,2",
...         "a1,S1,2,BAD,eng,ces,0,d1#bad,False,[],1,2", "a1,S2,2,TGT,eng,ces,50,d1,False,[],1,2"]
>>> _ = f.write_text("\\n".join(rows) + "\\n")
>>> seg = read_esa(f, "en-cs", 3, {"S1", "S2"}, docs=["canary", "d1", "d1"])
>>> {s: v.tolist() for s, v in seg.items()}
{'S1': [100.0, 70.0, nan], 'S2': [100.0, nan, 50.0]}
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Collection, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import DataError
from nlgscore.meta.data.files import finite_number, read_text

PathLike = Union[str, "os.PathLike[str]"]
FIELDS = 12
DROPPED_DOCUMENTS = ("#bad", "#dup", "#incomplete")
CANARY_SCORE = 100.0
# upstream humeval/tools.py langcode_mapping (ISO 639-3 of the CSV -> the pair codes of txt/)
LANG3 = {
    "eng": "en",
    "ces": "cs",
    "hin": "hi",
    "zho": "zh",
    "jpn": "ja",
    "rus": "ru",
    "ukr": "uk",
    "deu": "de",
    "isl": "is",
    "spa": "es",
    "hrv": "hr",
    "plk": "pl",
}


def _dropped(kind: str, document: str, system: str) -> bool:
    return kind == "BAD" or document.endswith(DROPPED_DOCUMENTS) or "-tutorial" in document or "tutorial" in system


def read_esa(
    paths: Union[PathLike, Sequence[PathLike]],
    lp: str,
    lines: int,
    systems: Collection[str],
    docs: Optional[List[str]] = None,
) -> Dict[str, np.ndarray]:
    """Per rated system, ``lines`` segment scores (NaN where unrated) from ESA CSVs (one file or the
    waves together: a segment's mean is over every rating of every wave, as ``convert_to_metrics.py``
    concatenates them), rows of pair ``lp`` only (its base pair: ``en-cs`` of ``en-cs_CZ``).
    ``systems``: the names with outputs (a rated system without one is an error); ``docs``: the
    document of each line, checked when given."""
    files = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    base = lp.split("_")[0]
    latest: Dict[
        Tuple[int, str, str, int], Tuple[float, float]
    ] = {}  # (wave, annotator, system, line) -> (t_end, score)
    for wave, path in enumerate(files):
        _read_wave(path, wave, base, lines, systems, docs, latest)
    if not latest:
        raise DataError(f"{', '.join(map(str, files))}: no usable ESA rating of pair {base}")
    sums: Dict[str, np.ndarray] = {}
    counts: Dict[str, np.ndarray] = {}
    for (_, _, system, line), (_, value) in sorted(latest.items()):
        if system not in sums:
            sums[system], counts[system] = np.zeros(lines), np.zeros(lines)
        sums[system][line] += value
        counts[system][line] += 1
    seg = {}
    for system in sorted(sums):
        with np.errstate(invalid="ignore", divide="ignore"):
            seg[system] = np.where(counts[system] > 0, sums[system] / counts[system], np.nan)
        seg[system][0] = CANARY_SCORE
    return seg


def _read_wave(
    path: Path,
    wave: int,
    base: str,
    lines: int,
    systems: Collection[str],
    docs: Optional[List[str]],
    latest: Dict[Tuple[int, str, str, int], Tuple[float, float]],
) -> None:
    text = read_text(path, "ESA ratings file")
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        where = f"{path}:{number}"
        if not row:
            continue
        if len(row) != FIELDS:
            raise DataError(f"{where}: an ESA row has {FIELDS} comma-separated fields, got {len(row)}")
        annotator, system, line_id, kind, src3, tgt3, score, document = row[:8]
        if kind not in ("TGT", "BAD"):
            raise DataError(f"{where}: field 4 is TGT or BAD, got {kind!r}")
        if src3 not in LANG3 or tgt3 not in LANG3:
            raise DataError(
                f"{where}: unknown language code {src3 if src3 not in LANG3 else tgt3!r} (known: {sorted(LANG3)})"
            )
        if f"{LANG3[src3]}-{LANG3[tgt3]}" != base or _dropped(kind, document, system):
            continue
        if not line_id.isdigit() or not 1 <= int(line_id) < lines:
            raise DataError(
                f"{where}: line id {line_id!r} is not a segment line of the sources (1..{lines - 1}; "
                "line 0 is the CANARY line)"
            )
        line = int(line_id)
        value = finite_number(score, where, "ESA score")
        if not 0 <= value <= 100:
            raise DataError(f"{where}: ESA score {score} is outside 0-100")
        if docs is not None and docs[line] != document:
            raise DataError(
                f"{where}: document {document!r} is not the document of line {line} ({docs[line]!r}); "
                "is the file from before the CANARY line was added (upstream humeval/old/)?"
            )
        if system not in systems:
            raise DataError(f"{where}: system {system!r} has no output file")
        t_end = finite_number(row[11], where, "end time")
        key = (wave, annotator, system, line)
        if key not in latest or t_end >= latest[key][0]:
            latest[key] = (t_end, value)
