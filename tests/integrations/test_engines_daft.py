"""Daft (the native runner; a pool of two scorer instances in worker processes, each building its
scorer once) gives the bits of one offline ``compute`` in row order, for several partition counts
and batch sizes, for BERTScore and Prism-src; a bad row fails the query with the offline error's
class and message. Nothing is mocked: Daft's own UDF workers run the class.
"""

from __future__ import annotations

import pytest

daft = pytest.importorskip("daft", reason="Daft is the 'daft' extra: pip install 'nlgscore[daft]'")

import engine_rows as data  # noqa: E402

from nlgscore.errors import ArgumentError  # noqa: E402
from nlgscore.integrations.daft import score_udf, with_scores  # noqa: E402

# Two instances in worker processes (each starts and builds its scorers per query, which costs
# seconds), or instances on threads of this process (whose scorers are the cached ones).
POOL = {"max_concurrency": 2, "use_process": True}
IN_PROCESS = {"max_concurrency": 2, "use_process": False}


@pytest.mark.parametrize("partitions, batch_size, pool", [(1, 256, IN_PROCESS), (3, 37, POOL)])
def test_bertscore_and_prism_src_equal_one_offline_compute_in_row_order(partitions, batch_size, pool):
    df = daft.from_pylist(data.rows()).into_partitions(partitions)
    scored = with_scores(df, data.BERTSCORE, batch_size=batch_size, **pool, **data.BERTSCORE_OPTIONS)
    prism = score_udf(data.PRISM_SRC, reference_column=None, source_column="source", batch_size=batch_size, **pool)
    out = scored.with_column("p", prism()).to_pydict()
    assert out["id"] == list(range(data.N))
    for name, values in data.expected_bertscore().items():
        assert out[name] == values, name
    for name, values in data.expected_prism_src().items():
        assert [cell[name] for cell in out["p"]] == values, name


@pytest.mark.parametrize(
    "row, value, offline, pool",
    [
        (30, None, {"predictions": ["a", None], "references": ["a", "b"]}, POOL),
        (12, [], {"predictions": ["a"], "references": [[]]}, IN_PROCESS),
    ],
)
def test_a_bad_row_fails_the_query_with_the_offline_error(row, value, offline, pool):
    rows = data.rows()[:40]
    rows[row]["prediction" if value is None else "reference"] = value
    pattern = data.error_pattern(data.offline_error(**offline))
    with pytest.raises(Exception, match=pattern):
        with_scores(daft.from_pylist(rows), data.BERTSCORE, **pool, **data.BERTSCORE_OPTIONS).collect()


def test_what_a_batch_would_change_is_refused_and_a_missing_column_named():
    with pytest.raises(ArgumentError, match="daft score_udf cannot read document context"):
        score_udf(data.BERTSCORE, context=2, **data.BERTSCORE_OPTIONS)
    with pytest.raises(ArgumentError, match="idf=True and no idf_sents"):
        score_udf(data.BERTSCORE, idf=True, **data.BERTSCORE_OPTIONS)
    with pytest.raises(KeyError, match="reference_column='ref': no such column"):
        with_scores(daft.from_pylist(data.rows()[:2]), data.BERTSCORE, reference_column="ref", **data.BERTSCORE_OPTIONS)
