"""One way to build a scorer: ``Scorer.__init__`` owns the run-time settings,
``registry.build`` is the one builder (``load`` its alias) and ``registry.cached`` the one
scorer cache, keyed by content."""

from __future__ import annotations

import inspect
import threading
from pathlib import Path

import numpy as np
import pytest

import nlgscore
from nlgscore import registry
from nlgscore.core.base import Scorer, metric_options
from nlgscore.core.result import Result
from nlgscore.core.runtime import RUNTIME_OPTIONS, resolve_runtime
from nlgscore.errors import ArgumentError, ArgumentTypeError

GOLDEN = Path(__file__).parent / "golden"


class Counted(Scorer):
    """A model-free metric that counts its constructions (what the cache must save)."""

    name = "counted"
    built = 0

    def __init__(self, scale: float = 1.0, words=None, **runtime_options) -> None:
        super().__init__(**runtime_options)
        type(self).built += 1
        self.scale, self.words = scale, words

    def _score_items(self, items, state):
        return {"len": np.array([self.scale * len(i.prediction) for i in items], dtype=float)}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "len")

    def _signature_fields(self, call):
        return {"scale": self.scale}


class Legacy(Counted):
    """A constructor that never reaches ``Scorer.__init__`` (a plug-in written before it)."""

    name = "legacy"

    def __init__(self, scale: float = 1.0) -> None:
        self.scale, self.words = scale, None


@pytest.fixture
def toys():
    registry.register("counted", Counted, replace=True)
    registry.register("legacy", Legacy, replace=True)
    registry.clear_cache()
    Counted.built = 0
    yield
    registry.unregister("counted")
    registry.unregister("legacy")
    registry.clear_cache()


@pytest.mark.parametrize("name", registry.metric_names(builtin=True))
def test_metric_constructors_list_only_their_own_options(name):
    cls = registry.metric(name).scorer_class()
    params = inspect.signature(cls.__init__).parameters
    assert not set(params) & set(RUNTIME_OPTIONS), f"{cls.__name__} re-lists run-time options"
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), (
        f"{cls.__name__} must forward **runtime_options"
    )
    assert metric_options(cls) and not set(metric_options(cls)) & set(RUNTIME_OPTIONS)


def test_runtime_options_are_resolved_once_by_scorer_init(toys):
    scorer = Counted(scale=2.0, device="cpu", batch_size=3, max_tokens=64, progress=False)
    assert (scorer.runtime.batch_size, scorer.runtime.max_tokens, scorer.device.type) == (3, 64, "cpu")
    with pytest.raises(ArgumentError, match="^batch_size must be a positive integer"):
        Counted(batch_size=0)
    with pytest.raises(ArgumentError, match="^dtype must be one of"):
        Counted(dtype="int8")
    with pytest.raises(
        ArgumentTypeError,
        match=r"^Counted got an unknown option scal=; its options: scale, words; run-time options: device",
    ):
        Counted(scal=2.0)


def test_a_ready_runtime_can_be_passed_and_each_family_keeps_its_default_budget(toys, minilm_scorer):
    encoder = resolve_runtime("encoder", device="cpu", batch_size=5)

    class Seq2seq(Counted):
        budget_family = "seq2seq"

    assert Counted(runtime=encoder).runtime == encoder
    other = Seq2seq(runtime=encoder)  # the encoder's default budget is not a choice: seq2seq gets its own
    assert (other.runtime.batch_size, other.runtime.max_tokens, other.runtime.family) == (
        5,
        resolve_runtime("seq2seq", device="cpu").max_tokens,
        "seq2seq",
    )
    assert Seq2seq(runtime=resolve_runtime("encoder", device="cpu", max_tokens=100)).runtime.max_tokens == 100
    assert Counted(runtime=encoder, batch_size=7).runtime.batch_size == 7  # an option overrides the runtime's
    with pytest.raises(ArgumentTypeError, match="^runtime must be a nlgscore.core.runtime.Runtime"):
        Counted(runtime={"device": "cpu"})
    bert = type(minilm_scorer)(model_type="minilm", num_layers=4, runtime=encoder)
    assert bert.runtime.batch_size == 5 and bert.compute(["a cat"], ["a cat"]).scores == pytest.approx([1.0], abs=1e-6)


def test_build_splits_runtime_from_metric_options_and_drops_nothing(toys):
    scorer = registry.build("counted", scale=2.0, batch_size=4)
    assert (scorer.scale, scorer.runtime.batch_size) == (2.0, 4)
    assert registry.load is not registry.build and nlgscore.load("counted", scale=2.0).scale == 2.0
    with pytest.raises(ArgumentTypeError, match="unknown option scal="):
        registry.build("counted", scal=2.0)
    # a constructor that takes no run-time options still gets the resolved runtime, set after construction
    legacy = registry.build("legacy", scale=3.0, max_tokens=32, batch_size=2)
    assert (legacy.scale, legacy.runtime.max_tokens, legacy.runtime.batch_size) == (3.0, 32, 2)
    with pytest.raises(ArgumentError, match="^batch_size must be a positive integer"):
        registry.build("legacy", batch_size=-1)


def test_cache_is_keyed_by_content_never_by_repr(toys):
    first = registry.cached("counted", scale=2.0, words=["a", "b"])
    assert registry.cached("counted", scale=2.0, words=("a", "b")) is first  # same content, another type
    assert registry.cached("counted", words=np.array(["a", "b"]), scale=2.0, device="cpu") is first
    assert registry.cached("counted", scale=2.0, words=["a", "c"]) is not first
    assert registry.cached("counted", scale=2.0, words=["a", "b"], batch_size=8) is not first
    assert Counted.built == 3

    class Elided(list):  # two different contents with one repr: a repr key would mix them up
        def __repr__(self):
            return "[...]"

    one, two = registry.cached("counted", words=Elided(["x"])), registry.cached("counted", words=Elided(["y"]))
    assert one is not two and one.words == ["x"] and two.words == ["y"]


def test_cache_builds_once_across_threads(toys):
    got, barrier = [], threading.Barrier(8)

    def worker():
        barrier.wait()
        got.append(registry.cached("counted", scale=5.0))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8 and all(s is got[0] for s in got) and Counted.built == 1


def test_spec_and_options_spellings_share_one_entry(minilm_scorer):
    registry.clear_cache()
    a = registry.cached("bertscore:minilm:L2")
    assert registry.cached("bertscore", model_type="minilm", num_layers=2) is a
    assert registry.cached("bertscore:minilm:L2", device="cpu", dtype="float32", progress=False) is a
    registry.clear_cache()


def test_capabilities_are_class_attributes_the_adapters_read(minilm_scorer):
    """What adapters need is declared by the scorer, never detected by name or private attribute."""
    from nlgscore.stream.row_windows import check_streamable

    classes = [registry.metric(name).scorer_class() for name in registry.metric_names(builtin=True)]
    for cls in classes:
        assert isinstance(cls.caches_embeddings, bool) and isinstance(cls.pairs_from_embeddings, bool)
        assert cls.one_pass is None or (isinstance(cls.one_pass, tuple) and len(cls.one_pass) == 3)
    bart = registry.build(f"bartscore:{GOLDEN / 'tiny-bart'}")
    option, value, columns = bart.one_pass
    one = bart.compute(["a cat sat"], ["the cat sat"], **{option: value})
    for other, column in columns.items():  # each direction's own call equals the column of the one pass
        assert bart.compute(["a cat sat"], ["the cat sat"], **{option: other}).scores == pytest.approx(
            one.columns()[column], abs=1e-6
        )
    assert not minilm_scorer.call_dependent
    per_call_idf = registry.build("bertscore:minilm:L2", idf=True)
    assert per_call_idf.call_dependent
    with pytest.raises(ArgumentError, match="idf taken from each call's references"):
        check_streamable(per_call_idf)
    per_call_idf.compute_idf(["a cat", "a dog"])
    assert not per_call_idf.call_dependent
    check_streamable(per_call_idf)
