"""nlgscore.integrations.lighteval: a batched lighteval metric, run through lighteval's own
``apply_metric`` and ``MetricsLogger.aggregate`` with lighteval's ``Doc``/``ModelResponse``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nlgscore.errors import ArgumentError

lighteval = pytest.importorskip("lighteval", reason="the lighteval extra is not installed")
from lighteval.logging.info_loggers import MetricsLogger  # noqa: E402
from lighteval.metrics import apply_metric  # noqa: E402
from lighteval.metrics.utils.stderr import mean_stderr  # noqa: E402
from lighteval.models.model_output import ModelResponse  # noqa: E402
from lighteval.tasks.lighteval_task import LightevalTask, LightevalTaskConfig  # noqa: E402
from lighteval.tasks.requests import Doc  # noqa: E402

from nlgscore.integrations.lighteval import metric  # noqa: E402

GOLDEN = Path(__file__).parents[1] / "golden"
SPEC = "bertscore:minilm:L2"
PREDICTIONS = ["It is cold today.", "The sun shines.", "It rains.", "B c", "It is cold today."]
GOLDS = [["It is cold."], ["Sun."], ["Rain today"], ["A", "B c"], ["It is cold."]]  # several golds = references


def _docs():
    docs = [Doc(query=f"q{i}", choices=golds, gold_index=list(range(len(golds)))) for i, golds in enumerate(GOLDS)]
    return docs, [ModelResponse(text=[p]) for p in PREDICTIONS]


@pytest.fixture(scope="module")
def bertscore_metric():
    return metric(SPEC)


def test_batched_samples_equal_compute_in_one_call(bertscore_metric):
    docs, responses = _docs()
    scorer = bertscore_metric.sample_level_fn.scorer
    calls = []
    real = scorer.compute
    scorer.compute = lambda *a, **k: calls.append(a) or real(*a, **k)  # counts, then scores for real
    try:
        rows = bertscore_metric.compute_sample(docs=docs, responses=responses)["bertscore"]
    finally:
        del scorer.compute
    assert len(calls) == 1, "one compute call (one encoder pass over the distinct texts) per batch"
    expected = scorer.compute(PREDICTIONS, references=GOLDS)
    for column in ("precision", "recall", "f1"):
        assert [row[f"bertscore_{column}"] for row in rows] == pytest.approx(
            getattr(expected, column).tolist(), abs=1e-6
        )
    one = bertscore_metric.sample_level_fn.compute(doc=docs[3], model_response=responses[3])
    assert one == pytest.approx(rows[3], abs=1e-6)


def test_lighteval_task_pipeline_aggregates_every_column(bertscore_metric):
    config = LightevalTaskConfig(
        name="nlg", prompt_function=lambda line, task_name=None: None, hf_repo="local/none", hf_subset="default",
        metrics=[bertscore_metric], evaluation_splits=["test"],
    )  # fmt: skip
    task = LightevalTask(config)
    docs, responses = _docs()
    outputs = apply_metric(responses=responses, docs=docs, metrics=list(task.metrics))
    logger = MetricsLogger()
    for output in outputs:
        logger.log("nlg|0", output)
    logger.aggregate({"nlg|0": task}, bootstrap_iters=10)
    aggregated = dict(logger.metric_aggregated["nlg|0"])
    expected = bertscore_metric.sample_level_fn.scorer.compute(PREDICTIONS, references=GOLDS)
    for column in ("precision", "recall", "f1"):
        values = getattr(expected, column)
        assert aggregated[f"bertscore_{column}"] == pytest.approx(float(np.mean(values)), abs=1e-6)
        assert aggregated[f"bertscore_{column}_stderr"] == pytest.approx(mean_stderr(values.tolist()), abs=1e-6)


def test_source_based_metric_reads_the_source_field():
    spec = f"prism:src:{GOLDEN / 'tiny-prism'}"
    with pytest.raises(ArgumentError, match="source_field="):
        metric(spec, lang="en")
    docs = [Doc(query="le chat", choices=["x"], gold_index=0, specific={"src": "un chien"})]
    responses = [ModelResponse(text=["the cat"])]
    by_query = metric(spec, source_field="query", lang="en")
    scorer = by_query.sample_level_fn.scorer
    row = by_query.compute_sample(docs=docs, responses=responses)["prism"][0]
    assert row["prism_segment"] == pytest.approx(scorer.compute(["the cat"], sources=["le chat"]).scores[0], abs=1e-6)
    by_key = metric(spec, source_field="src", lang="en", prefix="qe")
    row = by_key.compute_sample(docs=docs, responses=responses)["qe"][0]
    assert row["qe_segment"] == pytest.approx(scorer.compute(["the cat"], sources=["un chien"]).scores[0], abs=1e-6)
    with pytest.raises(ArgumentError, match="source_field='nope'"):
        metric(spec, source_field="nope", lang="en").compute_sample(docs=docs, responses=responses)


def test_errors_name_the_sample(bertscore_metric):
    docs, responses = _docs()
    responses[2] = ModelResponse(text=[])
    with pytest.raises(ArgumentError, match=r"responses\[2\] has no text"):
        bertscore_metric.compute_sample(docs=docs, responses=responses)
    with pytest.raises(ArgumentError, match="5 docs for 4 responses"):
        bertscore_metric.compute_sample(docs=docs, responses=responses[:4])


def test_importing_the_integrations_imports_neither_lighteval_nor_trl():
    code = (
        "import sys, nlgscore, nlgscore.integrations.lighteval, nlgscore.integrations.trl; "
        "print(sorted(m for m in ('lighteval', 'trl') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "gold_index, message",
    [
        (2, r"docs\[1\]\.gold_index 2 is not the index of one of its 2 choices \(0 to 1\)"),
        ([0, 5], r"docs\[1\]\.gold_index 5 is not the index"),
        (-1, r"docs\[1\]\.gold_index -1 is not the index"),
    ],
)
def test_a_gold_index_out_of_range_is_an_error_naming_the_doc(gold_index, message):
    """An IndexError from inside lighteval before."""
    from nlgscore.errors import NlgscoreError
    from nlgscore.integrations.lighteval import metric

    docs = [
        Doc(query="q0", choices=["a cat"], gold_index=0),
        Doc(query="q1", choices=["a dog", "the dog"], gold_index=gold_index),
    ]
    responses = [ModelResponse(text=["a cat"]), ModelResponse(text=["a dog"])]
    with pytest.raises(NlgscoreError, match=message):
        metric("bertscore:minilm:L2").compute_sample(docs=docs, responses=responses)
