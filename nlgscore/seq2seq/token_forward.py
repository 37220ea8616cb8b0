"""The token forward of the likelihood engine: a BART-family encoder and teacher-forced decoder on
packed tokens, attention per sequence.

The padded engine (:mod:`nlgscore.seq2seq.likelihood`) runs transformers' forward once per
(source, target) padded-length group, so a batch of pairs of mixed lengths costs a forward per
group, and every group computes attention and projections on its padding. Here the whole batch
is one ``(tokens, hidden)`` matrix per side, with the model's own weights and modules:

* the encoder runs on the distinct sources' tokens, one after the other, each attending to itself;
* the decoder runs on every pair's target tokens (``[decoder start] + target[:-1]``): causal
  self-attention within each target, cross-attention of each target to its own source's encoder
  states. The cross-attention keys and values are projected once per distinct source (one
  reference against many candidates) and read by every target of that source: in place on CPU,
  gathered into each target's slot for the CUDA varlen kernel;
* the LM head (with ``final_logits_bias``) runs on those real target tokens only.

The attention and products are :mod:`nlgscore.backend.packed_attention`'s, so a pair's numbers
have the same bits alone or in any batch (on CPU with either linear kernel, and on CUDA whatever
the batch's token count), as in BERTScore's token forward. The layer recipe follows
transformers' classes of :data:`TOKEN_FORWARD_TYPES`: token embeddings with their scale, learned
positions with their offset or sinusoidal ones (M2M100 counts them from the padding index + 1,
skipping padding ids, as fairseq does), ``layernorm_embedding``, post-LN (BART, Marian) or pre-LN
layers with a final layer norm (mBART, M2M100, Pegasus). Another architecture keeps the padded
forward (:func:`supports`).

Off by default; a scorer's ``forward="tokens"`` turns it on (``forward="auto"``, the default,
where ``NLGSCORE_TOKEN_FORWARD=1``, with BERTScore's), and BARTScore's and Prism's signatures
then record ``forward:tokens``.

>>> import torch
>>> from nlgscore.backend.models import resolve
>>> from nlgscore.seq2seq.likelihood import load_seq2seq
>>> model, tokenizer = load_seq2seq(resolve("tests/golden/tiny-bart"), torch.device("cpu"), torch.float32)
>>> forward = Seq2SeqTokenForward(model)
>>> src, tgt = tokenizer(["It was sunny.", "Sunny it was, and warm."])["input_ids"]
>>> with torch.inference_mode():
...     states = forward.encode([src])
...     hidden = forward.decode([[2] + tgt[:-1]], [states], [0])
...     padded = model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([[2] + tgt[:-1]]))
...     logits = forward.logits(hidden)
>>> logits.shape == (len(tgt), model.config.vocab_size), bool((logits - padded.logits[0]).abs().max() < 1e-5)
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from nlgscore.backend.gemm import FUSED_ACTIVATIONS, model_kernel
from nlgscore.backend.packed_attention import cu_seqlens, packed_linear, varlen_attention, varlen_kernel
from nlgscore.backend.transfer import to_device

__all__ = ["PairInputs", "Seq2SeqTokenForward", "TOKEN_FORWARD_TYPES", "supports", "lm_head_bias"]

# transformers' encoder-decoders whose layers this module rebuilds: BART's layer recipe, with
# the variations read off the model (embedding scale, position table, layer norms).
TOKEN_FORWARD_TYPES = ("bart", "mbart", "m2m_100", "marian", "pegasus")
# Of those, the ones whose layers normalise before each block (and end with a layer norm).
PRE_NORM_TYPES = ("mbart", "m2m_100", "pegasus")


def supports(model: Any) -> bool:
    """Whether ``model`` is a transformers encoder-decoder of :data:`TOKEN_FORWARD_TYPES` with
    their module layout (a wrapper without it keeps the padded forward)."""
    config = getattr(model, "config", None)
    inner = getattr(model, "model", None)
    if getattr(config, "model_type", None) not in TOKEN_FORWARD_TYPES or not hasattr(model, "lm_head"):
        return False
    stacks: List[Any] = [getattr(inner, "encoder", None), getattr(inner, "decoder", None)]
    if any(not all(hasattr(s, name) for name in ("layers", "embed_tokens", "embed_positions")) for s in stacks):
        return False
    attentions = [layer.self_attn for s in stacks for layer in s.layers]
    attentions += [getattr(layer, "encoder_attn", None) for layer in stacks[1].layers]
    projections = ("q_proj", "k_proj", "v_proj", "out_proj", "head_dim", "scaling")
    return all(all(hasattr(a, name) for name in projections) for a in attentions)


def lm_head_bias(model: Any) -> Any:
    """The bias of the vocabulary projection: ``lm_head``'s own plus ``final_logits_bias`` where the
    model has one (BART, mBART, Marian, Pegasus), so the logits are one product."""
    head = model.lm_head
    bias = getattr(model, "final_logits_bias", None)
    if bias is None:
        return head.bias
    bias = bias.reshape(-1).to(head.weight.device)
    return bias if head.bias is None else head.bias + bias


@dataclass
class _Keys:
    """Where each target's cross-attention keys are: ``lengths`` (its source's tokens), and either
    ``starts`` (its source's first row among the distinct sources' rows: CPU) or ``gather`` (those
    rows' indices, on the device, for the varlen kernel) with ``cu`` (their ``cu_seqlens``); with
    neither, the keys are the source rows packed in the targets' order (one source per target).
    ``longest``: a bound on ``lengths`` for the varlen kernel (None: their longest)."""

    lengths: List[int]
    starts: Optional[List[int]]
    gather: Any
    cu: Any
    longest: Optional[int] = None


@dataclass
class PairInputs:
    """One side (sources or targets) of pairs laid out in slots for :meth:`Seq2SeqTokenForward.run_pairs`:
    token ``ids`` and position ``rows`` (1-D long tensors on the model's device), every slot's
    length, their ``cu_seqlens`` (int32 on the device; None off the varlen kernel) and a bound
    on the lengths (``longest``)."""

    ids: Any
    rows: Any
    lengths: List[int]
    cu: Any
    longest: Optional[int]


def _grow(table: Any, longest: int) -> None:
    """Grow an M2M100 sinusoidal ``table`` to hold ``longest`` positions, as the model's forward
    grows it (a larger table has the same rows, plus new ones); other tables are left alone."""
    if hasattr(table, "make_weights") and table.padding_idx + 1 + longest > table.weights.shape[0]:
        table.make_weights(table.padding_idx + 1 + longest + table.offset, table.embedding_dim, table.padding_idx)


class Seq2SeqTokenForward:
    """A seq2seq model's encoder states, decoder states and logits on packed tokens."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.encoder, self.decoder = model.model.encoder, model.model.decoder
        self.pre_norm = model.config.model_type in PRE_NORM_TYPES
        name = getattr(model.config, "activation_function", None)
        self.activation = name if name in FUSED_ACTIVATIONS else None  # else each layer's own function
        self.device = next(model.parameters()).device
        self.kernel = model_kernel(model)  # the model's CPU linear kernel (its scorer's kernel=)

    # -- inputs --------------------------------------------------------------------------------
    def _positions(self, stack: Any, lengths: Sequence[int], ids: Any) -> Any:
        """The row of ``stack``'s position table for every token of the packed ``ids`` (sequences
        of ``lengths``, on the host), as the model's own forward finds it for each sequence."""
        import torch

        table = stack.embed_positions
        if hasattr(table, "create_position_ids_from_input_ids"):  # M2M100: fairseq's positions from the ids
            # fairseq counts each sequence's non-padding tokens from padding_idx + 1 (a padding id
            # sits at padding_idx): a running count over the packed tokens, less its value where
            # each sequence starts, so a layout's many slots cost no padded matrix.
            pad = table.padding_idx
            real = ids.ne(pad).long()
            counts = real.cumsum(0)
            starts = torch.tensor(cu_seqlens(lengths)[:-1], dtype=torch.long)
            before = torch.cat([counts.new_zeros(1), counts])[starts]
            _grow(table, max(lengths))
            return (counts - before.repeat_interleave(torch.tensor(list(lengths)))) * real + pad
        offset = getattr(table, "offset", 0)  # BART's learned table starts 2 rows in
        return torch.cat([torch.arange(n) + offset for n in lengths])

    def reserve_positions(self, longest: int) -> None:
        """Grow M2M100's sinusoidal tables to hold sequences of ``longest`` tokens (on the host,
        before a graph is captured: the graph reads the table it was captured with)."""
        for stack in (self.encoder, self.decoder):
            _grow(stack.embed_positions, longest)

    def position_tables(self) -> List[Any]:
        """The position tables the stacks read now (M2M100's are replaced when they grow)."""
        return [
            s.embed_positions.weights for s in (self.encoder, self.decoder) if hasattr(s.embed_positions, "weights")
        ]

    def host_inputs(self, stack: Any, seqs: Sequence[Sequence[int]]) -> Tuple[Any, Any]:
        """The host half of the embedding: ``(ids, position rows)`` of the packed ``seqs``, long
        tensors on the host (what a CUDA graph's static inputs are copied from)."""
        import torch

        ids = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
        return ids, self._positions(stack, [len(s) for s in seqs], ids)

    def embed_rows(self, stack: Any, ids: Any, rows: Any) -> Any:
        """The device half of the embedding: ``stack``'s input states of tokens ``ids`` at position
        rows ``rows`` (both on the model's device), with no host work, so a graph can capture it."""
        import torch.nn.functional as F

        x = stack.embed_tokens(ids)
        if not hasattr(stack.embed_tokens, "embed_scale"):  # Marian, Pegasus: the stack scales
            x = x * getattr(stack, "embed_scale", 1.0)
        table = stack.embed_positions
        positions = (
            table.weights.index_select(0, rows) if hasattr(table, "weights") else F.embedding(rows, table.weight)
        )
        x = x + positions
        norm = getattr(stack, "layernorm_embedding", None)
        return x if norm is None else norm(x)

    def _embed(self, stack: Any, seqs: Sequence[Sequence[int]]) -> Any:
        ids, rows = self.host_inputs(stack, seqs)
        return self.embed_rows(stack, to_device(ids, self.device), to_device(rows, self.device))

    # -- blocks --------------------------------------------------------------------------------
    def _heads(self, attention: Any, x: Any) -> Any:
        return x.view(x.shape[0], -1, attention.head_dim)

    def _project(self, module: Any, x: Any) -> Any:
        return packed_linear(x, module.weight, module.bias, kernel=self.kernel)

    def _self_attention(
        self, x: Any, attention: Any, lengths: Sequence[int], cu: Any, causal: bool, longest: Optional[int] = None
    ) -> Any:
        q, k, v = (
            self._heads(attention, self._project(p, x)) for p in (attention.q_proj, attention.k_proj, attention.v_proj)
        )
        context = varlen_attention(q, k, v, lengths, cu, longest, causal=causal, scale=attention.scaling)
        return self._project(attention.out_proj, context.reshape(x.shape[0], -1))

    def _cross_attention(
        self, x: Any, attention: Any, lengths: Sequence[int], cu: Any, states: Any, keys: _Keys, longest: Optional[int]
    ) -> Any:
        q = self._heads(attention, self._project(attention.q_proj, x))
        # K/V once per distinct source; every target of that source reads the same rows.
        k, v = (self._heads(attention, self._project(p, states)) for p in (attention.k_proj, attention.v_proj))
        if keys.gather is not None:
            k, v = k.index_select(0, keys.gather), v.index_select(0, keys.gather)
        context = varlen_attention(
            q,
            k,
            v,
            lengths,
            cu,
            longest,
            key_lengths=keys.lengths,
            cu_k=keys.cu,
            longest_k=keys.longest,
            key_starts=keys.starts,
            scale=attention.scaling,
        )
        return self._project(attention.out_proj, context.reshape(x.shape[0], -1))

    def _feed_forward(self, x: Any, layer: Any) -> Any:
        if self.activation is not None:
            inner = packed_linear(x, layer.fc1.weight, layer.fc1.bias, self.activation, self.kernel)
        else:
            inner = layer.activation_fn(self._project(layer.fc1, x))
        return self._project(layer.fc2, inner)

    def _block(self, x: Any, norm: Any, block: Any, *args: Any) -> Any:
        """One residual block: ``x + block(norm(x), *args)`` pre-LN, ``norm(x + block(x, *args))`` post-LN."""
        return x + block(norm(x), *args) if self.pre_norm else norm(x + block(x, *args))

    def _finish(self, stack: Any, x: Any) -> Any:
        norm = getattr(stack, "layer_norm", None)  # pre-LN stacks end with one
        return x if norm is None else norm(x)

    def _cu(self, x: Any, lengths: Sequence[int]) -> Any:
        """The ``cu_seqlens`` on the device where the varlen kernel runs, else None."""
        import torch

        if not varlen_kernel(x):
            return None
        return to_device(torch.tensor(cu_seqlens(lengths), dtype=torch.int32), x.device)

    # -- the two stacks ------------------------------------------------------------------------
    def encode(self, sources: Sequence[Sequence[int]]) -> Any:
        """Encoder states of the packed ``sources`` (token ids), ``(tokens, hidden)``."""
        lengths = [len(s) for s in sources]
        x = self._embed(self.encoder, sources)
        return self._encoder_layers(x, lengths, self._cu(x, lengths), None)

    def _encoder_layers(self, x: Any, lengths: Sequence[int], cu: Any, longest: Optional[int]) -> Any:
        import torch

        for layer in self.encoder.layers:
            attend = self._self_attention
            x = self._block(x, layer.self_attn_layer_norm, attend, layer.self_attn, lengths, cu, False, longest)
            x = self._block(x, layer.final_layer_norm, self._feed_forward, layer)
            if x.dtype == torch.float16:  # the model's clamp of overflowed float16 states, without a host sync
                bound = torch.finfo(x.dtype).max - 1000
                x = torch.where(torch.isfinite(x).all(), x, x.clamp(-bound, bound))
        return self._finish(self.encoder, x)

    def decode(self, inputs: Sequence[Sequence[int]], states: Sequence[Any], source_of: Sequence[int]) -> Any:
        """Decoder states of the packed ``inputs`` (decoder input ids per target), ``(tokens,
        hidden)``: target ``i`` attends causally to itself and across to ``states[source_of[i]]``
        (the encoder states of the distinct sources, ``(source tokens, hidden)`` each)."""
        import torch

        lengths = [len(s) for s in inputs]
        x = self._embed(self.decoder, inputs)
        memory = states[0] if len(states) == 1 else torch.cat(list(states))
        keys = self._keys(x, [states[j].shape[0] for j in range(len(states))], source_of)
        return self._decoder_layers(x, lengths, self._cu(x, lengths), None, memory, keys)

    def _decoder_layers(
        self, x: Any, lengths: Sequence[int], cu: Any, longest: Optional[int], memory: Any, keys: _Keys
    ) -> Any:
        for layer in self.decoder.layers:
            attend, cross = self._self_attention, self._cross_attention
            x = self._block(x, layer.self_attn_layer_norm, attend, layer.self_attn, lengths, cu, True, longest)
            norm = layer.encoder_attn_layer_norm
            x = self._block(x, norm, cross, layer.encoder_attn, lengths, cu, memory, keys, longest)
            x = self._block(x, layer.final_layer_norm, self._feed_forward, layer)
        return self._finish(self.decoder, x)

    def run_pairs(self, source: PairInputs, target: PairInputs) -> Any:
        """Decoder states ``(target tokens, hidden)`` of pairs in slots: slot ``i``'s target
        (``target``'s ``i``-th sequence, decoder input ids) attends causally to itself and across
        to slot ``i``'s source only, which is encoded here too. Every input is a tensor on the
        model's device (the lengths lists serve the per-sequence attention off the varlen kernel)
        and every attention gets explicit bounds, so one capture replays any batch of the slots'
        shapes: what :mod:`nlgscore.seq2seq.cuda_graphs` captures."""
        x = self.embed_rows(self.encoder, source.ids, source.rows)
        memory = self._encoder_layers(x, source.lengths, source.cu, source.longest)
        keys = _Keys(list(source.lengths), None, None, source.cu, source.longest)
        y = self.embed_rows(self.decoder, target.ids, target.rows)
        return self._decoder_layers(y, target.lengths, target.cu, target.longest, memory, keys)

    def _keys(self, x: Any, source_lengths: Sequence[int], source_of: Sequence[int]) -> _Keys:
        import torch

        first = cu_seqlens(source_lengths)
        lengths = [source_lengths[j] for j in source_of]
        if not varlen_kernel(x):
            return _Keys(lengths, [first[j] for j in source_of], None, None)
        rows = torch.cat([torch.arange(first[j], first[j + 1]) for j in source_of])
        cu = torch.tensor(cu_seqlens(lengths), dtype=torch.int32)
        return _Keys(lengths, None, to_device(rows, x.device), to_device(cu, x.device))

    def logits(self, hidden: Any) -> Any:
        """The vocabulary logits of decoder states ``hidden`` (one row per real target token)."""
        return packed_linear(hidden, self.model.lm_head.weight, lm_head_bias(self.model), kernel=self.kernel)
