"""BERTScore layer calibration and per-layer meta-evaluation on WMT data.

The BERTScore paper picks each model's layer on a validation set by the Pearson correlation of
F_BERT with segment-level DA (Zhang et al. 2020, App. B: WMT16 to-English). One forward pass
with ``all_layers=True`` gives every layer, so a whole data set is scored once and each layer's
scores are then correlated separately. Measures follow ``nlgscore meta``: WMT21 segment Pearson
with DA z-scores, daRR tau from raw DA (margin 25), system Pearson with the official z scores,
MT systems only by default; WMT19 daRR tau.

>>> human = np.array([0.1, 0.4, 0.2, 0.9, 0.5])
>>> layers = np.array([[5, 1, 4, 2, 3], [1, 4, 2, 9, 5], [1, 2, 3, 4, 5]], dtype=float)
>>> best, r = select_layer(human, layers)
>>> best, [round(float(x), 2) for x in r]
(1, [-0.66, 1.0, 0.66])
"""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.batching import unique
from nlgscore.meta.loaders import DarrData, Wmt21Data
from nlgscore.meta.wmt import DarrPair, darr_concordance, darr_pairs_from_da, pearson

COLUMNS = ("P", "R", "F")
PathLike = Union[str, "os.PathLike[str]"]


def select_layer(human: Sequence[float], layer_scores: np.ndarray) -> Tuple[int, np.ndarray]:
    """The layer whose scores correlate best (Pearson) with ``human``, and every layer's r.

    ``layer_scores`` is ``(layers+1, items)``; ties go to the lower layer (``argmax``).
    """
    layer_scores = np.asarray(layer_scores, dtype=float)
    if layer_scores.ndim != 2:
        raise ValueError(f"layer_scores must be (layers+1, items), got shape {layer_scores.shape}")
    correlations = np.array([pearson(human, row) for row in layer_scores])
    return int(np.argmax(correlations)), correlations


def score_all_layers(
    scorer: Any, hyps: Sequence[str], refs: Sequence[str], cache_dir: Optional[PathLike] = None
) -> np.ndarray:
    """``(3, layers+1, pairs)`` P/R/F of every pair, in input order.

    ``scorer`` is a ``BERTScorer(all_layers=True)``. Meta-evaluation data repeat pairs (a daRR
    translation appears in several pairs), so each distinct (hyp, ref) pair is scored once.
    With ``cache_dir``, scores are stored as ``.npy`` files named by a hash of the scorer's
    signature and the texts, so the calibration and the results table score a data set once.
    """
    if len(hyps) != len(refs):
        raise ValueError(f"hyps and refs differ in length: {len(hyps)} != {len(refs)}")
    if not getattr(scorer, "all_layers", False):
        raise ValueError("scorer must be built with all_layers=True")
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


@dataclass
class Wmt21Judgments:
    """Human judgments of the evaluated systems of a WMT21 language pair.

    ``raw`` / ``z`` are ``(systems, segments)`` with NaN where unjudged; ``pairs`` are the daRR
    pairs built from raw DA (segment = column index); ``sys_z`` follows ``systems``.
    """

    systems: List[str]
    raw: np.ndarray
    z: np.ndarray
    pairs: List[DarrPair]
    sys_z: np.ndarray

    @property
    def judged(self) -> np.ndarray:
        return ~np.isnan(self.raw)


def wmt21_judgments(data: Wmt21Data, include_human: bool = False) -> Wmt21Judgments:
    """Judgments of ``data``'s systems (sorted; HUMAN = ref.B only if ``include_human``)."""
    systems = sorted(s for s in data.hyps if include_human or s != "HUMAN")
    raw = np.array([data.seg_raw[s] for s in systems])
    z = np.array([data.seg_z[s] for s in systems])
    judged = ~np.isnan(raw)
    da = {(int(seg), systems[i]): raw[i, seg] for i, seg in zip(*np.nonzero(judged))}
    pairs = darr_pairs_from_da(da)
    return Wmt21Judgments(systems, raw, z, pairs, np.array([data.sys_z[s] for s in systems]))


def identical_output_agreement(data: Wmt21Data, judgments: Wmt21Judgments) -> Dict[str, float]:
    """Sanity check of the segment alignment: do identical translations get similar DA?

    For every two systems and every segment both have judged, the raw DA pair goes to
    ``same`` when the two outputs are the same string, else to ``different``. With correctly
    aligned segment ids, identical outputs get clearly more alike scores (higher ``r_same``
    than ``r_different``); equal values mean the DA rows do not belong to those texts.
    """
    same: List[Tuple[float, float]] = []
    different: List[Tuple[float, float]] = []
    for a, b in itertools.combinations(range(len(judgments.systems)), 2):
        hyps_a, hyps_b = data.hyps[judgments.systems[a]], data.hyps[judgments.systems[b]]
        for seg in np.flatnonzero(judgments.judged[a] & judgments.judged[b]):
            pair = (judgments.raw[a, seg], judgments.raw[b, seg])
            (same if hyps_a[seg] == hyps_b[seg] else different).append(pair)
    return {
        "n_same": float(len(same)),
        "r_same": pearson(*zip(*same)) if len(same) > 2 else float("nan"),
        "r_different": pearson(*zip(*different)) if len(different) > 2 else float("nan"),
    }


def wmt21_inputs(data: Wmt21Data, judgments: Wmt21Judgments) -> Tuple[List[str], List[str]]:
    """Hypotheses (system-major, every segment) and their references, for scoring."""
    hyps = [h for s in judgments.systems for h in data.hyps[s]]
    return hyps, list(data.ref) * len(judgments.systems)


@dataclass(frozen=True)
class Wmt21Items:
    """The items each WMT21 measure is computed on, for one metric (for bootstrap CIs)."""

    seg_human: np.ndarray  # z of judged segments
    seg_metric: np.ndarray
    concordance: np.ndarray  # +1/-1 per daRR pair
    sys_human: np.ndarray
    sys_metric: np.ndarray


def wmt21_items(judgments: Wmt21Judgments, scores: np.ndarray) -> Wmt21Items:
    """Split a metric's ``(systems, segments)`` scores into the items of each measure.

    The system score is the mean over all segments (BERTScore paper Sec. 4 / WMT), judged or not.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.shape != judgments.raw.shape:
        raise ValueError(f"scores must have shape {judgments.raw.shape}, got {scores.shape}")
    row = {s: i for i, s in enumerate(judgments.systems)}
    better = [scores[row[p.better], p.segment] for p in judgments.pairs]
    worse = [scores[row[p.worse], p.segment] for p in judgments.pairs]
    judged = judgments.judged
    return Wmt21Items(
        judgments.z[judged], scores[judged], darr_concordance(better, worse),
        judgments.sys_z, scores.mean(axis=1),
    )


def wmt21_measures(items: Wmt21Items) -> Dict[str, float]:
    """``seg_pearson`` (DA z), ``seg_tau`` (daRR from DA) and ``sys_pearson`` (official z)."""
    return {
        "seg_pearson": pearson(items.seg_human, items.seg_metric),
        "seg_tau": float(np.mean(items.concordance)),
        "sys_pearson": pearson(items.sys_human, items.sys_metric),
    }


def darr_layer_concordance(scorer: Any, darr: DarrData, cache_dir: Optional[PathLike] = None) -> np.ndarray:
    """``(3, layers+1, pairs)`` +1/-1 concordance of every layer's P/R/F with a daRR file."""
    n = len(darr)
    scores = score_all_layers(scorer, darr.better + darr.worse, darr.ref * 2, cache_dir)
    out = np.empty(scores.shape[:2] + (n,), dtype=np.int64)
    for column in range(scores.shape[0]):
        for layer in range(scores.shape[1]):
            out[column, layer] = darr_concordance(scores[column, layer, :n], scores[column, layer, n:])
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
