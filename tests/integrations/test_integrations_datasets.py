"""nlgscore.integrations.datasets.map_function with a real datasets.Dataset and the MiniLM model."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

datasets = pytest.importorskip("datasets")

from nlgscore.integrations.datasets import map_function  # noqa: E402

PREDS = ["it is freezing today", "the cat sat", "", "a dog barks loudly", "hello world"]
REFS = ["the weather is cold today", "a cat was sitting", "something", "dogs bark", "hello world"]
SPEC = "bertscore:minilm:L4"  # the same model and layer as the session's minilm_scorer


@pytest.fixture(scope="module")
def table():
    return datasets.Dataset.from_dict({"prediction": PREDS, "reference": REFS, "id": list(range(len(PREDS)))})


def test_columns_equal_direct_scores_for_any_batch_size(table, minilm_scorer):
    expected = minilm_scorer.score(PREDS, REFS)
    for batch_size in (2, 1000):  # each map pickles the scorer to fingerprint it: keep these few
        out = table.map(map_function(minilm_scorer), batched=True, batch_size=batch_size)
        assert out.column_names == [
            "prediction",
            "reference",
            "id",
            "bertscore_precision",
            "bertscore_recall",
            "bertscore_f1",
        ]
        for name in ("precision", "recall", "f1"):
            np.testing.assert_allclose(out[f"bertscore_{name}"], getattr(expected, name), atol=1e-6)
        assert out["id"] == list(range(len(PREDS)))  # rows keep their order


def test_function_is_light_and_picklable():
    fn = map_function(SPEC, prefix="bs")
    blob = pickle.dumps(fn)
    assert len(blob) < 2000  # the spec travels to the workers, not the model
    clone = pickle.loads(blob)
    assert clone.output_prefix == "bs" and clone.metric == SPEC


def test_num_proc_2_matches_single_process(table, minilm_scorer):
    out = table.map(map_function(SPEC), batched=True, batch_size=2, num_proc=2)
    expected = minilm_scorer.score(PREDS, REFS)
    np.testing.assert_allclose(out["bertscore_f1"], expected.f1, atol=1e-6)
    assert out["id"] == list(range(len(PREDS)))


def test_model_loaded_once_per_process():
    from nlgscore import registry

    fn = map_function("bertscore:minilm", num_layers=2)
    fn({"prediction": ["a"], "reference": ["b"]})
    first = fn.scorer
    map_function("bertscore:minilm", num_layers=2)({"prediction": ["c"], "reference": ["d"]})
    assert map_function("bertscore:minilm", num_layers=2).scorer is first
    assert sum(scorer is first for scorer in registry.cached_scorers()) == 1


def test_multi_reference_column_and_bare_names(minilm_scorer):
    refs = [["the weather is cold today", "it is cold"], ["a cat was sitting"]]
    out = map_function(minilm_scorer, prefix="")({"prediction": PREDS[:2], "reference": refs})
    assert set(out) == {"precision", "recall", "f1"}
    np.testing.assert_allclose(out["f1"], minilm_scorer.score(PREDS[:2], refs).f1, atol=1e-6)


def test_bad_arguments():
    with pytest.raises(KeyError, match="hypothesis"):
        map_function(SPEC, prediction_column="hypothesis")({"prediction": ["a"], "reference": ["b"]})
    with pytest.raises(TypeError, match="metric"):
        map_function(42)
    with pytest.raises(ValueError, match="unknown metric"):
        map_function("bleurt")
    with pytest.raises(ValueError, match="reference_column"):
        map_function(SPEC, reference_column=None)


def test_map_without_batched_is_a_clear_error(table):
    with pytest.raises(TypeError, match="batched=True"):
        table.map(map_function(SPEC))


def test_idf_from_each_map_batch_is_refused_and_the_dataset_idf_equals_one_call(table, minilm_scorer):
    """BERTScore's idf is the test set's: map batches of 2 give the scores of one call whose idf
    comes from every reference (idf_sents), whatever the batch size."""
    import nlgscore
    from nlgscore.integrations.datasets import idf_sentences

    for options in ({"idf": True}, {"idf": True, "num_layers": 4}):
        with pytest.raises(ValueError, match="idf_sents=nlgscore.integrations.datasets.idf_sentences"):
            map_function("bertscore:minilm", **options)
    with pytest.raises(ValueError, match="idf_sents"):
        map_function(nlgscore.load(SPEC, idf=True))  # a ready scorer whose idf comes from each call
    sents = idf_sentences(table, "reference")
    assert sents == REFS
    want = nlgscore.load(SPEC, idf=True).compute(PREDS, references=REFS).columns()["f1"]
    for batch_size in (2, 3):
        out = table.map(map_function(SPEC, idf=True, idf_sents=sents), batched=True, batch_size=batch_size)
        assert out["bertscore_f1"] == want
    with pytest.raises(ValueError, match="column='answers' is not a column"):
        idf_sentences(table, "answers")


def test_missing_column_names_the_argument_and_a_source_only_metric_says_it_skips_references(tmp_path):
    with pytest.raises(KeyError, match=r"reference_column='ref': no such column.*prediction_column="):
        map_function(SPEC, reference_column="ref")({"prediction": ["a"], "reference": ["b"]})
    from pathlib import Path

    prism = str(Path(__file__).resolve().parents[1] / "golden" / "tiny-prism")
    fn = map_function(f"prism:src:{prism}:en", source_column="source")
    batch = {"prediction": ["a cat"], "reference": ["the cat"], "source": ["ein Kater"]}
    with pytest.warns(UserWarning, match="reference_column='reference' is not read"):
        scores = fn(batch)["prism_segment"]
    import nlgscore

    assert scores == nlgscore.load(f"prism:src:{prism}:en").compute(["a cat"], sources=["ein Kater"]).scores
    assert (
        fn({"prediction": ["a cat"], "source": ["ein Kater"]})["prism_segment"] == scores
    )  # no reference column needed
