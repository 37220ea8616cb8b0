"""Progress bars: one policy for every bar of the package (:func:`progress_bar`), and a bar
counted in input items, whatever unit a metric's work comes in (:class:`ItemProgress`).

Every bar is tqdm's, drawn only where it informs:

* after :data:`DELAY_S` seconds (tqdm's ``delay``): a job that ends sooner shows no bar at all;
* only on a terminal (or a Jupyter kernel, where tqdm draws a widget): a bar redraws itself with
  carriage returns and, nested, with cursor-movement escape codes, which a log file or a pipe
  would keep as garbage, so a stderr that is not a terminal gets no bar.

The template draws one bar per call (per process share) over the *input* items it scores, so
200,000 input lines show as ``x/200000`` even when de-duplication leaves fewer distinct items
or a metric batches other units (token-budget batches of text pairs, BERTScore's chunks). A
metric reports ``progress(done, total)`` in its own units and the bar moves in proportion.

>>> with progress_bar(total=3, enabled=False) as bar:
...     bar.update(3)
>>> bar.disable
True
>>> bar = ItemProgress(10, enabled=False)
>>> bar(1, 4), bar.position
(None, 2)
>>> bar(4, 4), bar.position
(None, 10)
>>> def stop():
...     raise RuntimeError("cancelled")
>>> ItemProgress(10, check=stop)(1, 4)
Traceback (most recent call last):
RuntimeError: cancelled
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, TextIO

DELAY_S = 2.0  # seconds of work before a bar appears (tqdm's delay)


def draws_bars(stream: Optional[TextIO] = None) -> bool:
    """Whether bars may be drawn to ``stream`` (default: stderr): a terminal, or a Jupyter kernel.

    >>> import io
    >>> draws_bars(io.StringIO())
    False
    """
    stream = sys.stderr if stream is None else stream
    if "ipykernel" in sys.modules:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(*, enabled: bool = True, **options: Any) -> Any:
    """A tqdm bar (``options`` are tqdm's: ``total``, ``desc``, ``unit``, ``initial``, ``leave``
    ...) under the package's policy (module doc): disabled unless ``enabled`` and stderr draws
    bars; shown after :data:`DELAY_S` seconds. A disabled bar takes every call and draws nothing."""
    stream = options.pop("file", None) or sys.stderr
    show = bool(enabled) and draws_bars(stream)
    if show and "ipykernel" in sys.modules:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    options.setdefault("delay", DELAY_S)
    return tqdm(file=stream, disable=not show, **options)


class ItemProgress:
    """A bar of ``items`` input items (drawn only when ``enabled``, under :func:`progress_bar`'s
    policy); call it with ``(done, total)`` work units to move it to ``items * done // total``.
    ``check``, if given, runs first at each report with work left (a metric reports after each
    batch): what it raises stops the work there (the template passes the call's cancellation
    check); the report of the last batch runs no check, so finished work is never thrown away."""

    def __init__(
        self,
        items: int,
        enabled: bool = False,
        desc: Optional[str] = None,
        check: Optional[Callable[[], None]] = None,
    ) -> None:
        self.items = items
        self.position = 0
        self.check = check
        self.bar: Any = progress_bar(total=items, desc=desc, unit="item") if enabled and draws_bars() else None

    def __call__(self, done: int, total: int) -> None:
        if self.check is not None and done < total:  # work is left: the last report finds it all done
            self.check()
        self._move(self.items if total <= 0 else min(self.items, self.items * done // total))

    def _move(self, target: int) -> None:
        if target > self.position:
            if self.bar is not None:
                self.bar.update(target - self.position)
            self.position = target

    def close(self) -> None:
        """Complete the bar (every item is scored when the work is done) and close it; called while an
        exception propagates (an interrupt, an error: the template's ``finally``), the bar stays where
        the work stopped, so an interrupted run never shows 100 %."""
        if sys.exc_info()[0] is None:
            self._move(self.items)  # no check: the work is done, its answer stands
        if self.bar is not None:
            self.bar.close()
