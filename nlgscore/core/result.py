"""The result every scorer returns: per-item scores in input order, a system score, a signature."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List

from nlgscore.core.signature import Signature


@dataclass
class Result:
    """Base class of the scorers' results.

    Subclasses are dataclasses whose per-item columns are listed in ``COLUMNS``; ``primary`` names
    the column a single number should come from (e.g. ``f1`` for BERTScore).
    """

    COLUMNS: ClassVar[tuple] = ()
    primary: ClassVar[str] = ""

    signature: Signature = field(repr=False)

    def columns(self) -> Dict[str, List[float]]:
        """Per-item scores by column name, in input order (plain Python floats)."""
        return {name: _to_list(getattr(self, name)) for name in self.COLUMNS}

    def __len__(self) -> int:
        return len(self.columns()[self.primary])

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = dict(self.columns())
        out["system"] = self.system
        out["signature"] = str(self.signature)
        return out

    @property
    def system(self) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def _to_list(values: Any) -> List[Any]:
    if hasattr(values, "tolist"):
        return values.tolist()
    return list(values)
