"""The one-shot function ``nlgscore.bertscore(cands, refs, **options)`` and its scorer cache.

Calling it in a loop must not reload the model every time (bert_score's ``score()`` does;
uqlm#141 measured 43x), so the last scorers are kept, keyed by the *content* of their options
(:func:`nlgscore.core.cache.content_key`: an ``idf_sents`` Series of 10,000 rows is keyed by
every row, never by its elided ``repr``).
"""

from __future__ import annotations

from typing import Any, Sequence

from nlgscore.bertscore.result import BERTScoreResult
from nlgscore.bertscore.scorer import BERTScorer
from nlgscore.core.cache import ScorerCache, content_key

_ONE_SHOT_SIZE = 2
_ONE_SHOT = ScorerCache(_ONE_SHOT_SIZE)  # content_key(options) -> BERTScorer, least recently used evicted


def bertscore(cands: Sequence[str], refs: Sequence, **options: Any) -> BERTScoreResult:
    """One-shot BERTScore: ``BERTScorer(**options).score(cands, refs)``, reusing the last scorers.

    >>> round(bertscore(["it is freezing today"], ["the weather is cold today"], model_type="minilm").scores[0], 4)
    0.749
    """
    key = content_key(options) if "accelerator" not in options else None
    return _ONE_SHOT.get_or_build(key, lambda: BERTScorer(**options)).score(cands, refs)
