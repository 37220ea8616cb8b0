"""Spark (``local[2]``: two Python workers, each building its scorer once) gives the bits of one
offline ``compute`` in row order, however the rows are partitioned, for BERTScore and Prism-src;
a bad row fails the job with the offline error's class and message, and a failed write leaves no
output that looks complete. Nothing is mocked: a real local Spark runs the UDF.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

pyspark = pytest.importorskip("pyspark", reason="Spark is the 'spark' extra: pip install 'nlgscore[spark]'")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java 17 or later (no java on PATH, no JAVA_HOME)", allow_module_level=True)

import engine_rows as data  # noqa: E402

from nlgscore.errors import ArgumentTypeError  # noqa: E402
from nlgscore.integrations.spark import score_udf, with_scores  # noqa: E402

SCHEMA = "id long, prediction string, reference array<string>, source string"


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this venv's Python, not the PATH's
    session = (
        SparkSession.builder.master("local[2]")
        .appName("nlgscore-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "64")  # several Arrow batches per partition
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _frame(spark, partitions, rows=None):
    rows = data.rows() if rows is None else rows
    tuples = [(r["id"], r["prediction"], r["reference"], r["source"]) for r in rows]
    return spark.createDataFrame(spark.sparkContext.parallelize(tuples, partitions), SCHEMA)


@pytest.mark.parametrize("partitions", [1, 3])
def test_bertscore_and_prism_src_equal_one_offline_compute_in_row_order(spark, partitions):
    """Both metrics in one job: the BERTScore columns (with_scores) and a Prism-src struct."""
    df = _frame(spark, partitions)
    assert df.rdd.getNumPartitions() == partitions
    prism = score_udf(data.PRISM_SRC, reference_column=None, source_column="source")
    assert prism.input_columns == ["prediction", "source"]
    scored = with_scores(df, data.BERTSCORE, **data.BERTSCORE_OPTIONS)
    out = scored.select("*", prism().alias("p")).select("*", "p.*").collect()
    assert [row["id"] for row in out] == list(range(data.N))
    expected = {**data.expected_bertscore(), **data.expected_prism_src()}
    for name, values in expected.items():
        assert [row[name] for row in out] == values, name


def test_a_null_row_fails_the_job_with_the_offline_error_and_writes_nothing_complete(spark, tmp_path):
    rows = data.rows()[:40]
    rows[30]["prediction"] = None
    pattern = data.error_pattern(data.offline_error(predictions=["a", None], references=["a", "b"]))
    target = tmp_path / "scores.parquet"
    scored = with_scores(_frame(spark, 2, rows), data.BERTSCORE, **data.BERTSCORE_OPTIONS)
    with pytest.raises(Exception, match=pattern):
        scored.write.parquet(str(target))
    assert not (target / "_SUCCESS").exists()
    assert not list(target.glob("part-*")) if target.exists() else True


def test_an_empty_reference_list_fails_as_offline(spark):
    rows = data.rows()[:20]
    rows[3]["reference"] = []
    pattern = data.error_pattern(data.offline_error(predictions=["a"], references=[[]]))
    with pytest.raises(Exception, match=pattern):
        with_scores(_frame(spark, 1, rows), data.BERTSCORE, **data.BERTSCORE_OPTIONS).collect()


def test_a_column_of_another_type_is_refused_before_anything_runs(spark):
    df = spark.createDataFrame([(1, "a cat")], "prediction long, reference string")
    with pytest.raises(
        ArgumentTypeError, match=r"^prediction_column='prediction' is a bigint column; the metric reads string$"
    ):
        with_scores(df, data.BERTSCORE, **data.BERTSCORE_OPTIONS)
    with pytest.raises(KeyError, match="reference_column='ref': no such column"):
        with_scores(df, data.BERTSCORE, reference_column="ref", **data.BERTSCORE_OPTIONS)
