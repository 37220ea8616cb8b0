"""MBR selection and best-of-N reranking over any registry metric.

For each item the utility matrix ``U[i, j] = metric(prediction=candidate_i, reference=sample_j)``
comes from ``scorer.matrix`` (every distinct text encoded once per call); candidate ``i``'s
expected utility is the mean of row ``i`` over the samples. When the samples are the candidates
themselves (no ``pseudo_references``), column ``i`` is left out of row ``i`` (a candidate is no
evidence for itself), as COMET's ``comet-mbr`` does; ``mbrs`` (0.1.8) keeps it, which adds the
self-utility to every row before dividing by ``N`` instead of ``N - 1``. The left-out column is a
*position*: a candidate text that occurs twice still counts its twin as a sample.

A metric that scores with references *and* sources (COMET-style, as COMET's own ``comet-mbr``
uses) gets each item's source in every cell of that item's matrix (``scorer.matrix(...,
source=item.source)``); an item without a source is refused, naming it. A metric that does not
score with sources never sees the items' sources. A source-only metric (``prism:src``,
``bartscore:...:src``) gives quality-estimation reranking: each candidate's utility is its score
against the item's source (one ``compute`` call over all items), and the "matrix" has one column.

The best candidate has the highest expected utility; exactly equal values go to the **lowest
index** (``numpy.argmax``; ``mbrs`` uses ``torch.topk``, whose order among ties is unspecified),
and ``nbest`` lists equal values in index order too. Duplicate candidates tie exactly, on any
kernel and CPU: each distinct (candidate, sample) or (candidate, source) pair is scored once, so a
text and its twin get the same bits, and row sums are taken in sorted order, so their rows (the
same values in another order) give the same mean rather than one differing by rounding.

>>> from nlgscore.mbr import decode
>>> [choice] = decode("bertscore:minilm:L4", [["A cat sat on the mat.", "A cat was on the mat.", "Stocks fell."]])
>>> choice.best_index, choice.best
(1, 'A cat was on the mat.')
>>> choice.expected_utility.shape, bool(choice.expected_utility[2] < choice.expected_utility[1])
((3,), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, cast

import numpy as np

from nlgscore.backend.batching import unique
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError
from nlgscore.mbr.items import ItemId, MBRItem, as_items

# Candidates per shared matrix call for embedding metrics: the cross-item pairs computed and
# thrown away cost about a tenth of the encoding at this size (MiniLM, ~30 tokens a text).
GROUP_CANDIDATES = 64


@dataclass
class Choice:
    """The outcome for one item: the chosen candidate and every candidate's expected utility.

    Args:
        id: the item's id.
        best: the chosen candidate (the highest expected utility; ties to the lower index).
        best_index: its index among the item's candidates.
        expected_utility: every candidate's expected utility, shape ``(N,)``.
        matrix: the utilities, ``(N, M)`` (``(N, 1)`` for a source-based metric); kept only
            with ``keep_matrices=True``.
        candidates: the item's candidates (what :meth:`top` names).
        nbest: how many best candidates :meth:`to_dict` lists (0: none).
    """

    id: ItemId
    best: str
    best_index: int
    expected_utility: np.ndarray  # (N,)
    matrix: Optional[np.ndarray] = None  # (N, M) utilities; (N, 1) for source-based metrics
    candidates: Optional[List[str]] = None  # the item's candidates (for nbest)
    nbest: int = 0  # how many best candidates to_dict lists (0: none)

    def top(self, k: int) -> List[Dict[str, Any]]:
        """The ``k`` best candidates (all of them if fewer), best first, ties to the lower index.

        Args:
            k: how many.

        Returns:
            ``[{"index", "candidate", "expected_utility"}, ...]``; the first is :attr:`best`.
        """
        eu = self.expected_utility
        order = sorted(range(len(eu)), key=lambda i: (-eu[i], i))[:k]
        texts = self.candidates or []
        return [
            {"index": i, "candidate": texts[i] if i < len(texts) else None, "expected_utility": float(eu[i])}
            for i in order
        ]

    def to_dict(self) -> Dict[str, Any]:
        """The JSONL output row: ``id``, ``best``, ``best_index``, ``expected_utility`` (and
        ``nbest``, the :meth:`top` ``nbest`` candidates, when asked for)."""
        row: Dict[str, Any] = {
            "id": self.id,
            "best": self.best,
            "best_index": self.best_index,
            "expected_utility": [float(v) for v in self.expected_utility],
        }
        if self.nbest:
            row["nbest"] = self.top(self.nbest)
        return row


def _needs(scorer: ScorerLike) -> Tuple[str, ...]:
    return tuple(getattr(scorer, "needs", ("references",)))


def is_source_based(scorer: ScorerLike) -> bool:
    """True for a metric scored against sources only (QE reranking), from its ``needs``.

    Args:
        scorer: a loaded scorer (local or remote).
    """
    return "sources" in _needs(scorer) and "references" not in _needs(scorer)


def uses_sources(scorer: ScorerLike) -> bool:
    """True for a metric that scores with references and sources: each item's source goes to
    every cell of its utility matrix.

    Args:
        scorer: a loaded scorer (local or remote).
    """
    return "sources" in _needs(scorer) and "references" in _needs(scorer)


def expected_utility(matrix: np.ndarray, exclude_self: bool) -> np.ndarray:
    """Row means of ``matrix``, summed in sorted order so that a candidate and its duplicate get
    bit-identical means.

    Args:
        matrix: the utilities, candidates x samples.
        exclude_self: leave the diagonal out of each row (the candidates are their own samples).

    Returns:
        One expected utility per candidate.

    Example:
        >>> expected_utility(np.array([[1.0, 0.2, 0.4], [0.2, 1.0, 0.6], [0.4, 0.6, 1.0]]), True).round(6).tolist()
        [0.3, 0.4, 0.5]
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    n, m = matrix.shape
    if exclude_self:
        matrix = matrix[~np.eye(n, m, dtype=bool)].reshape(n, m - 1)
    # Summed in sorted order, so that two rows holding the same values in another order (a
    # candidate and its duplicate) get bit-identical means and the lowest-index rule decides.
    return np.sort(matrix, axis=1).sum(axis=1) / matrix.shape[1]


def best_index(utilities: np.ndarray) -> int:
    """Index of the highest expected utility; ties go to the lowest index.

    Args:
        utilities: the candidates' expected utilities.

    Example:
        >>> best_index(np.array([0.2, 0.7, 0.7]))
        1
    """
    return int(np.argmax(utilities))


def decode(
    metric: Any,
    items: Sequence[Any],
    *,
    column: Optional[str] = None,
    keep_matrices: bool = False,
    nbest: Optional[int] = None,
    **options: Any,
) -> List[Choice]:
    """MBR selection (or QE reranking for a source-based metric) for each of ``items``.

    Each candidate's expected utility is the mean of its row of the item's utility matrix
    (the metric's ``matrix`` of candidates against samples); the best is chosen.

    Args:
        metric: a spec (``"bertscore:minilm"``, ``"prism:ref:CHECKPOINT"``, ``"prism:src"`` ...),
            a loaded scorer, or a function returning one.
        items: :class:`MBRItem` objects, dicts with the same fields, or plain lists of candidates.
        column: a non-primary score as the utility (``"precision"``).
        keep_matrices: keep each item's utility matrix on its Choice.
        nbest: list the K best candidates with their expected utilities in each output row (all
            of them when an item has fewer).
        **options: the metric's options, for a spec (as ``nlgscore.load`` takes them).

    Returns:
        One :class:`Choice` per item, in input order.

    Raises:
        ArgumentError: options given with a loaded scorer, a bad ``nbest``, or a non-finite utility.

    Example:
        >>> [choice.best for choice in decode("chrf", [["a cat sat", "the cat sat", "a dog ran"]])]
        ['the cat sat']
    """
    nbest = check_nbest(nbest)
    scorer = load_metric(metric, options)
    checked = as_items(items)
    if is_source_based(scorer):
        matrices = _source_matrices(scorer, checked, column)
    else:
        matrices = _reference_matrices(scorer, checked, column)
    choices = []
    for item, matrix in zip(checked, matrices):
        eu = expected_utility(matrix, item.excludes_self and not is_source_based(scorer))
        if not np.all(np.isfinite(eu)):
            raise ArgumentError(f"item {item.id!r}: the metric gave a non-finite utility; cannot choose a candidate")
        k = best_index(eu)
        choices.append(
            Choice(
                cast(ItemId, item.id),
                item.candidates[k],
                k,
                eu,
                matrix if keep_matrices else None,
                item.candidates,
                nbest,
            )
        )
    return choices


def check_nbest(nbest: Any) -> int:
    """``nbest`` as a count of candidates to list (None: 0, none), else an error naming it.

    >>> check_nbest(None), check_nbest(3)
    (0, 3)
    """
    if nbest is None:
        return 0
    if isinstance(nbest, bool) or not isinstance(nbest, int) or nbest < 1:
        raise ArgumentError(f"nbest must be a positive integer (candidates listed per item) or None, got {nbest!r}")
    return nbest


def load_metric(metric: Any, options: Dict[str, Any]) -> Any:
    """The scorer of ``metric``: a spec (loaded with ``options``), a loaded scorer, or a function
    returning one."""
    if callable(metric) and not hasattr(metric, "compute"):
        if options:
            raise ArgumentError(f"options {sorted(options)} are for a metric spec; this metric is built by a function")
        metric = metric()
    if isinstance(metric, str):
        from nlgscore.registry import build

        return build(metric, **options)
    if options:
        raise ArgumentError(f"options {sorted(options)} are for a metric spec; this scorer is already loaded")
    if not hasattr(metric, "compute"):
        raise ArgumentError(f"metric must be a spec string or a loaded scorer, got {type(metric).__name__}")
    return metric


def _reference_matrices(scorer: ScorerLike, items: List[MBRItem], column: Optional[str]) -> List[np.ndarray]:
    """Each item's (N, M) utility matrix from ``scorer.matrix`` (with the item's source for a
    metric that scores with sources).

    For a metric whose pair scores are cheap once its texts are encoded
    (``pairs_from_embeddings``, e.g. BERTScore), consecutive items share one ``matrix`` call of
    up to :data:`GROUP_CANDIDATES` candidates: their texts are encoded in one pass (bigger
    batches), and the diagonal blocks are kept; the off-diagonal pairs cost a few matmuls. Items
    share a call only under one source. Other metrics (Prism, BARTScore: a decoder pass per pair)
    get one call per item.
    """
    with_source = uses_sources(scorer)
    if with_source:
        _require_sources(scorer, items)
    limit = GROUP_CANDIDATES if getattr(scorer, "pairs_from_embeddings", False) else 0
    out: List[np.ndarray] = []
    start = 0
    while start < len(items):
        stop, used = start + 1, items[start].n
        source = items[start].source if with_source else None
        while stop < len(items) and used + items[stop].n <= limit and (not with_source or items[stop].source == source):
            used += items[stop].n
            stop += 1
        group = items[start:stop]
        grid = scorer.matrix(
            [c for item in group for c in item.candidates],
            [s for item in group for s in item.samples],
            source=source,
            column=column,
        )
        rows = np.cumsum([0] + [item.n for item in group])
        cols = np.cumsum([0] + [len(item.samples) for item in group])
        out.extend(
            np.array(grid[rows[k] : rows[k + 1], cols[k] : cols[k + 1]], dtype=np.float64) for k in range(len(group))
        )
        start = stop
    return out


def _require_sources(scorer: ScorerLike, items: List[MBRItem]) -> None:
    missing = [item.id for item in items if item.source is None]
    if missing:
        raise ArgumentError(f"metric {scorer.name!r} scores with sources; item {missing[0]!r} has no source")


def _source_matrices(scorer: ScorerLike, items: List[MBRItem], column: Optional[str]) -> List[np.ndarray]:
    """Each item's (N, 1) scores against its source, all items in one ``compute`` call.

    Each distinct (candidate, source) pair is scored once and its score copied to every place it
    occurs, so duplicate candidates tie exactly (and the lowest index wins) on any kernel, as they
    do in ``scorer.matrix``, which scores each distinct pair once too."""
    _require_sources(scorer, items)
    pairs, where = unique([(c, item.source) for item in items for c in item.candidates])
    scored = _column(scorer.compute([p for p, _ in pairs], sources=cast(List[str], [s for _, s in pairs])), column)
    values = np.asarray(scored, dtype=np.float64)[np.asarray(where, dtype=np.intp)]
    bounds = np.cumsum([0] + [item.n for item in items])
    return [values[a:b, None] for a, b in zip(bounds[:-1], bounds[1:])]


def _column(result: Any, column: Optional[str]) -> List[float]:
    if column is None:
        return result.scores
    columns = result.columns()
    if column not in columns:
        raise ArgumentError(f"column must be one of {', '.join(sorted(columns))}, got {column!r}")
    return columns[column]
