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

Texts over ``max_length`` tokens: ``long_inputs="auto"`` (default) scores every token in sentence
chunks (:mod:`nlgscore.seq2seq.chunking`; ``result.windows`` counts the chunk pairs per
prediction), ``"truncate"`` cuts them at ``max_length`` as the authors' scorer does (one warning
per call), ``"error"`` refuses them naming the item. Within the limit all three are identical.

>>> scorer = BARTScorer(checkpoint="tests/golden/tiny-bart", device="cpu")
>>> scores = scorer.score(["It was sunny in Almaty on Monday."], ["On Monday the weather in Almaty was sunny."])
>>> round(scores[0], 5)
-8.26815
>>> result = scorer.compute(["On Monday the weather in Almaty was sunny."], ["It was sunny in Almaty on Monday."])
>>> round(result.score, 5), sorted(result.columns())
(-8.17331, ['precision', 'recall', 'scores'])
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.backend.gemm import check_kernel, model_kernel
from nlgscore.backend.kernel_label import kernel_field
from nlgscore.backend.models import resolve
from nlgscore.backend.packed_attention import check_forward
from nlgscore.backend.tables import table, text_lines
from nlgscore.core.base import MULTIREF_RULES, Call, Item, Scorer
from nlgscore.core.inputs import check_texts
from nlgscore.core.long_inputs import LONG_INPUTS, LONG_INPUTS_HELP, check_long_inputs
from nlgscore.core.options import FORWARD_OPTION, KERNEL_OPTION, Option, not_call_options
from nlgscore.core.result import Result
from nlgscore.core.runtime import CALL_RUNTIME_OPTIONS, dtype_name
from nlgscore.core.signature import Signature
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.seq2seq.bartscore_long import BartPairs, counted
from nlgscore.seq2seq.bartscore_para import (
    load_para_weights,
    para_checkpoint,
    read_para_record,
    record_label,
    record_variant,
    require_para_weights,
)
from nlgscore.seq2seq.chunking import prediction_windows
from nlgscore.seq2seq.likelihood import load_seq2seq, scorer_token_forward, target_logprobs

DIRECTIONS = ("src", "precision", "recall", "f", "harmonic")
AGGREGATIONS = MULTIREF_RULES  # the agg= choices are the template's multi-reference rules
PROMPT_SIDES = ("encoder", "decoder")

Prompt = Union[None, str, Sequence[str]]


class BARTScoreResult(Result):
    """Per-prediction BARTScore (``scores``); ``precision``/``recall`` too for ``f``/``harmonic``.

    Args:
        signature: the settings behind the numbers.
        values: the ``scores`` column (the primary one) and, for ``f``/``harmonic``, the
            ``precision`` and ``recall`` directions.
    """

    def __init__(self, signature: Signature, values: Dict[str, Any]) -> None:
        super().__init__(signature, values, "scores")

    @property
    def precision(self) -> Optional[np.ndarray]:
        """r→h scores per prediction (``f``/``harmonic`` only, else None)."""
        return self._values.get("precision")

    @property
    def recall(self) -> Optional[np.ndarray]:
        """h→r scores per prediction (``f``/``harmonic`` only, else None)."""
        return self._values.get("recall")


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
    prompts: Any = [prompt] if isinstance(prompt, str) else prompt
    if isinstance(prompts, (bytes, dict)) or not hasattr(prompts, "__len__") or not len(prompts):
        raise ArgumentTypeError(
            f"prompt must be a string, a non-empty list of strings, 'ref_hyp' or 'src_hyp', got {prompt!r}"
        )
    out = check_texts("prompt", prompts)
    for i, text in enumerate(out):
        if not text.strip():
            raise ArgumentError(f"prompt[{i}] is empty")
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
        raise ArgumentError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


class BARTScorer(Scorer):
    """A loaded BARTScore model, with the numbers of the authors' ``BARTScorer``.

    A score is the mean natural-log probability of the target's tokens given the source under a
    BART model, in a direction: ``src`` s→h (faithfulness), ``precision`` r→h, ``recall`` h→r,
    ``f`` their arithmetic mean (the paper's F score), ``harmonic`` the authors' ``harm_f``.
    ``nlgscore.load("bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]]", **options)`` builds the same
    scorer.

    Args:
        checkpoint: a Hub id or folder replacing the variant's weights (a checkpoint converted
            from the ParaBank2 weights, or fine-tuned, holds them already).
        variant: the paper's model: ``bart-large``, ``bart-large-cnn`` or ``bart-large-cnn-para``.
        max_length: tokens per text, as the authors' tokenizer truncates (BOS/EOS included).
        revision: the checkpoint's Hub revision (a commit, tag or branch).
        para_weights: the authors' ParaBank2 ``bart.pth`` (a file, or a Hub repo holding it) for
            the ``-para`` variant.
        direction: the default direction of the calls (``src``, ``precision``, ``recall``, ``f``,
            ``harmonic``); a call given only sources scores ``src``.
        long_inputs: texts over ``max_length`` tokens: ``"auto"`` scores every token in sentence
            chunks (``result.windows`` counts the chunk pairs), ``"truncate"`` cuts them as the
            authors' scorer does (one warning per call), ``"error"`` refuses them, naming the item.
        kernel: the CPU linear kernel, ``"onednn"`` or ``"mkl"``; ``"auto"``: what
            ``NLGSCORE_ONEDNN`` says. Recorded in the signature (``kernel:``).
        forward: ``"tokens"`` (packed tokens) or ``"padded"``; ``"auto"``: what
            ``NLGSCORE_TOKEN_FORWARD`` says. Recorded in the signature (``forward:tokens``).
        **runtime_options: the run-time options every scorer takes: ``device``, ``dtype``,
            ``batch_size`` (pairs per batch), ``max_tokens`` (encoder + decoder tokens per batch;
            neither changes a score beyond float rounding), ``progress``, ``accelerator``,
            ``shard`` (or a ready ``runtime``).

    Raises:
        ArgumentError: an unknown variant or direction, a ``max_length`` over the model's
            positions (or too small for one text token), or a ``-para`` variant without its weights.
        ModelNotAvailableError: the checkpoint is neither cached nor downloadable.

    Example:
        >>> scorer = BARTScorer(checkpoint="tests/golden/tiny-bart", device="cpu")
        >>> result = scorer.compute(["On Monday the weather in Almaty was sunny."], ["It was sunny in Almaty on Monday."])
        >>> round(result.score, 5), sorted(result.columns())
        (-8.17331, ['precision', 'recall', 'scores'])
    """

    name = "bartscore"
    budget_family = "seq2seq"
    takes_context = True  # nlgscore.seq2seq.doc_context
    columns = ("scores", "precision", "recall")  # directions f and harmonic; the others: scores
    # a direction="f" call gives the precision and recall directions too (src needs its own pass)
    one_pass = ("direction", "f", {"f": "scores", "precision": "precision", "recall": "recall"})
    option_table = (
        Option("checkpoint", "str", "a BART folder or Hub id replacing the variant's weights"),
        Option("variant", "choice", "the paper's model: " + ", ".join(variant_table()), choices=tuple(variant_table())),
        Option("max_length", "int", "tokens per text"),
        Option("revision", "str", "the checkpoint's Hub revision"),
        Option(
            "para_weights", "str", "the authors' ParaBank2 bart.pth, or a Hub repo holding it (bart-large-cnn-para)"
        ),
        Option(
            "direction",
            "choice",
            "src (s->h), precision (r->h), recall (h->r), f or harmonic",
            choices=DIRECTIONS,
            call=True,
        ),
        Option("long_inputs", "choice", LONG_INPUTS_HELP, choices=LONG_INPUTS),
        Option(
            "prompt",
            "prompt",
            "a prompt, a JSON list of prompts (an ensemble, Eq. 3), or a packaged set: ref_hyp, src_hyp",
            constructor=False,
            call=True,
            default="None",
        ),
        Option(
            "prompt_side",
            "choice",
            "encoder (a suffix of the source) or decoder (a prefix of the target)",
            choices=PROMPT_SIDES,
            constructor=False,
            call=True,
            default="encoder",
        ),
        Option(
            "agg",
            "choice",
            "mean or max over an item's references",
            choices=AGGREGATIONS,
            constructor=False,
            call=True,
            default="mean",
        ),
        KERNEL_OPTION,
        FORWARD_OPTION,
    )

    def __init__(
        self,
        checkpoint: Optional[str] = None,
        variant: str = "bart-large-cnn",
        max_length: int = 1024,
        revision: Optional[str] = None,
        para_weights: Optional[str] = None,
        direction: str = "f",
        long_inputs: str = "auto",
        kernel: str = "auto",
        forward: str = "auto",
        **runtime_options: Any,
    ) -> None:
        self.long_inputs = check_long_inputs(long_inputs)
        check_kernel(kernel)  # a bad kernel= or forward= fails before any download
        check_forward(forward)
        variants = variant_table()
        if variant not in variants:
            raise ArgumentError(f"variant must be one of {', '.join(variants)}, got {variant!r}")
        self.variant = variant
        self.direction = _choice("direction", direction, DIRECTIONS)
        self.needs = ("sources",) if direction == "src" else ("references",)
        if isinstance(max_length, bool) or not isinstance(max_length, int):
            raise ArgumentTypeError(f"max_length must be an int, got {type(max_length).__name__}: {max_length!r}")
        self.max_length = max_length
        super().__init__(**runtime_options)  # max_tokens=0 is an error, not "no cap"/"default"
        runtime = self.runtime
        entry = variants[variant]
        chosen = para_checkpoint(entry, checkpoint, para_weights)
        needs_para = para_weights is None and "para_weights" in entry
        if needs_para and not checkpoint and chosen == entry["checkpoint"]:
            require_para_weights(entry, chosen)  # the bare base: say what is missing before any download
        self.resolved = resolve(chosen, revision, flag="checkpoint=", family="seq2seq")
        # A folder that already holds the -para weights (converted or fine-tuned) says so in a record.
        record = read_para_record(self.resolved.path) if para_weights is None else None
        if record is not None:
            self.variant = record_variant(record, variant, table("bartscore_variants")["default"], self.resolved.name)
        elif needs_para:
            require_para_weights(entry, chosen)  # before loading a model it could not use
        self.model, self.tokenizer = load_seq2seq(
            self.resolved, runtime.device, runtime.dtype, progress=runtime.progress, kernel=kernel
        )
        self.runtime = runtime.settled(next(self.model.parameters()).dtype)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is not None and max_length > limit:
            raise ArgumentError(f"max_length={max_length} exceeds the model's {limit} positions")
        specials = self.tokenizer.num_special_tokens_to_add()
        if max_length <= specials:  # no room for a text token: nothing to score, no window could advance
            raise ArgumentError(
                f"max_length must be at least {specials + 1} for {self.resolved.name!r} "
                f"({specials} special tokens and one text token), got {max_length}"
            )
        self.para = "none" if record is None else record_label(record)
        if record is None and ("para_weights" in entry or para_weights is not None):
            self.para = load_para_weights(self.model, para_weights, entry.get("para_weights", {}))
        self._truncated = 0  # distinct texts truncated during the current call
        self.pad_id = self.tokenizer.pad_token_id
        self.decoder_start_id = self.model.config.decoder_start_token_id
        self.token_forward = scorer_token_forward(self.model, forward, self.resolved.name)
        self._pairs = BartPairs(self.tokenizer, max_length, self.long_inputs)

    @property
    def kernel(self) -> Optional[str]:
        """The CPU linear kernel the model runs (``"onednn"``/``"mkl"``, its ``kernel=`` as the
        load resolved it; the signature's ``kernel`` field); None off CPU."""
        return model_kernel(self.model) if self.device.type == "cpu" else None

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        options = call.options if call is not None else self.call_defaults
        prompt, side = options.get("prompt"), options.get("prompt_side", "encoder")
        return dict(
            model=self.resolved.name,
            variant=self.variant,
            revision=self.resolved.revision,
            para=self.para,
            direction=options.get("direction", self.direction),
            prompt=prompt_label(prompt),
            side=side if prompt is not None else "none",
            max_length=self.max_length,
            dtype=dtype_name(self.dtype),
            **kernel_field(self.device, self.dtype, self.model),
            long_inputs=self.long_inputs,
            **({"forward": "tokens"} if self.token_forward else {}),
        )

    # -- the reference's BARTScorer.score ---------------------------------------------------
    def score(self, srcs: Sequence[str], tgts: Sequence[str], batch_size: Optional[int] = None) -> List[float]:
        """The authors' ``BARTScorer.score(srcs, tgts)``: ``log p(tgt | src)`` per token,
        averaged, per pair, as a list of floats (the ``precision`` direction of :meth:`compute`
        with ``sources=srcs`` swapped in; same numbers).

        Args:
            srcs: the texts conditioned on.
            tgts: the texts scored, one per source.
            batch_size: pairs per batch for this call; None: the scorer's.

        Returns:
            One score per pair.

        Raises:
            ArgumentError: ``srcs`` and ``tgts`` differ in length.
        """
        srcs, tgts = check_texts("srcs", srcs), check_texts("tgts", tgts)
        if len(srcs) != len(tgts):
            raise ArgumentError(f"srcs and tgts must have the same length, got {len(srcs)} and {len(tgts)}")
        runtime = self._call_runtime(batch_size=batch_size)
        self._truncated = 0
        if self.long_inputs == "error":
            self._pairs.check(
                [(f"srcs[{i}]", t) for i, t in enumerate(srcs)] + [(f"tgts[{i}]", t) for i, t in enumerate(tgts)]
            )
        scores = self._pair_scores(srcs, tgts, runtime)[0].tolist()
        self._warn_truncated()
        return scores

    def _pair_scores(
        self, srcs: List[str], tgts: List[str], runtime: Any, progress: Any = None
    ) -> Tuple[np.ndarray, List[int]]:
        """Per pair, the score of ``tgts[i]`` given ``srcs[i]`` and the (chunk, piece) pairs scored for it."""
        starts: List[int] = []  # per pair, the first target position counted (after document context)
        plan, tgt_ids = self._pairs.plan(srcs, tgts, self._encode, starts)
        logps = target_logprobs(
            self.model, plan.sources, plan.targets, pad_id=self.pad_id, decoder_start_id=self.decoder_start_id,
            max_tokens=runtime.max_tokens, max_batch_size=runtime.batch_size,
            progress=runtime.progress if progress is None else progress, desc="bartscore",
            token_forward=self.token_forward,
        ) if plan.sources else []  # fmt: skip
        logps = plan.assemble(logps, counted(self.pad_id))
        out = np.empty(len(tgts), dtype=np.float64)
        for i, (tgt, logp, start) in enumerate(zip(tgt_ids, logps, starts)):
            # The reference ignores label == pad in the sum but divides by the full length.
            keep = np.asarray(tgt[start:]) != self.pad_id
            out[i] = logp[start:][keep].sum() / (len(tgt) - start)
        return out, plan.windows

    def _encode(self, texts: List[str]) -> List[List[int]]:
        """Token ids with BOS/EOS, truncated like the reference; one warning per call if any is."""
        if not texts:
            return []
        ids = self.tokenizer(texts, max_length=self.max_length, truncation=True)["input_ids"]
        full = [i for i, row in enumerate(ids) if len(row) >= self.max_length]
        if full:
            longer = self.tokenizer([texts[i] for i in full], max_length=self.max_length + 1, truncation=True)[
                "input_ids"
            ]
            self._truncated += sum(len(row) > self.max_length for row in longer)
        return [list(row) for row in ids]

    def _warn_truncated(self) -> None:
        """One warning per public call, counting every truncated distinct text."""
        if self._truncated:
            warnings.warn(
                f"{self._truncated} text(s) longer than max_length={self.max_length} tokens were truncated",
                stacklevel=3,
            )
        self._truncated = 0

    # -- the metric -------------------------------------------------------------------------
    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        direction: Optional[str] = None,
        prompt: Prompt = None,
        prompt_side: Optional[str] = None,
        agg: Optional[str] = None,
        *,
        batch_size: Optional[int] = None,
        max_tokens: Optional[int] = None,
        progress: Optional[bool] = None,
        shard: Optional[bool] = None,
        context: Optional[int] = None,
        doc_ids: Optional[Sequence[Any]] = None,
    ) -> BARTScoreResult:
        """Score each prediction in ``direction``; input order kept.

        An option left as None takes the scorer's call default (:meth:`set_call_defaults`:
        ``nlgscore.load(spec, prompt=...)``), else its documented default.

        Args:
            predictions: the texts scored (the hypotheses).
            references: one reference per prediction, or several (``[[str]]``).
            sources: one source per prediction (direction ``src``).
            direction: ``src``, ``precision``, ``recall``, ``f`` or ``harmonic``; None:
                ``"src"`` for a call given only ``sources``, else the constructor's.
            prompt: a prompt, a list of prompts (an ensemble, averaged per prompt: Eq. 3 of the
                paper), or a packaged set ``"ref_hyp"``/``"src_hyp"``.
            prompt_side: ``encoder`` (a suffix of the source; default) or ``decoder`` (a prefix
                of the target).
            agg: how an item's per-reference scores are aggregated: ``mean`` (default) or ``max``.
            batch_size: pairs per batch for this call.
            max_tokens: encoder + decoder tokens per batch for this call.
            progress: draw a progress bar for this call.
            shard: split this call across the ranks of a launch (every rank the same inputs).
            context: read each sentence after the previous ``context`` sentences of its document.
            doc_ids: each item's document, with ``context``.

        Returns:
            The result: ``scores`` per prediction, ``precision``/``recall`` too for ``f`` and
            ``harmonic``.
        """
        return self.run(
            self.make_call(
                predictions,
                references,
                sources,
                direction=direction,
                prompt=prompt,
                prompt_side=prompt_side,
                agg=agg,
                batch_size=batch_size,
                max_tokens=max_tokens,
                progress=progress,
                shard=shard,
                context=context,
                doc_ids=doc_ids,
            )
        )

    def make_call(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> Call:
        """The checked form of :meth:`compute`'s call (its keywords; see :meth:`Scorer.make_call`).

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several.
            sources: one source per prediction.
            **options: :meth:`compute`'s keywords (``direction``, ``prompt``, ``prompt_side``,
                ``agg``, the call's run-time options, ``context``, ``doc_ids``).

        Returns:
            The call, checked and with the scorer's call defaults filled in.

        Raises:
            ArgumentError: an option that is a setting of the scorer, or a value it does not allow.
            ArgumentTypeError: an option the metric does not take.
        """
        given = {
            name: options.pop(name)
            for name in (
                "direction",
                "prompt",
                "prompt_side",
                "agg",
                *CALL_RUNTIME_OPTIONS,
                "context",
                "doc_ids",
            )
            if name in options
        }
        if options:
            raise not_call_options(type(self), sorted(options))
        given = self._with_call_defaults(given)
        direction = _choice(
            "direction", given.get("direction") or self._default_direction(references, sources), DIRECTIONS
        )
        side = _choice("prompt_side", given.get("prompt_side", "encoder"), PROMPT_SIDES)
        agg = _choice("agg", given.get("agg", "mean"), AGGREGATIONS)
        prompt = given.get("prompt")
        prompts: List[Optional[str]] = [None] if prompt is None else list(prompt_list(prompt))
        runtime = self._call_runtime(**{name: given.get(name) for name in CALL_RUNTIME_OPTIONS})
        return self._make_call(
            predictions,
            references,
            sources,
            multiref=agg,
            runtime=runtime,
            direction=direction,
            prompt=prompt,
            prompt_side=side,
            prompts=prompts,
            context=given.get("context", 0),
            doc_ids=given.get("doc_ids"),
        )

    def run(self, call: Any) -> Any:
        """:meth:`Scorer.run`, warning once per call about truncated inputs.

        Args:
            call: a call of :meth:`make_call` (or a matrix call).

        Returns:
            The call's result (a matrix for a matrix call).
        """
        self._truncated = 0
        result = super().run(call)
        self._warn_truncated()
        return result

    def _default_direction(self, references: Any, sources: Any) -> str:
        """A call given sources and no references scores ``src`` (as the CLI and the evaluate
        module do); any other the constructor's direction."""
        return "src" if references is None and sources is not None else self.direction

    def _call_needs(self, references: Any, sources: Any, options: Dict[str, Any]) -> Tuple[str, ...]:
        direction = options.get("direction") or self._default_direction(references, sources)
        return ("sources",) if direction == "src" else ("references",)

    def _prepare(self, call: Call, items: List[Item]) -> Call:
        """With ``long_inputs="error"``: refuse an over-long text (prompt included), naming it, before any scoring."""
        call.options["_windows"] = {}
        if self.long_inputs != "error":
            return call
        direction, prompts, side = call.options["direction"], call.options["prompts"], call.options["prompt_side"]
        hyp_roles = ([] if direction == "recall" else ["decoder"]) + (
            ["encoder"] if direction in ("recall", "f", "harmonic") else []
        )
        other_roles = ["encoder" if role == "decoder" else "decoder" for role in hyp_roles]
        named = [(f"predictions[{i}]", text, hyp_roles) for i, text in enumerate(call.predictions)]
        if call.sources is not None:
            named += [(f"sources[{i}]", text, other_roles) for i, text in enumerate(call.sources)]
        if call.references is not None:
            named += [
                (f"references[{i}]" + (f"[{j}]" if len(refs) > 1 else ""), text, other_roles)
                for i, refs in enumerate(call.references)
                for j, text in enumerate(refs)
            ]
        self._pairs.check(
            [
                (name, (_encoder_text if role == "encoder" else _decoder_text)(text, p, side))
                for name, text, roles in named
                for role in roles
                for p in prompts
            ]
        )
        return call

    def _pair_texts(self, items: List[Item], call: Call) -> Tuple[List[Any], List[Any]]:
        """The (encoder, decoder) texts of ``items``, prompts first, then directions, then items."""
        direction, prompts, side = call.options["direction"], call.options["prompts"], call.options["prompt_side"]
        hyps = [(c.prediction if c else (), item.prediction) for item, c in ((i, i.context) for i in items)]
        flat = [
            (
                (c.source if direction == "src" else c.reference) if c else (),
                # the side the direction reads is given: make_call refused a call without it
                (item.source if direction == "src" else item.reference) or "",
            )
            for item, c in ((i, i.context) for i in items)
        ]
        srcs: List[Any] = []
        tgts: List[Any] = []
        for p in prompts:
            if direction != "recall":  # reference/source -> prediction
                srcs += [_in_context(ctx, _encoder_text(x, p, side)) for ctx, x in flat]
                tgts += [_in_context(ctx, _decoder_text(y, p, side)) for ctx, y in hyps]
            if direction in ("recall", "f", "harmonic"):  # prediction -> reference
                srcs += [_in_context(ctx, _encoder_text(x, p, side)) for ctx, x in hyps]
                tgts += [_in_context(ctx, _decoder_text(y, p, side)) for ctx, y in flat]
        return srcs, tgts

    def _score_items(self, items: List[Item], call: Call) -> Dict[str, np.ndarray]:
        """Per item and prompt: ``(items, prompts)`` columns."""
        direction, prompts = call.options["direction"], call.options["prompts"]
        # One likelihood call for every prompt and both directions: dedup and batching see it all.
        scores, windows = self._pair_scores(*self._pair_texts(items, call), call.runtime, call.progress)
        values = scores.reshape(len(prompts), -1, len(items))  # (prompts, directions, items)
        call.options.setdefault("_windows", {}).update(_item_windows(items, windows))
        if direction in ("f", "harmonic"):
            p, r = values[:, 0, :].T, values[:, 1, :].T
            pair = (p + r) / 2 if direction == "f" else (p * r) / (p + r)
            return {"scores": pair, "precision": p, "recall": r}
        return {"scores": values[:, 0, :].T}

    def _empty_columns(self, call: Call) -> Dict[str, np.ndarray]:
        names = self.columns if call.options["direction"] in ("f", "harmonic") else self.columns[:1]
        return {name: np.zeros((0, len(call.options["prompts"]))) for name in names}  # (items, prompts)

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> BARTScoreResult:
        # Each column is (items, prompts), aggregated over references: average the prompts (Eq. 3).
        k = len(call.options["prompts"])
        result = BARTScoreResult(
            self.make_signature(call), {name: values.sum(axis=1) / k for name, values in columns.items()}
        )
        # Per prediction: the most (chunk, piece) pairs one of its pairs was scored in.
        # (Only "auto" plans again for items another process scored: the others are 1, and a second
        # truncating encode would count the truncated texts of the warning twice.)
        result.windows = prediction_windows(
            call,
            lambda items: (
                _item_windows(items, self._pairs.plan(*self._pair_texts(items, call), None)[0].windows)
                if self.long_inputs == "auto"
                else dict.fromkeys(items, 1)
            ),
        )
        return result


def _item_windows(items: List[Item], windows: List[int]) -> Dict[Item, int]:
    """Per item, the most windows of its pairs (laid out prompts, directions, items)."""
    return dict(zip(items, np.asarray(windows, dtype=np.int64).reshape(-1, len(items)).max(axis=0).tolist()))


def _in_context(context: Tuple[str, ...], text: str) -> Any:
    """``text``, or ``(context, text)`` when it is read after its document's previous sentences."""
    return (context, text) if context else text


def _encoder_text(text: str, prompt: Optional[str], side: str) -> str:
    """The authors' encoder-side prompt: a suffix ``x + " " + p + ","``."""
    return text if prompt is None or side != "encoder" else f"{text} {prompt},"


def _decoder_text(text: str, prompt: Optional[str], side: str) -> str:
    """The authors' decoder-side prompt: a prefix ``p + ", " + y``."""
    return text if prompt is None or side != "decoder" else f"{prompt}, {text}"


__all__ = ["BARTScorer", "BARTScoreResult", "DIRECTIONS", "prompt_list", "load_para_weights"]
