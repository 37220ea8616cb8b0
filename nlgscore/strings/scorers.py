"""chrF, BLEU and ROUGE as scorers: sacreBLEU's and rouge-score's numbers per item, with signatures.

* ``chrf``: sacreBLEU sentence chrF (character 6-grams, beta 2); corpus statistic: corpus chrF.
* ``bleu``: sacreBLEU ``sentence_bleu`` (13a, exp smoothing, effective order), WMT's segment BLEU
  since WMT21 (mt-metrics-eval's ``BLEU``); ``bleu:moses`` (alias ``sentbleu``): the BARTScore
  paper's WMT19 sentBLEU, Moses-tokenised text (sacremoses, English, XML escaping) and sacreBLEU
  ``corpus_bleu([hyp], [[ref]])`` of that one sentence. Corpus statistic: corpus BLEU (13a).
* ``rouge:1|2|L`` (aliases ``rouge1``, ``rouge2``, ``rougeL``): rouge-score's F-measure with
  Porter stemming (SummEval's and BARTScore's summarisation baselines).

Each (prediction, reference) pair is scored on its own (sacreBLEU's multi-reference statistics are
not used): several references per prediction are combined by ``multiref`` ("max", as rouge-score's
``score_multi``). sacrebleu, sacremoses and rouge-score come with ``pip install 'nlgscore[meta]'``.

>>> ChrFScorer().compute(["the cat sat"], ["the cat sat"]).scores
[100.0]
>>> round(BLEUScorer().compute(["the cat sat on a mat"], ["the cat sat on the mat"]).scores[0], 4)
53.7285
>>> round(RougeScorer("rouge1").compute(["the cat sat"], ["the cat"]).scores[0], 3)
0.8
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence

import numpy as np

from nlgscore.core.base import Call, Item, Scorer
from nlgscore.errors import ArgumentError
from nlgscore.backend.extras import require
from nlgscore.core.result import Result

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
BLEU_TOKENIZE = ("13a", "moses")


def _sacrebleu(what: str) -> Any:
    return require("sacrebleu.metrics", "meta", what)


def _sacrebleu_fields(metric: Any, signature_type: Callable[[Dict[str, Any]], Any]) -> Dict[str, str]:
    """sacreBLEU's own signature of ``metric`` for one reference per item, as signature fields
    (its ``version`` field is sacreBLEU's: ``sacrebleu``)."""
    text = signature_type(dict(vars(metric), num_refs=1)).format()
    fields = dict(part.split(":", 1) for part in text.split("|"))
    fields["sacrebleu"] = fields.pop("version")
    return fields


class StringScorer(Scorer):
    """One ``score`` per item from a function of the prediction and one reference (no model)."""

    columns = ("score",)
    multiref: ClassVar[str] = "max"

    def __init__(self, **runtime_options: Any) -> None:
        super().__init__(**runtime_options)
        self._pair: Optional[Callable[[str, str], float]] = None

    def _make_pair(self) -> Callable[[str, str], float]:
        raise NotImplementedError

    def _score_items(self, items: List[Item], state: Any) -> Dict[str, np.ndarray]:
        if self._pair is None:  # built on first use: a pickled or copied scorer rebuilds it
            self._pair = self._make_pair()
        values = np.array([self._pair(item.prediction, item.reference) for item in items], dtype=np.float64)
        return {"score": values}

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        return Result(self.make_signature(call), columns, "score")

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["_pair"] = None  # a tokenizer or a closure: rebuilt where it lands
        return state


class ChrFScorer(StringScorer):
    """sacreBLEU's sentence chrF per item (defaults: character 6-grams, beta 2; ``word_order=2`` is
    chrF++); ``corpus_score``: corpus chrF.

    >>> ChrFScorer().corpus_score(["the cat"], ["the cat"]), ChrFScorer(word_order=2).signature["nw"]
    (100.0, '2')
    """

    name = "chrf"

    def __init__(self, char_order: int = 6, word_order: int = 0, **runtime_options: Any) -> None:
        for option, value in (("char_order", char_order), ("word_order", word_order)):
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if option == "char_order" else 0):
                raise ArgumentError(f"{option} must be an integer >= {1 if option == 'char_order' else 0}, got {value!r}")
        super().__init__(**runtime_options)
        self.char_order, self.word_order = char_order, word_order

    def _make_pair(self) -> Callable[[str, str], float]:
        metric = self.corpus_metric()
        return lambda prediction, reference: metric.sentence_score(prediction, [reference]).score

    def corpus_metric(self) -> Any:
        """The sacreBLEU metric whose corpus statistic (and paired tests) is chrF's system score."""
        return _sacrebleu("chrF").CHRF(char_order=self.char_order, word_order=self.word_order)

    def corpus_score(self, predictions: Sequence[str], references: Sequence[str]) -> float:
        """sacreBLEU's corpus chrF of ``predictions`` against one reference each (WMT's system chrF)."""
        return float(self.corpus_metric().corpus_score(list(predictions), [list(references)]).score)

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        from sacrebleu.metrics.chrf import CHRFSignature

        return _sacrebleu_fields(self.corpus_metric(), CHRFSignature)


class BLEUScorer(StringScorer):
    """sacreBLEU BLEU per item: ``tokenize="13a"`` is ``sentence_bleu``; ``"moses"`` BARTScore's sentBLEU.

    >>> round(BLEUScorer(tokenize="moses").compute(["The cat sat on the mat."], ["The cat sat on the mat."]).scores[0], 6)
    100.0
    """

    name = "bleu"

    def __init__(self, tokenize: str = "13a", **runtime_options: Any) -> None:
        if tokenize not in BLEU_TOKENIZE:
            raise ArgumentError(f"tokenize must be one of {', '.join(BLEU_TOKENIZE)}, got {tokenize!r}")
        super().__init__(**runtime_options)
        self.tokenize = tokenize

    def _make_pair(self) -> Callable[[str, str], float]:
        if self.tokenize == "13a":
            metric = _sacrebleu("BLEU").BLEU(effective_order=True)  # what sacrebleu.sentence_bleu builds
            return lambda prediction, reference: metric.sentence_score(prediction, [reference]).score
        tokenizer = require("sacremoses", "meta", "the Moses-tokenised BLEU").MosesTokenizer(lang="en")
        tokenized: Dict[str, str] = {}

        def moses(text: str) -> str:
            if text not in tokenized:
                tokenized[text] = tokenizer.tokenize(text, return_str=True, escape=True)
            return tokenized[text]

        metric = self.corpus_metric()  # BLEU's corpus defaults on the one sentence (no effective order)
        return lambda prediction, reference: metric.corpus_score([moses(prediction)], [[moses(reference)]]).score

    def corpus_metric(self) -> Any:
        """The sacreBLEU metric whose corpus statistic (and paired tests) is BLEU's system score."""
        return _sacrebleu("BLEU").BLEU()

    def corpus_score(self, predictions: Sequence[str], references: Sequence[str]) -> float:
        """sacreBLEU's corpus BLEU (13a, exp smoothing) of ``predictions``, one reference each."""
        return float(self.corpus_metric().corpus_score(list(predictions), [list(references)]).score)

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        from sacrebleu.metrics.bleu import BLEUSignature

        if self.tokenize == "13a":
            return _sacrebleu_fields(_sacrebleu("BLEU").BLEU(effective_order=True), BLEUSignature)
        try:
            moses = version("sacremoses")
        except PackageNotFoundError:
            moses = "unknown"
        return {"pretok": "moses-en-escape", "sacremoses": moses, **_sacrebleu_fields(self.corpus_metric(), BLEUSignature)}


class RougeScorer(StringScorer):
    """rouge-score's F-measure of ``rouge_type`` (``rouge1``, ``rouge2``, ``rougeL``) with Porter stemming.

    >>> RougeScorer("rougeL").signature["rouge"]
    'rougeL'
    """

    name = "rouge"

    def __init__(self, rouge_type: str = "rougeL", **runtime_options: Any) -> None:
        if rouge_type not in ROUGE_TYPES:
            raise ArgumentError(f"rouge_type must be one of {', '.join(ROUGE_TYPES)}, got {rouge_type!r}")
        super().__init__(**runtime_options)
        self.rouge_type = rouge_type

    def _make_pair(self) -> Callable[[str, str], float]:
        module = require("rouge_score.rouge_scorer", "meta", "the ROUGE metrics")
        scorer, kind = module.RougeScorer([self.rouge_type], use_stemmer=True), self.rouge_type
        return lambda prediction, reference: scorer.score(reference, prediction)[kind].fmeasure

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        try:
            package = version("rouge-score")
        except PackageNotFoundError:
            package = "unknown"
        return {"rouge": self.rouge_type, "stem": "porter", "value": "F", "rouge-score": package}
