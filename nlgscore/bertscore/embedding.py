"""The encoder side of BERTScore: tokenisation as bert_score 0.3.13 does it, and one layer's embeddings.

Tokenisation: ``strip()``, a prefix space for the GPT-2/RoBERTa byte-level BPE tokenizers (what the
reference package's slow tokenizers did with ``add_prefix_space=True``), truncation to the model's
maximum length keeping the special tokens. The model is cut after ``num_layers`` layers so that only
the layers BERTScore uses are run, and its output (the truncated stack's, as in the reference
package, so a final LayerNorm of T5/mBART-like encoders is still applied) is L2-normalised.

>>> enc = Encoder.load("minilm", num_layers=4)
>>> ids, truncated = enc.tokenize(["  Hello world ", ""])
>>> [len(x) for x in ids], truncated
([4, 2], 0)
>>> emb = enc.embed(ids)
>>> tuple(emb.shape), round(float(emb[0, 0].norm()), 4)
((2, 4, 384), 1.0)
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from nlgscore.backend.batching import length_groups, padded_length, plan_batches, plan_packed
from nlgscore.backend.cuda_kernels import forward_attention
from nlgscore.backend.gemm import check_kernel, model_kernel, use_onednn_linears
from nlgscore.backend.loading import load_with_sdpa, model_loading
from nlgscore.backend.model_files import check_model_folder, check_tokenizer
from nlgscore.backend.models import ResolvedModel, resolve
from nlgscore.backend.packed_attention import wants_tokens
from nlgscore.backend.product_rows import ROW_BUCKET
from nlgscore.backend.text_tokens import content_ids, describe, prepared_text, rust_tokenizer
from nlgscore.backend.transfer import to_device
from nlgscore.bertscore.packed_encoder import PackedEncoder
from nlgscore.bertscore.token_forward import TokenForward
from nlgscore.core.runtime import resolve_runtime, settle_dtype
from nlgscore.errors import ArgumentError, ArgumentTypeError

logger = logging.getLogger(__name__)

# bert_score 0.3.13 adds the prefix space when the (slow) tokenizer is a GPT2Tokenizer or a
# RobertaTokenizer; on transformers 4.x that is exactly the checkpoints declaring these classes.
PREFIX_SPACE_TOKENIZERS = ("GPT2Tokenizer", "RobertaTokenizer")
PREFIX_SPACE_MODEL_TYPES = ("roberta", "gpt2", "gpt_neo", "gptj", "data2vec-text", "roberta-prelayernorm")
# Models whose position ids start after the padding index (RoBERTa: 514 positions, 512 tokens).
POSITION_OFFSET_MODEL_TYPES = (
    "roberta",
    "xlm-roberta",
    "xlm-roberta-xl",
    "camembert",
    "longformer",
    "data2vec-text",
    "roberta-prelayernorm",
    "xmod",
    "mpnet",
)
# Where encoders keep their list of layers, by architecture family.
LAYER_LISTS = ("encoder.layer", "encoder.layers", "encoder.block", "layers", "block", "layer", "transformer.layer")
# A model_max_length above this is a "no limit" sentinel (transformers uses 1e30).
_SANE_MAX_LENGTH = 1_000_000


def _get_attr(obj, dotted: str):
    for name in dotted.split("."):
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def _set_attr(obj, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for name in parents:
        obj = getattr(obj, name)
    setattr(obj, last, value)


def _declared_tokenizer_class(path: str, model_type: str) -> str:
    config_file = os.path.join(path, "tokenizer_config.json")
    if os.path.isfile(config_file):
        with open(config_file, encoding="utf-8") as handle:
            declared = json.load(handle).get("tokenizer_class")
        if declared:
            return declared.replace("Fast", "")
    return "RobertaTokenizer" if model_type in PREFIX_SPACE_MODEL_TYPES else ""


def is_decoder_only(config) -> bool:
    """Whether ``config`` is a causal language model's (Qwen3, Llama, GPT-2: a decoder-based
    embedder such as Qwen3-Embedding), not a bidirectional encoder (BERT, ModernBERT, XLM-R) nor
    an encoder-decoder: transformers has a causal-LM head for it and no masked-LM head.

    >>> from transformers import BertConfig, Qwen3Config
    >>> is_decoder_only(Qwen3Config()), is_decoder_only(BertConfig())
    (True, False)
    """
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", "")
    return (
        not getattr(config, "is_encoder_decoder", False)
        and model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    )


def model_layer_count(config) -> int:
    """Number of transformer layers of an encoder config (BART/T5 configs: the encoder's)."""
    for name in ("encoder_layers", "num_hidden_layers", "num_layers", "n_layers", "n_layer"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    raise ArgumentError(f"cannot tell how many layers a {config.model_type!r} model has")


class Encoder:
    """A tokenizer and an encoder cut after ``num_layers`` layers (or all layers, with ``all_layers``).

    Use :meth:`load`; :meth:`tokenize` gives token ids, :meth:`embed` normalised embeddings.
    """

    def __init__(
        self,
        resolved: ResolvedModel,
        tokenizer,
        model,
        num_layers: int,
        all_layers: bool,
        max_length: int,
        prefix_space: bool,
        device,
        dtype,
    ) -> None:
        self.resolved = resolved
        self.tokenizer = tokenizer
        self.model = model
        self.num_layers = num_layers
        self.all_layers = all_layers
        self.max_length = max_length
        self.prefix_space = prefix_space
        self.device = device
        self.dtype = dtype
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.prefix, self.suffix = self._special_template()
        self.n_special = len(self.prefix) + len(self.suffix)
        # Token ids that carry weight 0 without idf, as in the reference package (CLS and SEP); a
        # decoder-only model (outside bert_score) also gives 0 to the special tokens its template
        # adds (Qwen3-Embedding's closing <|endoftext|>): they mark the text's end, not its content.
        self.causal = is_decoder_only(model.config)
        zero = {i for i in (tokenizer.cls_token_id, tokenizer.sep_token_id) if i is not None}
        if self.causal:
            zero.update(self.prefix + self.suffix)
        self.zero_weight_ids = sorted(zero)
        self.vocab_size = max(len(tokenizer), getattr(model.config, "vocab_size", 0) or 0)
        self.truncated_stack = False
        # Unpadded forward of the truncated stack where the architecture allows it (see packed_encoder).
        self.packed: Optional[PackedEncoder] = None
        # Every layer on packed tokens, attention per sequence (forward="tokens"; see token_forward).
        self.tokens_forward: Optional[TokenForward] = None
        self.total_layers = num_layers  # set by load(): layers of the full model
        self.tokens = self.padded_tokens = 0  # encoded so far: real tokens, and with padding (telemetry)
        self.front_tokenized = 0  # texts whose ids came tokenized from a server's worker (telemetry)

    @classmethod
    def load(
        cls,
        model_type: str,
        num_layers: Optional[int] = None,
        all_layers: bool = False,
        device=None,
        dtype=None,
        max_length: Optional[int] = None,
        revision: Optional[str] = None,
        default_layers: Optional[int] = None,
        progress: bool = False,
        kernel: str = "auto",
        forward: str = "auto",
    ) -> "Encoder":
        """Resolve ``model_type`` (id, folder or alias), load it and cut it after ``num_layers`` layers.

        ``device``/``dtype`` as :func:`nlgscore.core.runtime.resolve_runtime` reads them (``dtype="auto"``
        is settled here, on the loaded model); ``progress`` shows transformers' loading bar;
        ``kernel``: the CPU linear kernel (:func:`nlgscore.backend.gemm.use_onednn_linears`);
        ``forward``: ``"tokens"`` for the token forward (:func:`nlgscore.backend.packed_attention.wants_tokens`;
        an architecture without it is an error), ``"padded"``, or ``"auto"``.
        """
        runtime = resolve_runtime("encoder", device, dtype)
        tokens = wants_tokens(forward)  # a bad kernel= or forward= fails before the download
        check_kernel(kernel)
        with model_loading(progress):
            resolved = resolve(model_type, revision=revision, flag="model_type=")
            encoder = cls._load(resolved, runtime, num_layers, all_layers, max_length, default_layers, kernel, tokens)
        if forward == "tokens" and encoder.tokens_forward is None:
            raise ArgumentError(
                f"forward='tokens' is not available for {resolved.name!r}"
                + (" with all_layers=True" if all_layers else f" ({encoder.model.config.model_type} layers)")
                + ": the token forward rebuilds BERT-family encoders cut at num_layers; use forward='padded'"
            )
        return encoder

    @classmethod
    def _load(
        cls,
        resolved: ResolvedModel,
        runtime,
        num_layers,
        all_layers,
        max_length,
        default_layers,
        kernel: str = "auto",
        tokens: bool = False,
    ) -> "Encoder":
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        device = runtime.device
        check_model_folder(resolved)
        config = AutoConfig.from_pretrained(resolved.path)
        total = model_layer_count(config)
        if num_layers is None:
            num_layers = default_layers
        if num_layers is None and is_decoder_only(config):
            num_layers = total  # a decoder-based embedder is trained on its last layer's output
        if num_layers is None:
            raise ArgumentError(
                f"num_layers is required for model {resolved.name!r}: it has no default layer in bertscore_model2layers "
                f"(choose one with `nlgscore calibrate {resolved.name} --data FOLDER`)"
            )
        if isinstance(num_layers, bool) or not isinstance(num_layers, int):
            raise ArgumentTypeError(f"num_layers must be an int, got {type(num_layers).__name__}")
        if not 0 <= num_layers <= total:
            raise ArgumentError(f"num_layers must be between 0 and {total} for {resolved.name!r}, got {num_layers}")
        tokenizer = AutoTokenizer.from_pretrained(resolved.path)
        check_tokenizer(tokenizer, config, resolved)
        model = load_with_sdpa(AutoModel, resolved.path, runtime.torch_dtype, resolved.name)
        if getattr(model.config, "is_encoder_decoder", False):
            model = model.get_encoder()
        model.eval().to(device)
        torch_dtype = settle_dtype(model, runtime.dtype)
        if device.type == "cpu":
            # the model's kernel, kept with it: the packed forward calls nlgscore.backend.gemm with
            # it, other architectures go through the swapped linears
            use_onednn_linears(model, kernel)
        limit = cls._length_limit(tokenizer, config)
        if max_length is not None:
            if isinstance(max_length, bool) or not isinstance(max_length, int):
                raise ArgumentTypeError(f"max_length must be an int, got {type(max_length).__name__}: {max_length!r}")
            if max_length > limit:
                raise ArgumentError(f"max_length {max_length} exceeds what {resolved.name!r} supports ({limit})")
            limit = max_length
        prefix = _declared_tokenizer_class(resolved.path, config.model_type) in PREFIX_SPACE_TOKENIZERS
        encoder = cls(resolved, tokenizer, model, num_layers, all_layers, limit, prefix, device, torch_dtype)
        if encoder.room < 1:  # a window with no content token: nothing to score, and no window loop could advance
            raise ArgumentError(
                f"max_length must be at least {encoder.n_special + 1} for {resolved.name!r} "
                f"({encoder.n_special} special tokens and one text token), got {limit}"
            )
        encoder.total_layers = total
        if not all_layers:
            encoder.truncated_stack = encoder._truncate(total)
            if encoder.truncated_stack:
                encoder.packed = PackedEncoder.build(model)
                if encoder.packed is not None and tokens:
                    encoder.tokens_forward = TokenForward(encoder.packed, max_len=encoder.max_length)
        return encoder

    @staticmethod
    def _length_limit(tokenizer, config) -> int:
        """The model max length; a missing or sentinel value falls back to the position embeddings."""
        limit = getattr(tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit <= _SANE_MAX_LENGTH:
            positions = getattr(config, "max_position_embeddings", None)
            return min(limit, positions) if isinstance(positions, int) and positions > 0 else limit
        positions = getattr(config, "max_position_embeddings", None)
        if isinstance(positions, int) and positions > 0:
            offset = (config.pad_token_id or 0) + 1 if config.model_type in POSITION_OFFSET_MODEL_TYPES else 0
            return positions - offset
        return 512  # relative-position models without a declared limit: the common pre-training length

    def _truncate(self, total: int) -> bool:
        """Drop the layers after ``num_layers``; False (use hidden states) when no layer list is found."""
        import torch

        for dotted in LAYER_LISTS:
            layers = _get_attr(self.model, dotted)
            if isinstance(layers, torch.nn.ModuleList) and len(layers) == total:
                _set_attr(self.model, dotted, torch.nn.ModuleList(list(layers)[: self.num_layers]))
                for name in ("num_hidden_layers", "num_layers", "n_layers", "encoder_layers"):
                    if isinstance(getattr(self.model.config, name, None), int):
                        setattr(self.model.config, name, self.num_layers)
                return True
        if self.model.config.model_type == "albert":  # shared layers: the loop count is the config value
            self.model.config.num_hidden_layers = self.num_layers
            return True
        logger.info(
            "no layer list found in %s; taking hidden state %d instead", type(self.model).__name__, self.num_layers
        )
        return False

    def _special_template(self) -> Tuple[List[int], List[int]]:
        """Special ids before and after the content of a single sequence (e.g. [CLS] … [SEP])."""
        probe = "a"
        bare = self.tokenizer(probe, add_special_tokens=False)["input_ids"]
        full = self.tokenizer(probe, add_special_tokens=True)["input_ids"]
        for start in range(len(full) - len(bare) + 1):
            if full[start : start + len(bare)] == bare:
                return list(full[:start]), list(full[start + len(bare) :])
        raise ArgumentError(f"cannot locate the content in the special-token template of {self.resolved.name!r}")

    def tokenize(
        self, texts: Sequence[str], truncate: bool = True, given: Optional[Mapping[str, Sequence[int]]] = None
    ) -> Tuple[List[List[int]], int]:
        """Token ids with special tokens, truncated to ``max_length`` (whole with ``truncate=False``);
        and how many are longer than ``max_length``. ``given``: content ids already computed for
        some of ``texts`` by this tokenizer's :meth:`front_tokenizer` (a server's HTTP worker);
        only the others are tokenized here."""
        # Encoding without special tokens and cutting ourselves works for any tokenizer, never hits
        # the 1e30 model_max_length overflow, and tells us which inputs were truncated.
        content: List[Sequence[int]]
        if given:
            content = [given.get(text) for text in texts]  # type: ignore[misc]
            missing = [u for u, ids in enumerate(content) if ids is None]
            if missing:
                fresh = self._content_ids([texts[u] for u in missing])
                for u, ids in zip(missing, fresh, strict=True):
                    content[u] = ids
            self.front_tokenized += len(texts) - len(missing)
        else:
            content = list(self._content_ids(texts))
        room = self.max_length - self.n_special
        truncated = sum(len(ids) > room for ids in content)
        if not truncate:
            return [self.prefix + list(ids) + self.suffix for ids in content], truncated
        return [self.prefix + list(ids[:room]) + self.suffix for ids in content], truncated

    def _content_ids(self, texts: Sequence[str]) -> List[List[int]]:
        prepared = [prepared_text(text, self.prefix_space) for text in texts]
        return content_ids(self.tokenizer, prepared) if prepared else []

    def front_tokenizer(self) -> Optional[Dict[str, Any]]:
        """What another process needs to compute :meth:`tokenize`'s ``given`` ids (the Rust
        tokenizer's JSON and the text preparation), or None for a tokenizer without a Rust backend."""
        backend = rust_tokenizer(self.tokenizer)
        return None if backend is None else describe(backend, self.prefix_space)

    @property
    def kernel(self) -> Optional[str]:
        """The CPU linear kernel the model runs (``"onednn"``/``"mkl"``); None off CPU."""
        return model_kernel(self.model) if self.device.type == "cpu" else None

    @property
    def room(self) -> int:
        """Content tokens one encoder pass takes (``max_length`` less the special tokens)."""
        return self.max_length - self.n_special

    def plan_batches(
        self, lengths: Sequence[int], max_tokens: int, max_batch_size: Optional[int] = None
    ) -> List[List[int]]:
        """The :meth:`embed` batches of texts of ``lengths`` tokens: by real tokens for the packed
        forward (its matmuls see no padding; batches nearly equal and filled to its row bucket),
        by padded tokens for the model's own forward."""
        if self.packed is not None:
            return plan_packed(lengths, max_tokens, max_batch_size, ROW_BUCKET)
        return plan_batches(lengths, max_tokens, max_batch_size)

    def embed(self, id_lists: Sequence[Sequence[int]]):
        """L2-normalised float32 embeddings, zero-padded: ``(B, T, D)``, or ``(B, layers+1, T, D)`` with all_layers.

        Texts run in groups of one :func:`~nlgscore.backend.batching.padded_length`, each padded to
        it, so a text's embedding has the same bits whatever else the batch holds. The packed
        forward takes all groups in one pass (attention per group); the model's own forward runs
        once per group.
        """
        import torch

        longest = max(len(ids) for ids in id_lists)
        groups = length_groups([len(ids) for ids in id_lists])
        host = [self._padded_inputs([id_lists[i] for i in group]) for group in groups]
        inputs = [(to_device(ids, self.device), to_device(mask, self.device)) for ids, mask in host]
        with torch.inference_mode(), forward_attention(self.device):
            if self.tokens_forward is not None:
                hidden = self.tokens_forward.forward_groups(inputs, host)
            elif self.packed is not None:
                # The real tokens' positions, found on the host: on a GPU a nonzero() inside the
                # forward would stop the host until the queued kernels have run.
                keep = torch.cat([mask.reshape(-1) for _, mask in host]).nonzero().squeeze(1)
                hidden = self.packed.forward_groups(inputs, to_device(keep, self.device))
            else:
                hidden = [self._model_forward(input_ids, mask) for input_ids, mask in inputs]
            parts = [(group, self._normalised(emb, mask)) for group, emb, (_, mask) in zip(groups, hidden, inputs)]
        if len(parts) == 1 and parts[0][0] == list(range(len(id_lists))):
            return parts[0][1][..., :longest, :]
        first = parts[0][1]
        out = first.new_zeros((len(id_lists),) + first.shape[1:-2] + (longest, first.shape[-1]))
        for group, emb in parts:
            width = min(longest, emb.shape[-2])
            out[to_device(torch.tensor(group), out.device), ..., :width, :] = emb[..., :width, :]
        return out

    def _padded_inputs(self, id_lists: Sequence[Sequence[int]]):
        """``(input_ids, mask)`` of texts of one padded length, padded to it, on the host."""
        import torch

        longest = max(len(ids) for ids in id_lists)
        width = min(padded_length(longest), max(self.max_length, longest))  # never past the position table
        # One tensor from padded lists (a tensor and two copies per text cost ~0.1 ms each, a
        # twentieth of a 64-pair server run).
        input_ids = torch.tensor([list(ids) + [self.pad_id] * (width - len(ids)) for ids in id_lists], dtype=torch.long)
        lengths = torch.tensor([len(ids) for ids in id_lists], dtype=torch.long)
        mask = (torch.arange(width)[None, :] < lengths[:, None]).long()
        self.tokens += sum(map(len, id_lists))
        self.padded_tokens += len(id_lists) * width
        return input_ids, mask

    def _model_forward(self, input_ids, mask):
        """The chosen layer's hidden state (all layers stacked with all_layers) by the model's own forward."""
        import torch

        hidden_states = self.all_layers or not self.truncated_stack
        out = self.model(input_ids=input_ids, attention_mask=mask, output_hidden_states=hidden_states)
        if self.all_layers:
            return torch.stack(out.hidden_states, dim=1)
        return out.hidden_states[self.num_layers] if hidden_states else out[0]

    def _normalised(self, emb, mask):
        """``emb`` in float32, each token's vector L2-normalised, padding zeroed."""
        emb = emb.float()
        emb = emb / emb.norm(dim=-1, keepdim=True)
        shape = (mask.shape[0], 1, mask.shape[1], 1) if self.all_layers else (mask.shape[0], mask.shape[1], 1)
        return emb.masked_fill(mask.view(shape) == 0, 0.0)

    def decode_tokens(self, ids: Sequence[int]) -> List[str]:
        """One readable string per token id (for similarity heat maps)."""
        return [self.tokenizer.decode([i]) for i in ids]


def describe_tokenizer(encoder: Encoder) -> str:
    """Tokenizer kind for signatures: fast/slow, and whether a prefix space is added."""
    kind = "fast" if getattr(encoder.tokenizer, "is_fast", False) else "slow"
    return kind + ("+prefix" if encoder.prefix_space else "")
