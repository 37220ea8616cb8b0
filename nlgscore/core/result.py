"""The one result shape every scorer returns.

* ``result.scores``: the primary per-item score (plain floats, input order);
* ``result.score``: the primary system score, the mean of ``scores`` (NaN only for no items; a
  corpus statistic for chrF and BLEU: :mod:`nlgscore.strings.result`);
* ``result.system``: every column's system value (a dict);
* ``result.columns()``: every per-item column by name; ``result.signature``;
* ``result.windows``: per item, how many windows or chunks of an over-long input were scored
  (``long_inputs="auto"``; 1 within the model's limit, and for metrics that never window);
* ``rows()`` (one dict per item), ``to_dict()`` (JSON-ready) and ``to_pandas()`` (needs pandas).

Metric-specific names stay attributes of the subclasses (``.f1``, ``.H_ref_given_cand`` …).

>>> from nlgscore.core.signature import Signature
>>> r = Result(signature=Signature("toy", _versions=False), values={"s": [1.0, 2.0], "t": [0.0, 4.0]}, primary="s")
>>> r.scores, r.score, dict(r.system)
([1.0, 2.0], 1.5, {'s': 1.5, 't': 2.0})
>>> r.to_dict()["signature"]
'nlgscore:toy'
>>> r.rows()
[{'s': 1.0, 't': 0.0}, {'s': 2.0, 't': 4.0}]
>>> r.windows
[1, 1]
"""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from nlgscore.core.signature import Signature
from nlgscore.errors import ArgumentError


class Result:
    """Per-item columns, a primary column, and the signature of the settings behind them.

    What every scorer's ``compute`` returns: ``scores`` (the primary column per item), ``score``
    (its system value), ``system``, ``columns()``, ``rows()``, ``to_dict()``, ``to_pandas()`` and
    ``signature`` mean the same for every metric; a metric's own names are attributes of its
    subclass (BERTScore's ``f1``). A scorer builds it; a caller reads it.

    Args:
        signature: the settings behind the numbers.
        values: per-item columns by name: arrays of shape ``(items,)``, or ``(layers, items)``
            for BERTScore's ``all_layers``.
        primary: the column ``scores`` and ``score`` report.
        layer: the row of 2-D columns that ``scores``/``score`` report.
        windows: per item, the windows or chunks its longest input was scored in; None: 1 each.

    Raises:
        ValueError: ``primary`` is not a column, or ``windows`` is not one count >= 1 per item.
    """

    def __init__(
        self,
        signature: Signature,
        values: Dict[str, Any],
        primary: str,
        layer: Optional[int] = None,
        windows: Optional[Sequence[int]] = None,
    ) -> None:
        if primary not in values:
            raise ValueError(f"primary column {primary!r} is not one of {sorted(values)}")
        self.signature = signature
        self.primary = primary
        self.layer = layer
        self._values = {name: np.asarray(column, dtype=np.float64) for name, column in values.items()}
        self.windows = windows

    @property
    def windows(self) -> List[int]:
        """Per item, the windows or chunks its longest input was scored in (1 within the limit)."""
        return list(self._windows)

    @windows.setter
    def windows(self, value: Optional[Sequence[int]]) -> None:
        n = len(self)
        if value is None:
            self._windows = [1] * n
            return
        counts = [int(v) for v in value]
        if len(counts) != n or any(c < 1 for c in counts):
            raise ValueError(f"windows must hold one count >= 1 per item ({n}), got {counts[:10]}")
        self._windows = counts

    # -- the shared contract --------------------------------------------------------------
    def columns(self) -> Dict[str, List[Any]]:
        """Per-item scores by column name, in input order (plain Python floats; nested lists per
        layer for 2-D columns)."""
        return {name: column.tolist() for name, column in self._values.items()}

    @property
    def scores(self) -> List[float]:
        """The primary column per item (for 2-D columns: the row ``layer``)."""
        column = self._values[self.primary]
        if column.ndim == 2:
            if self.layer is None:
                raise ArgumentError("this result has one score per layer and item: pick a layer (Result.layer)")
            column = column[self.layer]
        return column.tolist()

    @property
    def score(self) -> float:
        """Mean of :attr:`scores`; NaN for a result with no items."""
        values = self.scores
        return math.fsum(values) / len(values) if values else math.nan

    @property
    def system(self) -> Dict[str, Any]:
        """Every column's mean over items (a list per layer for 2-D columns; NaN for no items)."""
        out: Dict[str, Any] = {}
        for name, column in self._values.items():
            if column.shape[-1]:
                mean = column.mean(axis=-1)
            else:
                mean = np.full(column.shape[:-1], np.nan)
            out[name] = mean.tolist() if mean.ndim else float(mean)
        return out

    def rows(self) -> List[Dict[str, float]]:
        """One dict per item, in input order: every column's value (2-D columns as ``<name>_L<layer>``)."""
        flat = self._flat
        return [dict(zip(flat, values)) for values in zip(*flat.values())]

    @property
    def _flat(self) -> Dict[str, List[float]]:
        flat: Dict[str, List[float]] = {}
        for name, column in self._values.items():
            if column.ndim == 2:
                flat.update({f"{name}_L{k}": row.tolist() for k, row in enumerate(column)})
            else:
                flat[name] = column.tolist()
        return flat

    def to_dict(self) -> Dict[str, Any]:
        """Columns, ``scores`` (the primary column, under one key for every metric), ``system``,
        ``score`` and the signature string (JSON-ready)."""
        out: Dict[str, Any] = dict(self.columns())
        out.setdefault("scores", self.scores)
        out["system"] = dict(self.system)
        out["score"] = self.score
        out["signature"] = str(self.signature)
        return out

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per item (2-D columns become ``<name>_L<layer>``)."""
        from nlgscore.backend.extras import require

        pd = require("pandas", "pandas", "Result.to_pandas()")
        return pd.DataFrame(self._flat)

    def split(self, sizes: Sequence[int]) -> List["Result"]:
        """This result cut into consecutive results of ``sizes`` predictions (a merged call's
        parts, :meth:`Call.concat <nlgscore.core.call.Call.concat>`), each of the same class and
        signature: per-item columns and per-prediction attributes sliced, the rest shared.

        Args:
            sizes: the number of predictions of each part, in order; they add up to ``len(self)``.

        Returns:
            One result per size.

        Raises:
            ValueError: the sizes do not add up to the result's predictions.

        Example:
            >>> whole = Result(Signature("toy", _versions=False), {"s": [1.0, 2.0, 3.0]}, "s", windows=[1, 2, 1])
            >>> [(part.scores, part.windows) for part in whole.split([1, 2])]
            [([1.0], [1]), ([2.0, 3.0], [2, 1])]
        """
        n = len(self)
        if sum(sizes) != n:
            raise ValueError(f"sizes add up to {sum(sizes)}, the result has {n} predictions")
        parts = []
        start = 0
        # The attributes that are cut (per-prediction lists and arrays, tuples holding them), found
        # once: a run of 512 single-item calls splits into 512 parts.
        cut = [
            (name, value)
            for name, value in vars(self).items()
            if name != "_values" and _slice(value, slice(0), n) is not value
        ]
        for size in sizes:
            span = slice(start, start + size)
            part = copy.copy(self)
            for name, value in cut:
                setattr(part, name, _slice(value, span, n))
            part._values = {name: column[..., span] for name, column in self._values.items()}
            parts.append(part)
            start += size
        return parts

    @classmethod
    def concat(cls, parts: Sequence["Result"]) -> "Result":
        """The inverse of :meth:`split`: one result of ``parts``' predictions in order, of the
        last part's class and signature, per-item columns and per-prediction attributes joined.

        Args:
            parts: results of one scorer's calls, in the order their predictions are joined.

        Returns:
            One result of every part's predictions.

        Raises:
            ValueError: ``parts`` is empty.

        Example:
            >>> toy = Signature("toy", _versions=False)
            >>> parts = [Result(toy, {"s": [1.0]}, "s"), Result(toy, {"s": [2.0, 3.0]}, "s", windows=[2, 1])]
            >>> joined = Result.concat(parts)
            >>> joined.scores, joined.windows
            ([1.0, 2.0, 3.0], [1, 2, 1])
        """
        if not parts:
            raise ValueError("Result.concat needs at least one result")
        last = parts[-1]
        joined = copy.copy(last)
        for name, value in vars(last).items():
            if name not in ("_values", "_windows"):
                setattr(
                    joined, name, _join([vars(part).get(name) for part in parts], [len(part) for part in parts], value)
                )
        joined._values = {
            name: np.concatenate([part._values[name] for part in parts], axis=-1) for name in last._values
        }
        joined._windows = [count for part in parts for count in part._windows]
        return joined

    def __len__(self) -> int:
        return int(self._values[self.primary].shape[-1])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(items={len(self)}, score={self.score:.6g}, signature={str(self.signature)!r})"


def _slice(value: Any, span: slice, n: int) -> Any:
    """A per-prediction list or array (length ``n``) sliced, inside a tuple too; anything else as is."""
    if isinstance(value, (list, np.ndarray)) and len(value) == n:
        return value[span]
    if isinstance(value, tuple):  # e.g. BERTScore's (scorer, candidates, references) kept for plot()
        return tuple(_slice(v, span, n) for v in value)
    return value


def _join(values: List[Any], sizes: List[int], last: Any) -> Any:
    """Per-prediction lists or arrays (one per part, of the part's length) joined, inside tuples
    too; anything else is the last part's (what :func:`_slice` shares)."""
    if all(isinstance(v, list) and len(v) == n for v, n in zip(values, sizes, strict=True)):
        return [x for v in values for x in v]
    if all(isinstance(v, np.ndarray) and v.ndim and len(v) == n for v, n in zip(values, sizes, strict=True)):
        return np.concatenate(values, axis=0)
    if all(isinstance(v, tuple) and len(v) == len(last) for v in values):
        return tuple(_join([v[k] for v in values], sizes, last[k]) for k in range(len(last)))
    return last


class NonFiniteScoreError(ValueError, FloatingPointError):
    """A scorer produced NaN or infinity for non-empty input (it raises instead of returning it)."""


def check_finite(result: Result, metric: str) -> Result:
    """Raise instead of returning a non-finite score for non-empty input (never a silent NaN)."""
    for name, column in result._values.items():
        bad = ~np.isfinite(column)
        if bad.any():
            items = sorted(set(np.nonzero(bad)[-1].tolist()))[:10]
            raise NonFiniteScoreError(
                f"{metric}: column {name!r} is not finite for predictions {items}; "
                "the settings (e.g. an extreme temperature) or the inputs make the score undefined"
            )
    return result
