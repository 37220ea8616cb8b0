"""A progress bar counted in input items, whatever unit a metric's work comes in.

The template draws one bar per call (per process share) over the *input* items it scores, so
200,000 input lines show as ``x/200000`` even when de-duplication leaves fewer distinct items
or a metric batches other units (token-budget batches of text pairs, BERTScore's chunks). A
metric reports ``progress(done, total)`` in its own units and the bar moves in proportion.

>>> bar = ItemProgress(10, enabled=False)
>>> bar(1, 4), bar.position
(None, 2)
>>> bar(4, 4), bar.position
(None, 10)
"""

from __future__ import annotations

import sys
from typing import Any, Optional


class ItemProgress:
    """A tqdm bar of ``items`` input items (drawn only when ``enabled``); call it with
    ``(done, total)`` work units to move it to ``items * done // total``."""

    def __init__(self, items: int, enabled: bool = False, desc: Optional[str] = None) -> None:
        from tqdm.auto import tqdm

        self.items = items
        self.position = 0
        self.bar: Any = tqdm(total=items, desc=desc, unit="item") if enabled else None

    def __call__(self, done: int, total: int) -> None:
        target = self.items if total <= 0 else min(self.items, self.items * done // total)
        if target > self.position:
            if self.bar is not None:
                self.bar.update(target - self.position)
            self.position = target

    def close(self) -> None:
        """Complete the bar (every item is scored when the work is done) and close it; called while an
        exception propagates (an interrupt, an error: the template's ``finally``), the bar stays where
        the work stopped, so an interrupted run never shows 100 %."""
        if sys.exc_info()[0] is None:
            self(1, 1)
        if self.bar is not None:
            self.bar.close()
