"""Prism (Thompson & Post, EMNLP 2020): MT evaluation by zero-shot paraphrasing.

A multilingual NMT model force-decodes one text given another; the segment score is
``H(y|x)``, the mean natural-log probability of the target tokens after the language tag
(``</s>`` included), and ``G(y|x)`` their sum. ``Prism-ref = ½ H(cand|ref) + ½ H(ref|cand)``,
``Prism-src = H(cand|src)``; the system score is the mean of the segment scores. Tokens follow the
original fairseq layout (see :mod:`nlgscore.seq2seq.prism_tokenizer`), so scores match the original
``prism.py`` with the converted m39v1 weights.

Several references per candidate (``[[ref1, ref2], ...]``): each reference is scored like a single
one and the item's Prism-ref (and each direction's H and G) is the **mean over its references**;
the signature then says ``multiref:mean``. The original Prism takes one reference only.

>>> scorer = PrismScorer("tests/golden/tiny-prism", lang="en")
>>> result = scorer.score(["The cat sat."], refs=["A cat was sitting."])
>>> len(result), sorted(result.columns())[:2], result.system == result.segment[0]
(1, ['G_cand_given_ref', 'G_ref_given_cand'], True)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.core.base import Scorer
from nlgscore.core.distributed import shard
from nlgscore.core.inputs import check_references, check_same_length, check_texts, flatten_references
from nlgscore.seq2seq.prism_loading import load_prism
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature
from nlgscore.core.tables import table

MODES = ("ref", "src")


@dataclass
class PrismResult(Result):
    """Prism scores: ``segment`` (Prism-ref or Prism-src per item) and each direction's H and G.

    ``columns()`` holds ``segment`` and, for ``mode="ref"``, ``H_cand_given_ref``,
    ``H_ref_given_cand``, ``G_cand_given_ref``, ``G_ref_given_cand`` (``*_given_src`` for ``src``).
    """

    COLUMNS: ClassVar[tuple] = ("segment",)
    primary: ClassVar[str] = "segment"

    segment: List[float] = field(default_factory=list)
    directions: Dict[str, List[float]] = field(default_factory=dict)
    mode: str = "ref"

    def columns(self) -> Dict[str, List[float]]:
        return {"segment": list(self.segment), **{name: list(values) for name, values in self.directions.items()}}

    @property
    def system(self) -> float:
        """Mean of the segment scores (NaN for no segments)."""
        return float(np.mean(self.segment)) if self.segment else math.nan


def _check_temperature(temperature: Any) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise TypeError(f"temperature must be a number, got {type(temperature).__name__}")
    if not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a finite number > 0, got {temperature}")
    return float(temperature)


class PrismScorer(Scorer):
    """Prism-ref / Prism-src with a (converted) Prism checkpoint.

    ``checkpoint``: folder or Hub id of a Prism model in the port's layout or a stock M2M100 folder
    (see :mod:`nlgscore.seq2seq.prism_loading`; default: the m39v1 weights, ``dariast/prism`` at a pinned
    revision). ``mode``: ``"ref"``/``"src"`` for
    :meth:`compute` (``None``: whichever input is given). ``lang``: language of the candidates
    (and references), whose tag is force-decoded. ``batch_size`` caps sentences per batch,
    ``max_tokens`` the padded tokens per batch.
    """

    name = "prism"
    needs = ("references",)

    def __init__(
        self,
        checkpoint: Optional[str] = None,
        lang: str = "en",
        temperature: float = 1.0,
        mode: Optional[str] = None,
        device: Any = None,
        batch_size: Optional[int] = None,
        max_tokens: Optional[int] = None,
        dtype: Any = None,
        revision: Optional[str] = None,
        progress: bool = False,
        accelerator: Any = None,
    ) -> None:
        self.temperature = _check_temperature(temperature)
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be 'ref', 'src' or None, got {mode!r}")
        if not isinstance(lang, str):
            raise TypeError(f"lang must be a language code such as 'en', got {type(lang).__name__}")
        if checkpoint is None and lang not in table("prism")["languages"]:
            # Fail before loading 3 GB of weights the language cannot be scored with.
            raise ValueError(f"lang {lang!r} is not one of the 39 languages of Prism m39v1: {', '.join(table('prism')['languages'])}")
        for arg, value in (("batch_size", batch_size), ("max_tokens", max_tokens)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{arg} must be a positive integer or None, got {value!r}")
        self.mode = mode
        self.needs = (("sources",) if mode == "src" else ("references",))
        self.lang = lang
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.progress = progress
        self.accelerator = accelerator
        self._loaded = load_prism(checkpoint, revision=revision, device=device, dtype=dtype)
        self.tokenizer = self._loaded.tokenizer
        self.lang_id = self.tokenizer.lang_id(lang)  # unknown language: ValueError naming lang

    def _signature(self, mode: str, multiref: bool = False) -> Signature:
        fields: Dict[str, Any] = dict(
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
        if multiref:
            fields["multiref"] = "mean"
        return Signature("prism", **fields)

    @property
    def signature(self) -> Signature:
        return self._signature(self.mode or "auto")

    def score(self, cands: Sequence[str], refs: Optional[Sequence] = None, srcs: Optional[Sequence[str]] = None) -> PrismResult:
        """Prism-ref with ``refs`` or Prism-src with ``srcs`` (exactly one of them)."""
        if (refs is None) == (srcs is None):
            raise ValueError("pass exactly one of refs= (Prism-ref) or srcs= (Prism-src)")
        if refs is not None:
            return self._prism_ref(cands, refs, ("cands", "refs"))
        return self._prism_src(cands, srcs, ("cands", "srcs"))

    def compute(self, predictions: Sequence[str], references: Optional[Sequence] = None, sources: Optional[Sequence[str]] = None) -> PrismResult:
        """Follow ``mode`` if set, else score against whichever of references/sources is given."""
        mode = self.mode
        if mode is None:
            if (references is None) == (sources is None):
                raise ValueError("pass exactly one of references (Prism-ref) or sources (Prism-src), or set mode='ref'/'src'")
            mode = "ref" if references is not None else "src"
        names = ("predictions", "references" if mode == "ref" else "sources")
        if mode == "ref":
            if references is None:
                raise ValueError("references are required for Prism-ref (mode='ref')")
            return self._prism_ref(predictions, references, names)
        if sources is None:
            raise ValueError("sources are required for Prism-src (mode='src')")
        return self._prism_src(predictions, sources, names)

    def _prism_src(self, cands: Sequence[str], srcs: Sequence[str], names: Tuple[str, str]) -> PrismResult:
        cands = check_texts(names[0], cands)
        srcs = check_texts(names[1], srcs)
        check_same_length(**{names[0]: cands, names[1]: srcs})
        h, g = self._directions(list(zip(srcs, cands)))
        return PrismResult(signature=self._signature("src"), segment=h, directions={"H_cand_given_src": h, "G_cand_given_src": g}, mode="src")

    def _prism_ref(self, cands: Sequence[str], refs: Sequence, names: Tuple[str, str]) -> PrismResult:
        cands = check_texts(names[0], cands)
        nested = check_references(names[1], refs, n=len(cands))
        flat, owner = flatten_references(nested)
        pairs = [(ref, cands[i]) for ref, i in zip(flat, owner)]
        # One call for both directions: the engine batches and de-duplicates them together.
        h, g = self._directions(pairs + [(cand, ref) for ref, cand in pairs])
        n = len(pairs)
        per_ref = {"H_cand_given_ref": h[:n], "H_ref_given_cand": h[n:], "G_cand_given_ref": g[:n], "G_ref_given_cand": g[n:]}
        directions = {name: _mean_by_owner(values, owner, len(cands)) for name, values in per_ref.items()}
        segment = [0.5 * a + 0.5 * b for a, b in zip(h[:n], h[n:])]
        return PrismResult(
            signature=self._signature("ref", multiref=len(flat) > len(cands)),
            segment=_mean_by_owner(segment, owner, len(cands)),
            directions=directions,
            mode="ref",
        )

    def _directions(self, pairs: List[Tuple[str, str]]) -> Tuple[List[float], List[float]]:
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
                stacklevel=4,  # the caller of score()/compute()
            )
        scored = shard(len(pairs), lambda idx: self._score(idx, sources, targets), self.accelerator)
        return [float(h) for h, _ in scored], [float(g) for _, g in scored]

    def _score(self, indices: List[int], sources: List[List[int]], targets: List[List[int]]) -> List[Tuple[float, float]]:
        from nlgscore.seq2seq.likelihood import target_logprobs

        options: Dict[str, Any] = {}
        if self.max_tokens is not None:
            options["max_tokens"] = self.max_tokens
        logprobs = target_logprobs(
            self._loaded.model,
            [sources[i] for i in indices],
            [targets[i] for i in indices],
            pad_id=self.tokenizer.pad_id,
            decoder_start_id=self.tokenizer.eos_id,  # fairseq starts decoding from </s>
            temperature=self.temperature,
            max_batch_size=self.batch_size,
            progress=self.progress,
            desc="prism",
            **options,
        )
        # Position 0 is the force-decoded language tag: not part of the score (original prism.py).
        return [(float(np.mean(lp[1:])), float(np.sum(lp[1:]))) for lp in logprobs]


def _mean_by_owner(values: Sequence[float], owner: Sequence[int], n: int) -> List[float]:
    """Average the values that belong to each of ``n`` items (one value each when single-reference)."""
    sums = [0.0] * n
    counts = [0] * n
    for value, i in zip(values, owner):
        sums[i] += value
        counts[i] += 1
    return [total / count for total, count in zip(sums, counts)]
