"""Scores do not depend on batch size, token budget, input order or the reference cache."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nlgscore.bertscore import BERTScorer

TOL = 1e-6


def _score(scorer, cands, refs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.stack([np.asarray(x) for x in (lambda r: (r.precision, r.recall, r.f1))(scorer.score(cands, refs))])


@pytest.fixture(scope="module")
def baseline(minilm_scorer, bertscore_golden):
    return _score(minilm_scorer, bertscore_golden["cands"], bertscore_golden["refs"])


@pytest.mark.parametrize("batch_size, max_tokens", [(1, 2048), (7, 2048), (64, 2048), (64, 256), (64, 8192)])
def test_batch_plan_does_not_change_scores(minilm_scorer, bertscore_golden, baseline, batch_size, max_tokens):
    # batch size 1 on the last 15 pairs only (empty, unicode and 700-word inputs among them): fast enough
    part = slice(35, 50) if batch_size == 1 else slice(0, 50)
    saved = minilm_scorer.batch_size, minilm_scorer.max_tokens
    minilm_scorer.batch_size, minilm_scorer.max_tokens = batch_size, max_tokens
    try:
        scores = _score(minilm_scorer, bertscore_golden["cands"][part], bertscore_golden["refs"][part])
    finally:
        minilm_scorer.batch_size, minilm_scorer.max_tokens = saved
    assert np.abs(scores - baseline[:, part]).max() < TOL


def test_input_order_does_not_change_scores(minilm_scorer, bertscore_golden, baseline):
    perm = np.random.default_rng(0).permutation(len(bertscore_golden["cands"]))
    cands = [bertscore_golden["cands"][i] for i in perm]
    refs = [bertscore_golden["refs"][i] for i in perm]
    scores = _score(minilm_scorer, cands, refs)
    unpermuted = np.empty_like(scores)
    unpermuted[:, perm] = scores
    assert np.abs(unpermuted - baseline).max() < TOL


def test_duplicates_and_reference_cache(bertscore_golden, baseline):
    scorer = BERTScorer(model_type="minilm", num_layers=4, cache_references=True, reference_cache_size=15)
    cands, refs, expected = bertscore_golden["cands"][:30], bertscore_golden["refs"][:30], baseline[:, :30]
    first = _score(scorer, cands, refs)
    assert len(scorer._ref_cache) == 15  # bounded
    again = _score(scorer, cands, refs)
    assert np.abs(first - expected).max() < TOL and np.abs(again - expected).max() < TOL
    doubled = _score(scorer, cands + cands, refs + refs)
    assert np.abs(doubled[:, :30] - expected).max() < TOL and np.abs(doubled[:, 30:] - expected).max() < TOL
