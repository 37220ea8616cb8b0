"""Where :meth:`Scorer.acompute <nlgscore.core.base.Scorer.acompute>` gets its Call queue: a
factory registered from above.

The queue that merges concurrent calls (:mod:`nlgscore.scheduler`) sits above the contract, so the
contract never imports it: the scheduler registers its factory here when it is imported, which
``import nlgscore`` does, and :meth:`Scorer.batcher <nlgscore.core.base.Scorer.batcher>` calls it
once per scorer.

>>> made = []
>>> previous = register_batcher_factory(lambda scorer: made.append(scorer) or "a batcher")
>>> new_batcher("scorer"), made
('a batcher', ['scorer'])
>>> register_batcher_factory(previous) is not None
True
"""

from __future__ import annotations

from typing import Any, Callable, Optional

BatcherFactory = Callable[[Any], Any]
_FACTORY: Optional[BatcherFactory] = None


def register_batcher_factory(factory: Optional[BatcherFactory]) -> Optional[BatcherFactory]:
    """Make ``factory(scorer)`` the maker of every scorer's own batcher; the previous one back."""
    global _FACTORY
    previous, _FACTORY = _FACTORY, factory
    return previous


def new_batcher(scorer: Any) -> Any:
    """A new batcher of ``scorer`` from the registered factory."""
    if _FACTORY is None:
        raise RuntimeError("no Call queue is registered for Scorer.acompute (import nlgscore.scheduler registers it)")
    return _FACTORY(scorer)
