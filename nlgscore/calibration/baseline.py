"""Compute a BERTScore rescale baseline: the mean score of random pairs of unrelated sentences.

The BERTScore paper's baseline ``b`` (Sec. 3, "Baseline rescaling") is the average BERTScore of
random candidate-reference pairs of two unrelated sentences of one language, per model, layer
and P/R/F; files hold one ``LAYER,P,R,F`` row per layer (row 0 = embeddings), comma-separated
despite their ``.tsv`` name, as in the reference package.

Pairs are drawn in small groups: the corpus is shuffled and cut into groups of ``group_size``
sentences, and every two different sentences of a group form one pair, in a random direction.
Each group is one ``BERTScorer.score`` call, so a sentence is encoded once per group rather
than once per pair (the cost is then the cheap matching step), and the group means are
independent units for an honest standard error. Every pair of two different corpus sentences
is equally likely to be drawn, so the mean estimates the same quantity as independent pairs.

>>> groups = sample_pair_groups(n_sentences=5, n_pairs=7, seed=0, group_size=4)
>>> sum(len(g) for g in groups), all(a != b for g in groups for a, b in g)
(7, True)
>>> write_baseline_text(np.array([[0.5, 0.25, 0.375]]))
'LAYER,P,R,F\\n0,0.5,0.25,0.375\\n'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from nlgscore.bertscore.rescale import HEADER, parse_baseline
from nlgscore.errors import ArgumentError
from nlgscore.meta.stats.resample import check_seed

PathLike = Union[str, "os.PathLike[str]"]
# 16 sentences give 120 pairs: one BERTScorer chunk on CPU, each sentence encoded once.
DEFAULT_GROUP_SIZE = 16


def read_corpus(path: PathLike) -> List[str]:
    """Sentences of one corpus file: the references of a WMT daRR ``.jsonl`` file, else one per line.

    Lines are stripped; empty ones are skipped (an empty text scores 0, not a sentence pair).
    """
    path = Path(path)
    if path.suffix == ".jsonl":
        from nlgscore.meta.data.loaders import load_darr

        texts = load_darr(path).ref
    else:
        if not path.is_file():
            raise FileNotFoundError(f"no such corpus file: {path}")
        # split("\n"), not splitlines(): a sentence may contain U+2028 and similar separators.
        texts = path.read_text(encoding="utf-8").split("\n")
    return [text.strip() for text in texts if text.strip()]


def load_corpora(paths: Sequence[PathLike]) -> List[str]:
    """Distinct sentences of all ``paths`` in first-seen order.

    Duplicates are dropped so that a pair is never a sentence with itself and sentences that
    repeat in the data (a daRR file repeats its reference for every pair) are not over-drawn.
    """
    if not paths:
        raise ArgumentError("corpus: give at least one file")
    seen: Dict[str, None] = {}
    for path in paths:
        for text in read_corpus(path):
            seen.setdefault(text, None)
    sentences = list(seen)
    if len(sentences) < 2:
        raise ArgumentError(f"corpus: need at least 2 distinct sentences, got {len(sentences)}")
    return sentences


def sample_pair_groups(
    n_sentences: int, n_pairs: int, seed: int, group_size: int = DEFAULT_GROUP_SIZE
) -> List[np.ndarray]:
    """``n_pairs`` (candidate, reference) index pairs of two different sentences, in groups.

    Each pass shuffles ``range(n_sentences)`` and cuts it into groups of ``group_size``; every
    unordered pair of a group becomes one pair in a random direction. Passes repeat with new
    shuffles until ``n_pairs`` pairs are drawn (the last group is cut short). Returns one
    ``(pairs, 2)`` int array per group; the same arguments give the same pairs.

    >>> [g.tolist() for g in sample_pair_groups(3, 2, seed=1, group_size=2)]
    [[[1, 0]], [[0, 1]]]
    """
    if n_sentences < 2:
        raise ArgumentError(f"n_sentences must be at least 2, got {n_sentences}")
    if n_pairs < 1:
        raise ArgumentError(f"n_pairs must be positive, got {n_pairs}")
    if group_size < 2:
        raise ArgumentError(f"group_size must be at least 2, got {group_size}")
    rng = np.random.default_rng(seed)
    groups: List[np.ndarray] = []
    left = n_pairs
    while left > 0:
        order = rng.permutation(n_sentences)
        for start in range(0, n_sentences, group_size):
            members = order[start : start + group_size]
            if len(members) < 2:
                continue  # a lone leftover sentence waits for the next pass
            first, second = np.triu_indices(len(members), k=1)
            pairs = np.stack([members[first], members[second]], axis=1)
            swap = rng.random(len(pairs)) < 0.5  # random direction: P and R are not symmetric
            pairs[swap] = pairs[swap][:, ::-1]
            groups.append(pairs[:left])
            left -= len(groups[-1])
            if left == 0:
                break
    return groups


@dataclass(frozen=True)
class BaselineEstimate:
    """Mean P/R/F per layer over the sampled pairs, with two standard errors.

    ``mean``, ``pair_std`` and ``group_sem`` are ``(layers+1, 3)`` arrays (columns P, R, F).
    ``pair_sem`` treats pairs as independent; ``group_sem`` is the std of the group means over
    the square root of the group count, which also counts sentences shared between pairs.
    """

    mean: np.ndarray
    pair_std: np.ndarray
    group_sem: np.ndarray
    n_pairs: int
    n_groups: int
    n_sentences: int

    @property
    def pair_sem(self) -> np.ndarray:
        return self.pair_std / np.sqrt(self.n_pairs)


def model_depth(model: str, revision: Optional[str] = None) -> int:
    """Number of transformer layers of ``model`` (id, folder or alias), read from its config."""
    from transformers import AutoConfig

    from nlgscore.backend.models import resolve
    from nlgscore.bertscore.embedding import model_layer_count

    return model_layer_count(AutoConfig.from_pretrained(resolve(model, revision=revision).path))


def all_layers_scorer(model: str = "minilm", **options: Any):
    """A BERTScorer returning every layer 0..depth, no idf, no rescaling (``options``: device, ...).

    ``all_layers`` scores every layer whatever ``num_layers`` is; ``num_layers`` is set to the
    model's depth only so that a model without a default layer in the table can be loaded.
    """
    from nlgscore.bertscore.scorer import (
        BERTScorer,  # lazy: pulls in torch/transformers
    )

    options.setdefault("num_layers", model_depth(model, options.get("revision")))
    return BERTScorer(model_type=model, all_layers=True, idf=False, rescale_with_baseline=False, **options)


def compute_baseline(
    sentences: Sequence[str],
    n_pairs: int,
    seed: int,
    scorer: Any = None,
    model: str = "minilm",
    group_size: int = DEFAULT_GROUP_SIZE,
    progress: bool = False,
) -> BaselineEstimate:
    """Mean BERTScore of ``n_pairs`` random pairs of two different ``sentences``, every layer.

    ``scorer`` must score all layers (``all_layers_scorer``); one is built for ``model`` if None.
    """
    from nlgscore.backend.progress import progress_bar

    seed = check_seed(seed, "seed=")  # before any model loads (scripts/compute_baseline.py --seed too)
    sentences = list(sentences)
    groups = sample_pair_groups(len(sentences), n_pairs, seed, group_size)
    scorer = scorer if scorer is not None else all_layers_scorer(model)
    if (
        not getattr(scorer, "all_layers", False)
        or getattr(scorer, "idf", False)
        or getattr(scorer, "baseline", None) is not None
    ):
        raise ArgumentError("scorer must use all_layers=True, no idf and no rescaling (see all_layers_scorer)")
    per_pair: List[np.ndarray] = []
    with progress_bar(total=n_pairs, enabled=progress, desc="baseline pairs", unit="pair") as bar:
        for pairs in groups:
            result = scorer.score([sentences[i] for i in pairs[:, 0]], [sentences[j] for j in pairs[:, 1]])
            per_pair.append(np.stack([result.precision, result.recall, result.f1], axis=-1))  # (layers+1, pairs, 3)
            bar.update(len(pairs))
    scores = np.concatenate(per_pair, axis=1)
    group_means = np.stack([g.mean(axis=1) for g in per_pair])  # (groups, layers+1, 3)
    return BaselineEstimate(
        mean=scores.mean(axis=1),
        pair_std=scores.std(axis=1, ddof=1) if scores.shape[1] > 1 else np.zeros(scores.shape[::2]),
        group_sem=group_means.std(axis=0, ddof=1) / np.sqrt(len(groups))
        if len(groups) > 1
        else np.full(scores.shape[::2], np.nan),
        n_pairs=int(scores.shape[1]),
        n_groups=len(groups),
        n_sentences=len(sentences),
    )


def write_baseline_text(table: np.ndarray) -> str:
    """``LAYER,P,R,F`` lines for a ``(layers+1, 3)`` table, float32 digits like the reference files."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[1] != 3:
        raise ArgumentError(f"baseline table must have shape (layers+1, 3), got {table.shape}")
    lines = [",".join(HEADER)]
    for layer, row in enumerate(table):
        lines.append(",".join([str(layer)] + [str(np.float32(value)) for value in row]))
    text = "\n".join(lines) + "\n"
    parse_baseline(text, "computed baseline")  # the format readers expect, or fail here
    return text


def write_baseline(table: np.ndarray, path: PathLike) -> None:
    """Write ``table`` to ``path`` (folders created), see :func:`write_baseline_text`."""
    path = Path(path)
    text = write_baseline_text(table)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def read_baseline(path: PathLike) -> np.ndarray:
    """The ``(layers+1, 3)`` table of a baseline file."""
    return parse_baseline(Path(path).read_text(encoding="utf-8"), str(path))
