"""Metric scores in google-research/mt-metrics-eval's file formats, read and written.

mtme keeps one file per metric and level, named ``<metric>-<ref>.<level>.score`` (``ref`` is the
reference used, ``src`` for a source-based metric), each line ``<system><TAB><score>``:

* segment level (``.seg.score``): every segment of the test set, a system's lines in segment order;
* system level (``.sys.score``): one line per system.

``read_mtme`` accepts both (a segment file's system file is found beside it when named the mtme
way) and checks what the other score readers check: every evaluated system present with one score
per line of the test set, numbers finite, no system twice in a system file; errors name ``file:line``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.corpus.outputs.resumable import write_atomic
from nlgscore.errors import DataError
from nlgscore.meta.data.files import finite_number, read_lines

PathLike = Union[str, "os.PathLike[str]"]


def _entries(path: Path) -> List[Tuple[str, str, float]]:
    entries = []
    for number, line in enumerate(read_lines(path, "score file"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(
                f"{where}: expected <system><TAB><score> (mt-metrics-eval format), got {len(fields)} fields"
            )
        entries.append((where, fields[0], finite_number(fields[1], where)))
    return entries


def is_mtme_file(path: PathLike) -> bool:
    """Whether the first non-blank line of ``path`` has the two fields of an mtme score file."""
    for line in read_lines(path, "score file"):
        if line.strip():
            return len(line.split("\t")) == 2
    return False


def read_mtme(
    path: PathLike, systems: Sequence[str], n: int, known: Optional[Iterable[str]] = None, first: Optional[int] = None
) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """``(segment scores (systems, n) or None, system scores or None)`` from an mtme file.

    A file with ``n`` lines per system is a segment file (its ``.sys.score`` sibling, if any, gives
    the system scores); one line per system is a system file. Systems of the data set that are not
    evaluated (``known``: references, human translations) may be in the file and are skipped; with
    ``known=None`` any other system is (mt-metrics-eval files list every system of a WMT set, a folder
    may hold fewer; a missing evaluated system is still an error). With
    ``first`` (a run on the first lines only), files of ``first`` lines per system are accepted too.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m-refA.seg.score"
    >>> _ = f.write_text("B\\t1\\nA\\t0.5\\nA\\t0.7\\nB\\t2\\n")
    >>> seg, system = read_mtme(f, ["A", "B"], 2)
    >>> seg.tolist(), system
    ([[0.5, 0.7], [1.0, 2.0]], None)
    """
    path = Path(path)
    by_system: Dict[str, List[Tuple[str, float]]] = {}
    for where, system, value in _entries(path):
        if known is not None and system not in systems and system not in set(known):
            raise DataError(f"{where}: unknown system {system!r} (not in the data set)")
        by_system.setdefault(system, []).append((where, value))
    missing = [s for s in systems if s not in by_system]
    if missing:
        raise DataError(f"{path}: no scores for system(s) {missing}")
    counts = {len(by_system[s]) for s in systems}
    if counts == {1} and n != 1:
        return None, np.array([by_system[s][0][1] for s in systems])
    if first is not None and counts == {first}:
        n = first
    for system in systems:
        lines = by_system[system]
        if len(lines) != n:
            where = lines[min(len(lines), n) - 1][0]
            raise DataError(
                f"{where}: system {system!r} has {len(lines)} scores; a segment file needs one per "
                f"segment ({n}) and a system file one per system"
            )
    seg = np.array([[v for _, v in by_system[s]] for s in systems])
    sibling = Path(re.sub(r"\.seg\.score$", ".sys.score", str(path)))
    if sibling != path and sibling.is_file():
        _, system_scores = read_mtme(sibling, systems, 0, known)
        return seg, system_scores
    return seg, None


def mtme_name(metric: str, reference: Optional[str], level: str) -> str:
    """mtme file name of a metric's scores: ``<metric>-<ref>.<level>.score``, unsafe characters as ``_``.

    >>> mtme_name("bertscore:minilm", "A", "seg"), mtme_name("prism:src", None, "sys")
    ('bertscore_minilm-refA.seg.score', 'prism_src-src.sys.score')
    """
    safe = re.sub(r"[^A-Za-z0-9_.+]", "_", metric)
    return f"{safe}-{'ref' + reference if reference else 'src'}.{level}.score"


def write_mtme(
    folder: PathLike,
    metric: str,
    reference: Optional[str],
    seg: Mapping[str, Sequence[float]],
    system: Mapping[str, float],
) -> List[Path]:
    """Write a metric's segment and system scores as mtme files in ``folder``; returns their paths.

    >>> import tempfile
    >>> seg_file, sys_file = write_mtme(tempfile.mkdtemp(), "mine", "A", {"S1": [0.5, 0.25], "S2": [1.0, 0.0]}, {"S1": 0.375, "S2": 0.5})
    >>> [a.tolist() for a in read_mtme(seg_file, ["S1", "S2"], 2)]  # the .sys.score sibling is read too
    [[[0.5, 0.25], [1.0, 0.0]], [0.375, 0.5]]
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    seg_path, sys_path = folder / mtme_name(metric, reference, "seg"), folder / mtme_name(metric, reference, "sys")
    write_atomic(seg_path, "".join(f"{s}\t{float(v)!r}\n" for s, values in seg.items() for v in values))
    write_atomic(sys_path, "".join(f"{s}\t{float(v)!r}\n" for s, v in system.items()))
    return [seg_path, sys_path]
