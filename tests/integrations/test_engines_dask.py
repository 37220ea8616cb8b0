"""Dask (a ``LocalCluster`` of two worker processes, each building its scorer once) gives the bits
of one offline ``compute`` in row order, however many partitions, for BERTScore and Prism-src; a
bad row raises the offline error's class and message on the client, and ``to_parquet`` leaves
nothing when a partition fails. Nothing is mocked: real worker processes run the partitions.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed", reason="Dask is the 'dask' extra: pip install 'nlgscore[dask]'")

import dask
import dask.dataframe as dd
import engine_rows as data
import pandas as pd

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.dask import score_partitions, to_parquet, with_scores


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    # lists of references stay lists (Dask would make each the string of its repr)
    with dask.config.set({"dataframe.convert-string": False}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        with Client(cluster) as connected:
            assert len(connected.scheduler_info()["workers"]) == 2
            yield connected
        cluster.close()


def _frame(partitions, rows=None):
    return dd.from_pandas(pd.DataFrame(data.rows() if rows is None else rows), npartitions=partitions, sort=False)


@pytest.mark.parametrize("partitions", [1, 4])
def test_bertscore_and_prism_src_equal_one_offline_compute_in_row_order(client, partitions):
    df = _frame(partitions)
    assert df.npartitions == partitions
    scored = with_scores(df, data.BERTSCORE, **data.BERTSCORE_OPTIONS)
    prism = score_partitions(data.PRISM_SRC, reference_column=None, source_column="source")
    out = scored.map_partitions(prism, meta=prism.meta(scored)).compute()
    assert out["id"].tolist() == list(range(data.N))
    assert out.columns.tolist()[:4] == ["id", "prediction", "reference", "source"]
    for name, values in {**data.expected_bertscore(), **data.expected_prism_src()}.items():
        assert out[name].dtype == "float64"
        assert out[name].tolist() == values, name


def test_a_null_row_raises_the_offline_error_and_to_parquet_leaves_nothing(client, tmp_path):
    rows = [{**row, "reference": row["reference"][0]} for row in data.rows()[:40]]  # Parquet infers str
    rows[30]["prediction"] = None
    pattern = data.error_pattern(data.offline_error(predictions=["a", None], references=["a", "b"]), qualified=False)
    target = tmp_path / "scores"
    scored = with_scores(_frame(4, rows), data.BERTSCORE, **data.BERTSCORE_OPTIONS)
    with pytest.raises(ArgumentTypeError, match=pattern):
        to_parquet(scored, str(target))
    assert list(tmp_path.iterdir()) == []  # neither the folder nor the partial one
    rows[30]["prediction"] = "fixed"
    assert to_parquet(with_scores(_frame(4, rows), data.BERTSCORE, **data.BERTSCORE_OPTIONS), str(target)) == str(
        target
    )
    assert pd.read_parquet(target)["id"].tolist() == list(range(40))


def test_a_wrong_type_and_an_empty_reference_list_fail_as_offline(client):
    rows = data.rows()[:20]
    rows[3]["reference"] = []
    pattern = data.error_pattern(data.offline_error(predictions=["a"], references=[[]]), qualified=False)
    with pytest.raises(ArgumentError, match=pattern):
        with_scores(_frame(2, rows), data.BERTSCORE, **data.BERTSCORE_OPTIONS).compute()
    rows = data.rows()[:20]
    rows[7]["prediction"] = 7
    pattern = data.error_pattern(data.offline_error(predictions=[7], references=["a"]), qualified=False)
    with pytest.raises(ArgumentTypeError, match=pattern):
        with_scores(_frame(2, rows), data.BERTSCORE, **data.BERTSCORE_OPTIONS).compute()


def test_a_missing_column_is_refused_when_the_graph_is_built(client):
    with pytest.raises(KeyError, match="reference_column='ref': no such column"):
        with_scores(_frame(2), data.BERTSCORE, reference_column="ref", **data.BERTSCORE_OPTIONS)
