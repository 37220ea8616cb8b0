"""BERTScore with the semantics of bert_score 0.3.13, planned for speed and bounded memory.

``BERTScorer`` plugs into the shared :class:`~nlgscore.core.base.Scorer` template: the base
checks and flattens the inputs, de-duplicates and shards the pairs and takes the **max per
column** (P, R and F1 separately, as bert_score does) over an item's references; this module
tokenises, weights (idf) and rescales, and :mod:`nlgscore.bertscore.pairs` encodes and matches.

>>> scorer = BERTScorer(model_type="minilm", num_layers=4)
>>> result = scorer.compute(["The cat sat on the mat."], ["A cat was sitting on the mat."])
>>> round(result.scores[0], 4), result.primary
(0.8905, 'f1')
>>> scorer.score(["The cat sat on the mat."], ["A cat was sitting on the mat."]).scores == result.scores
True
>>> str(result.signature).startswith("nlgscore:bertscore|model:all-MiniLM-L6-v2|")
True
>>> grid = scorer.matrix(["The cat sat on the mat.", "Stocks fell."], ["A cat was sitting on the mat.", "Markets dropped."])
>>> grid.shape, round(float(grid[0, 0]), 4)  # every prediction against every reference
((2, 2), 0.8905)
>>> scorer.telemetry()["padded_tokens"] >= scorer.telemetry()["tokens"] > 0  # encoded since load (a server's /metrics)
True
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.backend.batching import unique
from nlgscore.backend.kernel_label import kernel_field
from nlgscore.backend.tables import table
from nlgscore.bertscore.calibration_file import read_calibration
from nlgscore.bertscore.doc_context import scored_starts, side_keys
from nlgscore.bertscore.embedding import Encoder, describe_tokenizer
from nlgscore.bertscore.grid import TILE_TOKENS
from nlgscore.bertscore.idf import idf_table, sentences_digest, uniform_table
from nlgscore.bertscore.pairs import CHUNK_TOKENS_PER_BUDGET, PairModel, score_pairs, text_grid
from nlgscore.bertscore.rescale import find_baseline, rescale, select_layers
from nlgscore.bertscore.result import BERTScoreResult
from nlgscore.bertscore.windows import WindowPlan, check_stride
from nlgscore.core.base import Call, Item, Scorer
from nlgscore.core.cache import DEFAULT_CACHE_BYTES, TextCache
from nlgscore.core.inputs import check_text, check_texts
from nlgscore.core.long_inputs import (
    DEFAULT_LONG_INPUTS,
    LONG_INPUTS,
    LONG_INPUTS_HELP,
    check_long_inputs,
    name_text,
    too_long,
    windows_per_prediction,
)
from nlgscore.core.options import FORWARD_OPTION, KERNEL_OPTION, Option
from nlgscore.core.runtime import CALL_RUNTIME_OPTIONS, dtype_name
from nlgscore.errors import ArgumentError, ArgumentTypeError

__all__ = ["BERTScorer", "BERTScoreResult", "default_layer", "default_model"]


def default_model(lang: Optional[str]) -> str:
    """bert_score's language default: en → roberta-large, zh → bert-base-chinese, others → mBERT."""
    lang2model = table("bertscore_lang2model")
    return lang2model.get(lang.lower(), lang2model["default"]) if lang else lang2model["default"]


def default_layer(*names: str) -> Optional[int]:
    """The tuned layer of the first of ``names`` found in bertscore_model2layers."""
    layers = table("bertscore_model2layers")
    for name in names:
        if name in layers and not name.startswith("_"):
            return int(layers[name])
    return None


@dataclass
class _CallState:
    call: Call
    texts: List[str]
    ids: List[List[int]]
    index: Dict[Any, int]
    weights: Any
    starts: Dict[int, int]  # texts with context: the first scored token


class BERTScorer(Scorer):
    """BERTScore scorer: load once, score many times.

    The numbers are bert_score 0.3.13's (P, R and F1 of greedy cosine matching of contextual
    token embeddings; the max per column over an item's references), computed in batches planned
    by ``max_tokens`` (padded tokens per encoder batch) and capped by ``batch_size`` if given.
    ``nlgscore.load("bertscore:MODEL:L<layer>", **options)`` builds the same scorer.

    Args:
        model_type: a Hub id, a local folder or a packaged alias (``minilm``: the English MiniLM
            shipped on PyPI); None: the default model of ``lang`` (English: ``roberta-large``).
        num_layers: the layer whose embeddings are matched; None: the model's tuned layer (or the
            ``calibration`` file's).
        lang: a language code: picks the default model and the rescale baseline; for a packaged
            alias it defaults to the alias's language. One of ``lang`` and ``model_type`` is needed.
        idf: weight tokens by idf; None (default) means "on if ``idf_sents`` is given". With
            ``idf=True`` and no ``idf_sents`` the idf comes from each call's references (a call
            with a single reference gets a degenerate idf, every token weighing 0, and warns).
        idf_sents: the texts idf is computed from (the paper's: the test set's references);
            switches idf on (``idf=False`` with ``idf_sents`` is an error: bert_score would
            silently ignore them).
        rescale_with_baseline: rescale P, R and F1 with the baseline of ``lang`` and the model
            (bert_score's files), so that scores spread over [0, 1].
        baseline_path: a baseline file of one's own, with ``rescale_with_baseline``.
        all_layers: score with every layer of the model: each column gets one row per layer.
        max_length: tokens per window; None: the model's limit.
        revision: the model's Hub revision (a commit, tag or branch); not with a packaged alias,
            whose files come from a PyPI package.
        cache_references: keep the embeddings of reference texts across calls (an evaluation
            set scored after every training epoch is encoded once), the least recently used
            dropped first, so a long-lived process plateaus.
        reference_cache_size: the most texts the embedding cache keeps.
        cache_candidates: keep candidate embeddings across calls too (the same text-keyed cache:
            a text's embedding does not depend on the side it is on).
        long_inputs: what happens to a text longer than the model's window: ``"auto"`` encodes it
            in overlapping windows, each token taking the embedding of the window where it has
            the most context (matching and idf then run over the whole text; ``result.windows``
            counts the windows); ``"truncate"`` cuts at the limit as bert_score does; ``"error"``
            refuses the input, naming it. Within the limit the three give bit-identical scores.
        window_stride: content tokens between windows (``long_inputs="auto"``); None: half a window.
        calibration: a file written by ``nlgscore calibrate MODEL --data FOLDER``: its layer is
            the default ``num_layers`` and its baseline the one ``rescale_with_baseline`` uses
            (unless ``baseline_path`` is given).
        reference_cache_bytes: the most bytes the embedding cache keeps (512 MiB).
        kernel: the CPU linear kernel, ``"onednn"`` or ``"mkl"``; ``"auto"``: what
            ``NLGSCORE_ONEDNN`` says, else the CPU's rule. It moves the last bits and is recorded
            in the signature (``kernel:``); the ``kernel`` property is the one the load resolved.
        forward: ``"tokens"`` runs a BERT-family encoder on packed tokens (attention per
            sequence), ``"padded"`` in batches of one padded length; ``"auto"``: what
            ``NLGSCORE_TOKEN_FORWARD`` says. Recorded in the signature (``forward:tokens``).
        **runtime_options: the run-time options every scorer takes: ``device``, ``dtype``,
            ``batch_size``, ``max_tokens``, ``progress``, ``accelerator``, ``shard`` (or a ready
            ``runtime``).

    Raises:
        ArgumentError: neither ``lang`` nor ``model_type``, ``idf=False`` with ``idf_sents``,
            ``revision`` with a packaged alias, ``baseline_path`` without rescaling,
            ``window_stride`` without ``long_inputs="auto"``, or a calibration file made for
            another model.
        ModelNotAvailableError: the model is neither cached nor downloadable.

    Example:
        >>> scorer = BERTScorer(model_type="minilm", num_layers=4)
        >>> result = scorer.compute(["The cat sat on the mat."], ["A cat was sitting on the mat."])
        >>> round(result.scores[0], 4), result.primary
        (0.8905, 'f1')
    """

    name = "bertscore"
    multiref = "max"
    columns = ("precision", "recall", "f1")
    # A pair's score is a cheap function of the two texts' embeddings (a utility matrix is one
    # encoding pass plus matmuls), so callers may put several small matrices in one call.
    pairs_from_embeddings = True
    # capability flag read by integrations (never the name): takes cache_references/cache_candidates
    caches_embeddings = True
    # Only _prepare tokenizes; scoring embeds token ids: a scheduler may prepare the next call
    # while the model runs this one.
    prepares_apart = True
    takes_context = True  # nlgscore.bertscore.doc_context
    option_table = (
        Option("model_type", "str", "model id, folder or alias (minilm); default: by lang (en: roberta-large)"),
        Option("num_layers", "int", "the layer whose embeddings are matched (default: the model's tuned layer)"),
        Option("lang", "str", "language code: picks the default model and the rescale baseline"),
        Option("idf", "bool", "idf weights (from idf_sents, else from each call's references)"),
        Option("idf_sents", "texts", "the texts idf is computed from (the test set's references); switches idf on"),
        Option("rescale_with_baseline", "bool", "rescale with the baseline of lang and model (bert_score's files)"),
        Option("baseline_path", "str", "a baseline file of one's own (with rescale_with_baseline)"),
        Option("all_layers", "bool", "score with every layer (one row per layer)"),
        Option("max_length", "int", "tokens per window (default: the model's)"),
        Option("revision", "str", "the model's Hub revision (a commit, tag or branch)"),
        Option("cache_references", "bool", "keep reference embeddings across calls"),
        Option("reference_cache_size", "int", "most texts the embedding cache keeps"),
        Option("cache_candidates", "bool", "keep candidate embeddings across calls too"),
        Option("long_inputs", "choice", LONG_INPUTS_HELP, choices=LONG_INPUTS),
        Option("window_stride", "int", "content tokens between windows (long_inputs=auto; default half a window)"),
        Option("calibration", "str", "a file of nlgscore calibrate: its layer and baseline"),
        Option("reference_cache_bytes", "int", "most bytes the embedding cache keeps (536870912: 512 MiB)"),
        KERNEL_OPTION,
        FORWARD_OPTION,
    )

    def __init__(
        self,
        model_type: Optional[str] = None,
        num_layers: Optional[int] = None,
        lang: Optional[str] = None,
        idf: Optional[bool] = None,
        idf_sents: Optional[Sequence[str]] = None,
        rescale_with_baseline: bool = False,
        baseline_path: Optional[str] = None,
        all_layers: bool = False,
        max_length: Optional[int] = None,
        revision: Optional[str] = None,
        cache_references: bool = False,
        reference_cache_size: int = 100_000,
        cache_candidates: bool = False,
        long_inputs: str = DEFAULT_LONG_INPUTS,
        window_stride: Optional[int] = None,
        calibration: Optional[str] = None,
        reference_cache_bytes: int = DEFAULT_CACHE_BYTES,
        kernel: str = "auto",
        forward: str = "auto",
        **runtime_options: Any,
    ) -> None:
        long_inputs = check_long_inputs(long_inputs)
        calibrated = read_calibration(calibration) if calibration is not None else None
        if lang is not None and not isinstance(lang, str):
            raise ArgumentTypeError(f"lang must be a language code string, got {type(lang).__name__}")
        if model_type is None:
            if lang is None:
                raise ArgumentError("either lang or model_type must be given (e.g. lang='en' or model_type='minilm')")
            model_type = default_model(lang)
        if idf is False and idf_sents is not None:
            raise ArgumentError("idf_sents given with idf=False: pass idf=True (or leave idf unset) to use idf_sents")
        if revision is not None and isinstance(model_type, str) and model_type in _aliases():
            raise ArgumentError(
                f"revision= cannot be used with the packaged alias {model_type!r} "
                "(its files come from a PyPI package); pass a Hub id instead"
            )
        super().__init__(**runtime_options)  # device, dtype, batch_size, max_tokens, progress, accelerator, runtime
        runtime = self.runtime
        self._ref_cache = TextCache(
            reference_cache_size, "reference_cache_size", reference_cache_bytes, "reference_cache_bytes"
        )
        self.lang = lang.lower() if lang else None
        self.encoder = Encoder.load(
            model_type, num_layers=num_layers, all_layers=all_layers, device=runtime.device, dtype=runtime.dtype,
            max_length=max_length, revision=revision,
            default_layers=(
                None if num_layers is not None else calibrated.layer if calibrated is not None else self._default_layer(model_type)
            ),
            progress=runtime.progress, kernel=kernel, forward=forward,
        )  # fmt: skip
        self.runtime = runtime.settled(self.encoder.dtype)
        self.model_type = self.encoder.resolved.name
        if calibrated is not None and calibrated.model != self.model_type:
            raise ArgumentError(
                f"calibration {calibrated.path} was made for model {calibrated.model!r}, not {self.model_type!r}"
            )
        self.calibration = calibrated
        self.long_inputs = long_inputs
        self.window_stride = check_stride(window_stride, self.encoder.room)
        if window_stride is not None and long_inputs != "auto":
            raise ArgumentError(f"window_stride is only used with long_inputs='auto', got long_inputs={long_inputs!r}")
        self.num_layers = self.encoder.num_layers
        self.all_layers = all_layers
        self.idf = bool(idf) or idf_sents is not None
        self._idf_table = None  # fixed by idf_sents / compute_idf
        self._last_idf = None  # idf of the last call's references (idf=True without idf_sents)
        self._idf_source = "no"
        if idf_sents is not None:
            self.compute_idf(idf_sents)
        self._uniform = uniform_table(self.encoder.vocab_size, self.encoder.zero_weight_ids)
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline, self.baseline_source = None, "no"
        if rescale_with_baseline:
            if calibrated is not None and baseline_path is None:
                table_, source = calibrated.baseline, calibrated.source
            else:
                table_, source = find_baseline(
                    self.lang or _alias_lang(self.model_type), self.model_type, baseline_path
                )
            # all_layers scores every layer of the model (as bert_score does), whatever num_layers is
            self.baseline = select_layers(
                table_, self.encoder.total_layers if all_layers else self.num_layers, all_layers, source
            )
            self.baseline_source = source
        elif baseline_path is not None:
            raise ArgumentError("baseline_path is only used with rescale_with_baseline=True")
        self.cache_references, self.cache_candidates = cache_references, cache_candidates
        self.reference_cache_size = self._ref_cache.size

    @property
    def kernel(self) -> Optional[str]:
        """The CPU linear kernel the encoder runs (``"onednn"``/``"mkl"``, its ``kernel=`` as the
        load resolved it; the signature's ``kernel`` field); None off CPU."""
        return self.encoder.kernel

    @property
    def call_dependent(self) -> bool:  # type: ignore[override]
        """idf taken from each call's references (``idf=True`` without ``idf_sents``)."""
        return bool(self.idf) and self._idf_table is None

    def _layer_count(self) -> int:  # per score: all hidden states (embeddings included) with all_layers, else one
        return self.encoder.total_layers + 1 if self.all_layers else 1

    def _pair_model(self) -> PairModel:
        return PairModel(
            self.encoder,
            self._layer_count(),
            self.all_layers,
            self._ref_cache,
            self.cache_references,
            self.cache_candidates,
            self._window_plan,
        )

    def telemetry(self) -> Dict[str, int]:
        """Counters since load, for a server's ``/metrics``: ``tokens`` encoded, ``padded_tokens``
        (the encoder's batches, real and padding), the text cache's ``cache_hits``/``cache_misses``,
        and ``front_tokenized``: texts whose ids a server's HTTP worker computed."""
        encoder, cache = self.encoder, self._ref_cache
        return {
            "tokens": encoder.tokens,
            "padded_tokens": encoder.padded_tokens,
            "cache_hits": cache.hits,
            "cache_misses": cache.misses,
            "front_tokenized": encoder.front_tokenized,
        }

    def front_tokenizer(self) -> Optional[Dict[str, Any]]:
        """The encoder's tokenizer as a server's HTTP workers rebuild it, so that they send token
        ids instead of texts (see :meth:`Scorer.front_tokenizer <nlgscore.core.base.Scorer.front_tokenizer>`)."""
        return self.encoder.front_tokenizer()

    def clear_reference_cache(self) -> None:
        """Forget the cached embeddings (references and candidates; e.g. when the evaluation set changes)."""
        self._ref_cache.clear()

    @staticmethod
    def _default_layer(model_type: str) -> Optional[int]:
        from nlgscore.backend.models import resolve

        aliases = _aliases()
        names = [model_type]
        if model_type in aliases:
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
        """Fix the idf weights to those of ``sents`` (the ``idf_sents`` argument does this too).

        Args:
            sents: the texts idf is computed from (the test set's references); idf is on after.
        """
        sents = check_texts("idf_sents", sents)
        ids, _ = self.encoder.tokenize(sents, truncate=self.long_inputs == "truncate")
        self._idf_table = idf_table(ids, self.encoder.vocab_size)
        self._idf_source = f"custom:{sentences_digest(sents)}"
        self.idf = True

    # ------------------------------------------------------------ signature
    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        idf = self._idf_source if self.idf and self._idf_source != "no" else ("refs" if self.idf else "no")
        return dict(
            model=self.model_type,
            revision=self.encoder.resolved.revision,
            L="all" if self.all_layers else self.num_layers,
            idf=idf,
            rescale=self.baseline_source,
            tok=describe_tokenizer(self.encoder),
            max_length=self.encoder.max_length,
            dtype=dtype_name(self.encoder.dtype),
            **kernel_field(self.encoder.device, self.encoder.dtype, self.encoder.model),
            long_inputs=self.long_inputs,
            **({"window_stride": self.window_stride} if self.long_inputs == "auto" else {}),
            **({"forward": "tokens"} if self.encoder.tokens_forward is not None else {}),
        )

    # --------------------------------------------------------------- scoring
    def score(
        self, cands: Sequence[str], refs: Sequence, *, context: int = 0, doc_ids: Optional[Sequence[Any]] = None
    ) -> BERTScoreResult:
        """bert_score's ``BERTScorer.score(cands, refs)``: :meth:`compute` with bert_score's
        argument names; same numbers.

        Args:
            cands: the candidates.
            refs: one reference per candidate (``[str]``) or several (ragged ``[[str]]``).
            context: read each sentence after the previous ``context`` sentences of its document.
            doc_ids: each item's document, with ``context``.

        Returns:
            The result, ``f1`` its primary column.
        """
        if refs is None:  # bert_score's signature has no default for refs
            raise ArgumentTypeError("refs must be a list of strings or a list of lists of strings, got NoneType")
        return self._run(cands, refs, None, names=("cands", "refs", "srcs"), context=context, doc_ids=doc_ids)  # type: ignore[return-value]

    def _prepare(self, call: Call, items: List[Item]) -> _CallState:
        hyps, refs = side_keys(items, self.encoder.tokenizer.sep_token if call.context else None)
        keys, inverse = unique(hyps + refs)
        texts = [text for text, _ in keys]
        ids, truncated = self._tokenize(texts, call.predictions, call.references, call.token_ids)
        ref_u = inverse[len(hyps) :]
        starts = scored_starts(self.encoder, keys, ids, self.long_inputs == "truncate") if call.context else {}
        ref_ids = (
            [ids[u] for u in ref_u]
            if not (starts and self.call_dependent)
            else self._tokenize([i.reference or "" for i in items], [], None, call.token_ids)[0]
        )
        weights = self._weights_for_call(ref_ids)
        self._warn_inputs(ids, inverse[: len(hyps)], ref_u, truncated, len(call.predictions))
        return _CallState(call, texts, ids, {key: u for u, key in enumerate(keys)}, weights, starts)

    def _tokenize(
        self, texts: List[str], predictions: List[str], references: Any, given: Any = None
    ) -> Tuple[List[List[int]], int]:
        """Token ids of ``texts`` under ``long_inputs``: truncated, whole, or an error naming the
        first over-long input (found among the call's ``predictions``/``references``); ``given``:
        content ids a server's worker computed (:meth:`front_tokenizer`)."""
        ids, over = self.encoder.tokenize(texts, truncate=self.long_inputs == "truncate", given=given)
        if over and self.long_inputs == "error":
            first = next(u for u, x in enumerate(ids) if len(x) > self.encoder.max_length)
            where = name_text(texts[first], predictions, references)
            raise too_long(where, len(ids[first]), self.encoder.max_length, self.model_type)
        return ids, (over if self.long_inputs == "truncate" else 0)

    def _window_plan(self, ids: List[int]) -> Optional[WindowPlan]:
        """The windows of an over-long text's token ids (None within the limit)."""
        return (
            None
            if len(ids) <= self.encoder.max_length
            else WindowPlan(
                ids,
                len(self.encoder.prefix),
                len(self.encoder.suffix),
                self.encoder.room,
                self.window_stride,
                self.encoder.causal,
            )
        )

    def _embed_text(self, ids: List[int]) -> Any:
        """One text's embeddings ``([layers,] tokens, D)``, windowed if it is over the limit."""
        if (plan := self._window_plan(ids)) is None:
            return self.encoder.embed([ids])[0]
        return plan.assemble([self.encoder.embed([w])[0] for w in plan.windows])

    def _window_count(self, ids: List[int]) -> int:
        return 1 if (plan := self._window_plan(ids)) is None else len(plan)

    def _score_items(self, items: List[Item], state: _CallState) -> Dict[str, np.ndarray]:
        index, call = state.index, state.call
        hyps, refs = side_keys(items, self.encoder.tokenizer.sep_token if call.context else None)
        pairs = [(index[h], index[r]) for h, r in zip(hyps, refs)]
        values = score_pairs(
            self._pair_model(), pairs, state.texts, state.ids, state.weights, call.runtime, call.progress, state.starts
        )
        counts = {u: self._window_count(state.ids[u]) for u in {u for pair in pairs for u in pair}}
        windows = np.array([max(counts[h], counts[r]) for h, r in pairs], dtype=np.float64)
        # (pairs, layers) each; "windows" is aggregated by max over references like the scores, then popped by _finish
        return {"precision": values[:, 0], "recall": values[:, 1], "f1": values[:, 2], "windows": windows}

    def _empty_columns(self, call: Call) -> Dict[str, np.ndarray]:
        columns: Dict[str, np.ndarray] = {
            n: np.zeros((0, self._layer_count())) for n in self.columns
        }  # (pairs, layers)
        columns["windows"] = np.zeros(0)  # what _score_items adds for _finish
        return columns

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> BERTScoreResult:
        columns = dict(columns)
        windows = windows_per_prediction(columns.pop("windows").tolist())
        scores = np.stack([columns["precision"], columns["recall"], columns["f1"]]).transpose(
            0, 2, 1
        )  # (P/R/F, layers, items)
        if self.baseline is not None:
            scores = rescale(
                scores,
                np.asarray(self.baseline).T[:, :, None]
                if self.all_layers
                else np.asarray(self.baseline)[:, None, None],
            )
        if not self.all_layers:
            scores = scores[:, 0, :]
        values = {"precision": scores[0], "recall": scores[1], "f1": scores[2]}
        layer = self.num_layers if self.all_layers else None
        result = BERTScoreResult(
            self.make_signature(call), values, layer=layer, source=(self, call.predictions, call.references)
        )
        result.windows = windows
        return result

    def _matrix_columns(
        self, predictions: List[str], references: List[str], call_options: Dict[str, Any], source: Optional[str] = None
    ) -> Optional[Tuple[Dict[str, np.ndarray], str]]:
        """:meth:`Scorer.matrix` without building the list of pairs: the distinct texts are
        embedded once and matched in tiles (:func:`nlgscore.bertscore.pairs.text_grid`), so a
        64 x 64 matrix costs one encoding pass and a few matmuls. None (the template's chunked
        product) for all layers, per-call idf, other call options, or distinct texts of more
        tokens than one chunk of the pair path holds. ``source`` is always None (BERTScore scores
        with references only).
        """
        if self.all_layers or (self.idf and self._idf_table is None) or set(call_options) - set(CALL_RUNTIME_OPTIONS):
            return None
        runtime = self.runtime.replace(**call_options)
        texts, inverse = unique(predictions + references)
        ids, truncated = self._tokenize(texts, predictions, [[r] for r in references])
        if (
            sum(map(len, ids)) > runtime.max_tokens * CHUNK_TOKENS_PER_BUDGET
        ):  # the pair path's bound on texts held at once
            return None
        if (
            max(map(len, ids)) > TILE_TOKENS
        ):  # a tile would hold a very long text's similarities to a whole tile: pair path
            return None
        hyp_of, ref_of = inverse[: len(predictions)], inverse[len(predictions) :]
        self._warn_inputs(ids, hyp_of, ref_of, truncated, len(predictions))
        prf = text_grid(
            self._pair_model(), runtime, texts, ids, self._weights_for_call([ids[u] for u in ref_of]), hyp_of, ref_of
        )
        if self.baseline is not None:
            prf = rescale(prf, np.asarray(self.baseline)[:, None, None])
        return {"precision": prf[0], "recall": prf[1], "f1": prf[2]}, "f1"

    def _weights_for_call(self, ref_ids: List[List[int]]):
        if not self.idf:
            return self._uniform
        if self._idf_table is not None:
            return self._idf_table
        self._last_idf = idf_table(ref_ids, self.encoder.vocab_size) if ref_ids else self._uniform
        return self._last_idf

    def _warn_inputs(
        self, ids: List[List[int]], hyp_u: List[int], ref_u: List[int], truncated: int, items: int
    ) -> None:
        """One warning per call for empty inputs (scored 0), truncated ones, and a degenerate idf."""
        n = self.encoder.n_special
        empty_hyps = sum(len(ids[u]) == n for u in hyp_u)
        empty_refs = sum(len(ids[u]) == n for u in ref_u)
        if empty_hyps or empty_refs:
            warnings.warn(
                f"BERTScore: {empty_hyps} empty candidate(s) and {empty_refs} empty reference(s); their pairs score 0",
                stacklevel=5,
            )
        if truncated:
            warnings.warn(
                f"BERTScore: {truncated} input(s) longer than {self.encoder.max_length} tokens were truncated",
                stacklevel=5,
            )
        if self.idf and self._idf_table is None and len(ref_u) == 1:
            warnings.warn(
                "BERTScore: idf=True computed from a single reference is degenerate (every token gets the same "
                "weight log(2/2) = 0, so the pair scores 0); pass idf_sents or score more references",
                stacklevel=5,
            )

    # ------------------------------------------------------------- heat map
    def similarity(self, cand: str, ref: str) -> Tuple[List[str], List[str], np.ndarray, np.ndarray, np.ndarray]:
        """Tokens of both sides, their cosine-similarity matrix and token weights (for heat maps).

        The layer is ``num_layers`` (also with ``all_layers``); weights are the idf of
        ``idf_sents``/the last scored references when idf is on, else 1 (0 for CLS/SEP).

        Args:
            cand: one candidate text.
            ref: one reference text.

        Returns:
            The candidate's tokens, the reference's tokens, the similarity matrix (candidate
            tokens x reference tokens), and the candidate's and the reference's token weights.
        """
        import torch

        cand, ref = check_text("cand", cand), check_text("ref", ref)
        (hyp_ids, ref_ids), _ = self._tokenize([cand, ref], [cand], [[ref]])
        with torch.inference_mode():
            emb = [self._embed_text(x) for x in (hyp_ids, ref_ids)]
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


def _aliases() -> Dict[str, Any]:
    return {name: entry for name, entry in table("aliases").items() if not name.startswith("_")}


def _alias_lang(model_name: str) -> Optional[str]:
    """The language of a packaged alias's model (``"en"`` for the embedded MiniLM), else None."""
    return next((entry.get("lang") for entry in _aliases().values() if entry["name"] == model_name), None)
