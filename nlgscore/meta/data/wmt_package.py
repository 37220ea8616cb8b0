"""WMT16-WMT18 metrics-task packages (``wmt18-metrics-task-package``) as the meta-evaluation reads them.

The layout (the packages' own evaluation scripts and their users read the same files):

* ``manual-evaluation/RR-seglevel.csv``: daRR pairs, a header line then ``LP DATA SID BETTER WORSE``
  per line, space-separated (``cs-en newstest2018 12 uedin online-B``; WMT18's header lacks one
  column name, so the header is skipped, never read); ``SID`` is 1-based.
* ``manual-evaluation/DA-seglevel.csv``: DA per translation, header then ``LP DATA SYSTEM SID HUMAN``
  (HUMAN the averaged standardised score; ``SYSTEM`` may be ``A+B`` when systems gave one output).
* ``manual-evaluation/DA-syslevel.csv``: header then ``LP HUMAN SYSTEM`` (WMT's "Ave z").
* ``final-metric-scores/``: metric score files, ``METRIC LP DATA SYSTEM SID SCORE [...]`` per line
  (``*.seg.score``, optionally gzipped) and ``METRIC LP DATA SYSTEM SCORE [...]`` (``*.sys.score``),
  tab- or space-separated, in ``baselines/`` and ``submissions-processed/`` or anywhere below.
* ``txt/`` (or the folder holding ``system-outputs/`` anywhere below the package, as the packages
  nest it: ``input/wmt18-metrics-task-nohybrids/``): ``sources/<DATA>-<s><t>-src.<s>``,
  ``references/<DATA>-<s><t>-ref.<t>``, ``system-outputs/<DATA>/<s>-<t>/<DATA>.<SYSTEM>.<s>-<t>``.

Every malformed line is a ``DataError`` naming the file and the line (and the column).
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

from nlgscore.errors import DataError
from nlgscore.meta.data.files import finite_number, read_lines

PathLike = Union[str, "os.PathLike[str]"]
TEST_SETS = {"wmt16": "newstest2016", "wmt17": "newstest2017", "wmt18": "newstest2018"}


@dataclass(frozen=True)
class RRPair:
    """One daRR pair of ``RR-seglevel.csv``: segment ``sid`` (1-based), better and worse system."""

    sid: int
    better: str
    worse: str
    where: str  # file:line, for the errors that name it later


def _rows(path: Path, fields: int, at_least: bool = False) -> List[Tuple[str, List[str]]]:
    """The whitespace-split lines after the header, each with its ``file:line``; a line with another
    number of fields (fewer, with ``at_least``) is refused."""
    lines = _read(path)
    if not lines:
        raise DataError(f"{path}: empty (a header line, then one row a line)")
    out = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) < fields or (len(parts) > fields and not at_least):
            need = f"at least {fields}" if at_least else str(fields)
            raise DataError(f"{path}:{number}: {len(parts)} fields, expected {need}: {line!r}")
        out.append((f"{path}:{number}", parts))
    return out


def _read(path: Path) -> List[str]:
    if path.suffix == ".gz":
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                return handle.read().splitlines()
        except (OSError, UnicodeDecodeError) as err:
            raise DataError(f"{path}: not a readable gzipped UTF-8 text file ({err})") from None
    return read_lines(path)


def _sid(text: str, where: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise DataError(f"{where}: SID (column 3) must be a segment number >= 1, got {text!r}")
    return int(text)


def read_rr(path: PathLike) -> Dict[str, List[RRPair]]:
    """``RR-seglevel.csv`` as ``{lp: [RRPair, ...]}`` in file order.

    Args:
        path: the file.

    Returns:
        The pairs of each language pair.

    Raises:
        DataError: a line without 5 fields, or a SID that is not a number >= 1 (file:line named).

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "RR-seglevel.csv"
        >>> _ = f.write_text("DATA SID BETTER WORSE\\ncs-en newstest2018 3 A B\\n")
        >>> pair = read_rr(f)["cs-en"][0]
        >>> pair.sid, pair.better, pair.worse
        (3, 'A', 'B')
    """
    out: Dict[str, List[RRPair]] = {}
    for where, (lp, _data, sid, better, worse) in _rows(Path(path), 5):
        out.setdefault(lp, []).append(RRPair(_sid(sid, where), better, worse, where))
    return out


def read_da_seg(path: PathLike) -> Dict[str, Dict[Tuple[str, int], float]]:
    """``DA-seglevel.csv`` as ``{lp: {(system, sid): score}}``; ``A+B`` gives the score to both systems.

    Raises:
        DataError: a line without 5 fields, a bad SID or score, or one (system, SID) given twice.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "DA-seglevel.csv"
        >>> _ = f.write_text("LP DATA SYSTEM SID HUMAN\\nde-en newstest2017 A+B 2 -0.5\\n")
        >>> read_da_seg(f)
        {'de-en': {('A', 2): -0.5, ('B', 2): -0.5}}
    """
    out: Dict[str, Dict[Tuple[str, int], float]] = {}
    for where, (lp, _data, systems, sid, human) in _rows(Path(path), 5):
        number, score = _sid(sid, where), finite_number(human, where, "HUMAN (column 5)")
        for system in systems.split("+"):
            if (system, number) in out.setdefault(lp, {}):
                raise DataError(f"{where}: {lp} system {system} segment {number} has a second DA score")
            out[lp][system, number] = score
    return out


def read_da_sys(path: PathLike) -> Dict[str, Dict[str, float]]:
    """``DA-syslevel.csv`` as ``{lp: {system: score}}``.

    Raises:
        DataError: a line without 3 fields, a bad score, or a system given twice for one pair.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "DA-syslevel.csv"
        >>> _ = f.write_text("LP HUMAN SYSTEM\\nde-en 0.25 uedin\\n")
        >>> read_da_sys(f)
        {'de-en': {'uedin': 0.25}}
    """
    out: Dict[str, Dict[str, float]] = {}
    for where, (lp, human, system) in _rows(Path(path), 3):
        if system in out.setdefault(lp, {}):
            raise DataError(f"{where}: {lp} system {system} has a second DA score")
        out[lp][system] = finite_number(human, where, "HUMAN (column 2)")
    return out


def read_metric_scores(path: PathLike, level: str) -> Dict[Tuple[str, str], Dict[Tuple[str, int], float]]:
    """A ``final-metric-scores`` file as ``{(metric, lp): {(system, sid): score}}`` (sid 0 at system level).

    Args:
        path: a ``.seg.score`` or ``.sys.score`` file (``.gz`` too), no header.
        level: ``"segment"`` (``METRIC LP DATA SYSTEM SID SCORE ...``) or ``"system"``
            (``METRIC LP DATA SYSTEM SCORE ...``); further columns (ensemble, availability) are ignored.

    Returns:
        The scores of each metric and language pair.

    Raises:
        DataError: a short line, a bad SID or score, or a (system, SID) given twice.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chrF.sys.score"
        >>> _ = f.write_text("chrF\\tde-en\\tnewstest2018\\tuedin\\t0.61\\tnon-ensemble\\n")
        >>> read_metric_scores(f, "system")
        {('chrF', 'de-en'): {('uedin', 0): 0.61}}
    """
    fields = 6 if level == "segment" else 5
    path = Path(path)
    out: Dict[Tuple[str, str], Dict[Tuple[str, int], float]] = {}
    for number, line in enumerate(_read(path), start=1):
        if not line.strip():
            continue
        parts, where = line.split(), f"{path}:{number}"
        if len(parts) < fields:
            raise DataError(f"{where}: {len(parts)} fields, expected at least {fields}: {line!r}")
        metric, lp, _data, system = parts[:4]
        sid = _sid(parts[4], where) if level == "segment" else 0
        score = finite_number(parts[fields - 1], where, f"SCORE (column {fields})")
        scores = out.setdefault((metric, lp), {})
        if (system, sid) in scores:
            raise DataError(f"{where}: {metric} {lp} {system} {sid or ''} is scored twice".replace("  ", " "))
        scores[system, sid] = score
    return out


@dataclass(frozen=True)
class Package:
    """Where a package's files are: the package folder, its ``txt`` folder, the test set name."""

    root: Path
    txt: Path
    test_set: str

    def manual(self, name: str) -> Optional[Path]:
        """``manual-evaluation/<name>`` when the package has it."""
        path = self.root / "manual-evaluation" / name
        return path if path.is_file() else None

    def pairs(self) -> List[str]:
        """The language pairs with system outputs (folders of ``system-outputs/<DATA>/``)."""
        folder = self.txt / "system-outputs" / self.test_set
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def text(self, kind: str, lp: str) -> Path:
        """The ``sources`` or ``references`` file of ``lp``."""
        source, target = lp.split("-")
        name = f"{self.test_set}-{source}{target}-" + (f"src.{source}" if kind == "sources" else f"ref.{target}")
        path = self.txt / kind / name
        if not path.is_file():
            raise DataError(f"{self.txt / kind}: no {name} (the {kind[:-1]} of {lp})")
        return path

    def outputs(self, lp: str) -> Dict[str, Path]:
        """``{system: file}`` of ``lp``'s system outputs, hybrids left out."""
        folder = self.txt / "system-outputs" / self.test_set / lp
        prefix, suffix = f"{self.test_set}.", f".{lp}"
        files = sorted(folder.glob(f"{prefix}*{suffix}")) if folder.is_dir() else []
        systems = {p.name[len(prefix) : -len(suffix)]: p for p in files if "hybrid" not in p.name}
        if not systems:
            raise DataError(f"{folder}: no system outputs {prefix}<SYSTEM>{suffix}")
        return systems


def find_package(root: PathLike, test_set: str) -> Package:
    """The package at ``root``: ``manual-evaluation/`` there, and ``txt/`` or the first folder below
    holding ``system-outputs/`` and ``references/``.

    Raises:
        DataError: no ``manual-evaluation/`` folder, or no text folder.
    """
    root = Path(root)
    if not (root / "manual-evaluation").is_dir():
        raise DataError(f"{root}: no manual-evaluation/ folder (a WMT metrics-task package: --data PACKAGE)")
    candidates = [root / "txt"] + sorted(p.parent for p in root.glob("**/system-outputs") if p.is_dir())
    for folder in candidates:
        if (folder / "system-outputs").is_dir() and (folder / "references").is_dir():
            return Package(root, folder, test_set)
    raise DataError(f"{root}: no txt/ folder with system-outputs/ and references/ (the package's texts)")


def metric_files(package: Package) -> List[Tuple[Path, str]]:
    """Every ``final-metric-scores`` file below the package, with its level."""
    folder = package.root / "final-metric-scores"
    out = []
    for path in sorted(folder.glob("**/*")) if folder.is_dir() else []:
        name = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
        if path.is_file() and name.endswith((".seg.score", ".sys.score")):
            out.append((path, "segment" if name.endswith(".seg.score") else "system"))
    return out
