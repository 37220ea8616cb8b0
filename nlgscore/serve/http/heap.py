"""Keeping CPython's cyclic garbage collector off the objects of a loaded model.

A process with a scorer loaded (torch, transformers, tokenizers, the model's modules) tracks a
few hundred thousand objects that live as long as it does. Every oldest-generation collection
walks all of them with the GIL held: 0.25-0.32 s a collection on an AMD EPYC (Zen 4), one every
one or two passes of 512 requests from 64 clients. While it runs, the model thread of a
:class:`~nlgscore.scheduler.microbatch.MicroBatcher` cannot take the GIL between two operations, so
a server's pass took 1.99-2.25 s with one and 1.45-1.54 s without (BENCHMARKS.md "Serving").

:func:`freeze_heap` collects once, then moves everything alive into the permanent generation
(``gc.freeze``), which collections skip: objects made later are still collected as before. This
is what vLLM does after its start-up (``freeze_gc_heap`` in ``vllm/utils/gc_utils.py``).
``nlgscore serve`` and its Ray replicas call it once the scorer is loaded; a process of your own
that serves many calls (a reward worker) may call it after loading. It is never called for you
in your process: an object that is alive when it runs, and later becomes unreachable in a
reference cycle, is never freed.

>>> import gc
>>> frozen = freeze_heap()
>>> frozen > 0 and gc.get_freeze_count() > 0  # a live count: a frozen object freed later leaves it
True
>>> gc.unfreeze()  # this test process goes on collecting everything
"""

from __future__ import annotations

import gc

__all__ = ["freeze_heap"]


def freeze_heap() -> int:
    """Collect garbage, then exempt every object alive now from later collections; how many
    objects are exempt (``gc.get_freeze_count()`` just after)."""
    gc.collect()  # garbage frozen now would never be freed
    gc.freeze()
    return gc.get_freeze_count()
