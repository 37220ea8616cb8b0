"""chrF, BLEU and ROUGE as scorers: sacreBLEU's and rouge-score's numbers per item, with signatures.

* ``chrf``: sacreBLEU sentence chrF (character 6-grams, beta 2; ``beta``, ``char_order`` and
  ``word_order`` are sacreBLEU's: ``beta=3`` is WMT18's chrF, ``word_order=2`` chrF++); corpus
  statistic: corpus chrF.
* ``bleu``: sacreBLEU ``sentence_bleu`` (13a, exp smoothing, effective order), WMT's segment BLEU
  since WMT21 (mt-metrics-eval's ``BLEU``); ``tokenize`` is any of sacreBLEU's built-in
  tokenisers (``intl``: mteval-v13a's ``--international-tokenization``, WMT18's BLEU; ``zh``:
  Chinese characters split, WMT18's Chinese preprocessing; ``char``, ``none``) and ``lowercase``
  its ``-lc``; ``bleu:moses`` (alias ``sentbleu``): the BARTScore paper's WMT19 sentBLEU,
  Moses-tokenised text (sacremoses, English, XML escaping) and sacreBLEU ``corpus_bleu([hyp],
  [[ref]])`` of that one sentence. Corpus statistic: corpus BLEU (13a, or the ``tokenize`` given).
* ``ter``: sacreBLEU TER (tercom's algorithm; lowercased unless ``case_sensitive``, as WMT18's
  baseline), an error rate: lower is better (``lower_is_better``, which meta-evaluation reads);
  corpus statistic: corpus TER (the edits summed over the average reference lengths).
* ``rouge:1|2|L`` (aliases ``rouge1``, ``rouge2``, ``rougeL``): rouge-score's F-measure with
  Porter stemming (SummEval's and BARTScore's summarisation baselines).

Several references per prediction: chrF and BLEU score them jointly, as sacreBLEU does
(``sentence_chrf(h, [r1, r2])``, ``sentence_bleu(h, [r1, r2])``; signature ``nrefs:N`` and
``multiref:joint``); ``multiref="max"`` takes the best single-reference score instead (the signature
says ``multiref:max``). Items may have different numbers of references: a missing reference is what
sacreBLEU writes as ``None`` in a reference stream (``nrefs:var``). ROUGE takes the best reference
(rouge-score's ``score_multi``). The system value (``Result.score``) of chrF and BLEU is sacreBLEU's
corpus statistic over all references (:mod:`nlgscore.strings.result`); ROUGE's is the mean.
sacrebleu, sacremoses and rouge-score come with ``pip install 'nlgscore[meta]'``.

>>> ChrFScorer().compute(["the cat sat"], ["the cat sat"]).scores
[100.0]
>>> round(BLEUScorer().compute(["the cat sat on a mat"], ["the cat sat on the mat"]).scores[0], 4)
53.7285
>>> round(RougeScorer("rouge1").compute(["the cat sat"], ["the cat"]).scores[0], 3)
0.8
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.backend.extras import require
from nlgscore.core.base import INPUT_NAMES, Call, Item, Scorer
from nlgscore.core.inputs import check_references, check_texts
from nlgscore.core.options import Option
from nlgscore.core.result import Result
from nlgscore.core.runtime import MODEL_FREE
from nlgscore.errors import ArgumentError
from nlgscore.strings.result import StringResult, nrefs_field

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
# sacreBLEU's built-in tokenisers that need no extra package, then the BARTScore paper's Moses path.
SACREBLEU_TOKENIZE = ("13a", "intl", "zh", "char", "none")
BLEU_TOKENIZE = (*SACREBLEU_TOKENIZE, "moses")
JOINT = "joint"  # sacreBLEU's rule: all of an item's references at once
SACREBLEU_MULTIREF = (JOINT, "max")


def _sacrebleu(what: str) -> Any:
    return require("sacrebleu.metrics", "meta", what)


def _sacrebleu_fields(
    metric: Any, signature_type: Callable[[Dict[str, Any]], Any], num_refs: int = 1
) -> Dict[str, str]:
    """sacreBLEU's own signature of ``metric`` for ``num_refs`` references per item (-1: a
    varying number, ``nrefs:var``), as signature fields (its ``version`` field is sacreBLEU's:
    ``sacrebleu``)."""
    text = signature_type(dict(vars(metric), num_refs=num_refs)).format()
    fields = dict(part.split(":", 1) for part in text.split("|"))
    fields["sacrebleu"] = fields.pop("version")
    return fields


def reference_streams(references: List[List[str]]) -> List[List[Optional[str]]]:
    """Per-prediction reference lists as sacreBLEU's reference streams: stream ``k`` holds every
    item's ``k``-th reference, ``None`` where an item has fewer (sacreBLEU skips those).

    >>> reference_streams([["a", "b"], ["c"]])
    [['a', 'c'], ['b', None]]
    """
    width = max((len(refs) for refs in references), default=1)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


class StringScorer(Scorer):
    """One ``score`` per item from a function of the prediction and its references (no model).

    The packages a scorer imports to score (:meth:`_packages`) are imported when it is built, so a
    missing extra is one :class:`~nlgscore.backend.extras.MissingExtraError` from
    ``nlgscore.load(...)``, before any input is read, rather than a failure at the first compute.
    """

    columns = ("score",)
    multiref: ClassVar[str] = "max"
    budget_family = MODEL_FREE  # no model: resolving the run time imports no torch

    def __init__(self, **runtime_options: Any) -> None:
        super().__init__(**runtime_options)
        self._pair: Optional[Callable[[str, List[str]], float]] = None

    def _packages(self) -> Tuple[Tuple[str, str], ...]:
        """``(module, purpose)`` of every optional package scoring imports (all in the ``meta`` extra)."""
        return ()

    def _require_packages(self) -> None:
        """Import :meth:`_packages` now (called at the end of the constructor, once options are set)."""
        for module, purpose in self._packages():
            require(module, "meta", purpose)

    def _make_pair(self) -> Callable[[str, List[str]], float]:
        """The sentence score of a prediction against a list of references."""
        raise NotImplementedError

    def _score_items(self, items: List[Item], state: Any) -> Dict[str, np.ndarray]:
        if self._pair is None:  # built on first use: a pickled or copied scorer rebuilds it
            self._pair = self._make_pair()
        pair = self._pair
        values = [
            pair(item.prediction, list(item.reference) if isinstance(item.reference, tuple) else [item.reference or ""])
            for item in items
        ]
        return {"score": np.array(values, dtype=np.float64)}

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        return Result(self.make_signature(call), columns, "score")

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["_pair"] = None  # a tokenizer or a closure: rebuilt where it lands
        return state


def _check_multiref(rule: Any) -> str:
    """``rule`` if it is one of sacreBLEU's multi-reference rules (the scorer's or a call's)."""
    if rule not in SACREBLEU_MULTIREF:
        raise ArgumentError(f"multiref must be one of {', '.join(SACREBLEU_MULTIREF)}, got {rule!r}")
    return rule


MULTIREF_ROW = Option(
    "multiref",
    "choice",
    "joint (sacreBLEU's statistics over all of an item's references) or max (the best single reference)",
    choices=SACREBLEU_MULTIREF,
)


class SacreBLEUScorer(StringScorer):
    """A sacreBLEU metric: an item's references scored jointly (``multiref="joint"``, sacreBLEU's
    sentence score) or the best single-reference score (``multiref="max"``); the system value is
    sacreBLEU's corpus statistic (:class:`~nlgscore.strings.result.StringResult`)."""

    multiref: ClassVar[str] = JOINT
    lower_is_better: ClassVar[bool] = False  # an error rate (TER) says True: meta-evaluation turns its scores
    statistics_dtype: ClassVar[Any] = np.int64  # sacreBLEU's sufficient statistics: counts

    def __init__(self, multiref: str = JOINT, **runtime_options: Any) -> None:
        _check_multiref(multiref)
        super().__init__(**runtime_options)
        self.multiref = multiref  # type: ignore[misc]

    def _make_call(
        self,
        predictions: Any,
        references: Any,
        sources: Any,
        names: Tuple[str, str, str] = INPUT_NAMES,
        multiref: Optional[str] = None,
        runtime: Any = None,
        context: Any = 0,
        doc_ids: Any = None,
        **options: Any,
    ) -> Call:
        rule = _check_multiref(multiref or self.multiref)
        call = super()._make_call(
            predictions, references, sources, names, "max", runtime, context=context, doc_ids=doc_ids, **options
        )
        if rule == JOINT:  # one item per prediction, holding all its references
            call.multiref = JOINT
            call.items = [
                # the joint rule's item holds every reference (sacreBLEU's statistics are joint)
                Item(prediction, tuple(refs))  # type: ignore[arg-type]
                for prediction, refs in zip(call.predictions, call.references or [], strict=True)
            ]
            call.owner = list(range(call.size))
        return call

    def corpus_metric(self) -> Any:
        """The sacreBLEU metric whose corpus statistic (and paired tests) is the system score."""
        raise NotImplementedError

    def _make_pair(self) -> Callable[[str, List[str]], float]:
        """sacreBLEU's sentence score of the corpus metric (BLEU overrides it: effective order)."""
        metric = self.corpus_metric()
        return lambda prediction, references: metric.sentence_score(prediction, references).score

    def corpus_from_statistics(self, statistics: List[Any]) -> float:
        """sacreBLEU's corpus score from summed sufficient statistics."""
        return float(self.corpus_metric()._compute_score_from_stats(statistics).score)

    def corpus_score(self, predictions: Sequence[str], references: Sequence[Any]) -> float:
        """sacreBLEU's corpus statistic of ``predictions`` against ``references`` (one str or a
        list of str per prediction; a shorter list is a missing reference): WMT's system score."""
        preds = check_texts("predictions", predictions)
        refs = check_references("references", references, len(preds))
        return float(self.corpus_metric().corpus_score(preds, reference_streams(refs)).score)

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        refs = call.references or []
        statistics = np.zeros((0, 0), dtype=self.statistics_dtype)
        if refs:  # sacreBLEU's per-segment statistics, summed by StringResult.score
            statistics = np.array(
                self.corpus_metric()._extract_corpus_statistics(call.predictions, reference_streams(refs)),
                dtype=self.statistics_dtype,
            )
        return StringResult(
            self.make_signature(call), columns, "score", statistics, self.corpus_from_statistics, [len(r) for r in refs]
        )

    def _num_refs(self, call: Optional[Call]) -> int:
        return nrefs_field([len(r) for r in call.references]) if call is not None and call.references else 1


def _check_int(option: str, value: Any, least: int) -> int:
    """``value`` if it is an integer >= ``least`` (not a bool); else an error naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ArgumentError(f"{option} must be an integer >= {least}, got {value!r}")
    return value


def _check_bool(option: str, value: Any) -> bool:
    """``value`` if it is a bool; else an error naming ``option`` (a string "false" is not False)."""
    if not isinstance(value, bool):
        raise ArgumentError(f"{option} must be True or False, got {value!r}")
    return value


class ChrFScorer(SacreBLEUScorer):
    """sacreBLEU's sentence chrF per item (defaults: character 6-grams, beta 2; ``word_order=2`` is
    chrF++, ``beta=3`` WMT18's chrF); system value and ``corpus_score``: corpus chrF.

    Args:
        char_order: character n-gram order (sacreBLEU's ``char_order``).
        word_order: word n-gram order; 2 is chrF++.
        beta: weight of recall over precision; 3 is WMT18's chrF (``chrF++.py -b 3``). The
            signature records it (``beta:3``), which sacreBLEU's own chrF signature leaves out.
        multiref: ``"joint"`` (sacreBLEU's statistics over an item's references) or ``"max"``.
        **runtime_options: the run-time options every scorer takes.

    Raises:
        ArgumentError: an order or beta that is not an integer in range, an unknown ``multiref``.

    Example:
        >>> ChrFScorer().corpus_score(["the cat"], ["the cat"]), ChrFScorer(word_order=2).signature["nw"]
        (100.0, '2')
        >>> ChrFScorer(beta=3).signature["beta"]
        '3'
    """

    name = "chrf"
    option_table = (
        Option("char_order", "int", "character n-gram order"),
        Option("word_order", "int", "word n-gram order (2 is chrF++)"),
        Option("beta", "int", "weight of recall over precision (3 is WMT18's chrF)"),
        MULTIREF_ROW,
    )

    def __init__(
        self, char_order: int = 6, word_order: int = 0, beta: int = 2, multiref: str = JOINT, **runtime_options: Any
    ) -> None:
        _check_int("char_order", char_order, 1)
        _check_int("word_order", word_order, 0)
        _check_int("beta", beta, 1)
        super().__init__(multiref, **runtime_options)
        self.char_order, self.word_order, self.beta = char_order, word_order, beta
        self._require_packages()

    def _packages(self) -> Tuple[Tuple[str, str], ...]:
        return (("sacrebleu.metrics", "chrF"),)

    def corpus_metric(self) -> Any:
        return _sacrebleu("chrF").CHRF(char_order=self.char_order, word_order=self.word_order, beta=self.beta)

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        from sacrebleu.metrics.chrf import CHRFSignature

        fields = _sacrebleu_fields(self.corpus_metric(), CHRFSignature, self._num_refs(call))
        # sacreBLEU's chrF signature leaves beta out (its default 2 is assumed); chrF with beta 3
        # (WMT18's) gives other numbers, so the signature says which, after the n-gram orders
        ordered = list(fields.items())
        at = next((i + 1 for i, (key, _) in enumerate(ordered) if key == "nw"), len(ordered))
        return dict([*ordered[:at], ("beta", str(self.beta)), *ordered[at:]])


class BLEUScorer(SacreBLEUScorer):
    """sacreBLEU BLEU per item: ``tokenize="13a"`` is ``sentence_bleu``, any other of sacreBLEU's
    tokenisers (``intl``, ``zh``, ``char``, ``none``) is ``sentence_bleu(..., tokenize=...)``;
    ``"moses"`` BARTScore's sentBLEU. ``lowercase`` is sacreBLEU's. System value and
    ``corpus_score``: corpus BLEU (exp smoothing) of the text with the same tokeniser (13a for
    ``moses``, whose sentence scores are of Moses-tokenised text).

    Args:
        tokenize: ``"13a"``, ``"intl"``, ``"zh"``, ``"char"``, ``"none"`` (sacreBLEU's) or ``"moses"``.
        lowercase: lowercase both sides (sacreBLEU's ``-lc``); the signature says ``case:lc``.
        multiref: ``"joint"`` (sacreBLEU's statistics over an item's references) or ``"max"``.
        **runtime_options: the run-time options every scorer takes.

    Raises:
        ArgumentError: an unknown tokeniser or ``multiref``, a ``lowercase`` that is not a bool.

    Example:
        >>> round(BLEUScorer(tokenize="moses").compute(["The cat sat on the mat."], ["The cat sat on the mat."]).scores[0], 6)
        100.0
        >>> BLEUScorer(tokenize="intl", lowercase=True).signature["tok"], BLEUScorer(lowercase=True).signature["case"]
        ('intl', 'lc')
    """

    name = "bleu"
    option_table = (
        Option(
            "tokenize",
            "choice",
            "13a (sacreBLEU's default), intl (WMT18's BLEU), zh (Chinese characters split), char, none, "
            "or moses (the BARTScore paper's sentBLEU)",
            choices=BLEU_TOKENIZE,
        ),
        Option("lowercase", "bool", "lowercase both sides before matching (sacreBLEU's -lc)"),
        MULTIREF_ROW,
    )

    def __init__(
        self, tokenize: str = "13a", lowercase: bool = False, multiref: str = JOINT, **runtime_options: Any
    ) -> None:
        if tokenize not in BLEU_TOKENIZE:
            raise ArgumentError(f"tokenize must be one of {', '.join(BLEU_TOKENIZE)}, got {tokenize!r}")
        _check_bool("lowercase", lowercase)
        super().__init__(multiref, **runtime_options)
        self.tokenize, self.lowercase = tokenize, lowercase
        self._require_packages()

    def _packages(self) -> Tuple[Tuple[str, str], ...]:
        bleu = ("sacrebleu.metrics", "BLEU")
        return (bleu,) if self.tokenize != "moses" else (bleu, ("sacremoses", "the Moses-tokenised BLEU"))

    def _sentence_metric(self) -> Any:
        """The metric of one sentence: what ``sacrebleu.sentence_bleu`` builds (effective order)."""
        return _sacrebleu("BLEU").BLEU(effective_order=True, tokenize=self.tokenize, lowercase=self.lowercase)

    def _make_pair(self) -> Callable[[str, List[str]], float]:
        if self.tokenize != "moses":
            metric = self._sentence_metric()
            return lambda prediction, references: metric.sentence_score(prediction, references).score
        tokenizer = require("sacremoses", "meta", "the Moses-tokenised BLEU").MosesTokenizer(lang="en")
        tokenized: Dict[str, str] = {}

        def moses(text: str) -> str:
            if text not in tokenized:
                tokenized[text] = tokenizer.tokenize(text, return_str=True, escape=True)
            return tokenized[text]

        metric = self.corpus_metric()  # BLEU's corpus defaults on the one sentence (no effective order)
        return lambda prediction, references: (
            metric.corpus_score([moses(prediction)], [[moses(r)] for r in references]).score
        )

    def corpus_metric(self) -> Any:
        tokenize = "13a" if self.tokenize == "moses" else self.tokenize
        return _sacrebleu("BLEU").BLEU(tokenize=tokenize, lowercase=self.lowercase)

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        from sacrebleu.metrics.bleu import BLEUSignature

        num_refs = self._num_refs(call)
        if self.tokenize != "moses":
            return _sacrebleu_fields(self._sentence_metric(), BLEUSignature, num_refs)
        try:
            moses = version("sacremoses")
        except PackageNotFoundError:
            moses = "unknown"
        return {
            "pretok": "moses-en-escape",
            "sacremoses": moses,
            **_sacrebleu_fields(self.corpus_metric(), BLEUSignature, num_refs),
        }


class TERScorer(SacreBLEUScorer):
    """sacreBLEU's TER per item (tercom's shifts and edits over the reference length, x100); an
    item's references are scored jointly, as sacreBLEU does (the fewest edits over the average
    reference length). An error rate: lower is better, which :attr:`lower_is_better` says, so that
    meta-evaluation turns its scores before correlating. System value and ``corpus_score``:
    corpus TER. ``case_sensitive=False`` (sacreBLEU's default) lowercases both sides, as WMT18's
    TER baseline did; ``normalized``, ``no_punct`` and ``asian_support`` are sacreBLEU's.

    Args:
        case_sensitive: keep case (default: both sides lowercased, ``case:lc`` in the signature).
        normalized: tercom's normalisation and punctuation tokenisation (``-N``).
        no_punct: remove punctuation before scoring.
        asian_support: split Asian characters and punctuation (with ``normalized``).
        **runtime_options: the run-time options every scorer takes.

    Raises:
        ArgumentError: a setting that is not a bool.

    Example:
        >>> TERScorer().compute(["the cat sat"], ["the cat sat on the mat"]).scores
        [50.0]
        >>> TERScorer().signature["case"], TERScorer.lower_is_better
        ('lc', True)
    """

    name = "ter"
    lower_is_better = True
    statistics_dtype = np.float64  # the average reference length of several references is fractional
    option_table = (
        Option("case_sensitive", "bool", "keep case (default: both sides lowercased, as WMT18's TER)"),
        Option("normalized", "bool", "tercom's normalisation and tokenisation of punctuation (-N)"),
        Option("no_punct", "bool", "remove punctuation before scoring"),
        Option("asian_support", "bool", "split Asian characters and punctuation (with normalized)"),
    )

    def __init__(
        self,
        case_sensitive: bool = False,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        **runtime_options: Any,
    ) -> None:
        for option, value in (
            ("case_sensitive", case_sensitive),
            ("normalized", normalized),
            ("no_punct", no_punct),
            ("asian_support", asian_support),
        ):
            _check_bool(option, value)
        super().__init__(JOINT, **runtime_options)
        self.case_sensitive, self.normalized = case_sensitive, normalized
        self.no_punct, self.asian_support = no_punct, asian_support
        self._require_packages()

    def _packages(self) -> Tuple[Tuple[str, str], ...]:
        return (("sacrebleu.metrics", "TER"),)

    def corpus_metric(self) -> Any:
        return _sacrebleu("TER").TER(
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        from sacrebleu.metrics.ter import TERSignature

        return _sacrebleu_fields(self.corpus_metric(), TERSignature, self._num_refs(call))


class RougeScorer(StringScorer):
    """rouge-score's F-measure of ``rouge_type`` with Porter stemming; several references: the best.

    Args:
        rouge_type: ``"rouge1"`` (unigrams), ``"rouge2"`` (bigrams) or ``"rougeL"`` (the longest
            common subsequence), as rouge-score names them.
        **runtime_options: the run-time options every scorer takes.

    Raises:
        ArgumentError: an unknown ``rouge_type``.
        MissingExtraError: rouge-score is not installed (the ``meta`` extra).

    Example:
        >>> RougeScorer("rougeL").signature["rouge"]
        'rougeL'
        >>> RougeScorer("rouge1").compute(["the cat sat"], ["the cat sat down"]).scores
        [0.8571428571428571]
    """

    name = "rouge"
    option_table = (Option("rouge_type", "choice", "rouge1, rouge2 or rougeL", choices=ROUGE_TYPES),)

    def __init__(self, rouge_type: str = "rougeL", **runtime_options: Any) -> None:
        if rouge_type not in ROUGE_TYPES:
            raise ArgumentError(f"rouge_type must be one of {', '.join(ROUGE_TYPES)}, got {rouge_type!r}")
        super().__init__(**runtime_options)
        self.rouge_type = rouge_type
        self._require_packages()

    def _packages(self) -> Tuple[Tuple[str, str], ...]:
        return (("rouge_score.rouge_scorer", "ROUGE"),)

    def _make_pair(self) -> Callable[[str, List[str]], float]:
        module = require("rouge_score.rouge_scorer", "meta", "ROUGE")
        scorer, kind = module.RougeScorer([self.rouge_type], use_stemmer=True), self.rouge_type
        return lambda prediction, references: max(
            scorer.score(reference, prediction)[kind].fmeasure for reference in references
        )

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        try:
            package = version("rouge-score")
        except PackageNotFoundError:
            package = "unknown"
        return {"rouge": self.rouge_type, "stem": "porter", "value": "F", "rouge-score": package}
