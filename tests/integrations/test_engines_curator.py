"""NeMo Curator (a ``Pipeline`` run by its Ray Data executor on a local Ray: the stages on actors
that build their scorer once) gives the bits of one offline ``compute`` in row order, whatever
the corpus's split into tasks, for BERTScore and Prism-src; the threshold filter keeps exactly the
rows whose offline score passes; a bad row fails the run with the offline error. Nothing is
mocked: Curator's own executor runs the stages.
"""

from __future__ import annotations

import pytest

pytest.importorskip("nemo_curator", reason="NeMo Curator is the 'curator' extra: pip install 'nlgscore[curator]'")

import engine_rows as data
import pandas as pd
from nemo_curator.backends.ray_data import RayDataExecutor
from nemo_curator.pipeline import Pipeline
from nemo_curator.tasks import DocumentBatch

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.curator import score_stage, threshold_filter


def _tasks(rows, sizes):
    """The rows as DocumentBatch tasks of these sizes, in order."""
    out, start = [], 0
    for size in sizes:
        out.append(DocumentBatch(dataset_name="pairs", data=pd.DataFrame(rows[start : start + size])))
        start += size
    assert start == len(rows)
    return out


def _run(stages, tasks):
    pipeline = Pipeline(name="nlgscore", stages=stages)
    results = pipeline.run(executor=RayDataExecutor(), initial_tasks=tasks)
    frames = sorted((task.to_pandas() for task in results if len(task.to_pandas())), key=lambda f: f["split"].iloc[0])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def test_scores_and_the_threshold_filter_equal_offline_in_row_order_whatever_the_tasks():
    """One run, the corpus twice: once as one task of 200 rows, once as tasks of 50, 37, 13 and
    100 rows, through a BERTScore stage, a Prism-src stage and a filter keeping Prism-src's upper
    half: exactly the rows whose offline score passes come out, in row order, with the offline
    bits of both metrics."""
    rows = data.rows()
    copies = [{**row, "split": copy * 1000 + row["id"]} for copy in (0, 1) for row in rows]
    tasks = _tasks(copies[: data.N], [data.N]) + _tasks(copies[data.N :], [50, 37, 13, 100])
    expected = {**data.expected_bertscore(), **data.expected_prism_src()}
    bound = sorted(expected["prism_segment"])[data.N // 2]  # the median: half the rows pass
    stages = [
        score_stage(data.BERTSCORE, cpus=0.5, **data.BERTSCORE_OPTIONS),
        threshold_filter(
            data.PRISM_SRC, reference_column=None, source_column="source", score="segment", min_score=bound, cpus=0.5
        ),
    ]
    out = _run(stages, tasks)
    kept = [k for k in range(data.N) if expected["prism_segment"][k] >= bound]
    assert data.N // 2 - 5 <= len(kept) <= data.N // 2 + 5
    assert out["split"].tolist() == [copy * 1000 + k for copy in (0, 1) for k in kept]
    for name, values in expected.items():
        assert out[name].tolist() == [values[k] for k in kept] * 2, name


def test_a_bad_row_fails_the_stage_with_the_offline_error():
    """The stage as a worker runs it (setup once, then process): a bad row raises the offline
    error itself, which fails Curator's run (its executor re-raises a stage's error and returns
    no tasks); the filter without its scores keeps exactly the rows whose offline score passes."""
    rows = [{**row, "split": row["id"]} for row in data.rows()]
    stage = threshold_filter(data.BERTSCORE, min_score=0.5, keep_scores=False, **data.BERTSCORE_OPTIONS)
    stage.setup()
    out = stage.process(_tasks(rows[:100], [100])[0]).to_pandas()
    f1 = data.expected_bertscore()["bertscore_f1"]
    assert "bertscore_f1" not in out.columns and out["split"].tolist() == [k for k in range(100) if f1[k] >= 0.5]
    rows[60]["prediction"] = None
    pattern = data.error_pattern(data.offline_error(predictions=["a", None], references=["a", "b"]), qualified=False)
    with pytest.raises(ArgumentTypeError, match=pattern):
        stage.process(_tasks(rows[:100], [100])[0])


def test_bad_filter_settings_are_refused_naming_the_argument():
    with pytest.raises(ArgumentError, match=r"^threshold_filter needs min_score=, max_score= or both"):
        threshold_filter(data.BERTSCORE, **data.BERTSCORE_OPTIONS)
    with pytest.raises(ArgumentError, match=r"^min_score=0.9 is above max_score=0.1"):
        threshold_filter(data.BERTSCORE, min_score=0.9, max_score=0.1, **data.BERTSCORE_OPTIONS)
    with pytest.raises(
        ArgumentError, match=r"^score='segment' is not a score of bertscore \(its scores: bertscore_precision"
    ):
        threshold_filter(data.BERTSCORE, score="segment", min_score=0.5, **data.BERTSCORE_OPTIONS)
