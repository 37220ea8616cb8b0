"""Reader of the BARTScore benchmark's data layout (Yuan et al. 2021; neulab/BARTScore ``SUM/``, ``D2T/``, ``WMT/``).

The authors release each of their 16 data sets as one ``data.pkl``, a dict of records in one of
three shapes (their ``SUM/README.md``, ``D2T/README.md``, ``WMT/README.md``):

* summarisation and factuality (REALSumm, SummEval, Newsroom, Rank19, QAGS_CNN, QAGS_XSUM):
  ``{doc_id: {"src", "ref_summ", ["ref_summs"], "sys_summs": {system: {"sys_summ", "scores"}}}}``;
* data-to-text (BAGEL, SFHOT, SFRES): ``{id: {"src", "ref_summs", "sys_summ", "scores"}}``;
* WMT19 DARR (de-en ... zh-en): ``{id: {"src", "ref", "better": {"sys_name", "sys", "scores"},
  "worse": {...}}}``.

``scores`` holds the human scores and, once a metric has been run over the file, that metric's
score under its name. The same records as JSON lines are read too (``{"id", "src", "refs",
"systems": {name: {"text", "scores"}}}``, ``{"id", "src", "refs", "text", "scores"}``, the
shapes of ``sum-summeval.jsonl`` and ``d2t-bagel.jsonl``).

A pickle can run code when it is read: only the user's own data path is read, and through an
unpickler that refuses every class or function reference (the authors' files hold only dicts,
lists, strings and numbers), so a file that needs one is refused rather than executed.

>>> BenchSet("toy", "d2t", Path("toy.jsonl"), ["0"], ["s"], [["r"]], [[""]], [["t"]], [[{"quality": 1.0}]]).items
1
"""

from __future__ import annotations

import io
import math
import numbers
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple, Union

from nlgscore.errors import DataError
from nlgscore.meta.data.loaders import _jsonl

PathLike = Union[str, "os.PathLike[str]"]
KINDS = ("summary", "d2t", "darr")
DARR_SIDES = ("better", "worse")


@dataclass
class BenchSet:
    """One data set of the benchmark: per record its source, references, outputs and score dicts.

    ``systems[r]``, ``texts[r]`` and ``scores[r]`` are parallel: a summary record has one entry
    per system, a data-to-text record one (system ``""``), a DARR record two (``better``, ``worse``).
    """

    name: str
    kind: str  # one of KINDS
    path: Path
    ids: List[str]  # record ids as strings, in file order
    srcs: List[str]
    refs: List[List[str]]
    systems: List[List[str]]
    texts: List[List[str]]
    scores: List[List[Dict[str, float]]]

    @property
    def items(self) -> int:
        """How many records (documents, samples or DARR pairs) the data set has."""
        return len(self.ids)

    def key(self, key: str) -> List[List[float]]:
        """Score ``key`` of every output, records then systems; DataError naming the file and key."""
        out = []
        for record, system, entry in self._entries():
            if key not in entry:
                raise DataError(f"{self.path}: record {record!r} system {system!r}: missing score key {key!r}")
            out.append(entry[key])
        return self._nested(out)

    def _entries(self):
        for record, systems, entries in zip(self.ids, self.systems, self.scores):
            for system, entry in zip(systems, entries):
                yield record, system, entry

    def _nested(self, flat: Sequence[float]) -> List[List[float]]:
        out, at = [], 0
        for systems in self.systems:
            out.append(list(flat[at : at + len(systems)]))
            at += len(systems)
        return out


# The only references a data pickle may make: numpy's scalar rebuild (the authors' scored files hold
# numpy floats); every other class or function is refused, so reading a file never runs its code.
_NUMPY_SCALARS = {
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "dtype"),
}


class _DataOnly(pickle.Unpickler):
    """Refuses every global but numpy's scalars: dicts, lists, strings and numbers only."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _NUMPY_SCALARS:
            import numpy as np

            return np.dtype if name == "dtype" else _numpy_scalar
        raise pickle.UnpicklingError(f"refers to {module}.{name}; only plain data (dicts, lists, text, numbers)")


def _numpy_scalar(dtype: Any, data: bytes = b"") -> Any:
    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.kind not in "biuf":
        raise pickle.UnpicklingError(f"numpy scalar of dtype {dtype!r}; only numbers")
    return np.frombuffer(data, dtype=dtype, count=1)[0]


def read_pickle(path: PathLike) -> Any:
    """The plain data of pickle ``path``; DataError naming the file for one that is not plain data.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "data.pkl"
    ...     _ = path.write_bytes(pickle.dumps({0: {"src": "a"}}))
    ...     read_pickle(path)
    {0: {'src': 'a'}}
    """
    try:
        with open(path, "rb") as handle:
            return _DataOnly(io.BufferedReader(handle)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, AttributeError, IndexError) as err:
        raise DataError(f"{path}: not a data pickle of the BARTScore layout ({err})") from None


def _field(record: Any, key: str, where: str) -> Any:
    if not isinstance(record, Mapping):
        raise DataError(f"{where}: must be a dict, got {type(record).__name__}")
    if key not in record:
        raise DataError(f"{where}: missing key {key!r}")
    return record[key]


def _string(record: Any, key: str, where: str) -> str:
    value = _field(record, key, where)
    if not isinstance(value, str):
        raise DataError(f"{where}: key {key!r} must be a string, got {value!r}")
    return value


def _strings(record: Any, key: str, where: str) -> List[str]:
    value = _field(record, key, where)
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise DataError(f"{where}: key {key!r} must be a non-empty list of strings")
    if not all(isinstance(v, str) for v in value):
        raise DataError(f"{where}: key {key!r} must hold strings only")
    return list(value)


def _scores(record: Any, key: str, where: str) -> Dict[str, float]:
    value = _field(record, key, where)
    if not isinstance(value, Mapping):  # empty in the DARR files: the pair itself is the judgment
        raise DataError(f"{where}: key {key!r} must be a dict of scores, got {type(value).__name__}")
    out = {}
    for name, score in value.items():
        if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
            raise DataError(f"{where}: {key}[{name!r}] must be a finite number, got {score!r}")
        out[str(name)] = float(score)
    return out


def _kind(record: Any, where: str) -> str:
    if isinstance(record, Mapping):
        if "sys_summs" in record or "systems" in record:
            return "summary"
        if "better" in record or "worse" in record:
            return "darr"
        if "sys_summ" in record or "text" in record:
            return "d2t"
    raise DataError(f"{where}: neither a summary ('sys_summs'), data-to-text ('sys_summ') nor DARR ('better') record")


def _references(record: Mapping[str, Any], kind: str, where: str) -> List[str]:
    for key in ("refs", "ref_summs"):  # several references: SummEval's and the D2T sets'
        if key in record:
            return _strings(record, key, where)
    if kind == "darr":
        return [_string(record, "ref", where)]
    return [_string(record, "ref_summ", where)]


def _outputs(record: Mapping[str, Any], kind: str, where: str) -> Tuple[List[str], List[str], List[Dict[str, float]]]:
    if kind == "d2t":
        key = "sys_summ" if "sys_summ" in record else "text"
        return [""], [_string(record, key, where)], [_scores(record, "scores", where)]
    if kind == "darr":
        sides = [_field(record, side, where) for side in DARR_SIDES]
        at = [f"{where} {side}" for side in DARR_SIDES]
        return (
            list(DARR_SIDES),
            [_string(s, "sys", w) for s, w in zip(sides, at)],
            [_scores(s, "scores", w) for s, w in zip(sides, at)],
        )
    key = "sys_summs" if "sys_summs" in record else "systems"
    outputs = _field(record, key, where)
    if not isinstance(outputs, Mapping) or not outputs:
        raise DataError(f"{where}: key {key!r} must be a non-empty dict of systems")
    text_key = "sys_summ" if key == "sys_summs" else "text"
    systems, texts, scores = [], [], []
    for system, entry in outputs.items():
        place = f"{where} system {system!r}"
        systems.append(str(system))
        texts.append(_string(entry, text_key, place))
        scores.append(_scores(entry, "scores", place))
    return systems, texts, scores


def _records(path: Path) -> List[Tuple[str, Any]]:
    if path.suffix == ".jsonl":
        return [(str(_field(record, "id", where)), record) for where, record in _jsonl(path)]
    data = read_pickle(path)
    if not isinstance(data, Mapping):
        raise DataError(f"{path}: must hold a dict of records, got {type(data).__name__}")
    return [(str(key), record) for key, record in data.items()]


def load_bench_set(path: PathLike, name: str) -> BenchSet:
    """Data set ``name`` from ``path``: the authors' ``data.pkl`` (or a scored copy of it) or JSON lines.

    Every record must have the shape of the first one; a missing or malformed key is a DataError
    naming the file, the record and the key.

    Args:
        path: a ``.pkl`` file in the authors' layout or a ``.jsonl`` file of the same records.
        name: the data set's name (its folder, e.g. ``SummEval``).

    Returns:
        The records as a ``BenchSet``.

    Raises:
        DataError: the file is not plain data, or a record lacks a key or has one of the wrong type.

    Example:
        >>> import json, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = Path(folder) / "toy.jsonl"
        ...     _ = path.write_text(json.dumps({"id": 1, "src": "s", "refs": ["r"], "text": "t",
        ...                                     "scores": {"quality": 4}}) + "\\n")
        ...     data = load_bench_set(path, "toy")
        >>> data.kind, data.texts, data.key("quality")
        ('d2t', [['t']], [[4.0]])
    """
    path = Path(path)
    records = _records(path)
    if not records:
        raise DataError(f"{path}: no records")
    kind = _kind(records[0][1], f"{path}: record {records[0][0]!r}")
    fields: Dict[str, List[Any]] = {k: [] for k in ("ids", "srcs", "refs", "systems", "texts", "scores")}
    for record_id, record in records:
        where = f"{path}: record {record_id!r}"
        if _kind(record, where) != kind:
            raise DataError(f"{where}: not a {kind} record like the first one")
        systems, texts, scores = _outputs(record, kind, where)
        for key, value in zip(
            fields, (record_id, _string(record, "src", where), _references(record, kind, where), systems, texts, scores)
        ):
            fields[key].append(value)
    if len(set(fields["ids"])) != len(fields["ids"]):
        raise DataError(f"{path}: record ids repeat (as strings)")
    return BenchSet(name, kind, path, **fields)
