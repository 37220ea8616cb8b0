"""The template guarantees the empty call: ``compute([])``, TRL's empty probe and a
matrix with zero rows or columns return empty results with the metric's columns, and no hook
(``_prepare``, ``_score_items``) ever sees zero items. For every registered metric, in every
configuration whose columns differ (Prism's modes, BARTScore's directions, BERTScore's layers)."""

from __future__ import annotations

import numpy as np
import pytest
from offline import ENTRY_POINTS, TINY_BART

from nlgscore import registry

# Every registered metric as tests/offline.py runs it, and the configurations whose columns differ.
CASES = [(entry.spec, {}) for entry in ENTRY_POINTS.values()] + [
    ("bertscore:minilm:L2", {"all_layers": True}),
    (f"bartscore:{TINY_BART}:precision", {}),
    (f"bartscore:{TINY_BART}:src", {}),
]


def _never_empty(scorer, hook):
    original = getattr(scorer, hook)

    def checked(call_or_items, *rest):
        items = call_or_items if hook == "_score_items" else rest[0]
        assert len(items) > 0, f"{hook} saw zero items"
        return original(call_or_items, *rest)

    setattr(scorer, hook, checked)  # instrumentation on the real scorer, which still scores


@pytest.mark.parametrize(
    "spec, options", CASES, ids=[spec.rsplit("/", 1)[-1] + ("+" + ",".join(o) if o else "") for spec, o in CASES]
)
def test_empty_call_returns_the_columns_without_any_hook_seeing_zero_items(spec, options):
    scorer = registry.build(spec, **options)
    for hook in ("_prepare", "_score_items"):
        _never_empty(scorer, hook)
    one = scorer.compute(["a cat sat"], **{need: ["the cat sat"] for need in scorer.needs})
    for empty in (
        scorer.compute([], **{need: [] for need in scorer.needs}),  # TRL's probe: every input, empty
        scorer.compute(
            [],
            references=[] if "references" in scorer.needs else None,
            sources=[] if "sources" in scorer.needs else None,
        ),
    ):
        assert empty.scores == [] and list(empty.columns()) == list(one.columns())
        assert all(np.asarray(values).size == 0 for values in empty.columns().values())
        assert str(empty.signature) == str(one.signature)
    if scorer.needs == ("references",):  # a utility matrix with no rows or no columns
        assert scorer.matrix([], ["a", "b"]).shape == (0, 2) and scorer.matrix(["a"], []).shape == (1, 0)


def test_a_metric_without_columns_is_told_to_declare_them():
    from nlgscore.core.base import Scorer

    class Bare(Scorer):
        name = "bare"

        def _score_items(self, items, state):
            return {"n": np.ones(len(items))}

        def _finish(self, call, columns):
            raise AssertionError("not reached")

        def _signature_fields(self, call):
            return {}

    with pytest.raises(TypeError, match=r"Bare must declare its columns"):
        Bare().compute([], [])
