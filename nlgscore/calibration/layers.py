"""BERTScore layer calibration and per-layer meta-evaluation on WMT data.

The BERTScore paper picks each model's layer on a validation set by the Pearson correlation of
F_BERT with segment-level DA (Zhang et al. 2020, App. B: WMT16 to-English). One forward pass
with ``all_layers=True`` gives every layer, so a whole data set is scored once and each layer's
scores are then correlated separately. Measures follow ``nlgscore meta``: WMT21 segment Pearson
with DA z-scores (the layer criterion), daRR tau from raw DA (margin 25), system Pearson with the
official z scores, MT systems only by default; WMT19 daRR tau.

>>> human = np.array([0.1, 0.4, 0.2, 0.9, 0.5])
>>> layers = np.array([[5, 1, 4, 2, 3], [1, 4, 2, 9, 5], [1, 2, 3, 4, 5]], dtype=float)
>>> best, r = select_layer(human, layers)
>>> best, [round(float(x), 2) for x in r]
(1, [-0.66, 1.0, 0.66])
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.backend.batching import unique
from nlgscore.errors import ArgumentError
from nlgscore.meta.data.loaders import DarrData
from nlgscore.meta.data.wmt21 import Wmt21Judgments, wmt21_items, wmt21_measures
from nlgscore.meta.stats import pearson
from nlgscore.meta.stats.wmt import darr_concordance

if TYPE_CHECKING:  # the annotation only: the BERTScore scorer's options are read
    from nlgscore.bertscore.scorer import BERTScorer

COLUMNS = ("P", "R", "F")
PathLike = Union[str, "os.PathLike[str]"]


def select_layer(human: Sequence[float], layer_scores: np.ndarray) -> Tuple[int, np.ndarray]:
    """The layer whose scores correlate best (Pearson) with ``human``, and every layer's r.

    ``layer_scores`` is ``(layers+1, items)``; ties go to the lower layer (``argmax``).
    """
    layer_scores = np.asarray(layer_scores, dtype=float)
    if layer_scores.ndim != 2:
        raise ArgumentError(f"layer_scores must be (layers+1, items), got shape {layer_scores.shape}")
    correlations = np.array([pearson(human, row) for row in layer_scores])
    return int(np.argmax(correlations)), correlations


def score_all_layers(
    scorer: BERTScorer, hyps: Sequence[str], refs: Sequence[str], cache_dir: Optional[PathLike] = None
) -> np.ndarray:
    """``(3, layers+1, pairs)`` P/R/F of every pair, in input order.

    ``scorer`` is a ``BERTScorer(all_layers=True)``. Meta-evaluation data repeat pairs (a daRR
    translation appears in several pairs), so each distinct (hyp, ref) pair is scored once.
    With ``cache_dir``, scores are stored as ``.npy`` files named by a hash of the scorer's
    signature and the texts, so the calibration and the results table score a data set once.
    """
    if len(hyps) != len(refs):
        raise ArgumentError(f"hyps and refs differ in length: {len(hyps)} != {len(refs)}")
    if not getattr(scorer, "all_layers", False):
        raise ArgumentError("scorer must be built with all_layers=True")
    distinct, inverse = unique(list(zip(hyps, refs)))
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"bertscore-{_digest(str(scorer.signature), distinct)}.npy"
    if path is not None and path.is_file():
        stacked = np.load(path)
    else:
        result = scorer.score([h for h, _ in distinct], [r for _, r in distinct])
        stacked = np.stack([np.asarray(result.precision), np.asarray(result.recall), np.asarray(result.f1)])
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, stacked)
    return stacked[:, :, np.asarray(inverse, dtype=np.int64)]


def _digest(signature: str, pairs: Sequence[Tuple[str, str]]) -> str:
    digest = hashlib.sha256(signature.encode("utf-8"))
    for hyp, ref in pairs:
        digest.update(b"\0" + hyp.encode("utf-8") + b"\1" + ref.encode("utf-8"))
    return digest.hexdigest()[:16]


def darr_layer_concordance(scorer: BERTScorer, darr: DarrData, cache_dir: Optional[PathLike] = None) -> np.ndarray:
    """``(3, layers+1, pairs)`` +1/-1 concordance of every layer's P/R/F with a daRR file."""
    n = len(darr)
    scores = score_all_layers(scorer, darr.better + darr.worse, darr.ref * 2, cache_dir)
    out = np.empty(scores.shape[:2] + (n,), dtype=np.int64)
    for column in range(scores.shape[0]):
        for layer in range(scores.shape[1]):
            row = scores[column, layer].tolist()
            out[column, layer] = darr_concordance(row[:n], row[n:])
    return out


def wmt21_layer_measures(judgments: Wmt21Judgments, scores: np.ndarray) -> Dict[Tuple[str, int], Dict[str, float]]:
    """``wmt21_measures`` of each ``(column, layer)`` of ``(3, layers+1, systems, segments)`` scores."""
    return {
        (column, layer): wmt21_measures(wmt21_items(judgments, scores[c, layer]))
        for c, column in enumerate(COLUMNS)
        for layer in range(scores.shape[1])
    }


def calibrate_wmt21(judgments: Wmt21Judgments, scores: np.ndarray) -> Tuple[int, np.ndarray]:
    """Best layer by F Pearson with segment DA z (the paper's criterion) and each layer's r."""
    judged = judgments.judged
    return select_layer(judgments.z[judged], scores[COLUMNS.index("F")][:, judged])


def calibrate_darr(concordances: Sequence[np.ndarray]) -> Tuple[int, np.ndarray]:
    """Best layer by F daRR tau averaged over data sets, and each layer's average tau.

    ``concordances`` holds one ``(3, layers+1, pairs)`` array per data set
    (``darr_layer_concordance``); tau is the mean concordance, averaged with equal weight per
    data set. Ties go to the lower layer.

    >>> a = np.array([[[1, -1], [1, 1]]] * 3)  # (3, 2 layers, 2 pairs): layer 1 concordant
    >>> best, tau = calibrate_darr([a, a])
    >>> best, tau.tolist()
    (1, [0.0, 1.0])
    """
    f = COLUMNS.index("F")
    taus = np.mean([np.asarray(c)[f].mean(axis=-1) for c in concordances], axis=0)
    return int(np.argmax(taus)), taus


def set_table_entry(path: str, key: str, value: int) -> None:
    """Set ``key`` in a ``nlgscore/data`` JSON table, keeping its order and 1-space layout."""
    import json

    with open(path, encoding="utf-8") as handle:
        entries = json.load(handle)
    entries[key] = value
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(entries, indent=1, ensure_ascii=False))
