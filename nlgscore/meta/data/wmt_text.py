"""The text side of a WMT test set in mt-metrics-eval's folder layout (also WMT's own ``txt/`` folder).

Layout under ``root`` (one segment a line, every file aligned with the sources)::

    sources/<LP>.txt                 the source segments
    references/<LP>.<REF>.txt        reference REF (refA, refB ...)
    system-outputs/<LP>/<SYS>.txt    system SYS's outputs
    documents/<LP>.docs              optional: per line ``domain<TAB>document``

``LP`` is a pair code as the data set spells it: ``en-cs`` (WMT24) or a locale pair ``en-cs_CZ``
(WMT24++, WMT25). Line 0 of WMT24/WMT25 sources is a CANARY line; it is kept as an item (its
human score is 100 for every system in the converted gold, as mt-metrics-eval's data files have it).
A file whose length differs from the sources, a documents line without two fields or a missing
folder is a ``DataError`` naming the file (and line).

>>> import pathlib, tempfile
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> for name, text in {"sources/en-cs.txt": "a\\nb\\n", "references/en-cs.refA.txt": "A\\nB\\n",
...                    "system-outputs/en-cs/S1.txt": "A\\nb\\n", "documents/en-cs.docs": "news\\td1\\nnews\\td1\\n"}.items():
...     (root / name).parent.mkdir(parents=True, exist_ok=True); _ = (root / name).write_text(text)
>>> texts = read_text_layout(root, "en-cs")
>>> texts.refs["refA"], sorted(texts.outputs), texts.docs
(['A', 'B'], ['S1'], ['d1', 'd1'])
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Union

from nlgscore.errors import DataError
from nlgscore.meta.data.files import read_lines

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class TextSet:
    """Sources, references by name, system outputs by name, document and domain per line."""

    root: Path
    lp: str
    src: List[str]
    refs: Dict[str, List[str]]
    outputs: Dict[str, List[str]]
    docs: Optional[List[str]] = None
    domains: Optional[List[str]] = None


def _aligned(path: Path, n: int, what: str) -> List[str]:
    lines = read_lines(path, what)
    if len(lines) != n:
        raise DataError(f"{path}:{min(len(lines), n) + 1}: {what} has {len(lines)} lines, the sources {n}")
    return lines


def read_text_layout(root: PathLike, lp: str) -> TextSet:
    """Read the sources, references, system outputs and documents of pair ``lp`` under ``root``."""
    root = Path(root)
    source = root / "sources" / f"{lp}.txt"
    if not source.is_file():
        found = sorted(p.stem for p in (root / "sources").glob("*.txt")) if (root / "sources").is_dir() else []
        raise DataError(f"{source}: no sources for pair {lp!r} (pairs here: {', '.join(found) or 'none'})")
    src = read_lines(source, "source file")
    refs = {}
    for path in sorted((root / "references").glob(f"{lp}.*.txt")):
        name = path.name[len(lp) + 1 : -len(".txt")]
        if not name or "." in name:
            raise DataError(f"{path}: a reference file is named <LP>.<REF>.txt")
        refs[name] = _aligned(path, len(src), "reference file")
    if not refs:
        raise DataError(f"{root / 'references'}: no reference {lp}.<REF>.txt")
    folder = root / "system-outputs" / lp
    if not folder.is_dir():
        raise DataError(f"{folder}: no system-outputs folder for pair {lp!r}")
    outputs = {p.stem: _aligned(p, len(src), "system output file") for p in sorted(folder.glob("*.txt"))}
    docs = domains = None
    doc_file = root / "documents" / f"{lp}.docs"
    if doc_file.is_file():
        docs, domains = [], []
        for number, line in enumerate(_aligned(doc_file, len(src), "documents file"), start=1):
            fields = line.split("\t")
            if len(fields) != 2 or not all(f.strip() for f in fields):
                raise DataError(f"{doc_file}:{number}: expected <domain><TAB><document>, got {line!r}")
            domains.append(fields[0])
            docs.append(fields[1])
    return TextSet(root, lp, src, refs, outputs, docs, domains)
