"""Document-level BERTScore (context=k): the numbers of amazon-science/doc-mt-metrics, and an
item's score fixed by the item and its context alone."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from nlgscore.bertscore import BERTScorer
from nlgscore.errors import ArgumentError

# doc-mt-metrics' bert_score and nlgscore run the same float32 model and matching; their sums of
# a few dozen float32 products differ in order, a few ulps of values near 1 (max seen 3e-7).
TOL = 1e-6


@pytest.fixture(scope="module")
def doc_golden(golden_dir):
    with open(golden_dir / "doc_context.json", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def truncating():
    """Per layer, a scorer that cuts long texts as bert_score does (the golden's 700-word line)."""
    return {layers: BERTScorer(model_type="minilm", num_layers=layers, long_inputs="truncate") for layers in (2, 4, 6)}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_matches_doc_mt_metrics(doc_golden, bertscore_golden, truncating):
    cands, refs, docs = bertscore_golden["cands"], bertscore_golden["refs"], doc_golden["doc_ids"]
    assert len(doc_golden["bertscore"]) == 9
    for run in doc_golden["bertscore"]:
        result = _quiet(truncating[run["num_layers"]].score, cands, refs, context=run["context"], doc_ids=docs)
        for name, mine in (("P", result.precision), ("R", result.recall), ("F", result.f1)):
            for i, (ours, theirs) in enumerate(zip(mine, run[name], strict=True)):
                if isinstance(theirs, float) and math.isnan(theirs):
                    # An empty sentence after its context: their weights sum to 0 (0/0); nlgscore
                    # scores a pair with an empty side 0, as bert_score does at sentence level.
                    assert "" in (cands[i], refs[i]) and ours == 0.0
                else:
                    assert abs(ours - theirs) <= TOL, (run["num_layers"], run["context"], name, i)


def test_context_changes_scores_and_first_lines_score_as_sentences(doc_golden, bertscore_golden, minilm_scorer):
    cands, refs, docs = bertscore_golden["cands"][:30], bertscore_golden["refs"][:30], doc_golden["doc_ids"][:30]
    plain = _quiet(minilm_scorer.compute, cands, refs).scores
    doc = _quiet(minilm_scorer.compute, cands, refs, context=2, doc_ids=docs).scores
    firsts = [i for i in range(len(docs)) if i == 0 or docs[i] != docs[i - 1]]
    assert [doc[i] for i in firsts] == [plain[i] for i in firsts]  # no previous sentence: bit-identical
    assert all(doc[i] != plain[i] for i in range(len(docs)) if i not in firsts)


@pytest.mark.parametrize("batch_size, max_tokens", [(1, 2048), (5, 256), (64, 8192)])
def test_item_scores_alone_as_in_any_batch(doc_golden, bertscore_golden, minilm_scorer, batch_size, max_tokens):
    cands, refs, docs = bertscore_golden["cands"][:22], bertscore_golden["refs"][:22], doc_golden["doc_ids"][:22]
    whole = _quiet(
        minilm_scorer.compute, cands, refs, context=2, doc_ids=docs, batch_size=batch_size, max_tokens=max_tokens
    ).scores
    # Line 13 alone, with only its document's previous lines given as context lines (scored too).
    start = docs.index(docs[13])
    alone = _quiet(minilm_scorer.compute, cands[start:14], refs[start:14], context=2, doc_ids=docs[start:14]).scores
    assert alone == whole[start:14]


def test_long_context_is_windowed(minilm_scorer):
    long_ref = " ".join(["The committee met again to discuss the budget."] * 70)  # ~700 tokens
    cands, refs = ["Intro.", "They agreed on a plan."], [long_ref, "They agreed to a plan."]
    result = _quiet(minilm_scorer.compute, cands, refs, context=1, doc_ids=[1, 1])
    alone = _quiet(minilm_scorer.compute, cands, refs, context=1, doc_ids=[1, 1], batch_size=1)
    assert result.windows == [2, 2] and result.scores == alone.scores and 0.0 < result.scores[1] < 1.0


def test_signature_records_context(minilm_scorer):
    result = minilm_scorer.compute(["a b"], ["a c"], context=3, doc_ids=["d"])
    assert "|ctx:3|" in str(result.signature)
    assert "ctx:" not in str(minilm_scorer.compute(["a b"], ["a c"]).signature)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"context": -1, "doc_ids": ["d", "d"]}, "context must be >= 0"),
        ({"context": 1.5, "doc_ids": ["d", "d"]}, "context must be an int"),
        ({"context": 2}, "context=2 needs doc_ids"),
        ({"context": 1, "doc_ids": ["d"]}, "doc_ids has 1 items but there are 2 predictions"),
        ({"context": 1, "doc_ids": "dd"}, "doc_ids must be a list"),
        ({"context": 1, "doc_ids": ["d", None]}, r"doc_ids\[1\] must be a str or int"),
    ],
)
def test_bad_context_arguments_are_named(minilm_scorer, kwargs, message):
    with pytest.raises((ArgumentError, TypeError), match=message):
        minilm_scorer.compute(["a", "b"], ["a", "b"], **kwargs)


def test_documents_must_be_consecutive(minilm_scorer):
    with pytest.raises(ArgumentError, match=r"doc_ids\[2\] is 'x' again after another document"):
        minilm_scorer.compute(["a", "b", "c"], ["a", "b", "c"], context=1, doc_ids=["x", "y", "x"])


def test_metric_without_context_refuses_it():
    from nlgscore.registry import build

    with pytest.raises(ArgumentError, match="context=1: chrf does not read document context"):
        build("chrf").compute(["a b"], ["a b"], context=1, doc_ids=["d"])


def test_multiple_references_take_their_own_context(minilm_scorer):
    cands = ["The cat sat.", "It slept."]
    refs = [["A cat sat.", "The cat was sitting."], ["It was sleeping.", "It slept."]]
    both = _quiet(minilm_scorer.compute, cands, refs, context=1, doc_ids=[0, 0])
    first = _quiet(minilm_scorer.compute, cands, [[r[0]] for r in refs], context=1, doc_ids=[0, 0])
    second = _quiet(minilm_scorer.compute, cands, [[r[1]] for r in refs], context=1, doc_ids=[0, 0])
    assert np.allclose(both.f1, np.maximum(first.f1, second.f1), rtol=0, atol=0)


def test_merged_calls_keep_each_items_context(doc_golden, bertscore_golden, minilm_scorer):
    """Two callers' calls merged into one run (as the micro-batcher and the server merge them):
    each item keeps its own call's context, and gets the bits of its call scored alone."""
    from nlgscore.core.call import Call

    cands, refs, docs = bertscore_golden["cands"], bertscore_golden["refs"], doc_golden["doc_ids"]
    first = minilm_scorer.make_call(cands[:11], refs[:11], context=2, doc_ids=docs[:11])
    second = minilm_scorer.make_call(cands[5:15], refs[5:15], context=2, doc_ids=docs[5:15])
    merged = _quiet(minilm_scorer.run, Call.concat([first, second]))
    a, b = merged.split([first.size, second.size])
    assert a.scores == _quiet(minilm_scorer.compute, cands[:11], refs[:11], context=2, doc_ids=docs[:11]).scores
    assert b.scores == _quiet(minilm_scorer.compute, cands[5:15], refs[5:15], context=2, doc_ids=docs[5:15]).scores
    # Line 5 after line 4 in the first call, first of its document in the second: two scores;
    # line 7 reads lines 5 and 6 in both.
    assert a.scores[5] != b.scores[0] and a.scores[7:] == b.scores[2:6]


def test_numpy_integers_as_context_and_doc_ids_score_as_their_values(minilm_scorer):
    """A dataframe's columns hold numpy integers: they are their values, in compute as in the client."""
    import numpy as np

    preds, refs = ["It is cold.", "It rains.", "Stocks fell."], ["It is cold today.", "Rain fell.", "Markets fell."]
    want = minilm_scorer.compute(preds, refs, context=1, doc_ids=[1, 1, 2]).scores
    got = minilm_scorer.compute(preds, refs, context=np.int64(1), doc_ids=np.array([1, 1, 2])).scores
    assert got == want
