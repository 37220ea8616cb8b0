"""WMT21 DA judgments as the meta-evaluation uses them: per-system segment scores, daRR pairs
built from raw DA (WMT18 protocol: pairs of the same source more than 25 points apart), system
z-scores, and a check that the segment ids of the scores follow the lines of the text files.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from nlgscore.meta.loaders import Wmt21Data
from nlgscore.meta.wmt import DarrPair, darr_concordance, darr_pairs_from_da, pearson


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


def wmt21_judgments(data: Wmt21Data, include_human: bool = False, limit: Optional[int] = None) -> Wmt21Judgments:
    """Judgments of ``data``'s systems (sorted; HUMAN = ref.B only if ``include_human``).

    ``limit`` keeps the first ``limit`` segments only (a quick run).
    """
    systems = sorted(s for s in data.hyps if include_human or s != "HUMAN")
    n = min(len(data.ref), limit or len(data.ref))
    raw = np.array([data.seg_raw[s][:n] for s in systems])
    z = np.array([data.seg_z[s][:n] for s in systems])
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
    n = judgments.raw.shape[1]
    hyps = [h for s in judgments.systems for h in data.hyps[s][:n]]
    return hyps, list(data.ref[:n]) * len(judgments.systems)


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
