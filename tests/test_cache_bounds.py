"""Memory stays bounded in a long-lived process: the embedding cache of a
BERTScorer that keeps references and candidates (what the Trainer and TRL integrations turn on)
plateaus at its byte budget over many calls of distinct texts, least recently used dropped first.
Counted in cache entries and bytes, not RSS. Before, only a count (100,000 texts) bounded it:
gigabytes of embeddings for a reward that sees new texts at every step."""

from __future__ import annotations

import pytest

from nlgscore.core.cache import DEFAULT_CACHE_BYTES, TextCache, value_bytes

BUDGET = 256 * 1024  # bytes: room for a few dozen MiniLM sentence embeddings


def pairs(call: int, n: int = 40):
    return (
        [f"the cat {call} number {k} sat on mat {k * 7 + call}" for k in range(n)],
        [f"a dog {call} item {k} lay on the rug {k * 3 + call}" for k in range(n)],
    )


def test_embedding_cache_plateaus_over_many_calls_of_distinct_texts():
    from nlgscore.bertscore import BERTScorer

    scorer = BERTScorer(
        model_type="minilm", num_layers=2, cache_references=True, cache_candidates=True, reference_cache_bytes=BUDGET
    )
    cache = scorer._ref_cache
    sizes = []
    for call in range(12):
        preds, refs = pairs(call)
        scorer.compute(preds, references=refs)
        sizes.append((len(cache), cache.bytes))
        assert cache.bytes == sum(value_bytes(v) for v in cache.values()) <= BUDGET
    assert sizes[-1][1] > BUDGET // 2  # the budget is used, not bypassed
    entries = [n for n, _ in sizes[4:]]
    assert max(entries) - min(entries) <= 10 < 12 * 80  # a plateau: not 80 new texts a call
    # the newest call's texts are the ones kept
    preds, refs = pairs(11)
    assert refs[-1] in cache and pairs(0)[0][0] not in cache


def test_default_byte_budget_is_documented_and_applies():
    from nlgscore.bertscore import BERTScorer

    scorer = BERTScorer(model_type="minilm", num_layers=2, cache_references=True)
    assert scorer._ref_cache.max_bytes == DEFAULT_CACHE_BYTES == 512 * 2**20


def test_text_cache_counts_bytes_on_replace_and_clear():
    import numpy as np

    cache = TextCache(10, max_bytes=1000)
    cache.put("a", np.zeros(100, dtype=np.float32))  # 400 bytes
    cache.put("a", np.zeros(50, dtype=np.float32))  # replaced: 200
    cache.put("big", np.zeros(1000, dtype=np.float32))  # 4,000 > budget: not kept
    assert (len(cache), cache.bytes, "big" in cache) == (1, 200, False)
    cache.clear()
    assert (len(cache), cache.bytes) == (0, 0)


def test_a_bad_byte_budget_is_refused_naming_it():
    from nlgscore.bertscore import BERTScorer

    with pytest.raises(ValueError, match="reference_cache_bytes"):
        BERTScorer(model_type="minilm", num_layers=2, reference_cache_bytes=0)
