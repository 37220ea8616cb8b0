"""A string metric's Result: sentence scores per item, and sacreBLEU's corpus statistic as the system value.

WMT's system BLEU and chrF are corpus statistics: the items' sufficient statistics (n-gram matches,
lengths) are summed over the corpus and the metric is computed once from the sums, which is not the
mean of the sentence scores. :class:`StringResult` keeps each prediction's statistics, so that
``score`` (and ``system["score"]``) is sacreBLEU's ``corpus_score`` of exactly the predictions it
holds: a part of a merged call (:meth:`~nlgscore.core.result.Result.split`) or corpus windows joined
again (:meth:`StringResult.concat`) give the corpus statistic of their own items. The mean of the
sentence scores stays available as ``sentence_mean`` (and ``system["sentence_mean"]``).

>>> from nlgscore.strings.scorers import BLEUScorer
>>> result = BLEUScorer().compute(["the cat sat on a mat", "a dog"], ["the cat sat on the mat", "the dog ran"])
>>> round(result.score, 4), round(result.sentence_mean, 4)
(44.1248, 42.0275)
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Sequence

import numpy as np

from nlgscore.core.result import Result
from nlgscore.core.signature import Signature

SENTENCE_MEAN = "sentence_mean"


def nrefs_field(counts: Sequence[int]) -> int:
    """sacreBLEU's ``num_refs`` of items with ``counts`` references each: the count, or -1 (its
    signature's ``nrefs:var``) where items have different counts.

    >>> nrefs_field([2, 2]), nrefs_field([1, 2])
    (2, -1)
    """
    distinct = set(int(c) for c in counts)
    return distinct.pop() if len(distinct) == 1 else -1


def summed_statistics(statistics: np.ndarray) -> List[Any]:
    """The column sums of per-item sufficient statistics as sacreBLEU's corpus score takes them:
    ints for counts, floats where a statistic is fractional (TER's average reference length).

    >>> summed_statistics(np.array([[1, 2], [3, 4]])), summed_statistics(np.array([[1.0, 2.5], [2.0, 2.0]]))
    ([4, 6], [3.0, 4.5])
    """
    sums = np.asarray(statistics).sum(axis=0)
    return [float(v) for v in sums] if sums.dtype.kind == "f" else [int(v) for v in sums]


class StringResult(Result):
    """Sentence scores (column ``score``) with each prediction's corpus statistics.

    ``statistics``: an integer array with one row of sacreBLEU sufficient statistics per
    prediction; ``corpus``: the function from summed statistics to the corpus score (sacreBLEU's
    own); ``ref_counts``: references per prediction, behind the signature's ``nrefs``.
    """

    def __init__(
        self,
        signature: Signature,
        values: Dict[str, Any],
        primary: str,
        statistics: np.ndarray,
        corpus: Callable[[List[int]], float],
        ref_counts: Sequence[int],
    ) -> None:
        super().__init__(signature, values, primary)
        # counts (BLEU, chrF) stay integers; TER's average reference lengths are fractional
        statistics = np.asarray(statistics)
        self.statistics = statistics if statistics.dtype.kind == "f" else statistics.astype(np.int64)
        self.ref_counts = np.asarray(ref_counts, dtype=np.int64)
        self.corpus = corpus

    @property
    def score(self) -> float:
        """sacreBLEU's corpus statistic of the predictions held (NaN for none)."""
        if not len(self):
            return math.nan
        return float(self.corpus(summed_statistics(self.statistics)))

    @property
    def sentence_mean(self) -> float:
        """The mean of the sentence scores (NaN for none)."""
        return Result.score.fget(self)  # type: ignore[attr-defined]

    @property
    def system(self) -> Dict[str, Any]:
        """``{"score": corpus statistic, "sentence_mean": mean of the sentence scores}``."""
        return {self.primary: self.score, SENTENCE_MEAN: self.sentence_mean}

    def split(self, sizes: Sequence[int]) -> List["Result"]:
        parts = super().split(sizes)
        for part in parts:
            part.signature = _with_nrefs(part.signature, part.ref_counts)  # type: ignore[attr-defined]
        return parts

    @classmethod
    def concat(cls, parts: Sequence[Result]) -> "StringResult":
        """One result of ``parts``' predictions in order (corpus windows joined again): its
        ``score`` is the corpus statistic of all of them.

        >>> from nlgscore.strings.scorers import ChrFScorer
        >>> scorer = ChrFScorer()
        >>> whole = scorer.compute(["a cat", "the dog"], ["the cat", "a dog"])
        >>> joined = StringResult.concat([scorer.compute(["a cat"], ["the cat"]), scorer.compute(["the dog"], ["a dog"])])
        >>> joined.score == whole.score, joined.scores == whole.scores
        (True, True)
        """
        joined = super().concat(parts)
        joined.signature = _with_nrefs(joined.signature, joined.ref_counts)  # type: ignore[attr-defined]
        return joined  # type: ignore[return-value]


def _with_nrefs(signature: Signature, counts: Sequence[int]) -> Signature:
    """``signature`` with the ``nrefs`` of items with ``counts`` references (as sacreBLEU writes it)."""
    fields = dict(signature)
    if "nrefs" not in fields or not len(counts):
        return signature
    n = nrefs_field(counts)
    fields["nrefs"] = "var" if n == -1 else str(n)
    metric = fields.pop("nlgscore")
    return Signature(metric, _versions=False, **fields)
