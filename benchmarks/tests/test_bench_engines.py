"""The engine benchmark's own parts, cheaply: its pairs are deterministic and varied, and one
offline run of a few pairs reports every field the BENCHMARKS table reads."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import bench_engines


def test_pairs_are_deterministic_and_of_varied_length():
    first, again = bench_engines.pairs(50), bench_engines.pairs(50)
    assert first == again and [row["id"] for row in first] == list(range(50))
    assert len({len(row["prediction"].split()) for row in first}) > 10
    assert len({row["prediction"] for row in first} | {row["reference"] for row in first}) == 100  # all distinct


def test_an_offline_run_reports_the_table_fields():
    result = bench_engines.run_one(
        "offline", n=12, warm=4, workers=1, spec="bertscore:minilm", options={"num_layers": 2}
    )
    assert len(result["scores"]) == 12 and all(0 < s <= 1 for s in result["scores"])
    assert {"start_s", "warm_s", "job_s", "rows_per_s", "driver_peak_rss_mib", "worker_peak_rss_mib"} <= set(result)
    assert result["driver_peak_rss_mib"] > 0 and result["rows_per_s"] > 0
