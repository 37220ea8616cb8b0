"""Meta-evaluation: results, intervals and files are byte-identical whatever the
chunk size of the score cache (1, 7, 2,048 distinct items per call, or no cache: one call) and for
an interrupted-then-resumed run, for a string metric and a model metric, under both CPU kernels.

The meta pipeline itself (de-duplication, chunk cache, JSON round trip of the cached floats,
ordering, statistics, report writers) adds nothing that depends on the chunking; the model
metric's bits are the same only where an item's score does not depend on its batch mates.
"""

from __future__ import annotations

import pytest

pytest.importorskip("sacrebleu")

import numpy as np
from mqm_folder import mqm_folder

from nlgscore import registry
from nlgscore.core.base import Scorer
from nlgscore.core.result import Result
from nlgscore.meta.engine import ScoreCache, Scorers
from nlgscore.meta.report import csv_text, json_text
from nlgscore.meta.tasks.human_scores import mqm

MODEL = "bertscore:minilm:L2"
PERMUTATIONS = 40  # significance clusters too, cheaply (the resampling depends on the seed alone)


class Overlap(Scorer):
    """A registry metric scored item by item in plain Python (exact on any CPU): it takes the model
    metrics' path through the chunk cache, so it checks the pipeline's own bytes."""

    name = "overlap"

    def _score_items(self, items, state):
        return {"overlap": np.array([len(set(i.prediction.split()) & set(i.reference.split())) / 3 for i in items])}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "overlap")

    def _signature_fields(self, call):
        return {}


@pytest.fixture(scope="module", autouse=True)
def _overlap():
    registry.register("overlap", Overlap, replace=True)
    yield
    registry.unregister("overlap")


class _StopAfter(Scorers):
    """Real scoring whose model raises KeyboardInterrupt (standing in for Ctrl-C) once ``calls``
    of its calls have finished: what an interrupted run leaves in the cache."""

    def __init__(self, calls: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.calls, self.finished = calls, 0

    def _scorer(self, spec):
        model = super()._scorer(spec)
        owner = self

        class Stopping:  # the loaded scorer, its compute counted and cut off
            def __getattr__(self, name):
                return getattr(model, name)

            def compute(self, *args, **kwargs):
                if owner.finished >= owner.calls:
                    raise KeyboardInterrupt
                result = model.compute(*args, **kwargs)
                owner.finished += 1
                return result

        return Stopping()


def _outputs(folder, tmp_path, name, specs, scorers):
    """Every byte a run gives: the JSON, CSV and text tables, and the exported scores."""
    table = mqm(folder, specs, permutations=PERMUTATIONS, scorers=scorers)
    files = scorers.export(tmp_path / f"export-{name}")
    return json_text(table.rows), csv_text(table.rows), str(table), [(p.name, p.read_bytes()) for p in files]


def _check_chunkings(tmp_path, specs):
    folder = mqm_folder(tmp_path / "mqm")
    want = _outputs(folder, tmp_path, "whole", specs, Scorers(record=True))  # no cache: one call per metric
    assert all(f'"metric": "{spec}"' in want[0] for spec in specs)
    for chunk in (1, 7, 2048):
        got = _outputs(
            folder,
            tmp_path,
            str(chunk),
            specs,
            Scorers(cache=ScoreCache(tmp_path / f"cache-{chunk}"), chunk=chunk, record=True),
        )
        assert got == want, f"chunk={chunk}"
    cache = ScoreCache(tmp_path / "cache-resumed")
    interrupted = _StopAfter(1, cache=cache, chunk=7)
    with pytest.raises(KeyboardInterrupt):
        mqm(folder, specs, permutations=PERMUTATIONS, scorers=interrupted)
    assert interrupted.finished == 1  # one chunk of 7 of the first model metric finished, then Ctrl-C
    resumed = Scorers(cache=cache, chunk=7, record=True)
    assert _outputs(folder, tmp_path, "resumed", specs, resumed) == want
    assert cache.hits >= 1  # the finished chunk was read, not scored again


def test_the_meta_pipeline_adds_nothing_that_depends_on_the_chunking(tmp_path):
    """A string metric (never chunked) and an exact registry metric: de-duplication, the chunk
    cache, its JSON round trip, ordering, statistics and writers give the same bytes."""
    _check_chunkings(tmp_path, ("chrf", "overlap"))


def test_model_metric_meta_bytes_do_not_depend_on_the_chunk_size_or_a_resume(tmp_path, kernel):
    """The same with a model metric, under each kernel: its scores are the same bits in any chunk."""
    _check_chunkings(tmp_path, ("chrf", MODEL))
