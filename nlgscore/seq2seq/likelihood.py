"""Teacher-forced target log-probabilities from an encoder–decoder model (BARTScore, Prism).

``target_logprobs`` gives, for each (source, target) pair of token ids, the natural-log
probability of every target token given the source and the previous target tokens. It is fast
because of four things, none of which changes a number beyond float rounding:

* identical (source, target) pairs are computed once;
* pairs are sorted by length and packed into token-budget batches (``nlgscore.backend.batching``), so
  little padding is computed; a CUDA out-of-memory error halves the budget and retries;
* a recurring source (one reference against many candidates) is encoded once: the encoder runs
  on the distinct sources of a batch, its states are expanded with ``index_select`` for the
  decoder, and states of sources with pairs left in later batches stay in a bounded cache (when
  they would outgrow it, as in a large utility matrix, the batches take one source after the
  other instead); the decoder's cross-attention keys and values are likewise projected once per
  distinct source;
* ``torch.inference_mode`` and SDPA attention (see :func:`load_seq2seq`).

With ``token_forward=True`` (a scorer's ``forward="tokens"``, or ``"auto"`` where
``NLGSCORE_TOKEN_FORWARD=1``) a batch runs as one token forward
instead (:mod:`nlgscore.seq2seq.token_forward`: every layer on packed tokens, attention per
sequence, no padding), for the architectures it rebuilds; the others keep the padded forward.
On CUDA in 16-bit that forward is replayed from a CUDA graph per (source bucket, target bucket)
where the batch fits one (:mod:`nlgscore.seq2seq.cuda_graphs`: each pair's source is encoded in
its own slot there, so the source cache is not read on that path).

A pair's numbers are bit-identical whatever else the call holds (batch mates, order, budget):
every forward holds pairs of one source and one target padded length
(:func:`~nlgscore.backend.batching.padded_length`), padded to exactly those lengths, so every
attention sums over the same keys in the same order, and every product has at least 16 rows
(:mod:`nlgscore.backend.gemm`).

>>> from nlgscore.backend.models import resolve
>>> import torch
>>> model, tokenizer = load_seq2seq(resolve("tests/golden/tiny-bart"), torch.device("cpu"), torch.float32)
>>> ids = tokenizer(["It was sunny.", "Sunny it was."])["input_ids"]
>>> out = target_logprobs(model, [ids[0], ids[0]], [ids[1], ids[0]], pad_id=1, decoder_start_id=2)
>>> [len(x) for x in out] == [len(ids[1]), len(ids[0])]
True
>>> bool((out[0] <= 0).all())
True
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from contextlib import contextmanager, nullcontext
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.backend.batching import DEFAULT_MAX_TOKENS, padded_length, run_batches, unique
from nlgscore.backend.cuda_kernels import forward_attention
from nlgscore.backend.gemm import linear, model_kernel, use_onednn_linears
from nlgscore.backend.graph_buckets import BUCKETS
from nlgscore.backend.loading import load_with_sdpa, model_loading
from nlgscore.backend.model_files import check_json_files, check_tokenizer, check_tokenizer_files
from nlgscore.backend.models import ResolvedModel
from nlgscore.backend.packed_attention import cu_seqlens, wants_tokens
from nlgscore.backend.packed_attention import enabled as token_forward_enabled
from nlgscore.backend.transfer import to_device
from nlgscore.core.runtime import resolve_runtime, settle_dtype
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.seq2seq.cuda_graphs import PairGraphs
from nlgscore.seq2seq.token_forward import TOKEN_FORWARD_TYPES, Seq2SeqTokenForward, lm_head_bias, supports

# A budget counts encoder + decoder tokens, so it is twice the batching default: a batch of
# ~2k source and ~2k target tokens keeps a 50k-vocabulary logits tensor around 400 MB (fp32).
DEFAULT_LIKELIHOOD_TOKENS = 2 * DEFAULT_MAX_TOKENS
# Seq2seq classes whose logits are exactly ``lm_head(model(...)[0]) (+ final_logits_bias)`` in
# transformers (BART, mBART, Marian, M2M100, Pegasus), so the head can be applied to real tokens only.
LM_HEAD_ON_REAL_TOKENS = ("bart", "mbart", "marian", "m2m_100", "pegasus")
# Encoder states kept for recurring sources, in batch budgets of source tokens (bart-large,
# fp32, CPU default: 16k tokens x 4 KB = 64 MB).
CACHE_BUDGETS = 4


def check_seq2seq(model: Any, name: str = "model") -> None:
    """Raise TypeError unless ``model`` is a transformers encoder–decoder."""
    config = getattr(model, "config", None)
    if not getattr(config, "is_encoder_decoder", False) or not callable(getattr(model, "get_encoder", None)):
        raise ArgumentTypeError(
            f"{name} must be an encoder–decoder (seq2seq) model such as BART or M2M100, "
            f"got {type(model).__name__} (config.is_encoder_decoder is not true)"
        )


def load_seq2seq(
    resolved: ResolvedModel, device: Any = None, dtype: Any = None, progress: bool = False, kernel: str = "auto"
) -> Tuple[Any, Any]:
    """Load ``(model, tokenizer)`` from a resolved folder: eval mode, on ``device``, in ``dtype``
    (as :func:`nlgscore.core.runtime.resolve_runtime` reads them; ``"auto"`` is settled on the
    loaded model: read the result's dtype from the model). ``progress`` shows transformers'
    loading bar; ``kernel`` is the CPU linear kernel (:func:`nlgscore.backend.gemm.use_onednn_linears`).

    SDPA attention is requested where the architecture supports it (same numbers, less memory).
    A checkpoint whose config is not encoder–decoder raises TypeError naming the checkpoint.
    """
    runtime = resolve_runtime("seq2seq", device, dtype)
    with model_loading(progress):
        return _load_seq2seq(resolved, runtime, kernel)


def _load_seq2seq(resolved: ResolvedModel, runtime: Any, kernel: str = "auto") -> Tuple[Any, Any]:
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

    check_json_files(resolved)
    config = AutoConfig.from_pretrained(resolved.path)
    if not getattr(config, "is_encoder_decoder", False):
        raise ArgumentTypeError(
            f"checkpoint {resolved.name!r} is a {config.model_type!r} model, not an encoder–decoder; "
            "a likelihood metric needs a seq2seq checkpoint such as facebook/bart-large-cnn"
        )
    check_tokenizer_files(resolved)  # before loading the weights: an incomplete download fails fast
    model = load_with_sdpa(AutoModelForSeq2SeqLM, resolved.path, runtime.torch_dtype, resolved.name)
    check_seq2seq(model, f"checkpoint {resolved.name!r}")
    model.to(runtime.device).eval()
    settle_dtype(model, runtime.dtype)
    if next(model.parameters()).device.type == "cpu":
        use_onednn_linears(model, kernel)  # the model's CPU kernel, kept with it (nlgscore.backend.gemm)
    tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    check_tokenizer(tokenizer, config, resolved)
    return model, tokenizer


def _as_ids(seq: Sequence[int], name: str, i: int) -> Tuple[int, ...]:
    ids = tuple(int(t) for t in seq)
    if not ids:
        raise ArgumentError(f"{name}[{i}] is an empty token list; every {name[:-1]} needs at least one token")
    return ids


def target_logprobs(
    model: Any,
    sources: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    *,
    pad_id: int,
    decoder_start_id: int,
    temperature: float = 1.0,
    max_tokens: int = DEFAULT_LIKELIHOOD_TOKENS,
    max_batch_size: Optional[int] = None,
    progress: bool = False,
    desc: Optional[str] = None,
    token_forward: Optional[bool] = None,
) -> List[np.ndarray]:
    """Per pair, a float64 array of ``log p(target[t] | target[:t], source)``, in input order.

    ``sources``/``targets`` are token ids exactly as fed to the encoder / scored as labels; the
    decoder input is ``[decoder_start_id] + target[:-1]``. Logits are divided by ``temperature``
    and normalised in float32 (half-precision models included). ``max_tokens`` bounds the
    padded encoder + decoder tokens of a batch, ``max_batch_size`` its number of pairs.
    ``token_forward``: run each batch as one token forward where the model allows
    (:func:`uses_token_forward`); None reads ``NLGSCORE_TOKEN_FORWARD``. The CPU linear kernel is
    the model's own (:func:`nlgscore.backend.gemm.model_kernel`).
    """
    check_seq2seq(model)
    if len(sources) != len(targets):
        raise ArgumentError(f"sources and targets must have the same length, got {len(sources)} and {len(targets)}")
    if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature > 0):
        raise ArgumentError(f"temperature must be a positive number, got {temperature!r}")
    pairs = [(_as_ids(s, "sources", i), _as_ids(t, "targets", i)) for i, (s, t) in enumerate(zip(sources, targets))]
    distinct, inverse = unique(pairs)
    if not distinct:
        return []
    source_keys, source_of = unique([s for s, _ in distinct])
    # Batches are planned on each pair's own cost (source + target tokens), so padding stays small
    # on both sides; pairs sharing a source and a length are adjacent (group key), and a recurring
    # source's encoder states are kept until its last pair is scored (see _Engine).
    lengths = [len(s) + len(t) for s, t in distinct]
    pending = Counter(source_of)
    sort_keys = None
    if sum(len(source_keys[k]) for k, n in pending.items() if n > 1) > CACHE_BUDGETS * max_tokens:
        # The states of every recurring source would not fit in the cache (a large utility
        # matrix: each text the source of many pairs): take the sources one after the other,
        # longest first, their targets longest first, so each is encoded once and then dropped.
        sort_keys = [
            (-len(source_keys[source_of[i]]), source_of[i], -len(distinct[i][1])) for i in range(len(distinct))
        ]
    results: List[Optional[np.ndarray]] = [None] * len(distinct)
    tokens = uses_token_forward(model, token_forward)
    engine = _Engine(model, pad_id, decoder_start_id, float(temperature), pending, CACHE_BUDGETS * max_tokens, tokens)

    def process(batch: List[int]) -> None:
        if tokens:  # one forward: a pair's bits do not depend on its batch mates (token_forward)
            scored = engine.run([source_of[i] for i in batch], source_keys, [distinct[i][1] for i in batch])
            for i, values in zip(batch, scored):
                results[i] = values
            return
        # one forward per (source, target) padded length: a pair's bits then depend on it alone
        groups: Dict[Tuple[int, int], List[int]] = {}
        for i in batch:
            groups.setdefault((padded_length(len(distinct[i][0])), padded_length(len(distinct[i][1]))), []).append(i)
        for group in groups.values():
            scored = engine.run([source_of[i] for i in group], source_keys, [distinct[i][1] for i in group])
            for i, values in zip(group, scored):
                results[i] = values

    run_batches(
        lengths,
        process,
        max_tokens=max_tokens,
        max_batch_size=max_batch_size,
        group=source_of,
        progress=progress,
        desc=desc,
        sort_keys=sort_keys,
    )
    return [results[j].copy() for j in inverse]  # type: ignore[union-attr]


def uses_token_forward(model: Any, token_forward: Optional[bool] = None) -> bool:
    """Whether :func:`target_logprobs` runs ``model`` by the token forward: asked for
    (``token_forward``, or ``NLGSCORE_TOKEN_FORWARD=1`` where None) and an architecture it rebuilds
    (:func:`nlgscore.seq2seq.token_forward.supports`). A scorer records it in its signature.

    >>> uses_token_forward(object(), True)
    False
    """
    wanted = token_forward_enabled() if token_forward is None else token_forward
    return bool(wanted) and supports(model)


def scorer_token_forward(model: Any, forward: str, name: str) -> bool:
    """Whether a scorer built with ``forward=`` runs ``model`` by the token forward (read once, at
    load, so that its signature says what every call runs).

    Args:
        model: The loaded seq2seq model.
        forward: ``"auto"`` (``NLGSCORE_TOKEN_FORWARD``; an architecture without the token forward
            keeps the padded one), ``"padded"`` or ``"tokens"``.
        name: The checkpoint, for the error.

    Returns:
        True for the token forward.

    Raises:
        ArgumentError: ``forward`` is not a choice, or ``"tokens"`` for an architecture the token
            forward does not rebuild.

    Example:
        >>> scorer_token_forward(object(), "padded", "x")
        False
    """
    tokens = uses_token_forward(model, wants_tokens(forward))
    if forward == "tokens" and not tokens:
        kind = getattr(getattr(model, "config", None), "model_type", type(model).__name__)
        raise ArgumentError(
            f"forward='tokens' is not available for {name!r} (a {kind} model): the token forward rebuilds "
            f"{', '.join(TOKEN_FORWARD_TYPES)} layouts; use forward='padded'"
        )
    return tokens


class _Engine:
    """One model's forward passes, with a cache of encoder states of sources still to be scored.

    A cached source is dropped as soon as its last pair is done, and the least recently used
    ones are dropped beyond ``cache_tokens`` source tokens, so memory stays bounded.
    """

    def __init__(
        self,
        model: Any,
        pad_id: int,
        decoder_start_id: int,
        temperature: float,
        pending: Counter,
        cache_tokens: int,
        token_forward: bool = False,
    ) -> None:
        self.model = model
        self.pad_id = pad_id
        self.decoder_start_id = decoder_start_id
        self.temperature = temperature
        self.device = next(model.parameters()).device
        # A wrapper (e.g. a test double) without the transformers layout takes the plain forward.
        self.head_on_real_tokens = (
            model.config.model_type in LM_HEAD_ON_REAL_TOKENS and hasattr(model, "lm_head") and hasattr(model, "model")
        )
        # Decoder layers whose cross-attention has k_proj/v_proj (the BART family) can share them.
        layers = getattr(getattr(getattr(model, "model", None), "decoder", None), "layers", None) or []
        attentions = [getattr(layer, "encoder_attn", None) for layer in layers]
        self.cross_share_ok = (
            self.head_on_real_tokens
            and bool(attentions)
            and all(hasattr(a, "k_proj") and hasattr(a, "v_proj") for a in attentions)
        )
        self.pending = pending  # source index -> pairs not yet scored
        self.cache_tokens = cache_tokens
        self.cache: "OrderedDict[int, Any]" = OrderedDict()  # source index -> encoder states [len, dim]
        self.cached = 0
        self.positions = getattr(model.config, "max_position_embeddings", None) or 1 << 30
        self.tokens = Seq2SeqTokenForward(model) if token_forward else None
        self.kernel = model_kernel(model)  # the CPU linear kernel of the LM head's direct product
        # CUDA graphs of the token forward by (source, target) bucket, used where they apply (CUDA,
        # 16-bit); filler pairs carry the decoder start id, a non-padding id whose positions count.
        longest = min(self.positions, BUCKETS[-1])
        filler = decoder_start_id if decoder_start_id != pad_id else pad_id + 1
        self.graphs = None if self.tokens is None else PairGraphs(self.tokens, filler, longest, longest)

    def width(self, seqs: Sequence[Any]) -> int:
        """The padded length of a forward over ``seqs`` (lengths of one padded_length), never
        past the model's position table."""
        longest = max(len(s) for s in seqs)
        return min(padded_length(longest), max(self.positions, longest))

    def encode(self, keys: List[int], source_keys: List[Tuple[int, ...]]) -> Dict[int, Any]:
        states = {k: self.cache[k] for k in keys if k in self.cache}
        todo = [k for k in keys if k not in states]
        if todo and self.tokens is not None:
            packed = self.tokens.encode([source_keys[k] for k in todo])
            first = cu_seqlens([len(source_keys[k]) for k in todo])
            for row, k in enumerate(todo):
                states[k] = packed[first[row] : first[row + 1]]
        elif todo:
            seqs = [source_keys[k] for k in todo]
            ids, mask = _pad(seqs, self.pad_id, self.device, self.width(seqs))
            hidden = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
            for row, k in enumerate(todo):
                states[k] = hidden[row, : len(source_keys[k])]
        return states

    def done(self, src_index: List[int], states: Dict[int, Any]) -> None:
        """Book a scored batch: drop finished sources, cache the others (called after success)."""
        for k in src_index:
            self.pending[k] -= 1
        for k, value in states.items():
            if self.pending[k] <= 0:
                if k in self.cache:
                    self.cached -= self.cache.pop(k).shape[0]
            elif k in self.cache:
                self.cache.move_to_end(k)
            else:
                self.cache[k] = value.clone()  # a view would keep the whole batch tensor alive
                self.cached += value.shape[0]
        while self.cached > self.cache_tokens and self.cache:
            self.cached -= self.cache.popitem(last=False)[1].shape[0]

    @contextmanager
    def shared_cross_projections(self, distinct: Any, select: Any, expanded: Any) -> Iterator[None]:
        """Within the block, the decoder's cross-attention K/V projections of ``expanded`` (the
        encoder states of every pair row, ``distinct.index_select(0, select)``) are computed on
        ``distinct`` (one row per source) and expanded afterwards.

        When several rows share a source (one reference, many candidates) the plain forward
        projects the same states once per row: with long sources (a 900-token document and
        a 120-token summary, bart-base shape) about half as much work as the rest of the decoder. The projection modules get an instance
        ``forward`` for the block (removed after it, also on error); any other input goes through
        their own forward unchanged.
        """
        patched = []  # (module, its previous instance forward or None)
        try:
            for layer in self.model.model.decoder.layers:
                for projection in (layer.encoder_attn.k_proj, layer.encoder_attn.v_proj):
                    own = projection.forward

                    def forward(x: Any, _own: Any = own) -> Any:
                        return _own(distinct).index_select(0, select) if x is expanded else _own(x)

                    patched.append((projection, projection.__dict__.get("forward")))
                    projection.forward = forward
            yield
        finally:
            for projection, previous in reversed(patched):
                if previous is None:
                    del projection.forward
                else:
                    projection.forward = previous

    def run(
        self, src_index: List[int], source_keys: List[Tuple[int, ...]], tgts: List[Tuple[int, ...]]
    ) -> List[np.ndarray]:
        import torch
        from torch.nn.utils.rnn import pad_sequence
        from transformers.modeling_outputs import BaseModelOutput

        if self.tokens is not None:
            return self.run_tokens(src_index, source_keys, tgts)
        with torch.inference_mode(), forward_attention(self.device):
            keys, local = unique(src_index)
            states = self.encode(keys, source_keys)
            per_source = [states[k] for k in keys]
            hidden = pad_sequence(per_source, batch_first=True)
            width = self.width([source_keys[k] for k in keys])
            if hidden.shape[1] < width:
                hidden = torch.nn.functional.pad(hidden, (0, 0, 0, width - hidden.shape[1]))
            enc_mask = torch.zeros(hidden.shape[:2], dtype=torch.long, device=self.device)
            for row, s in enumerate(per_source):
                enc_mask[row, : s.shape[0]] = 1
            select = torch.tensor(local, device=self.device)
            distinct, shared = hidden, len(keys) != len(local)
            if shared:
                hidden, enc_mask = hidden.index_select(0, select), enc_mask.index_select(0, select)
            labels, label_mask = _pad(tgts, self.pad_id, self.device, self.width(tgts))
            decoder_input = torch.full_like(labels, self.pad_id)
            decoder_input[:, 0] = self.decoder_start_id
            decoder_input[:, 1:] = labels[:, :-1]
            decoder_input = decoder_input.masked_fill(label_mask == 0, self.pad_id)
            valid = label_mask.bool()
            inputs = {
                "encoder_outputs": BaseModelOutput(last_hidden_state=hidden),
                "attention_mask": enc_mask,
                "decoder_input_ids": decoder_input,
                "use_cache": False,
            }
            if self.head_on_real_tokens:
                # The vocabulary projection is the largest matmul: run it on real target tokens
                # only, not on the padding of the batch (same arithmetic as the model's forward).
                sharing = (
                    self.shared_cross_projections(distinct, select, hidden)
                    if shared and self.cross_share_ok
                    else nullcontext()
                )
                with sharing:
                    decoded = self.model.model(**inputs).last_hidden_state[valid]
                logits = linear(decoded, self.model.lm_head.weight, lm_head_bias(self.model), kernel=self.kernel)
            else:
                logits = self.model(**inputs).logits[valid]
            values = _normalise(logits, labels[valid], self.temperature)
            self.done(src_index, states)
        return _split(values, tgts)

    def run_tokens(
        self, src_index: List[int], source_keys: List[Tuple[int, ...]], tgts: List[Tuple[int, ...]]
    ) -> List[np.ndarray]:
        """:meth:`run` by the token forward: the pairs' targets packed into one decoder pass over
        the distinct sources' encoder states (any lengths in one batch)."""
        import torch

        assert self.tokens is not None
        with torch.inference_mode(), forward_attention(self.device):
            keys, local = unique(src_index)
            inputs = [(self.decoder_start_id,) + tgt[:-1] for tgt in tgts]
            hidden = None
            if self.graphs is not None:
                # Pairs in slots, each source encoded with its own target: the source cache is
                # not read, but its bookkeeping (drop finished sources) runs as on the eager path.
                hidden = self.graphs.replayed([source_keys[k] for k in src_index], inputs)
            if hidden is not None:
                states = {k: self.cache[k] for k in keys if k in self.cache}
            else:
                states = self.encode(keys, source_keys)
                hidden = self.tokens.decode(inputs, [states[k] for k in keys], local)
            gold = torch.tensor([t for tgt in tgts for t in tgt], dtype=torch.long)
            values = _normalise(self.tokens.logits(hidden), to_device(gold, self.device), self.temperature)
            self.done(src_index, states)
        return _split(values, tgts)


def _split(values: np.ndarray, tgts: Sequence[Sequence[int]]) -> List[np.ndarray]:
    """``values`` (every target's tokens, one after another) cut into one array per target."""
    first = cu_seqlens([len(tgt) for tgt in tgts])
    return [values[first[i] : first[i + 1]] for i in range(len(tgts))]


# Rows of logits normalised at a time: bounds the temporary copies (256 x 50k vocabulary = 50 MB).
_NORM_ROWS = 256


def _normalise(logits: Any, gold: Any, temperature: float) -> np.ndarray:
    """``log_softmax(logits / temperature)[gold]`` per row, as float64 numpy.

    Half-precision logits are widened to float32 first; float32 is what the reference scorers
    normalise in (their log-softmax rounds to ~1e-6 per token, far inside a 1e-5 parity budget),
    and a float64 softmax over a 50k vocabulary cost a quarter of the CPU time in benchmarks.
    """
    import torch

    out = []
    for start in range(0, logits.shape[0], _NORM_ROWS):
        chunk = logits[start : start + _NORM_ROWS]
        if chunk.dtype not in (torch.float32, torch.float64):
            chunk = chunk.float()
        if temperature != 1.0:
            chunk = chunk / temperature
        out.append(torch.log_softmax(chunk, dim=-1).gather(1, gold[start : start + _NORM_ROWS, None])[:, 0])
    return torch.cat(out).double().cpu().numpy() if out else np.zeros(0)


def _pad(seqs: Sequence[Sequence[int]], pad_id: int, device: Any, width: int) -> Tuple[Any, Any]:
    """Ids right-padded to ``width`` and their attention mask (long tensors on ``device``)."""
    import torch

    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, s in enumerate(seqs):
        ids[row, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[row, : len(s)] = 1
    return ids.to(device), mask.to(device)
