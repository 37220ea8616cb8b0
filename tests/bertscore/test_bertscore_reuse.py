"""Work that must not be repeated: cached embeddings across calls, one-shot scorer reuse, plots."""

from __future__ import annotations

import numpy as np
import pytest

import nlgscore
from nlgscore.bertscore import BERTScorer

CANDS = ["it is freezing today", "The cat sat on the mat.", "Prices rose sharply."]
REFS = ["the weather is cold today", "A cat was sitting on the mat.", "Prices increased steeply."]
OTHER = ["it is cold", "A dog sat on the mat.", "Prices fell."]


def _count_rows(scorer):
    """Rows entering the encoder (the real forward still runs; the embeddings see every path)."""
    seen = []
    handle = scorer.encoder.model.embeddings.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(int(kwargs["input_ids"].shape[0])), with_kwargs=True
    )
    return seen, handle


@pytest.mark.parametrize("cache_candidates", [False, True])
def test_cached_texts_are_not_encoded_again_and_scores_do_not_change(minilm_scorer, cache_candidates):
    scorer = BERTScorer(model_type="minilm", num_layers=4, cache_references=True, cache_candidates=cache_candidates)
    seen, handle = _count_rows(scorer)
    try:
        first = scorer.score(CANDS, REFS)
        after_first = sum(seen)
        other = scorer.score(OTHER, REFS)  # references cached: only the new candidates
        after_other = sum(seen)
        again = scorer.score(CANDS, REFS)  # candidates cached too when asked
        after_again = sum(seen)
    finally:
        handle.remove()
    assert after_first == len(set(CANDS) | set(REFS))
    assert after_other - after_first == len(OTHER)
    assert after_again - after_other == (0 if cache_candidates else len(CANDS))
    plain = minilm_scorer.score(CANDS, REFS)
    for result in (first, again):
        np.testing.assert_allclose(result.f1, plain.f1, atol=1e-6)
    np.testing.assert_allclose(other.f1, minilm_scorer.score(OTHER, REFS).f1, atol=1e-6)
    scorer.clear_reference_cache()
    seen, handle = _count_rows(scorer)
    try:
        scorer.score(CANDS, REFS)
    finally:
        handle.remove()
    assert sum(seen) == len(set(CANDS) | set(REFS))  # cleared: everything encoded again


def test_one_shot_function_reuses_its_scorer():
    first = nlgscore.bertscore(CANDS, REFS, model_type="minilm", num_layers=4)
    from nlgscore.bertscore import oneshot as module

    scorers = list(module._ONE_SHOT.values())
    second = nlgscore.bertscore(OTHER, REFS, model_type="minilm", num_layers=4)
    assert list(module._ONE_SHOT.values()) == scorers  # same options: no new model load
    third = nlgscore.bertscore(CANDS, REFS, model_type="minilm", num_layers=3)
    assert len(module._ONE_SHOT) == 2 and third.signature["L"] == "3"
    np.testing.assert_allclose(
        first.f1, nlgscore.bertscore(CANDS, REFS, model_type="minilm", num_layers=4).f1, atol=1e-7
    )
    assert not np.allclose(second.f1, first.f1)


def test_result_plot_draws_the_pair(tmp_path, minilm_scorer):
    pytest.importorskip("matplotlib")
    result = minilm_scorer.score(CANDS, REFS)
    path = tmp_path / "pair.png"
    result.plot(1, str(path))
    assert path.stat().st_size > 1000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(IndexError):
        result.plot(3)
