"""The small base class every scorer shares (in the spirit of sacreBLEU's ``Metric``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Optional, Sequence

from nlgscore.core.result import Result
from nlgscore.core.signature import Signature


class Scorer(ABC):
    """A loaded metric: ``compute(predictions, references, sources)`` → :class:`Result`.

    ``name`` is the metric's name in signatures and specs; ``needs`` says which inputs
    ``compute`` requires by default (``"references"``, ``"sources"`` or both).
    """

    name: ClassVar[str] = ""
    needs: ClassVar[tuple] = ("references",)

    @abstractmethod
    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> Result:
        """Score each prediction; results in input order."""

    @property
    @abstractmethod
    def signature(self) -> Signature:
        """Settings of this scorer that change a number."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.signature})"
