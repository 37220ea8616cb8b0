"""nlgscore's WMT24 measures against mt-metrics-eval's own code on the shared WMT24 en-cs ESA folder
(read in place from ../shared; skipped when absent).

The reference values in ``wmt24_en_cs_mtme.json`` were computed by google-research/mt-metrics-eval
(the commit is stored in the file) in a side environment outside the project, from an mt-metrics-eval
``wmt24`` folder built from the shared data: its ``human-scores/en-cs.esa.seg.score`` written by the
upstream rules (``humeval/tools.py`` and ``convert_to_metrics.py`` of wmt-conference/wmt24-news-systems,
in pandas: BAD rows, tutorials, ``#bad``/``#dup``/``#incomplete`` documents dropped, a rater's repeated
rating the latest, the mean over raters, ``None`` where unrated, 100 on the CANARY line) and its
``metric-scores/en-cs/`` from the scores ``nlgscore meta wmt24 --export-scores`` wrote (the unrated lines,
which mt-metrics-eval leaves out, filled with 0), with::

    PYTHONPATH=mt-metrics-eval PYTHONHASHSEED=0 python scripts/mtme_wmt24_reference.py \
        ../shared/data/esa-wmt24-en-cs EXPORT OUT.json LIMIT METRIC...

(``full``: LIMIT 0, chrf bleu; ``slice``: LIMIT 12, bertscore:minilm; ``full_three_metrics``, kept for the
user guide's table: LIMIT 0, chrf bleu bertscore:minilm), where the script runs
``tasks.WMT24(lps=["en-cs"], primary=False, k=0)`` and ``TaskSetResults.AverageCorrs`` / ``AverageRanks``,
and ``Correlation.Pearson(average_by="item", pdp=True)`` for PDP; ``LIMIT`` 12 keeps the gold of the first
12 rated lines only (``--limit 12``), for the BERTScore slice that runs in seconds.

mt-metrics-eval's PCE takes the systems in the order of a Python set (``data.EvalSet.Correlation``), and a
permutation whose difference ties the observed one counts for one orientation of a pair only, so its SPA
moves by up to ~1e-4 with ``PYTHONHASHSEED``; the reference takes its ``stats.PairwiseConfidenceError``
over the systems in sorted order, the order nlgscore uses. The bound, 1e-6, is the issue's parity bound;
the values agree to float rounding.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sacrebleu")

from nlgscore.meta.tasks.wmt24_25 import wmt24

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "esa-wmt24-en-cs"
REFERENCE = json.loads((Path(__file__).with_name("wmt24_en_cs_mtme.json")).read_text(encoding="utf-8"))
TOLERANCE = 1e-6  # the parity bound (float summation order is the only difference)


def _check(table, reference, metrics):
    values = {(r.dataset, r.metric, r.measure): r.value for r in table.rows}
    for metric in metrics:
        mtme = "*" + metric.replace(":", "_")  # mtme's display name of a non-primary metric
        assert values["wmt24-en-cs", metric, "spa"] == pytest.approx(reference["tasks"]["spa"][mtme], abs=TOLERANCE)
        assert values["wmt24-en-cs", metric, "acc-eq"] == pytest.approx(
            reference["tasks"]["acc-eq"][mtme], abs=TOLERANCE
        )
        assert values["wmt24-en-cs", metric, "pdp"] == pytest.approx(reference["pdp"][mtme], abs=TOLERANCE)
        assert values["all", metric, "avg-corr"] == pytest.approx(reference["avg_corr"][mtme], abs=TOLERANCE)
        assert values["all", metric, "avg-rank"] == reference["avg_rank"][mtme]


@pytest.fixture(scope="module")
def shared():
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found (../shared/data)")
    return SHARED


def test_chrf_and_bleu_on_every_rated_segment_match_mt_metrics_eval(shared):
    table = wmt24(shared, ["chrf", "bleu"], permutations=0)
    reference = REFERENCE["full"]
    assert sorted({r.metric for r in table.rows}) == ["bleu", "chrf"]
    assert f"{reference['rated_lines']} of 998 lines scored" in table.notes[0]
    assert f"{len(reference['systems'])} systems" in table.notes[0]
    _check(table, reference, ["chrf", "bleu"])


def test_bertscore_minilm_on_the_first_rated_segments_matches_mt_metrics_eval(shared):
    reference = REFERENCE["slice"]
    table = wmt24(shared, ["bertscore:minilm"], permutations=0, limit=reference["limit"])
    _check(table, reference, ["bertscore:minilm"])
