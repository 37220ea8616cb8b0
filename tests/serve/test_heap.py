"""nlgscore.serve.http.heap.freeze_heap, and the app setting that calls it once the scorer is loaded:
what is alive is exempt from collections, garbage is freed first, later objects are still
collected. Every test gives the test process its collections back (``gc.unfreeze``)."""

from __future__ import annotations

import gc
import re
import weakref

import pytest

from nlgscore.serve.http.heap import freeze_heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def unfreeze():
    yield
    gc.unfreeze()


def test_garbage_is_freed_before_the_freeze_and_later_garbage_after_it(unfreeze):
    alive, dead = Node(), Node()
    dead_ref = weakref.ref(dead)
    del dead
    frozen = freeze_heap()
    assert dead_ref() is None  # collected first, not frozen forever
    assert frozen > 0 and gc.get_freeze_count() > 0
    assert not any(obj is alive for obj in gc.get_objects())  # in the permanent generation: collections skip it
    later = Node()
    later_ref = weakref.ref(later)
    del later
    gc.collect()
    assert later_ref() is None  # objects made after the freeze are still collected


@pytest.mark.parametrize("freeze", [False, True])
def test_the_app_freezes_the_loaded_heap_only_when_asked(unfreeze, freeze, minilm_scorer):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from nlgscore.serve.http.app import create_app, wait_ready

    gc.unfreeze()
    scorer = minilm_scorer  # loaded before the app starts, as the server's is when it freezes
    with TestClient(create_app(scorer, freeze_heap=freeze)) as client:
        wait_ready(client)
        metrics = client.get("/metrics").text
    model = scorer.encoder.model
    tracked = any(obj is model for obj in gc.get_objects())
    assert tracked is not freeze
    assert (gc.get_freeze_count() > 0) is freeze
    gauge = re.search(r"^nlgscore_gc_frozen_objects (\S+)$", metrics, re.M)
    assert gauge and (float(gauge.group(1)) > 0) is freeze  # a live count: frozen objects freed since then leave it
    assert "python_gc_collections_total" in metrics
