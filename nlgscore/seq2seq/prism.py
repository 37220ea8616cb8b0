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

from nlgscore.core.base import Call, Item, Scorer
from nlgscore.core.errors import ArgumentError, ArgumentTypeError
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature
from nlgscore.core.tables import table
from nlgscore.seq2seq.prism_loading import load_prism

MODES = ("ref", "src")
# Logits are divided by the temperature in float32: below ~1e-3 the softmax of a 64k vocabulary
# under- or overflows (1e-40 gave NaN), above 1e3 every distribution is flat.
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 1e3


class PrismResult(Result):
    """Prism scores: ``segment`` (Prism-ref or Prism-src per item, the primary column) and each
    direction's H and G as attributes and columns: ``H_cand_given_ref``, ``H_ref_given_cand``,
    ``G_cand_given_ref``, ``G_ref_given_cand`` for ``mode="ref"`` (``*_given_src`` for ``src``).
    """

    def __init__(self, signature: Signature, values: Dict[str, Any], mode: str) -> None:
        super().__init__(signature, values, "segment")
        self.mode = mode

    @property
    def segment(self) -> List[float]:
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

    ``checkpoint``: folder or Hub id of a Prism model in the port's layout or a stock M2M100 folder
    (see :mod:`nlgscore.seq2seq.prism_loading`; default: the m39v1 weights, ``dariast/prism`` at a
    pinned revision). ``mode``: ``"ref"``/``"src"`` for :meth:`compute` (``None``: whichever input
    is given). ``lang``: language of the candidates (and references), whose tag is force-decoded.
    ``batch_size`` caps sentences per batch, ``max_tokens`` the padded tokens per batch (default
    from :func:`nlgscore.core.runtime.resolve_runtime`); a call can override both (``compute(..., batch_size=, max_tokens=)``).
    """

    name = "prism"
    multiref = "mean"
    columns = ("segment", "H_cand_given_ref", "H_ref_given_cand", "G_cand_given_ref", "G_ref_given_cand")  # mode ref
    budget_family = "seq2seq"

    def __init__(
        self,
        checkpoint: Optional[str] = None,
        lang: str = "en",
        temperature: float = 1.0,
        mode: Optional[str] = None,
        revision: Optional[str] = None,
        **runtime_options: Any,
    ) -> None:
        self.temperature = _check_temperature(temperature)
        if mode is not None and mode not in MODES:
            raise ArgumentError(f"mode must be 'ref', 'src' or None, got {mode!r}")
        if not isinstance(lang, str):
            raise ArgumentTypeError(f"lang must be a language code such as 'en', got {type(lang).__name__}")
        if checkpoint is None and lang not in table("prism")["languages"]:
            # Fail before loading 3 GB of weights the language cannot be scored with.
            raise ArgumentError(f"lang {lang!r} is not one of the 39 languages of Prism m39v1: {', '.join(table('prism')['languages'])}")
        self.mode = mode
        self.needs = ("sources",) if mode == "src" else ("references",)
        self.lang = lang
        super().__init__(**runtime_options)
        runtime = self.runtime
        self._loaded = load_prism(checkpoint, revision=revision, device=runtime.device, dtype=runtime.dtype, progress=runtime.progress)
        self.runtime = runtime.settled(self._loaded.dtype)
        self.tokenizer = self._loaded.tokenizer
        self.lang_id = self.tokenizer.lang_id(lang)  # unknown language: ValueError naming lang

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
        )

    def score(self, cands: Sequence[str], refs: Optional[Sequence] = None, srcs: Optional[Sequence[str]] = None) -> PrismResult:
        """The historical call: Prism-ref with ``refs`` or Prism-src with ``srcs`` (exactly one);
        same numbers as :meth:`compute`."""
        if (refs is None) == (srcs is None):
            raise ArgumentError("pass exactly one of refs= (Prism-ref) or srcs= (Prism-src)")
        return self._run(cands, refs, srcs, names=("cands", "refs", "srcs"), mode="ref" if refs is not None else "src")  # type: ignore[return-value]

    def _call_needs(self, references: Any, sources: Any, options: Dict[str, Any]) -> Tuple[str, ...]:
        """``mode`` (of the call, else of the scorer) if set, else whichever input is given."""
        mode = options.get("mode") or self.mode
        if mode is None:
            if (references is None) == (sources is None):
                raise ArgumentError("pass exactly one of references (Prism-ref) or sources (Prism-src), or set mode='ref'/'src'")
            mode = "ref" if references is not None else "src"
        return ("references",) if mode == "ref" else ("sources",)

    def _score_items(self, items: List[Item], call: Call) -> Dict[str, np.ndarray]:
        """Per item: the segment score and each direction's H and G."""
        if _mode(call) == "src":
            h, g = self._directions([(item.source, item.prediction) for item in items], call)
            return {"segment": np.asarray(h), "H_cand_given_src": np.asarray(h), "G_cand_given_src": np.asarray(g)}
        # One call for both directions: the engine batches and de-duplicates them together.
        pairs = [(item.reference, item.prediction) for item in items]
        h, g = self._directions(pairs + [(cand, ref) for ref, cand in pairs], call)
        n = len(pairs)
        h_arr, g_arr = np.asarray(h, dtype=np.float64), np.asarray(g, dtype=np.float64)
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
        return PrismResult(self.make_signature(call), columns, _mode(call))

    def _directions(self, pairs: List[Tuple[str, str]], call: Call) -> Tuple[List[float], List[float]]:
        """H and G of target given source for each ``(source, target)`` pair, in input order."""
        texts = sorted({text for pair in pairs for text in pair})
        ids = dict(zip(texts, self.tokenizer.encode(texts)))
        sources, targets, cut = [], [], 0
        for source, target in pairs:
            source_ids, cut_source = self.tokenizer.source(ids[source])
            target_ids, cut_target = self.tokenizer.target(ids[target], self.lang)
            sources.append(source_ids)
            targets.append(target_ids)
            cut += cut_source or cut_target
        if cut:
            warnings.warn(
                f"{cut} of {len(pairs)} Prism input pairs are longer than the model's {self.tokenizer.max_positions} "
                "positions and were truncated (the end of the text is not scored)",
                stacklevel=9,  # the caller of score()/compute() (through the Scorer template and shard)
            )
        if not pairs:
            return [], []
        return self._score(sources, targets, call)

    def _score(self, sources: List[List[int]], targets: List[List[int]], call: Call) -> Tuple[List[float], List[float]]:
        from nlgscore.seq2seq.likelihood import target_logprobs

        logprobs = target_logprobs(
            self._loaded.model,
            sources,
            targets,
            pad_id=self.tokenizer.pad_id,
            decoder_start_id=self.tokenizer.eos_id,  # fairseq starts decoding from </s>
            temperature=self.temperature,
            max_tokens=call.runtime.max_tokens,
            max_batch_size=call.runtime.batch_size,
            progress=call.progress,
        )
        # Position 0 is the force-decoded language tag: not part of the score (original prism.py).
        return [float(np.mean(lp[1:])) for lp in logprobs], [float(np.sum(lp[1:])) for lp in logprobs]
