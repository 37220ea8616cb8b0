"""BERTScore with the semantics of bert_score 0.3.13, planned for speed and bounded memory.

Pairs are sorted by length and processed in chunks: the distinct texts of a chunk are encoded in
token-budget batches, the chunk's pairs are matched with batched matmuls, and the embeddings are
dropped before the next chunk, so host memory does not grow with the corpus. Scores come back in
input order whatever the batch plan.

>>> scorer = BERTScorer(model_type="minilm", num_layers=4)
>>> result = scorer.score(["The cat sat on the mat."], ["A cat was sitting on the mat."])
>>> round(float(result.f1[0]), 4), result.primary
(0.8905, 'f1')
>>> str(result.signature).startswith("nlgscore:bertscore|model:all-MiniLM-L6-v2|")
True
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.core.base import Scorer
from nlgscore.bertscore.rescale import find_baseline, rescale, select_layers
from nlgscore.core.batching import run_batches, unique
from nlgscore.core.distributed import shard
from nlgscore.bertscore.embedding import Encoder, describe_tokenizer
from nlgscore.bertscore.idf import idf_table, sentences_digest, uniform_table
from nlgscore.core.inputs import check_references, check_same_length, check_texts, flatten_references
from nlgscore.bertscore.matching import greedy_match
from nlgscore.core.models import dtype_name
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature
from nlgscore.core.tables import table

# Token budget of one encoder batch. On 2 CPU cores 1,024-4,096 tokens all run within a few
# percent of each other; much larger batches get slower (cache misses), smaller ones pay overhead.
CPU_MAX_TOKENS = 2048
GPU_MAX_TOKENS = 16384
# Padded tokens of distinct texts embedded before their pairs are matched and freed.
CHUNK_TOKENS_PER_BUDGET = 32
# Elements of one matching batch's padded blocks: (pairs x cand tokens x ref tokens) similarities
# plus (pairs x tokens x hidden) embeddings; 1 << 23 fp32 elements = 32 MiB.
MATCH_BUDGET = 1 << 23


@dataclass
class BERTScoreResult(Result):
    """Per-pair precision, recall and F1 (``(layers+1, pairs)`` arrays with ``all_layers``)."""

    COLUMNS = ("precision", "recall", "f1")
    primary = "f1"

    precision: Any = None
    recall: Any = None
    f1: Any = None
    # (scorer, candidates, grouped references) for plot(); not part of the scores
    _source: Any = field(default=None, repr=False, compare=False)

    @property
    def system(self) -> Dict[str, Any]:
        """Mean of each column over pairs (a list per layer with ``all_layers``)."""
        out = {}
        for name in self.COLUMNS:
            values = np.asarray(getattr(self, name), dtype=np.float64)
            mean = values.mean(axis=-1) if values.shape[-1] else np.full(values.shape[:-1], np.nan)
            out[name] = mean.tolist() if mean.ndim else float(mean)
        return out

    def __len__(self) -> int:
        return int(np.asarray(self.f1).shape[-1])

    def plot(self, i: int = 0, path: Optional[str] = None) -> Any:
        """Heat-map of pair ``i``: token similarities, greedy matches, idf weights (needs matplotlib).

        Draws with the scorer that produced this result; see :func:`nlgscore.bertscore.plot.plot_pair`.
        """
        if self._source is None:
            raise ValueError("this result does not keep its inputs (it was not returned by BERTScorer.score)")
        from nlgscore.bertscore.plot import plot_pair

        scorer, cands, refs = self._source
        if not 0 <= i < len(cands):
            raise IndexError(f"pair index {i} out of range for {len(cands)} pairs")
        return plot_pair(scorer, cands[i], refs[i], path)


def default_model(lang: Optional[str]) -> str:
    """bert_score's language default: en → roberta-large, zh → bert-base-chinese, others → mBERT."""
    lang2model = table("bertscore_lang2model")
    return lang2model.get(lang.lower(), lang2model["default"])


def default_layer(*names: str) -> Optional[int]:
    """The tuned layer of the first of ``names`` found in bertscore_model2layers."""
    layers = table("bertscore_model2layers")
    for name in names:
        if name in layers and not name.startswith("_"):
            return int(layers[name])
    return None


class BERTScorer(Scorer):
    """BERTScore scorer: load once, score many times. See the module docstring for an example.

    ``cache_references=True`` keeps the embeddings of up to ``reference_cache_size`` reference
    texts across calls (an evaluation set scored after every training epoch is encoded once);
    ``cache_candidates=True`` does the same for candidates (generations that did not change since
    the last evaluation, a candidate set scored again). One text-keyed cache serves both sides:
    a text's embedding does not depend on the side it is on.
    Batches are planned by ``max_tokens`` (padded tokens per encoder batch); ``batch_size``
    additionally caps the sentences per batch if given (default: no cap, since 64 short WMT
    sentences fill only ~1,600 of the 2,048-token budget and smaller batches run slower).
    """

    name = "bertscore"

    def __init__(
        self,
        model_type: Optional[str] = None,
        num_layers: Optional[int] = None,
        lang: Optional[str] = None,
        idf: bool = False,
        idf_sents: Optional[Sequence[str]] = None,
        rescale_with_baseline: bool = False,
        baseline_path: Optional[str] = None,
        all_layers: bool = False,
        device=None,
        batch_size: Optional[int] = None,
        max_length: Optional[int] = None,
        max_tokens: Optional[int] = None,
        dtype=None,
        revision: Optional[str] = None,
        progress: bool = False,
        accelerator: Any = None,
        cache_references: bool = False,
        reference_cache_size: int = 100_000,
        cache_candidates: bool = False,
    ) -> None:
        if lang is not None and not isinstance(lang, str):
            raise TypeError(f"lang must be a language code string, got {type(lang).__name__}")
        if model_type is None:
            if lang is None:
                raise ValueError("either lang or model_type must be given (e.g. lang='en' or model_type='minilm')")
            model_type = default_model(lang)
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"batch_size must be a positive int or None, got {batch_size!r}")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        self.lang = lang.lower() if lang else None
        self.encoder = Encoder.load(
            model_type, num_layers=num_layers, all_layers=all_layers, device=device, dtype=dtype,
            max_length=max_length, revision=revision, default_layers=None if num_layers is not None else self._default_layer(model_type),
        )
        self.model_type = self.encoder.resolved.name
        self.num_layers = self.encoder.num_layers
        self.all_layers = all_layers
        self.batch_size = batch_size
        self.max_tokens = max_tokens or (CPU_MAX_TOKENS if self.encoder.device.type == "cpu" else GPU_MAX_TOKENS)
        self.progress = progress
        self.accelerator = accelerator
        self.idf = bool(idf) or idf_sents is not None
        self._idf_table = None  # fixed by idf_sents / compute_idf
        self._last_idf = None  # idf of the last call's references (idf=True without idf_sents)
        self._idf_source = "no"
        if idf_sents is not None:
            self.compute_idf(idf_sents)
        self._uniform = uniform_table(self.encoder.vocab_size, self.encoder.zero_weight_ids)
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline = None
        self.baseline_source = "no"
        if rescale_with_baseline:
            table_, source = find_baseline(self.lang, self.model_type, baseline_path)
            # all_layers scores every layer of the model (as bert_score does), whatever num_layers is
            self.baseline = select_layers(table_, self.encoder.total_layers if all_layers else self.num_layers, all_layers, source)
            self.baseline_source = source
        elif baseline_path is not None:
            raise ValueError("baseline_path is only used with rescale_with_baseline=True")
        self.cache_references = cache_references
        self.cache_candidates = cache_candidates
        self.reference_cache_size = reference_cache_size
        self._ref_cache: "OrderedDict[str, Any]" = OrderedDict()

    def _layer_count(self) -> int:
        """Layers per score: all hidden states (embeddings included) with all_layers, else one."""
        return self.encoder.total_layers + 1 if self.all_layers else 1

    def clear_reference_cache(self) -> None:
        """Forget the cached embeddings (references and candidates; e.g. when the evaluation set changes)."""
        self._ref_cache.clear()

    @staticmethod
    def _default_layer(model_type: str) -> Optional[int]:
        from nlgscore.core.models import resolve

        aliases = table("aliases")
        names = [model_type]
        if model_type in aliases and not model_type.startswith("_"):
            names.append(aliases[model_type]["name"])
            names.append(aliases[model_type]["hub_id"])
        else:
            try:
                names.append(resolve(model_type).name)
            except OSError:
                pass  # Encoder.load reports a missing model with the full explanation
        layer = default_layer(*names)
        if layer is None:
            layer = default_layer(*(name.rsplit("/", 1)[-1] for name in names))
        return layer

    # ------------------------------------------------------------------ idf
    def compute_idf(self, sents: Sequence[str]) -> None:
        """Fix the idf weights to those of ``sents`` (the ``idf_sents`` argument does this too)."""
        sents = check_texts("idf_sents", sents)
        ids, _ = self.encoder.tokenize(sents)
        self._idf_table = idf_table(ids, self.encoder.vocab_size)
        self._idf_source = f"custom:{sentences_digest(sents)}"
        self.idf = True

    # ------------------------------------------------------------ signature
    @property
    def signature(self) -> Signature:
        idf = self._idf_source if self.idf and self._idf_source != "no" else ("refs" if self.idf else "no")
        return Signature(
            "bertscore",
            model=self.model_type,
            rev=self.encoder.resolved.revision,
            L="all" if self.all_layers else self.num_layers,
            idf=idf,
            rescale=self.baseline_source,
            tok=describe_tokenizer(self.encoder),
            maxlen=self.encoder.max_length,
            dtype=dtype_name(self.encoder.dtype),
            mref="max",
        )

    # --------------------------------------------------------------- scoring
    def compute(self, predictions: Sequence[str], references: Optional[Sequence] = None, sources: Optional[Sequence[str]] = None) -> BERTScoreResult:
        """:meth:`score` under the common Scorer interface (``sources`` is not used by BERTScore)."""
        if references is None:
            raise ValueError("references are required for BERTScore")
        return self.score(predictions, references)

    def score(self, cands: Sequence[str], refs: Sequence) -> BERTScoreResult:
        """Score each candidate against its reference(s): ``refs`` is ``[str]`` or ragged ``[[str]]``."""
        cands = check_texts("cands", cands)
        check_same_length(cands=cands, refs=refs if hasattr(refs, "__len__") else None)
        grouped = check_references("refs", refs, len(cands))
        flat_refs, owner = flatten_references(grouped)
        hyps = [cands[i] for i in owner]
        texts, inverse = unique(hyps + flat_refs)
        ids, truncated = self.encoder.tokenize(texts)
        hyp_u, ref_u = inverse[: len(hyps)], inverse[len(hyps) :]
        weights = self._weights_for_call([ids[u] for u in ref_u])
        self._warn_inputs(ids, hyp_u, ref_u, truncated)

        def score_share(indices: List[int]) -> List[np.ndarray]:
            return self._score_pairs(indices, texts, ids, hyp_u, ref_u, weights)

        layers = self._layer_count()
        per_pair = np.asarray(shard(len(flat_refs), score_share, self.accelerator), dtype=np.float64)
        per_pair = per_pair.reshape(len(flat_refs), 3, layers)  # (pairs, P/R/F, layers)
        scores = np.full((len(cands), 3, layers), -np.inf)
        np.maximum.at(scores, np.asarray(owner, dtype=np.int64), per_pair)  # max per column over refs
        scores = scores.transpose(1, 2, 0)  # (P/R/F, layers, cands)
        if self.baseline is not None:
            scores = rescale(scores, np.asarray(self.baseline).T[:, :, None] if self.all_layers else np.asarray(self.baseline)[:, None, None])
        if not self.all_layers:
            scores = scores[:, 0, :]
        return BERTScoreResult(signature=self.signature, precision=scores[0], recall=scores[1], f1=scores[2], _source=(self, cands, grouped))

    def _weights_for_call(self, ref_ids: List[List[int]]):
        if not self.idf:
            return self._uniform
        if self._idf_table is not None:
            return self._idf_table
        self._last_idf = idf_table(ref_ids, self.encoder.vocab_size) if ref_ids else self._uniform
        return self._last_idf

    def _warn_inputs(self, ids: List[List[int]], hyp_u: List[int], ref_u: List[int], truncated: int) -> None:
        """One warning per call for empty inputs (scored 0) and one for truncated ones."""
        n = self.encoder.n_special
        empty_hyps = sum(len(ids[u]) == n for u in hyp_u)
        empty_refs = sum(len(ids[u]) == n for u in ref_u)
        if empty_hyps or empty_refs:
            warnings.warn(f"BERTScore: {empty_hyps} empty candidate(s) and {empty_refs} empty reference(s); their pairs score 0", stacklevel=3)
        if truncated:
            warnings.warn(f"BERTScore: {truncated} input(s) longer than {self.encoder.max_length} tokens were truncated", stacklevel=3)

    def _score_pairs(self, indices: List[int], texts, ids, hyp_u, ref_u, weights) -> List[np.ndarray]:
        """(P, R, F) per pair in ``indices`` (each a ``(3, layers)`` array), chunk by chunk.

        Pairs are ordered by reference (longest first, stable), so all pairs of a reference fall in
        one chunk and each distinct text is encoded once per call, not once per chunk it appears
        in; a chunk is closed when the *distinct* texts it needs reach the token budget, so
        duplicated pairs cost nothing and host memory stays bounded by the chunk.
        """
        from tqdm.auto import tqdm

        out: Dict[int, np.ndarray] = {}
        length = [len(x) for x in ids]
        order = sorted(indices, key=lambda i: (-length[ref_u[i]], ref_u[i], -length[hyp_u[i]]))
        budget = self.max_tokens * CHUNK_TOKENS_PER_BUDGET // self._layer_count()
        with tqdm(total=len(order), disable=not self.progress, desc="bertscore", unit="pair") as bar:
            start = 0
            while start < len(order):
                stop, used, seen = start, 0, set()
                while stop < len(order):
                    i = order[stop]
                    new = [u for u in (hyp_u[i], ref_u[i]) if u not in seen]
                    cost = sum(length[u] for u in set(new))
                    if stop > start and used + cost > budget:
                        break
                    seen.update(new)
                    used += cost
                    stop += 1
                chunk = order[start:stop]
                self._score_chunk(chunk, texts, ids, hyp_u, ref_u, weights, out)
                bar.update(len(chunk))
                start = stop
        return [out[i] for i in indices]

    def _score_chunk(self, chunk: List[int], texts, ids, hyp_u, ref_u, weights, out: Dict[int, np.ndarray]) -> None:
        import torch

        needed, _ = unique([hyp_u[i] for i in chunk] + [ref_u[i] for i in chunk])
        embeddings: Dict[int, Any] = {}
        cacheable = set()
        if self.cache_references:
            cacheable.update(ref_u[i] for i in chunk)
        if self.cache_candidates:
            cacheable.update(hyp_u[i] for i in chunk)
        for u in needed:
            if u in cacheable and texts[u] in self._ref_cache:
                self._ref_cache.move_to_end(texts[u])
                embeddings[u] = self._ref_cache[texts[u]]
        todo = [u for u in needed if u not in embeddings]

        def encode(batch: List[int]) -> None:
            emb = self.encoder.embed([ids[todo[k]] for k in batch])
            lengths = [len(ids[todo[k]]) for k in batch]
            if self.all_layers:
                rows = [emb[row, :, :n, :].clone() for row, n in enumerate(lengths)]
            else:  # one gather of the real rows, then views of it: no per-sentence copies
                real = torch.arange(emb.shape[1], device=emb.device)[None, :] < torch.tensor(lengths, device=emb.device)[:, None]
                rows = list(torch.split(emb[real], lengths))
            for k, row in zip(batch, rows):
                embeddings[todo[k]] = row

        run_batches([len(ids[u]) for u in todo], encode, max_tokens=self.max_tokens, max_batch_size=self.batch_size)
        if cacheable:
            for u in cacheable:
                if texts[u] in self._ref_cache:
                    self._ref_cache.move_to_end(texts[u])
                else:  # a copy: a view would keep its whole encoder batch alive after eviction
                    self._ref_cache[texts[u]] = embeddings[u].clone()
            while len(self._ref_cache) > self.reference_cache_size:
                self._ref_cache.popitem(last=False)

        weights = weights.to(self.encoder.device)
        # The chunk is ordered by reference; matching wants pairs of similar shape side by side.
        chunk = sorted(chunk, key=lambda i: -(len(ids[ref_u[i]]) + len(ids[hyp_u[i]])))
        shapes = [(len(ids[hyp_u[i]]), len(ids[ref_u[i]])) for i in chunk]
        store = _TokenStore(needed, ids, embeddings, weights)
        for batch in _match_batches(shapes, store.width, MATCH_BUDGET // self._layer_count()):
            pairs = [chunk[k] for k in batch]
            hyp = store.padded([hyp_u[i] for i in pairs])
            ref = store.padded([ref_u[i] for i in pairs])
            with torch.inference_mode():
                p, r, f = greedy_match(*hyp, *ref)
                prf = torch.stack([p, r, f])  # (3, B) or (3, L, B)
                if not self.all_layers:
                    prf = prf.unsqueeze(1)
                empty = torch.tensor([len(ids[hyp_u[i]]) == self.encoder.n_special or len(ids[ref_u[i]]) == self.encoder.n_special for i in pairs], device=prf.device)
                prf = torch.nan_to_num(prf.masked_fill(empty, 0.0), nan=0.0)
            values = prf.cpu().numpy()
            for k, i in enumerate(pairs):
                out[i] = values[:, :, k]

    # ------------------------------------------------------------- heat map
    def similarity(self, cand: str, ref: str) -> Tuple[List[str], List[str], np.ndarray, np.ndarray, np.ndarray]:
        """Tokens of both sides, their cosine-similarity matrix and token weights (for heat maps).

        The layer is ``num_layers`` (also with ``all_layers``); weights are the idf of
        ``idf_sents``/the last scored references when idf is on, else 1 (0 for CLS/SEP).
        """
        import torch

        cand, ref = check_texts("cand", [cand])[0], check_texts("ref", [ref])[0]
        (hyp_ids, ref_ids), _ = self.encoder.tokenize([cand, ref])
        with torch.inference_mode():
            emb = [self.encoder.embed([x])[0] for x in (hyp_ids, ref_ids)]
            if self.all_layers:
                emb = [e[self.num_layers] for e in emb]
            sim = (emb[0] @ emb[1].T).cpu().numpy()
        weights = (self._idf_table if self._idf_table is not None else self._last_idf) if self.idf else None
        weights = self._uniform if weights is None else weights
        return (
            self.encoder.decode_tokens(hyp_ids),
            self.encoder.decode_tokens(ref_ids),
            sim,
            weights[torch.tensor(hyp_ids)].numpy(),
            weights[torch.tensor(ref_ids)].numpy(),
        )


class _TokenStore:
    """The token embeddings and weights of a chunk's texts in one flat tensor, for padded gathers.

    Building each pair batch row by row cost ~15 small tensor ops per sentence (a tenth of a
    whole call, and nearly all of a call whose texts are cached); here a batch is one
    ``index_select`` of rows, padding pointing at an all-zero row.
    """

    def __init__(self, uids: List[int], ids, embeddings: Dict[int, Any], weights) -> None:
        import torch

        first = embeddings[uids[0]]
        zero = first.new_zeros(first.shape[:-2] + (1, first.shape[-1]))
        self.flat = torch.cat([embeddings[u] for u in uids] + [zero], dim=-2)  # (..., tokens + 1, D)
        self.padding_row = self.flat.shape[-2] - 1
        lengths = [len(ids[u]) for u in uids]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self.span = {u: (int(start), n) for u, start, n in zip(uids, starts, lengths)}
        token_ids = torch.tensor([t for u in uids for t in ids[u]] + [0], dtype=torch.long, device=weights.device)
        self.token_weights = weights[token_ids].to(first.device)
        self.width = first.shape[-1]

    def padded(self, uids: List[int]):
        """Zero-padded embeddings ``(B, [L,] T, D)``, validity mask ``(B, T)`` and weights (0 on padding)."""
        import torch

        device = self.flat.device
        starts = torch.tensor([self.span[u][0] for u in uids], device=device)
        lengths = torch.tensor([self.span[u][1] for u in uids], device=device)
        positions = torch.arange(int(lengths.max()), device=device)
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


# Scorers built by the one-shot function, by their options: calling nlgscore.bertscore.scorer(...) in a
# loop must not reload the model every time (bert_score's score() does; uqlm#141 measured 43x).
_ONE_SHOT: "OrderedDict[str, BERTScorer]" = OrderedDict()
_ONE_SHOT_SIZE = 2


def _options_key(options: Dict[str, Any]) -> Optional[str]:
    try:
        return repr(sorted((key, tuple(value) if isinstance(value, list) else value) for key, value in options.items()))
    except TypeError:  # options that do not sort or print stably (e.g. an accelerator): no reuse
        return None


def bertscore(cands: Sequence[str], refs: Sequence, **options: Any) -> BERTScoreResult:
    """One-shot BERTScore: ``BERTScorer(**options).score(cands, refs)``, reusing the last scorers.

    >>> round(float(bertscore(["it is freezing today"], ["the weather is cold today"], model_type="minilm").f1[0]), 4)
    0.749
    """
    key = _options_key(options) if "accelerator" not in options else None
    scorer = _ONE_SHOT.get(key) if key is not None else None
    if scorer is None:
        scorer = BERTScorer(**options)
        if key is not None:
            _ONE_SHOT[key] = scorer
            while len(_ONE_SHOT) > _ONE_SHOT_SIZE:
                _ONE_SHOT.popitem(last=False)
    else:
        _ONE_SHOT.move_to_end(key)
    return scorer.score(cands, refs)
