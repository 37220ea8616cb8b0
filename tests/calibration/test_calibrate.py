"""Layer calibration and per-layer WMT measures (nlgscore.calibration.layers) on synthetic inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nlgscore.calibration import layers as calibrate
from nlgscore.meta.data import wmt21
from nlgscore.meta.data.loaders import DarrData
from nlgscore.meta.data.wmt21 import Wmt21Data
from nlgscore.meta.stats.wmt import darr_kendall_tau, pearson

REPO = Path(__file__).resolve().parents[2]


def test_select_layer_picks_the_argmax_layer():
    rng = np.random.default_rng(0)
    human = rng.normal(size=300)
    noise = [3.0, 1.5, 0.2, 0.8, 2.0]  # layer 2 is the least noisy copy of the human scores
    layers = np.stack([human + scale * rng.normal(size=300) for scale in noise])
    best, r = calibrate.select_layer(human, layers)
    assert best == 2
    assert r.shape == (5,) and r[2] == pytest.approx(pearson(human, layers[2]))
    assert np.argsort(-r).tolist() == np.argsort(noise).tolist()


def test_select_layer_breaks_ties_towards_the_lower_layer():
    human = [1.0, 2.0, 3.0, 5.0]
    assert calibrate.select_layer(human, np.array([[0, 1, 2, 3], [2, 4, 6, 10], [2, 4, 6, 10]]))[0] == 1


def _tiny_wmt21() -> Wmt21Data:
    """4 systems (one HUMAN) x 6 segments; NaN = not judged."""
    raw = {
        "A": [90, 20, 70, np.nan, 55, 10],
        "B": [40, 80, 65, 30, np.nan, 60],
        "C": [10, 50, 95, 85, 20, 40],
        "HUMAN": [99, 99, 99, 99, 99, 99],
    }
    seg_raw = {s: np.array(v, dtype=float) for s, v in raw.items()}
    seg_z = {s: (v - 50) / 30 for s, v in seg_raw.items()}
    hyps = {s: [f"{s} {i}" for i in range(6)] for s in raw}
    sys_z = {"A": 0.1, "B": 0.3, "C": -0.2, "HUMAN": 1.0}
    return Wmt21Data("de-en", ["src"] * 6, [f"ref {i}" for i in range(6)], hyps, seg_raw, seg_z, {}, sys_z)


def test_wmt21_measures_and_calibration_on_synthetic_scores():
    data = _tiny_wmt21()
    judgments = wmt21.wmt21_judgments(data)
    assert judgments.systems == ["A", "B", "C"]  # HUMAN only on request
    assert wmt21.wmt21_judgments(data, include_human=True).systems == ["A", "B", "C", "HUMAN"]
    hyps, refs = wmt21.wmt21_inputs(data, judgments)
    assert hyps[:2] == ["A 0", "A 1"] and refs[6] == "ref 0" and len(hyps) == 18

    rng = np.random.default_rng(1)
    z = np.nan_to_num(judgments.z)
    # (P/R/F, 4 layers, systems, segments): layer 3's F is the human z plus tiny noise.
    scores = rng.normal(size=(3, 4, 3, 6))
    scores[2, 3] = z + 0.01 * rng.normal(size=z.shape)
    best, r = calibrate.calibrate_wmt21(judgments, scores)
    assert best == 3 and r[3] > 0.99

    measures = calibrate.wmt21_layer_measures(judgments, scores)
    assert len(measures) == 12
    m = measures[("F", 3)]
    judged = judgments.judged
    assert m["seg_pearson"] == pytest.approx(pearson(judgments.z[judged], scores[2, 3][judged]))
    assert m["sys_pearson"] == pytest.approx(pearson([0.1, 0.3, -0.2], scores[2, 3].mean(axis=1)))
    # daRR from DA by hand: segment 0: A>B, A>C, B>C; 1: B>A, C>A, B>C; 2: C>B;
    # 3: C>B; 4: A>C; 5: B>A, C>A (B vs C: 20 points, dropped).
    assert len(judgments.pairs) == 11
    better = [scores[2, 3][judgments.systems.index(p.better), p.segment] for p in judgments.pairs]
    worse = [scores[2, 3][judgments.systems.index(p.worse), p.segment] for p in judgments.pairs]
    assert m["seg_tau"] == pytest.approx(darr_kendall_tau(better, worse)) and m["seg_tau"] == 1.0


def test_wmt21_items_checks_the_shape():
    judgments = wmt21.wmt21_judgments(_tiny_wmt21())
    with pytest.raises(ValueError, match="shape"):
        wmt21.wmt21_items(judgments, np.zeros((3, 5)))


class CountingScorer:
    """Spy around the real all-layers scorer: counts how many pairs reach it."""

    def __init__(self, scorer):
        self.scorer, self.pairs = scorer, 0
        self.all_layers, self.signature = True, scorer.signature

    def score(self, cands, refs):
        self.pairs += len(cands)
        return self.scorer.score(cands, refs)


def test_score_all_layers_scores_distinct_pairs_once_and_caches(tmp_path):
    from nlgscore.calibration.baseline import all_layers_scorer

    spy = CountingScorer(all_layers_scorer("minilm"))
    hyps = ["a cat sat on the mat", "dogs bark", "a cat sat on the mat"]
    refs = ["the cat sat on the mat", "the dog barks", "the cat sat on the mat"]
    scores = calibrate.score_all_layers(spy, hyps, refs, cache_dir=tmp_path)
    assert scores.shape == (3, 7, 3) and spy.pairs == 2
    np.testing.assert_array_equal(scores[..., 0], scores[..., 2])
    direct = spy.scorer.score(hyps[:2], refs[:2])
    np.testing.assert_allclose(scores[2, :, :2], direct.f1)
    again = calibrate.score_all_layers(spy, hyps, refs, cache_dir=tmp_path)
    assert spy.pairs == 2  # served from the cache: nothing scored again
    np.testing.assert_array_equal(again, scores)

    darr = DarrData("xx-en", ["s", "s"], refs[:2], hyps[:2], ["cats", "cat"], ["A", "A"], ["B", "B"])
    concordance = calibrate.darr_layer_concordance(spy.scorer, darr)
    assert concordance.shape == (3, 7, 2) and set(np.unique(concordance)) <= {-1, 1}


def test_set_table_entry_changes_only_that_entry(tmp_path):
    path = tmp_path / "layers.json"
    shutil.copy(REPO / "nlgscore" / "data" / "bertscore_model2layers.json", path)
    before = path.read_text(encoding="utf-8").splitlines()
    calibrate.set_table_entry(str(path), "all-MiniLM-L6-v2", 99)
    after = path.read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(changed) == 1
    assert json.loads(path.read_text(encoding="utf-8"))["all-MiniLM-L6-v2"] == 99
