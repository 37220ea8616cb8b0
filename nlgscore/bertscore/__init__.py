"""BERTScore: the scorer, its one-shot function, and the files only BERTScore uses.

``scorer.py`` (BERTScorer: the hooks of the shared Scorer template), ``pairs.py`` (chunk
planning, encoding with the text cache, matching batches), ``result.py`` (BERTScoreResult),
``oneshot.py`` (the one-shot function and its scorer cache), ``embedding.py`` / ``packed_encoder.py``
(the encoder forward), ``token_forward.py`` / ``cuda_graphs.py`` (every layer on packed tokens,
varlen attention, CUDA graphs by token bucket), ``matching.py`` (greedy cosine matching), ``idf.py``, ``rescale.py``
(baselines) and ``plot.py`` (the pair heat map); making a baseline from a corpus is
``nlgscore.calibration.baseline`` (it reads data sets).

``nlgscore.bertscore`` is both this package and the one-shot function ``bertscore(cands, refs)``.
"""

import sys
import types
from typing import Any, Sequence

from nlgscore.bertscore.oneshot import bertscore
from nlgscore.bertscore.result import BERTScoreResult
from nlgscore.bertscore.scorer import BERTScorer, default_layer, default_model

__all__ = ["BERTScorer", "BERTScoreResult", "bertscore", "default_layer", "default_model"]


class _CallableModule(types.ModuleType):
    """``nlgscore.bertscore`` is both this package and the one-shot function.

    Importing a submodule binds its name on the parent package, so a function of the same name
    there would be replaced by (or replace) the package; a callable module keeps
    ``nlgscore.bertscore(...)``, ``import nlgscore.bertscore`` and ``mock.patch`` all working.
    """

    def __call__(self, cands: Sequence[str], refs: Sequence, **options: Any) -> BERTScoreResult:
        return bertscore(cands, refs, **options)


sys.modules[__name__].__class__ = _CallableModule
