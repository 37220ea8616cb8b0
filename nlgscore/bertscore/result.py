"""The BERTScore result: precision, recall and F1 per pair, on the shared Result shape.

With ``all_layers=True`` the columns are ``(layers, pairs)`` arrays (embeddings output first,
as bert_score returns them); ``scores``/``score`` then report F1 of the scorer's ``num_layers``
layer (the chosen layer, also drawn by :meth:`BERTScoreResult.plot`), ``system`` a list per layer.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from nlgscore.core.result import Result
from nlgscore.core.signature import Signature
from nlgscore.errors import ArgumentError


class BERTScoreResult(Result):
    """Per-pair precision, recall and F1 (numpy arrays; ``(layers, pairs)`` with ``all_layers``).

    What :class:`~nlgscore.bertscore.scorer.BERTScorer` returns: a :class:`~nlgscore.core.result.Result`
    whose primary column is ``f1``, with bert_score's ``precision``/``recall``/``f1`` as attributes.

    Args:
        signature: the settings behind the numbers.
        values: the ``precision``, ``recall`` and ``f1`` columns.
        layer: the row of 2-D columns (``all_layers``) that ``scores`` reports.
        source: the scorer and the inputs, kept for :meth:`plot` (not part of the scores).
    """

    COLUMNS = ("precision", "recall", "f1")

    def __init__(
        self, signature: Signature, values: Dict[str, Any], layer: Optional[int] = None, source: Any = None
    ) -> None:
        super().__init__(signature, values, "f1", layer)
        # (scorer, candidates, grouped references) for plot(); not part of the scores
        self._source = source

    @property
    def precision(self) -> np.ndarray:
        """Per pair: the (idf-weighted) mean over candidate tokens of their best similarity to a reference token."""
        return self._values["precision"]

    @property
    def recall(self) -> np.ndarray:
        """Per pair: the (idf-weighted) mean over reference tokens of their best similarity to a candidate token."""
        return self._values["recall"]

    @property
    def f1(self) -> np.ndarray:
        """Per pair: the harmonic mean of precision and recall (the primary column)."""
        return self._values["f1"]

    def chosen(self, column: str) -> np.ndarray:
        """``column`` at the chosen layer: the column itself unless the result has all layers.

        Args:
            column: ``"precision"``, ``"recall"`` or ``"f1"``.

        Returns:
            One value per pair.
        """
        values = self._values[column]
        return values[self.layer] if values.ndim == 2 else values

    def plot(self, i: int = 0, path: Optional[str] = None) -> Any:
        """Heat-map of pair ``i`` at the chosen layer: token similarities, greedy matches, idf
        weights (needs matplotlib); see :func:`nlgscore.bertscore.plot.plot_pair`.

        Args:
            i: the pair's index, in input order.
            path: also save the figure there (PNG, PDF, SVG ...).

        Returns:
            The matplotlib Figure.

        Raises:
            ArgumentError: the result was not returned by a BERTScorer (it keeps no inputs).
            IndexError: ``i`` is not a pair of the result.
        """
        if self._source is None:
            raise ArgumentError("this result does not keep its inputs (it was not returned by BERTScorer)")
        from nlgscore.bertscore.plot import plot_pair

        scorer, cands, refs = self._source
        if not 0 <= i < len(cands):
            raise IndexError(f"pair index {i} out of range for {len(cands)} pairs")
        return plot_pair(scorer, cands[i], refs[i], path)
