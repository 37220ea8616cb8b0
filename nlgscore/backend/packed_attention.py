"""Attention and products over packed tokens: the pieces every token forward is built from.

A token forward runs every layer on one ``(tokens, hidden)`` matrix, the sequences' tokens one
after another with no padding, as vLLM and TEI run their models. Two things make it work, whatever
the model:

* **attention per sequence.** Each sequence's queries see only its own keys: its own tokens
  (self-attention, optionally causal for a decoder) or another packed tensor's rows (a decoder's
  cross-attention to its source's encoder states). On CUDA in bfloat16/float16 that is PyTorch's
  flash-attention varlen kernel (``torch.nn.attention.varlen.varlen_attn``), one call for the whole
  batch, sequences delimited by :func:`cu_seqlens`; elsewhere each sequence's own
  ``scaled_dot_product_attention``, one after the other (the reference the varlen layout is
  tested against).
* **products whose rows do not depend on their batch.** On CPU :func:`nlgscore.backend.gemm.linear`
  gives a row the same bits in any product from ``MIN_ROWS`` rows up; on CUDA cuBLAS picks its
  kernel by the row count, so :func:`tiled_linear` runs every product in tiles of
  :data:`CUDA_ROW_TILE` rows, one kernel whatever the batch.

So a sequence's outputs have the same bits alone or packed with any others. The metric rooms
(BERTScore's encoders, the seq2seq likelihood engine) each build their model's layers from these.
A scorer's ``forward="tokens"`` asks for the token forward, ``"padded"`` for the padded batches;
its default, ``"auto"``, reads ``NLGSCORE_TOKEN_FORWARD`` (:func:`wants_tokens`; 1 turns it on).

>>> import torch
>>> q = k = v = torch.randn(7, 2, 4)  # 7 tokens of two sequences (4 and 3 tokens), 2 heads of 4
>>> out = varlen_attention(q, k, v, [4, 3], causal=True)
>>> first = torch.nn.functional.scaled_dot_product_attention(*(t[:4].transpose(0, 1)[None] for t in (q, k, v)), is_causal=True)
>>> out.shape, bool((out[:4] - first[0].transpose(0, 1)).abs().max() < 1e-6)
(torch.Size([7, 2, 4]), True)
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

from nlgscore import envs
from nlgscore.backend.gemm import linear
from nlgscore.errors import ArgumentError

__all__ = [
    "ENV_SWITCH",
    "CUDA_ROW_TILE",
    "FORWARDS",
    "check_forward",
    "enabled",
    "wants_tokens",
    "cu_seqlens",
    "varlen_kernel",
    "varlen_attention",
    "tiled_linear",
    "packed_linear",
]

ENV_SWITCH = envs.TOKEN_FORWARD.name
# What a scorer's forward= takes: the padded batches, the token forward, or what the environment says.
FORWARDS = ("auto", "padded", "tokens")
# Rows of every CUDA product tile: one shape for every product of a weight, so one cuBLAS kernel
# (and one set of bits per row) whatever the batch's token count; 128 is a multiple of every
# tensor-core tile height.
CUDA_ROW_TILE = 128


def enabled() -> bool:
    """Whether ``NLGSCORE_TOKEN_FORWARD=1`` asks the model metrics for the token forward."""
    return bool(envs.TOKEN_FORWARD.get())


def check_forward(forward: Any) -> str:
    """``forward`` if it is one of :data:`FORWARDS`; else an error naming the option.

    Args:
        forward: A scorer's ``forward=``.

    Returns:
        ``forward``.

    Raises:
        ArgumentError: Any other value.

    Example:
        >>> check_forward("tokens")
        'tokens'
    """
    if forward not in FORWARDS:
        raise ArgumentError(f"forward must be one of {', '.join(FORWARDS)}, got {forward!r}")
    return forward


def wants_tokens(forward: str = "auto") -> bool:
    """Whether a scorer's ``forward=`` asks for the token forward: ``"tokens"``; ``"auto"`` where
    ``NLGSCORE_TOKEN_FORWARD=1`` (:func:`enabled`), read when the scorer loads.

    Args:
        forward: ``"auto"``, ``"padded"`` or ``"tokens"``.

    Returns:
        True for the token forward.

    Raises:
        ArgumentError: ``forward`` is not one of :data:`FORWARDS`.

    Example:
        >>> wants_tokens("tokens"), wants_tokens("padded")
        (True, False)
    """
    check_forward(forward)
    return forward == "tokens" or (forward == "auto" and enabled())


def cu_seqlens(lengths: Sequence[int]) -> List[int]:
    """The first token of every sequence, then the end (flash-attention's ``cu_seqlens``).

    >>> cu_seqlens([4, 3, 5])
    [0, 4, 7, 12]
    """
    starts = [0]
    for n in lengths:
        starts.append(starts[-1] + n)
    return starts


def varlen_kernel(x: Any) -> bool:
    """Whether attention over ``x``'s dtype and device runs as one flash varlen call (CUDA, 16-bit)."""
    import torch

    return bool(x.is_cuda and x.dtype in (torch.bfloat16, torch.float16))


def varlen_attention(
    q: Any,
    k: Any,
    v: Any,
    lengths: Sequence[int],
    cu: Any = None,
    longest: Optional[int] = None,
    *,
    key_lengths: Optional[Sequence[int]] = None,
    cu_k: Any = None,
    longest_k: Optional[int] = None,
    key_starts: Optional[Sequence[int]] = None,
    causal: bool = False,
    scale: Optional[float] = None,
) -> Any:
    """Attention of packed ``(tokens, heads, head size)`` queries, sequence ``i`` (``lengths[i]``
    query rows) attending to its own keys only.

    Self-attention by default: the keys are the queries' own rows. Cross-attention: ``k``/``v``
    hold other rows, sequence ``i``'s being ``key_lengths[i]`` rows long, packed in order, or, off
    the varlen kernel, starting at row ``key_starts[i]`` (so several sequences may read one
    source's keys without a copy; the varlen kernel needs them packed in order). ``causal``: query
    ``t`` sees keys ``0..t`` only (a decoder's self-attention). ``scale``: the model's softmax
    scale (``head size ** -0.5`` if None).

    The flash varlen kernel runs on CUDA in bfloat16/float16 (``cu``/``cu_k``: the
    :func:`cu_seqlens` of the queries/keys on the device, int32; ``longest``/``longest_k``: bounds
    on the longest sequence, the longest of the lengths if None); elsewhere one attention call per
    sequence.
    """
    import torch
    import torch.nn.functional as F

    keys = lengths if key_lengths is None else key_lengths
    if varlen_kernel(q):
        from torch.nn.attention.varlen import varlen_attn

        if key_starts is not None:
            raise ValueError(
                "the varlen kernel reads each sequence's keys packed in order; gather them, not key_starts"
            )
        bound = longest if longest is not None else max(lengths)
        bound_k = bound if key_lengths is None else longest_k if longest_k is not None else max(keys)
        window = (-1, 0) if causal else (-1, -1)  # (-1, 0): no key after the query (torch's causal)
        return varlen_attn(
            q, k, v, cu, cu if key_lengths is None else cu_k, bound, bound_k, scale=scale, window_size=window
        )
    out = torch.empty_like(q)
    starts = cu_seqlens(lengths)
    key_first = list(key_starts) if key_starts is not None else cu_seqlens(keys)
    for i, n in enumerate(lengths):
        if n:
            start, first, m = starts[i], key_first[i], keys[i]
            query = q[start : start + n].transpose(0, 1)[None]  # (1, heads, n, d)
            key, value = (t[first : first + m].transpose(0, 1)[None] for t in (k, v))
            part = F.scaled_dot_product_attention(query, key, value, is_causal=causal, scale=scale)
            out[start : start + n] = part[0].transpose(0, 1)
    return out


def tiled_linear(x: Any, weight: Any, bias: Any = None, tile: int = CUDA_ROW_TILE) -> Any:
    """``F.linear`` of ``(rows, in)`` ``x`` in products of ``tile`` rows each (the last one padded
    with zero rows): every product of ``weight`` has one shape, so one kernel and one set of bits
    per row whatever ``rows`` is.

    >>> import torch
    >>> x, w = torch.randn(300, 8), torch.randn(4, 8)
    >>> tiled_linear(x, w).shape, bool((tiled_linear(x, w) - x @ w.T).abs().max() < 1e-5)
    (torch.Size([300, 4]), True)
    """
    import torch
    import torch.nn.functional as F

    rows = x.shape[0]
    if rows == 0:
        return F.linear(x, weight, bias)
    padded = -(-rows // tile) * tile
    if padded != rows:
        x = torch.cat([x, x.new_zeros(padded - rows, x.shape[1])])
    parts = [F.linear(x[start : start + tile], weight, bias) for start in range(0, padded, tile)]
    return torch.cat(parts)[:rows]


def packed_linear(
    x: Any, weight: Any, bias: Any = None, activation: Optional[str] = None, kernel: Optional[str] = None
) -> Any:
    """``act(F.linear(x, weight, bias))`` with row-invariant bits: :func:`nlgscore.backend.gemm.linear`
    on CPU (``activation`` fused there where it can be; ``kernel``: the model's CPU kernel,
    :func:`nlgscore.backend.gemm.model_kernel`), :func:`tiled_linear` on CUDA.

    >>> import torch
    >>> x, w = torch.randn(5, 8), torch.randn(4, 8)
    >>> with torch.inference_mode():
    ...     bool((packed_linear(x, w, activation="relu") - torch.relu(x @ w.T)).abs().max() < 1e-5)
    True
    """
    if not x.is_cuda:
        return linear(x, weight, bias, activation, kernel)
    import torch.nn.functional as F

    out = tiled_linear(x, weight, bias)
    return F.gelu(out) if activation == "gelu" else F.relu(out) if activation == "relu" else out
