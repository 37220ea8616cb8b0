"""Prism (Thompson & Post, EMNLP 2020): MT evaluation by zero-shot paraphrasing.

A multilingual NMT model force-decodes one text given another; the segment score is
``H(y|x)``, the mean natural-log probability of the target tokens after the language tag
(``</s>`` included), and ``G(y|x)`` their sum. ``Prism-ref = ½ H(cand|ref) + ½ H(ref|cand)``,
``Prism-src = H(cand|src)``; the system score is the mean of the segment scores. Tokens follow the
original fairseq layout (see :mod:`nlgscore.seq2seq.prism_tokenizer`), so scores match the original
``prism.py`` with the converted m39v1 weights.

Several references per candidate (``[[ref1, ref2], ...]``): each reference is scored like a single
one and the item's Prism-ref (and each direction's H and G) is the **mean over its references**;
the signature says ``multiref:mean``. The original Prism takes one reference only.

Texts longer than the model's positions: ``long_inputs="auto"`` (default) scores them in sentence
chunks (see :mod:`nlgscore.seq2seq.chunking`; ``result.windows`` counts the chunk pairs per item),
``"truncate"`` cuts them as the original does (one warning per call), ``"error"`` refuses them
naming the item. Within the limit the three give identical numbers.

>>> scorer = PrismScorer("tests/golden/tiny-prism", lang="en")
>>> result = scorer.compute(["The cat sat."], references=["A cat was sitting."])
>>> len(result), sorted(result.columns())[:2], result.score == result.segment[0]
(1, ['G_cand_given_ref', 'G_ref_given_cand'], True)
>>> scorer.score(["The cat sat."], refs=["A cat was sitting."]).scores == result.scores
True
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.backend.gemm import check_kernel, model_kernel
from nlgscore.backend.kernel_label import kernel_field
from nlgscore.backend.packed_attention import check_forward
from nlgscore.backend.tables import table
from nlgscore.core.base import INPUT_NAMES, Call, Item, Scorer
from nlgscore.core.long_inputs import LONG_INPUTS, LONG_INPUTS_HELP, check_long_inputs, too_long
from nlgscore.core.options import FORWARD_OPTION, KERNEL_OPTION, Option
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.seq2seq.chunking import LongText, Plan, Side, prediction_windows
from nlgscore.seq2seq.doc_context import read_side
from nlgscore.seq2seq.prism_loading import load_prism

MODES = ("ref", "src")
# Logits are divided by the temperature in float32: below ~1e-3 the softmax of a 64k vocabulary
# under- or overflows (1e-40 gave NaN), above 1e3 every distribution is flat.
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 1e3
# Sentence rules for sources, whose language Prism is not told (sentencex's generic rules also
# end sentences at the CJK, Devanagari and Arabic stops).
SOURCE_SPLIT_LANG = "en"


class PrismResult(Result):
    """Prism scores: ``segment`` (Prism-ref or Prism-src per item, the primary column) and each
    direction's H and G as attributes and columns: ``H_cand_given_ref``, ``H_ref_given_cand``,
    ``G_cand_given_ref``, ``G_ref_given_cand`` for ``mode="ref"`` (``*_given_src`` for ``src``).

    Args:
        signature: the settings behind the numbers.
        values: the ``segment`` column and each direction's H and G.
        mode: ``"ref"`` or ``"src"``: which columns the result holds.
    """

    def __init__(self, signature: Signature, values: Dict[str, Any], mode: str) -> None:
        super().__init__(signature, values, "segment")
        self.mode = mode

    @property
    def segment(self) -> List[float]:
        """Prism-ref (``mode="ref"``) or Prism-src per item: the primary column, as ``scores``."""
        return self.scores

    def __getattr__(self, name: str) -> List[float]:
        values = self.__dict__.get("_values", {})
        if name.startswith(("H_", "G_")) and name in values:
            return values[name].tolist()
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (columns: {', '.join(values)})")


SRC_COLUMNS = ("segment", "H_cand_given_src", "G_cand_given_src")  # the columns of mode src


def _mode(call: Call) -> str:
    """The Prism mode a call scores in: ``"src"`` with sources, else ``"ref"``."""
    return "src" if "sources" in call.needs else "ref"


def _check_temperature(temperature: Any) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise ArgumentTypeError(f"temperature must be a number, got {type(temperature).__name__}")
    if not math.isfinite(temperature) or not MIN_TEMPERATURE <= temperature <= MAX_TEMPERATURE:
        raise ArgumentError(
            f"temperature must be a finite number between {MIN_TEMPERATURE:g} and {MAX_TEMPERATURE:g}, got {temperature!r} "
            "(a smaller one overflows the float32 logits into NaN)"
        )
    return float(temperature)


class PrismScorer(Scorer):
    """Prism-ref / Prism-src with a (converted) Prism checkpoint.

    The segment score is ``H(y|x)``, the mean natural-log probability of the target's tokens when
    the model force-decodes it from the other text: ``Prism-ref = ½ H(cand|ref) + ½ H(ref|cand)``,
    ``Prism-src = H(cand|src)``, the numbers of the original ``prism.py`` with the m39v1 weights.
    Several references per candidate are scored one by one and averaged (``multiref:mean``).
    ``nlgscore.load("prism:ref|src[:CHECKPOINT][:LANG]", **options)`` builds the same scorer.

    Args:
        checkpoint: a folder or Hub id of a Prism model in the port's layout or a stock M2M100
            folder (see :mod:`nlgscore.seq2seq.prism_loading`); None: the m39v1 weights
            (``dariast/prism`` at a pinned revision).
        lang: the language of the candidates (and references), whose tag is force-decoded; one
            of the 39 languages of m39v1 for the default checkpoint.
        temperature: the softmax temperature (between 1e-3 and 1e3).
        mode: ``"ref"`` (Prism-ref) or ``"src"`` (Prism-src, quality estimation) for
            :meth:`compute`; None: whichever of references and sources a call gives.
        revision: the checkpoint's Hub revision (a commit, tag or branch).
        long_inputs: texts over the model's positions: ``"auto"`` scores them in sentence chunks
            (``result.windows`` counts the chunk pairs per item), ``"truncate"`` cuts them as the
            original does (one warning per call), ``"error"`` refuses them, naming the item.
            Within the limit the three give identical numbers.
        kernel: the CPU linear kernel, ``"onednn"`` or ``"mkl"``; ``"auto"``: what
            ``NLGSCORE_ONEDNN`` says. Recorded in the signature.
        forward: ``"tokens"`` (packed tokens) or ``"padded"``; ``"auto"``: what
            ``NLGSCORE_TOKEN_FORWARD`` says. Recorded in the signature.
        **runtime_options: the run-time options every scorer takes: ``device``, ``dtype``,
            ``batch_size`` (sentences per batch), ``max_tokens`` (padded tokens per batch; a call
            may override both), ``progress``, ``accelerator``, ``shard`` (or a ready ``runtime``).

    Raises:
        ArgumentError: a ``mode`` other than ``"ref"``/``"src"``, a temperature out of range, or
            a language the default checkpoint cannot score (before its 3 GB of weights load).
        ArgumentTypeError: ``lang`` is not a language code.
        ModelNotAvailableError: the checkpoint is neither cached nor downloadable.

    Example:
        >>> scorer = PrismScorer("tests/golden/tiny-prism", lang="en")
        >>> result = scorer.compute(["The cat sat."], references=["A cat was sitting."])
        >>> result.primary, str(result.signature).startswith("nlgscore:prism|")
        ('segment', True)
    """

    name = "prism"
    multiref = "mean"
    columns = ("segment", "H_cand_given_ref", "H_ref_given_cand", "G_cand_given_ref", "G_ref_given_cand")  # mode ref
    budget_family = "seq2seq"
    takes_context = True  # nlgscore.seq2seq.doc_context
    option_table = (
        Option("checkpoint", "str", "a converted Prism folder or Hub id (default: m39v1, dariast/prism)"),
        Option("lang", "str", "language of the candidates (its tag is force-decoded)"),
        Option("temperature", "float", "softmax temperature"),
        Option(
            "mode", "choice", "ref (Prism-ref) or src (Prism-src, QE); default: whichever input is given", choices=MODES
        ),
        Option("revision", "str", "the checkpoint's Hub revision"),
        Option("long_inputs", "choice", LONG_INPUTS_HELP, choices=LONG_INPUTS),
        KERNEL_OPTION,
        FORWARD_OPTION,
    )

    def __init__(
        self,
        checkpoint: Optional[str] = None,
        lang: str = "en",
        temperature: float = 1.0,
        mode: Optional[str] = None,
        revision: Optional[str] = None,
        long_inputs: str = "auto",
        kernel: str = "auto",
        forward: str = "auto",
        **runtime_options: Any,
    ) -> None:
        self.temperature = _check_temperature(temperature)
        self.long_inputs = check_long_inputs(long_inputs)
        check_kernel(kernel)  # a bad kernel= or forward= fails before 3 GB of weights load
        check_forward(forward)
        if mode is not None and mode not in MODES:
            raise ArgumentError(f"mode must be 'ref', 'src' or None, got {mode!r}")
        if not isinstance(lang, str):
            raise ArgumentTypeError(f"lang must be a language code such as 'en', got {type(lang).__name__}")
        if checkpoint is None and lang not in table("prism")["languages"]:
            # Fail before loading 3 GB of weights the language cannot be scored with.
            raise ArgumentError(
                f"lang {lang!r} is not one of the 39 languages of Prism m39v1: {', '.join(table('prism')['languages'])}"
            )
        self.mode = mode
        self.needs = ("sources",) if mode == "src" else ("references",)
        self.lang = lang
        super().__init__(**runtime_options)
        runtime = self.runtime
        self._loaded = load_prism(
            checkpoint,
            revision=revision,
            device=runtime.device,
            dtype=runtime.dtype,
            progress=runtime.progress,
            kernel=kernel,
        )
        self.runtime = runtime.settled(self._loaded.dtype)
        self.tokenizer = self._loaded.tokenizer
        self.lang_id = self.tokenizer.lang_id(lang)  # unknown language: ValueError naming lang
        from nlgscore.seq2seq.likelihood import scorer_token_forward

        self.token_forward = scorer_token_forward(self._loaded.model, forward, self._loaded.name)

    @property
    def kernel(self) -> Optional[str]:
        """The CPU linear kernel the model runs (``"onednn"``/``"mkl"``, its ``kernel=`` as the
        load resolved it; the signature's ``kernel`` field); None off CPU."""
        return model_kernel(self._loaded.model) if self.device.type == "cpu" else None

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        mode = self.mode or "auto"
        if call is not None:
            mode = _mode(call)
        return dict(
            model=self._loaded.name,
            revision=self._loaded.revision,
            lang=self.lang,
            mode=mode,
            T=self.temperature,
            seg="avg_log_prob",  # H (mean over target tokens after the tag, EOS included), not G
            sys="mean",
            log="e",
            dtype=self._loaded.dtype,
            **kernel_field(self.device, self._loaded.dtype, self._loaded.model),
            long_inputs=self.long_inputs,
            **({"forward": "tokens"} if self.token_forward else {}),
        )

    def score(
        self,
        cands: Sequence[str],
        refs: Optional[Sequence] = None,
        srcs: Optional[Sequence[str]] = None,
        *,
        context: int = 0,
        doc_ids: Optional[Sequence[Any]] = None,
    ) -> PrismResult:
        """The historical call: Prism-ref with ``refs`` or Prism-src with ``srcs`` (exactly one);
        same numbers as :meth:`compute`.

        Args:
            cands: the candidates.
            refs: one reference per candidate, or several (``[[str]]``): Prism-ref.
            srcs: one source per candidate: Prism-src.
            context: read each sentence after the previous ``context`` sentences of its document.
            doc_ids: each item's document, with ``context``.

        Returns:
            The result, ``segment`` its primary column.

        Raises:
            ArgumentError: both or neither of ``refs`` and ``srcs``.
        """
        if (refs is None) == (srcs is None):
            raise ArgumentError("pass exactly one of refs= (Prism-ref) or srcs= (Prism-src)")
        names = ("cands", "refs", "srcs")
        return self._run(
            cands,
            refs,
            srcs,
            names=names,
            mode="ref" if refs is not None else "src",
            input_names=names,  # type: ignore[return-value]
            context=context,
            doc_ids=doc_ids,
        )

    def _call_needs(self, references: Any, sources: Any, options: Dict[str, Any]) -> Tuple[str, ...]:
        """``mode`` (of the call, else of the scorer) if set, else whichever input is given."""
        mode = options.get("mode") or self.mode
        if mode is None:
            if (references is None) == (sources is None):
                raise ArgumentError(
                    "pass exactly one of references (Prism-ref) or sources (Prism-src), or set mode='ref'/'src'"
                )
            mode = "ref" if references is not None else "src"
        return ("references",) if mode == "ref" else ("sources",)

    def _pairs(self, items: List[Item], call: Call) -> List[Tuple[Any, Any]]:
        """The (source, target) texts scored for ``items``: per item one (``src``) or two (``ref``);
        a text read after its document context is a :data:`~nlgscore.seq2seq.doc_context.ContextText`."""

        def side(text: Optional[str], context: Tuple[str, ...]) -> Any:
            # the side the mode reads is given: make_call refused a call without it
            return (context, text) if context else text

        ctx = [item.context for item in items]
        if _mode(call) == "src":
            return [
                (side(i.source, c.source if c else ()), side(i.prediction, c.prediction if c else ()))
                for i, c in zip(items, ctx)
            ]
        pairs = [
            (side(i.reference, c.reference if c else ()), side(i.prediction, c.prediction if c else ()))
            for i, c in zip(items, ctx)
        ]
        return pairs + [(cand, ref) for ref, cand in pairs]

    def _prepare(self, call: Call, items: List[Item]) -> Call:
        """With ``long_inputs="error"``: refuse an over-long text, naming it, before any scoring."""
        if self.long_inputs == "error" and self.tokenizer.max_positions is not None:
            names = dict(zip(INPUT_NAMES, call.options.get("input_names", INPUT_NAMES)))
            limit = self.tokenizer.max_positions
            named = [
                (f"{names['predictions']}[{i}]", text, limit - 2, "target side")
                for i, text in enumerate(call.predictions)
            ]
            if call.sources is not None:
                named += [
                    (f"{names['sources']}[{i}]", text, limit - 1, "source side") for i, text in enumerate(call.sources)
                ]
            if call.references is not None:  # a reference is a target too (Prism-ref scores both directions)
                named += [
                    (
                        f"{names['references']}[{i}]" + (f"[{j}]" if len(refs) > 1 else ""),
                        text,
                        limit - 2,
                        "target side",
                    )
                    for i, refs in enumerate(call.references)
                    for j, text in enumerate(refs)
                ]
            lengths = dict(zip(*_distinct_lengths(self.tokenizer, [text for _, text, _, _ in named])))
            for name, text, most, what in named:
                if lengths[text] > most:
                    raise too_long(
                        name,
                        lengths[text],
                        most,
                        f"{self._loaded.name} on the {what} ({limit} positions with the special tokens)",
                    )
        call.options["_windows"] = {}
        return call

    def _score_items(self, items: List[Item], call: Call) -> Dict[str, np.ndarray]:
        """Per item: the segment score and each direction's H and G."""
        # One call for both directions (Prism-ref): the engine batches and de-duplicates them together.
        h, g, windows = self._directions(self._pairs(items, call), call)
        call.options.setdefault("_windows", {}).update(self._item_windows(items, call, windows))
        h_arr, g_arr = np.asarray(h, dtype=np.float64), np.asarray(g, dtype=np.float64)
        if _mode(call) == "src":
            return {"segment": h_arr, "H_cand_given_src": h_arr, "G_cand_given_src": g_arr}
        n = len(items)
        return {
            "segment": 0.5 * h_arr[:n] + 0.5 * h_arr[n:],
            "H_cand_given_ref": h_arr[:n],
            "H_ref_given_cand": h_arr[n:],
            "G_cand_given_ref": g_arr[:n],
            "G_ref_given_cand": g_arr[n:],
        }

    def _empty_columns(self, call: Call) -> Dict[str, np.ndarray]:
        names = SRC_COLUMNS if _mode(call) == "src" else self.columns
        return {name: np.zeros(0) for name in names}

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> PrismResult:
        result = PrismResult(self.make_signature(call), columns, _mode(call))
        result.windows = prediction_windows(call, lambda items: self._item_windows(items, call))
        return result

    def _item_windows(self, items: List[Item], call: Call, windows: Optional[List[int]] = None) -> Dict[Item, int]:
        """Per item, the most (chunk, piece) pairs one of its directions is scored in; ``windows``
        are its pairs' (planned here, without scoring, when not given)."""
        if windows is None:
            if self.long_inputs != "auto":
                return dict.fromkeys(items, 1)
            windows = self._plan(self._pairs(items, call), _mode(call))[0].windows
        n = len(items)
        return dict(
            zip(items, windows[:n] if len(windows) == n else [max(a, b) for a, b in zip(windows[:n], windows[n:])])
        )

    def _plan(self, pairs: List[Tuple[Any, Any]], mode: str) -> Tuple[Plan, int, List[int]]:
        """The id pairs to score for ``pairs`` (text pairs), how many were cut (``truncate``), and
        per pair the first target position its score counts."""
        tok = self.tokenizer
        texts = sorted({text for pair in pairs for side in pair for text in _texts(side)})
        ids = dict(zip(texts, tok.encode(texts)))
        limit = tok.max_positions
        encoder = Side((), (tok.eos_id,), None if limit is None else limit - 1)
        target = Side((self.lang_id,), (tok.eos_id,), None if limit is None else limit - 2)
        plan, cut = Plan(encoder, target), 0
        long_texts: Dict[Tuple[str, str], Any] = {}
        scored_from: List[int] = []
        source_lang = self.lang if mode == "ref" else SOURCE_SPLIT_LANG
        for source, tgt in pairs:
            source_text, target_text = _texts(source)[-1], _texts(tgt)[-1]
            if (
                (isinstance(source, tuple) or isinstance(tgt, tuple))
                and encoder.fits(len(ids[source_text]))
                and target.fits(len(ids[target_text]))
            ):
                src_ids, _ = read_side(source, ids, tok.eos_id, encoder.fits)  # document context: what fits of it
                tgt_ids, start = read_side(tgt, ids, tok.eos_id, target.fits)
                plan.add(tok.source(src_ids)[0], tok.target(tgt_ids, self.lang)[0])
                scored_from.append(1 + start)
                continue
            source, tgt = source_text, target_text
            scored_from.append(1)
            if self.long_inputs == "auto" and not (encoder.fits(len(ids[source])) and target.fits(len(ids[tgt]))):
                plan.add_long(
                    *(
                        self._long_text(long_texts, text, lang)
                        for text, lang in ((source, source_lang), (tgt, self.lang))
                    )
                )
                continue
            source_ids, cut_source = tok.source(ids[source])
            target_ids, cut_target = tok.target(ids[tgt], self.lang)
            plan.add(source_ids, target_ids)
            cut += cut_source or cut_target
        return plan, cut, scored_from

    def _long_text(self, cache: Dict[Tuple[str, str], LongText], text: str, lang: str) -> LongText:
        if (text, lang) not in cache:
            cache[(text, lang)] = LongText(text, *self.tokenizer.encode_with_offsets(text), lang)
        return cache[(text, lang)]

    def _directions(self, pairs: List[Tuple[str, str]], call: Call) -> Tuple[List[float], List[float], List[int]]:
        """H and G of target given source for each ``(source, target)`` pair, in input order, and
        the (chunk, piece) pairs each was scored in."""
        plan, cut, starts = self._plan(pairs, _mode(call))
        if cut:
            warnings.warn(
                f"{cut} of {len(pairs)} Prism input pairs are longer than the model's {self.tokenizer.max_positions} "
                "positions and were truncated (the end of the text is not scored)",
                stacklevel=9,  # the caller of score()/compute() (through the Scorer template and shard)
            )
        if not pairs:
            return [], [], []
        logprobs = plan.assemble(self._logprobs(plan.sources, plan.targets, call), _counted)
        # Position 0 is the force-decoded language tag: not part of the score (original prism.py);
        # with document context, neither are the context's tokens.
        return (
            [float(np.mean(lp[a:])) for lp, a in zip(logprobs, starts)],
            [float(np.sum(lp[a:])) for lp, a in zip(logprobs, starts)],
            plan.windows,
        )

    def _logprobs(self, sources: List[List[int]], targets: List[List[int]], call: Call) -> List[np.ndarray]:
        from nlgscore.seq2seq.likelihood import target_logprobs

        return target_logprobs(
            self._loaded.model,
            sources,
            targets,
            pad_id=self.tokenizer.pad_id,
            decoder_start_id=self.tokenizer.eos_id,  # fairseq starts decoding from </s>
            temperature=self.temperature,
            max_tokens=call.runtime.max_tokens,
            max_batch_size=call.runtime.batch_size,
            progress=call.progress,
            token_forward=self.token_forward,
        )


def _texts(side: Any) -> Tuple[str, ...]:
    """Every text of one side of a pair: a text, or a text's context sentences and the text."""
    return (side,) if isinstance(side, str) else (*side[0], side[1])


def _counted(target_ids: List[int]) -> np.ndarray:
    """Which target positions Prism's score counts: all but the language tag."""
    weights = np.ones(len(target_ids))
    weights[0] = 0.0
    return weights


def _distinct_lengths(tokenizer: Any, texts: List[str]) -> Tuple[List[str], List[int]]:
    distinct = list(dict.fromkeys(texts))
    return distinct, [len(ids) for ids in tokenizer.encode(distinct)]
