"""BERTScore's per-pair work: chunk planning, encoding (with the text cache), greedy matching.

Pairs are sorted by length and processed in chunks: the distinct texts of a chunk are encoded in
token-budget batches, the chunk's pairs are matched with batched matmuls, and the embeddings are
dropped before the next chunk, so host memory does not grow with the corpus. Encoder batches and
matching batches both go through :func:`nlgscore.backend.batching.run_with_backoff` (an
out-of-memory error halves the budget and retries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from nlgscore.backend.batching import round_up_length, run_with_backoff, unique
from nlgscore.backend.transfer import to_device
from nlgscore.bertscore.grid import TILE_TOKENS, dense, grid_match
from nlgscore.bertscore.matching import greedy_match, greedy_match_blocked


@dataclass(frozen=True)
class PairModel:
    """What pair scoring reads from a BERTScorer, named: its encoder (``embed``, ``device``,
    ``n_special``), the layers per score, the text cache and which texts go in it, and the window
    plan of an over-long text (None within the encoder's limit)."""

    encoder: Any
    layers: int
    all_layers: bool
    cache: Any  # nlgscore.core.cache.TextCache
    cache_references: bool
    cache_candidates: bool
    window_plan: Callable[[List[int]], Optional[Any]]


# Padded tokens of distinct texts embedded before their pairs are matched and freed.
CHUNK_TOKENS_PER_BUDGET = 32
# Elements of one matching batch's padded blocks: (pairs x cand tokens x ref tokens) similarities
# plus (pairs x tokens x hidden) embeddings; 1 << 23 fp32 elements = 32 MiB.
MATCH_BUDGET = 1 << 23


def score_pairs(
    scorer: PairModel,
    pairs: Sequence[Tuple[int, int]],
    texts: List[str],
    ids: List[List[int]],
    weights: Any,
    runtime: Any,
    progress: Any = None,
    starts: Optional[Dict[int, int]] = None,
) -> np.ndarray:
    """(P, R, F) per ``(candidate, reference)`` pair of text indices: a ``(pairs, 3, layers)`` array.

    ``runtime`` is the call's run-time settings (``max_tokens``, ``batch_size``); ``progress``,
    if given, is told ``(pairs done, pairs)`` after each encoder batch, each matching batch and
    each chunk (a cancelled call's progress raises there, so it stops between batches). ``starts``: for a text read after
    its document context, the position of its first scored token (those before weigh 0).

    Pairs are ordered by reference (longest first, stable), so all pairs of a reference fall in
    one chunk; a chunk is closed when the *distinct* texts it needs reach the token budget, so
    duplicated pairs cost nothing and host memory stays bounded by the chunk. A text that a
    later chunk needs again (a candidate scored against many references, as in a utility
    matrix) keeps its embeddings until its last chunk: each distinct text is encoded once per call.
    """
    layers = scorer.layers
    out = np.zeros((len(pairs), 3, layers))
    length = [len(x) for x in ids]
    order = sorted(range(len(pairs)), key=lambda k: (-length[pairs[k][1]], pairs[k][1], -length[pairs[k][0]]))
    chunks = _plan_chunks([pairs[k] for k in order], length, runtime.max_tokens * CHUNK_TOKENS_PER_BUDGET // layers)
    last_chunk = {u: c for c, (start, stop) in enumerate(chunks) for k in order[start:stop] for u in pairs[k]}
    held: Dict[int, Any] = {}  # embeddings of texts that a later chunk needs again
    for c, (start, stop) in enumerate(chunks):
        chunk = order[start:stop]
        report = None if progress is None else lambda done, n, start=start: progress(start + done, len(order))
        _score_chunk(
            scorer,
            runtime,
            [pairs[k] for k in chunk],
            texts,
            ids,
            weights,
            out,
            chunk,
            held,
            lambda u, c=c: last_chunk[u] > c,
            starts or {},
            report,
        )
        for u in [u for u in held if last_chunk[u] <= c]:
            del held[u]
        if progress is not None:
            progress(stop, len(order))
    return out


def _plan_chunks(pairs: List[Tuple[int, int]], length: List[int], budget: int) -> List[Tuple[int, int]]:
    """``(start, stop)`` spans of ``pairs`` whose distinct texts stay within ``budget`` tokens
    (a single pair over the budget gets a chunk of its own)."""
    chunks = []
    start = 0
    while start < len(pairs):
        stop, used = start, 0
        seen: Set[int] = set()
        while stop < len(pairs):
            new = set(pairs[stop]) - seen
            cost = sum(length[u] for u in new)
            if stop > start and used + cost > budget:
                break
            seen.update(new)
            used += cost
            stop += 1
        chunks.append((start, stop))
        start = stop
    return chunks


def _windows_of(plan: Any, ids: Sequence[int]) -> Sequence[Sequence[int]]:
    """The token windows a text is encoded in: its plan's, or the whole text as one."""
    return plan.windows if plan is not None else [ids]


def _embed_chunk(
    scorer: PairModel,
    runtime: Any,
    needed: List[int],
    cacheable: set,
    texts: List[str],
    ids: List[List[int]],
    held: Dict[int, Any],
    later: Callable[[int], bool],
    report: Optional[Callable[[int, int], None]] = None,
) -> Dict[int, Any]:
    """Embeddings of the texts ``needed``: from ``held`` (texts of earlier chunks needed again),
    the scorer's text cache, or the encoder; texts that a ``later`` chunk needs go to ``held``.
    ``report``, if given, is told ``(0, 1)`` after each encoder batch (no pair is done yet)."""
    import torch

    cache = scorer.cache
    embeddings: Dict[int, Any] = {u: held[u] for u in needed if u in held}
    for u in needed:
        found = cache.get(texts[u]) if u not in embeddings and u in cacheable else None  # a hit or a miss, counted
        if found is not None:
            embeddings[u] = found
    todo = [u for u in needed if u not in embeddings]
    # A text over the encoder's limit (long_inputs="auto") is encoded in overlapping windows; the
    # budget counts windows, so a 100,000-token text takes batches of the usual size.
    plans = {u: scorer.window_plan(ids[u]) for u in todo}
    windows = [(u, k, w) for u in todo for k, w in enumerate(_windows_of(plans[u], ids[u]))]
    placed: Dict[int, Any] = {u: None for u in todo if plans[u] is not None}  # windowed texts, filled as batches finish

    def encode(batch: List[int]) -> None:
        emb = scorer.encoder.embed([windows[k][2] for k in batch])
        lengths = [len(windows[k][2]) for k in batch]
        if scorer.all_layers:
            rows = [emb[row, :, :n, :].clone() for row, n in enumerate(lengths)]
        else:  # one gather of the real rows, then views of it: no per-sentence copies
            # Their flat positions come from the host: a boolean mask's gather would wait for the GPU.
            width = emb.shape[1]
            real = torch.tensor([row * width + j for row, n in enumerate(lengths) for j in range(n)], dtype=torch.long)
            rows = list(
                torch.split(emb.reshape(-1, emb.shape[-1]).index_select(0, to_device(real, emb.device)), lengths)
            )
        for k, row in zip(batch, rows):
            u, window, _ = windows[k]
            plan = plans[u]
            if plan is not None:  # a windowed text: each token from its best window
                placed[u] = plan.place(placed[u], window, row)
            else:
                embeddings[u] = row

    lengths = [len(w) for _, _, w in windows]

    def plan(remaining: List[int], budget: int) -> List[List[int]]:
        return [
            [remaining[j] for j in batch]
            for batch in scorer.encoder.plan_batches([lengths[i] for i in remaining], budget, runtime.batch_size)
        ]

    run_with_backoff(
        len(windows), plan, encode, runtime.max_tokens, progress=None if report is None else lambda _d, _n: report(0, 1)
    )
    embeddings.update(placed)
    for u in cacheable:  # those found were marked as recently used by cache.get above
        if texts[u] not in cache:  # a copy: a view would keep its whole encoder batch alive after eviction
            cache.put(texts[u], embeddings[u].clone())
    held.update((u, embeddings[u]) for u in todo if later(u))
    return embeddings


def _score_chunk(
    scorer: PairModel,
    runtime: Any,
    pairs: List[Tuple[int, int]],
    texts,
    ids,
    weights,
    out: np.ndarray,
    slots: List[int],
    held,
    later,
    starts: Dict[int, int],
    report: Optional[Callable[[int, int], None]] = None,
) -> None:
    """Score one chunk's ``pairs`` into ``out[slots]``; ``report(pairs done, pairs)`` of the chunk
    after each encoder and matching batch."""
    import torch

    needed, _ = unique([h for h, _ in pairs] + [r for _, r in pairs])
    cacheable: Set[int] = set()
    if scorer.cache_references:
        cacheable.update(r for _, r in pairs)
    if scorer.cache_candidates:
        cacheable.update(h for h, _ in pairs)
    embeddings = _embed_chunk(scorer, runtime, needed, cacheable, texts, ids, held, later, report)

    weights = weights.to(scorer.encoder.device)
    n_special = scorer.encoder.n_special
    # The chunk is ordered by reference; matching wants pairs of similar shape side by side.
    order = sorted(range(len(pairs)), key=lambda k: -(len(ids[pairs[k][1]]) + len(ids[pairs[k][0]])))
    shapes = [(len(ids[pairs[k][0]]), len(ids[pairs[k][1]])) for k in order]
    store = _TokenStore(needed, ids, embeddings, weights, starts)
    if not scorer.all_layers and dense(pairs) and max(len(ids[u]) for u in needed) <= TILE_TOKENS:
        _grid_chunk(store, pairs, ids, n_special, out, slots)
        return

    def plan(remaining: List[int], budget: int) -> List[List[int]]:
        groups = _match_batches([shapes[j] for j in remaining], store.width, budget)
        return [[remaining[j] for j in group] for group in groups]

    budget = MATCH_BUDGET // scorer.layers

    def match(batch: List[int]) -> None:
        chosen = [pairs[order[j]] for j in batch]
        hyp = store.padded([h for h, _ in chosen])
        ref = store.padded([r for _, r in chosen])
        with torch.inference_mode():
            rows, cols = shapes[batch[0]]
            if len(batch) == 1 and rows * cols > budget:  # one pair of long (windowed) texts: in blocks of rows
                one = [x[0] for x in (*hyp, *ref)]
                p, r, f = (
                    v[..., None] for v in greedy_match_blocked(one[0], one[2], one[3], one[5], max(1, budget // cols))
                )
            else:
                p, r, f = greedy_match(*hyp, *ref)
            prf = torch.stack([p, r, f])  # (3, B) or (3, L, B)
            if not scorer.all_layers:
                prf = prf.unsqueeze(1)
            empty = to_device(
                torch.tensor([len(ids[h]) == n_special or len(ids[r_]) == n_special for h, r_ in chosen]), prf.device
            )
            prf = torch.nan_to_num(prf.masked_fill(empty, 0.0), nan=0.0)
        values = prf.cpu().numpy()
        for k, j in enumerate(batch):
            out[slots[order[j]]] = values[:, :, k]

    run_with_backoff(len(order), plan, match, budget, progress=report or False, unit="pair")


def _grid_chunk(
    store: "_TokenStore", pairs: List[Tuple[int, int]], ids, n_special: int, out: np.ndarray, slots: List[int]
) -> None:
    """A chunk that is (mostly) a utility matrix: every hyp text against every ref text in tiles
    (:mod:`nlgscore.bertscore.grid`), then each pair's cell."""
    hyps, _ = unique([h for h, _ in pairs])
    refs, _ = unique([r for _, r in pairs])
    prf = _grid_values(store, hyps, refs, ids, n_special)
    row = {u: k for k, u in enumerate(hyps)}
    col = {u: k for k, u in enumerate(refs)}
    for k, (h, r_) in enumerate(pairs):
        out[slots[k], :, 0] = prf[:, row[h], col[r_]]


def _grid_values(store: "_TokenStore", hyps: List[int], refs: List[int], ids, n_special: int) -> np.ndarray:
    """(P, R, F) of every text of ``hyps`` against every text of ``refs``: ``(3, hyps, refs)``;
    a pair with an empty side scores 0 (as in the pair path)."""
    import torch

    with torch.inference_mode():
        p, r, f = grid_match(
            store.flat, store.token_weights, [store.span[u] for u in hyps], [store.span[u] for u in refs]
        )
        prf = torch.nan_to_num(torch.stack([p, r, f]), nan=0.0).cpu().numpy().astype(np.float64)
    prf[:, [len(ids[u]) == n_special for u in hyps], :] = 0.0
    prf[:, :, [len(ids[u]) == n_special for u in refs]] = 0.0
    return prf


def text_grid(
    scorer: PairModel,
    runtime: Any,
    texts: List[str],
    ids: List[List[int]],
    weights: Any,
    hyps: List[int],
    refs: List[int],
) -> np.ndarray:
    """(P, R, F) of every text of ``hyps`` against every text of ``refs`` (indices into ``texts``),
    ``(3, hyps, refs)``, single layer: every distinct text embedded once (the scorer's text cache
    used as in :func:`score_pairs`), then :func:`~nlgscore.bertscore.grid.grid_match`. No list of
    pairs is built; the caller keeps the texts few enough to hold their embeddings at once."""
    needed, _ = unique(list(hyps) + list(refs))
    cacheable = set()
    if scorer.cache_references:
        cacheable.update(refs)
    if scorer.cache_candidates:
        cacheable.update(hyps)
    embeddings = _embed_chunk(scorer, runtime, needed, cacheable, texts, ids, {}, lambda u: False)
    store = _TokenStore(needed, ids, embeddings, weights.to(scorer.encoder.device))
    return _grid_values(store, list(hyps), list(refs), ids, scorer.encoder.n_special)


class _TokenStore:
    """The token embeddings and weights of a chunk's texts in one flat tensor, for padded gathers.

    Building each pair batch row by row cost ~15 small tensor ops per sentence (a tenth of a
    whole call, and nearly all of a call whose texts are cached); here a batch is one
    ``index_select`` of rows, padding pointing at an all-zero row.
    """

    def __init__(
        self, uids: List[int], ids, embeddings: Dict[int, Any], weights, scored_from: Optional[Dict[int, int]] = None
    ) -> None:
        import torch

        first = embeddings[uids[0]]
        zero = first.new_zeros(first.shape[:-2] + (1, first.shape[-1]))
        self.flat = torch.cat([embeddings[u] for u in uids] + [zero], dim=-2)  # (..., tokens + 1, D)
        self.padding_row = self.flat.shape[-2] - 1
        lengths = [len(ids[u]) for u in uids]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self.span = {u: (int(start), n) for u, start, n in zip(uids, starts, lengths)}
        token_ids = to_device(torch.tensor([t for u in uids for t in ids[u]] + [0], dtype=torch.long), weights.device)
        self.token_weights = weights[token_ids].to(first.device)
        for u in uids if scored_from else ():  # a text's document context: read, not scored
            if scored_from is not None and u in scored_from:
                self.token_weights[self.span[u][0] : self.span[u][0] + min(scored_from[u], self.span[u][1])] = 0.0
        self.width = first.shape[-1]

    def padded(self, uids: List[int]):
        """Zero-padded embeddings ``(B, [L,] T, D)``, validity mask ``(B, T)`` and weights (0 on padding)."""
        import torch

        device = self.flat.device
        spans = [self.span[u] for u in uids]  # on the host: the longest is read without waiting for the GPU
        starts = to_device(torch.tensor([start for start, _ in spans]), device)
        lengths = to_device(torch.tensor([n for _, n in spans]), device)
        positions = torch.arange(round_up_length(max(n for _, n in spans)), device=device)  # see greedy_match
        mask = positions[None, :] < lengths[:, None]
        index = torch.where(mask, starts[:, None] + positions[None, :], self.padding_row)
        emb = self.flat.index_select(-2, index.reshape(-1))
        emb = emb.view(emb.shape[:-2] + tuple(index.shape) + (self.width,))
        if emb.dim() == 4:  # all layers: (L, B, T, D) -> (B, L, T, D), as the matcher takes it
            emb = emb.transpose(0, 1)
        w = self.token_weights[index].masked_fill(~mask, 0.0)
        return emb, mask, w


def _match_batches(shapes: List[Tuple[int, int]], width: int, budget: int) -> List[List[int]]:
    """Consecutive groups whose *padded* blocks stay within ``budget`` elements.

    A group of ``n`` pairs padded to ``(h, r)`` tokens builds an ``n·h·r`` similarity block and
    ``n·(h+r)·width`` padded embeddings; budgeting the sum of the pairs' own sizes instead let
    one group pad 2,000 pairs to the longest sentence (about 1 GB on WMT kk-en).
    """
    batches: List[List[int]] = []
    current: List[int] = []
    longest_h = longest_r = 0
    for k, (h, r) in enumerate(shapes):
        new_h, new_r = max(longest_h, h), max(longest_r, r)
        if current and (len(current) + 1) * (new_h * new_r + (new_h + new_r) * width) > budget:
            batches.append(current)
            current, new_h, new_r = [], h, r
        current.append(k)
        longest_h, longest_r = new_h, new_r
    if current:
        batches.append(current)
    return batches
