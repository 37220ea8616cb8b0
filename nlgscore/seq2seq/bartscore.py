"""BARTScore (Yuan et al., 2021) with the numbers of the authors' ``BARTScorer``, computed faster.

A score is the mean natural-log probability of the target's tokens given the source under a
BART model, exactly as ``neulab/BARTScore``'s ``bart_score.py`` computes it:

* both texts are tokenised with BOS/EOS and truncated to ``max_length`` (1,024) tokens;
* the denominator counts every target token the reference's attention mask counts (``<s>`` and
  ``</s>`` included);
* reference quirk, kept on purpose: a target that *spells* ``<pad>`` gets the pad id, which the
  reference's ``NLLLoss(ignore_index=pad)`` drops from the sum while its length still counts it.
  Other special-token text (``</s>``, ``<mask>``) is scored like any token, as in the reference.

Directions: ``src`` s→h (faithfulness), ``precision`` r→h, ``recall`` h→r, ``f`` the arithmetic
mean of precision and recall (the paper's F score), ``harmonic`` the authors' ``harm_f`` =
P·R/(P+R) (with log-probabilities both negative, this is *minus* half the usual harmonic mean of
|P| and |R|; kept as the authors wrote it). With several references, the direction score of each
(prediction, reference) pair is aggregated with ``mean`` or ``max``; a prompt ensemble averages
the per-prompt scores (Eq. 3 of the paper).

>>> scorer = BARTScorer(checkpoint="tests/golden/tiny-bart", device="cpu")
>>> scores = scorer.score(["It was sunny in Almaty on Monday."], ["On Monday the weather in Almaty was sunny."])
>>> round(scores[0], 5)
-8.26815
>>> result = scorer.compute(["On Monday the weather in Almaty was sunny."], ["It was sunny in Almaty on Monday."])
>>> round(result.system, 5), sorted(result.columns())
(-8.17331, ['precision', 'recall', 'scores'])
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.core.base import Scorer
from nlgscore.core.batching import unique
from nlgscore.core.distributed import shard
from nlgscore.core.inputs import check_references, check_texts, flatten_references
from nlgscore.seq2seq.likelihood import DEFAULT_LIKELIHOOD_TOKENS, load_seq2seq, target_logprobs
from nlgscore.core.models import dtype_name, resolve, resolve_device, resolve_dtype
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature
from nlgscore.core.tables import table, text_lines

DIRECTIONS = ("src", "precision", "recall", "f", "harmonic")
AGGREGATIONS = ("mean", "max")
PROMPT_SIDES = ("encoder", "decoder")
# Encoder + decoder tokens per batch on a GPU; CPU uses the likelihood default (about 4k).
GPU_MAX_TOKENS = 16384

Prompt = Union[None, str, Sequence[str]]


@dataclass
class BARTScoreResult(Result):
    """Per-prediction BARTScore (``scores``); ``precision``/``recall`` too for ``f``/``harmonic``."""

    COLUMNS = ("scores",)
    primary = "scores"

    scores: Any = None
    precision: Any = None
    recall: Any = None

    def columns(self) -> Dict[str, List[float]]:
        out = super().columns()
        for name in ("precision", "recall"):
            if getattr(self, name) is not None:
                out[name] = [float(v) for v in getattr(self, name)]
        return out

    @property
    def system(self) -> float:
        """Mean score over predictions (NaN for no predictions)."""
        values = np.asarray(self.scores, dtype=np.float64)
        return float(values.mean()) if values.size else float("nan")


def variant_table() -> Dict[str, Any]:
    return table("bartscore_variants")["variants"]


def prompt_list(prompt: Prompt) -> List[str]:
    """The prompts of ``prompt``: one string, a list, or a packaged set ``"ref_hyp"``/``"src_hyp"``.

    >>> len(prompt_list("ref_hyp")), len(prompt_list("src_hyp")), prompt_list("Such as")
    (34, 70, ['Such as'])
    """
    sets = table("bartscore_variants")["prompt_sets"]
    if isinstance(prompt, str) and prompt in sets:
        return text_lines(sets[prompt])
    prompts = [prompt] if isinstance(prompt, str) else prompt
    if isinstance(prompts, (bytes, dict)) or not hasattr(prompts, "__len__") or not len(prompts):
        raise TypeError(f"prompt must be a string, a non-empty list of strings, 'ref_hyp' or 'src_hyp', got {prompt!r}")
    out = check_texts("prompt", prompts)
    for i, text in enumerate(out):
        if not text.strip():
            raise ValueError(f"prompt[{i}] is empty")
    return out


def prompt_label(prompt: Prompt) -> str:
    """How a prompt setting is written in a signature."""
    if prompt is None:
        return "none"
    if isinstance(prompt, str):
        return f"set-{prompt}" if prompt in table("bartscore_variants")["prompt_sets"] else prompt
    digest = hashlib.sha256("\n".join(prompt).encode("utf-8")).hexdigest()[:8]
    return prompt[0] if len(prompt) == 1 else f"list{len(prompt)}-{digest}"


def _choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


class BARTScorer(Scorer):
    """A loaded BARTScore model (see the module docstring for the definition).

    ``variant`` picks the paper's model (``bart-large``, ``bart-large-cnn``,
    ``bart-large-cnn-para``); ``checkpoint`` (Hub id or folder) replaces the variant's weights.
    ``para_weights`` is the ParaBank2 ``bart.pth`` (a file, or a Hub repo holding it) for the
    ``-para`` variant. ``max_tokens`` bounds encoder + decoder tokens per batch, ``batch_size``
    the pairs per batch; neither changes a score beyond float rounding.
    """

    name = "bartscore"

    def __init__(
        self,
        checkpoint: Optional[str] = None,
        variant: str = "bart-large-cnn",
        max_length: int = 1024,
        device: Any = None,
        batch_size: Optional[int] = None,
        max_tokens: Optional[int] = None,
        dtype: Any = None,
        revision: Optional[str] = None,
        para_weights: Optional[str] = None,
        direction: str = "f",
        progress: bool = False,
        accelerator: Any = None,
    ) -> None:
        variants = variant_table()
        if variant not in variants:
            raise ValueError(f"variant must be one of {', '.join(variants)}, got {variant!r}")
        self.variant = variant
        self.direction = _choice("direction", direction, DIRECTIONS)
        self.needs = ("sources",) if direction == "src" else ("references",)
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an integer >= 2 (room for <s> and </s>), got {max_length!r}")
        self.max_length = max_length
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.max_tokens = max_tokens or (GPU_MAX_TOKENS if self.device.type == "cuda" else DEFAULT_LIKELIHOOD_TOKENS)
        self.progress = progress
        self.accelerator = accelerator
        entry = variants[variant]
        self.resolved = resolve(checkpoint or entry["checkpoint"], revision)
        self.model, self.tokenizer = load_seq2seq(self.resolved, self.device, self.dtype)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is not None and max_length > limit:
            raise ValueError(f"max_length={max_length} exceeds the model's {limit} positions")
        self.para = "none"
        if "para_weights" in entry or para_weights is not None:
            self.para = load_para_weights(self.model, para_weights, entry.get("para_weights", {}))
        self._truncated = 0  # distinct texts truncated during the current call
        self.pad_id = self.tokenizer.pad_token_id
        self.decoder_start_id = self.model.config.decoder_start_token_id

    @property
    def signature(self) -> Signature:
        return self._signature(self.direction, "mean", None, "encoder")

    def _signature(self, direction: str, agg: str, prompt: Prompt, side: str) -> Signature:
        return Signature(
            self.name,
            variant=self.variant,
            checkpoint=self.resolved.name,
            revision=self.resolved.revision,
            para=self.para,
            direction=direction,
            agg=agg,
            prompt=prompt_label(prompt),
            side=side if prompt is not None else "none",
            max_length=self.max_length,
            dtype=dtype_name(self.dtype),
        )

    # -- the reference's BARTScorer.score ---------------------------------------------------
    def score(self, srcs: Sequence[str], tgts: Sequence[str], batch_size: Optional[int] = None) -> List[float]:
        """``log p(tgt | src)`` per token, averaged, per pair: the reference ``BARTScorer.score``."""
        srcs, tgts = check_texts("srcs", srcs), check_texts("tgts", tgts)
        if len(srcs) != len(tgts):
            raise ValueError(f"srcs and tgts must have the same length, got {len(srcs)} and {len(tgts)}")
        self._truncated = 0
        scores = self._pair_scores(srcs, tgts, batch_size).tolist()
        self._warn_truncated()
        return scores

    def _pair_scores(self, srcs: List[str], tgts: List[str], batch_size: Optional[int] = None) -> np.ndarray:
        texts, index = unique(srcs + tgts)  # each distinct text is tokenised once
        ids = self._encode(texts)
        src_ids = [ids[index[i]] for i in range(len(srcs))]
        tgt_ids = [ids[index[len(srcs) + i]] for i in range(len(tgts))]
        logps = target_logprobs(
            self.model, src_ids, tgt_ids, pad_id=self.pad_id, decoder_start_id=self.decoder_start_id,
            max_tokens=self.max_tokens, max_batch_size=batch_size or self.batch_size,
            progress=self.progress, desc="bartscore",
        )  # fmt: skip
        out = np.empty(len(tgts), dtype=np.float64)
        for i, (tgt, logp) in enumerate(zip(tgt_ids, logps)):
            # The reference ignores label == pad in the sum but divides by the full length.
            keep = np.asarray(tgt) != self.pad_id
            out[i] = logp[keep].sum() / len(tgt)
        return out

    def _encode(self, texts: List[str]) -> List[List[int]]:
        """Token ids with BOS/EOS, truncated like the reference; one warning per call if any is."""
        if not texts:
            return []
        ids = self.tokenizer(texts, max_length=self.max_length, truncation=True)["input_ids"]
        full = [i for i, row in enumerate(ids) if len(row) >= self.max_length]
        if full:
            longer = self.tokenizer([texts[i] for i in full], max_length=self.max_length + 1, truncation=True)["input_ids"]
            self._truncated += sum(len(row) > self.max_length for row in longer)
        return [list(row) for row in ids]

    def _warn_truncated(self) -> None:
        """One warning per public call, counting every truncated distinct text."""
        if self._truncated:
            warnings.warn(f"{self._truncated} text(s) longer than max_length={self.max_length} tokens were truncated", stacklevel=3)
        self._truncated = 0

    # -- the metric -------------------------------------------------------------------------
    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        direction: Optional[str] = None,
        prompt: Prompt = None,
        prompt_side: str = "encoder",
        agg: str = "mean",
    ) -> BARTScoreResult:
        """Score each prediction in ``direction`` (default: the constructor's); input order kept."""
        direction = _choice("direction", direction or self.direction, DIRECTIONS)
        side = _choice("prompt_side", prompt_side, PROMPT_SIDES)
        agg = _choice("agg", agg, AGGREGATIONS)
        prompts: List[Optional[str]] = [None] if prompt is None else list(prompt_list(prompt))
        preds = check_texts("predictions", predictions)
        if direction == "src":
            if sources is None:
                raise ValueError("direction 'src' scores log p(prediction | source): pass sources")
            refs = [[s] for s in check_texts("sources", sources)]
            if len(refs) != len(preds):
                raise ValueError(f"sources has {len(refs)} items but there are {len(preds)} predictions")
        else:
            if references is None:
                raise ValueError(f"direction {direction!r} needs references")
            refs = check_references("references", references, len(preds))

        def run(indices: List[int]) -> List[Tuple[float, float, float]]:
            cols = self._columns([preds[i] for i in indices], [refs[i] for i in indices], direction, prompts, side, agg)
            return list(zip(*cols))

        self._truncated = 0
        rows = shard(len(preds), run, self.accelerator)
        self._warn_truncated()
        scores, precision, recall = (np.array([r[k] for r in rows], dtype=np.float64) for k in range(3))
        both = direction in ("f", "harmonic")
        return BARTScoreResult(
            signature=self._signature(direction, agg, prompt, side),
            scores=scores,
            precision=precision if both else None,
            recall=recall if both else None,
        )

    def _columns(
        self, preds: List[str], refs: List[List[str]], direction: str, prompts: List[Optional[str]], side: str, agg: str
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scores, precision, recall) per prediction; ``refs`` holds the sources for ``src``."""
        if not preds:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        flat, owner = flatten_references(refs)
        hyps = [preds[i] for i in owner]
        # One likelihood call for every prompt and both directions: dedup and batching see it all.
        srcs: List[str] = []
        tgts: List[str] = []
        for p in prompts:
            if direction != "recall":  # reference/source -> prediction
                srcs += [_encoder_text(x, p, side) for x in flat]
                tgts += [_decoder_text(y, p, side) for y in hyps]
            if direction in ("recall", "f", "harmonic"):  # prediction -> reference
                srcs += [_encoder_text(x, p, side) for x in hyps]
                tgts += [_decoder_text(y, p, side) for y in flat]
        values = self._pair_scores(srcs, tgts).reshape(len(prompts), -1, len(flat))
        n = len(preds)
        score_sum, p_sum, r_sum = np.zeros(n), np.zeros(n), np.zeros(n)
        for per_prompt in values:
            if direction in ("f", "harmonic"):
                p, r = per_prompt
                pair = (p + r) / 2 if direction == "f" else (p * r) / (p + r)
                p_sum += _aggregate(p, owner, n, agg)
                r_sum += _aggregate(r, owner, n, agg)
            else:
                pair = per_prompt[0]
            score_sum += _aggregate(pair, owner, n, agg)
        k = len(prompts)
        return score_sum / k, p_sum / k, r_sum / k


def _encoder_text(text: str, prompt: Optional[str], side: str) -> str:
    """The authors' encoder-side prompt: a suffix ``x + " " + p + ","``."""
    return text if prompt is None or side != "encoder" else f"{text} {prompt},"


def _decoder_text(text: str, prompt: Optional[str], side: str) -> str:
    """The authors' decoder-side prompt: a prefix ``p + ", " + y``."""
    return text if prompt is None or side != "decoder" else f"{prompt}, {text}"


def _aggregate(values: np.ndarray, owner: List[int], n: int, agg: str) -> np.ndarray:
    """Mean or max of ``values`` over the references of each prediction (ragged lists allowed)."""
    owner_arr = np.asarray(owner, dtype=np.int64)
    if agg == "mean":
        return np.bincount(owner_arr, weights=values, minlength=n) / np.bincount(owner_arr, minlength=n)
    out = np.full(n, -np.inf)
    np.maximum.at(out, owner_arr, values)
    return out


def load_para_weights(model: Any, source: Optional[str], entry: Dict[str, Any]) -> str:
    """Load the ParaBank2 state dict (``bart.pth``) into ``model``; return its signature label.

    ``source`` is a file, or a Hub repo id holding ``entry["filename"]``; ``None`` uses the
    table's ``hub_repo``. The file is read with ``weights_only=True`` (no pickled code runs).
    Missing keys (other than tied copies of loaded weights) and unexpected keys are errors.
    """
    import torch

    source = source if source is not None else entry.get("hub_repo")
    filename = entry.get("filename", "bart.pth")
    if not source:
        raise ValueError(
            "variant 'bart-large-cnn-para' needs the authors' ParaBank2 weights: pass para_weights=<path to "
            f"{filename}> (the BARTScore authors' Google Drive file id {entry.get('google_drive_id')}) or a Hub "
            "repo id holding it, or set para_weights.hub_repo in nlgscore/data/bartscore_variants.json"
        )
    if os.path.isfile(source):
        path, label = source, f"file-{os.path.basename(source)}-{os.path.getsize(source)}"
    elif os.path.exists(source) or source.endswith((".pth", ".pt", ".bin")) or source.count("/") != 1:
        raise FileNotFoundError(f"para_weights {source!r} is not a file nor a Hub repo id (owner/name)")
    else:
        path = _hub_file(source, filename)
        label = f"{source}@{os.path.basename(os.path.dirname(path))}"
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise TypeError(f"para_weights {source!r} is not a state dict of tensors")
    outcome = model.load_state_dict(state, strict=False)
    own = model.state_dict()
    loaded = {own[k].data_ptr() for k in state if k in own}
    # Tied weights (lm_head = shared embeddings) need not be stored twice.
    missing = [k for k in outcome.missing_keys if own[k].data_ptr() not in loaded]
    if missing or outcome.unexpected_keys:
        raise ValueError(
            f"para_weights {source!r} does not fit the checkpoint: missing keys {missing[:10]}, "
            f"unexpected keys {list(outcome.unexpected_keys)[:10]}"
        )
    return label


def _hub_file(repo: str, filename: str) -> str:
    from huggingface_hub import hf_hub_download

    from nlgscore.core.models import ModelNotAvailableError

    try:
        return hf_hub_download(repo, filename)
    except Exception as err:  # noqa: BLE001 - every Hub failure gets the same actionable message
        raise ModelNotAvailableError(
            f"para_weights: {filename} from the Hub repo {repo!r} is not cached and cannot be downloaded "
            f"({type(err).__name__}: {err}); pass a local file instead"
        ) from err


__all__ = ["BARTScorer", "BARTScoreResult", "DIRECTIONS", "prompt_list", "load_para_weights"]
