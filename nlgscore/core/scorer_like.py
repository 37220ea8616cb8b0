"""What an adapter needs of a scorer: the small protocol a local :class:`~nlgscore.core.base.Scorer`
and a :class:`~nlgscore.remote.client.RemoteScorer` both implement (neither subclasses the other).

Adapters (integrations, MBR, meta) are typed against :class:`ScorerLike`, so a scorer served by
``nlgscore serve`` runs wherever a local one does; ``isinstance(x, ScorerLike)`` tells a scorer
from a spec string.

>>> from nlgscore.registry import build
>>> isinstance(build("bertscore:minilm", num_layers=2), ScorerLike), isinstance("bertscore", ScorerLike)
(True, False)
"""

from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence, Tuple, runtime_checkable

import numpy as np

from nlgscore.core.result import Result
from nlgscore.core.signature import Signature

__all__ = ["ScorerLike"]


@runtime_checkable
class ScorerLike(Protocol):
    """``name``, ``needs`` (``"references"`` and/or ``"sources"``), ``signature``, and the three
    ways to score: :meth:`compute`, :meth:`acompute` (a coroutine) and :meth:`matrix`."""

    name: str
    needs: Tuple[str, ...]

    @property
    def signature(self) -> Signature:
        """The settings that change a number."""

    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> Result:
        """One score per prediction, in input order.

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several (``[[str]]``).
            sources: one source per prediction.
            **options: the metric's call options.

        Returns:
            The result.
        """

    async def acompute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> Result:
        """:meth:`compute` as a coroutine (concurrent calls are batched together).

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several.
            sources: one source per prediction.
            **options: the metric's call options.

        Returns:
            The result.
        """

    def matrix(
        self,
        predictions: Sequence[str],
        references: Sequence[str],
        *,
        source: Optional[str] = None,
        column: Optional[str] = None,
        **options: Any,
    ) -> np.ndarray:
        """Every prediction against every reference: shape ``(len(predictions), len(references))``.

        Args:
            predictions: the rows' texts.
            references: the columns' texts.
            source: the one source of every cell, for a metric that scores with references and sources.
            column: another column than the primary one.
            **options: the metric's call options.

        Returns:
            The matrix.
        """
