"""String-matching baseline metrics for meta-evaluation: chrF, BLEU, sentBLEU, ROUGE-1/2/L.

Each baseline has a segment-level and a system-level definition, as the field uses them:

* ``chrf``: segment = sacreBLEU ``sentence_chrf`` (defaults: character 6-grams, beta 2);
  system = sacreBLEU ``corpus_chrf`` over the system's whole output (WMT's system baseline).
* ``bleu``: segment = ``sentbleu`` below in the WMT19/WMT21 and SummEval tasks (the BARTScore
  paper's numbers), ``sentence-bleu`` in the WMT22+ tasks (``mqm``: ``WMT22_SEGMENT``); system =
  sacreBLEU ``corpus_bleu`` (13a, exp smoothing), WMT's system-level BLEU.
* ``sentence-bleu``: sacreBLEU's ``sentence_bleu`` (13a tokenisation, exp smoothing, effective
  order): WMT's segment-level BLEU baseline since WMT21, the ``BLEU`` scores mt-metrics-eval ships.
  System = mean of segments.
* ``sentbleu``: BARTScore's WMT19 baseline (its analysis code; ANCHORS 3.3): Moses-tokenise
  hypothesis and reference (sacremoses, English, XML escaping), then sacreBLEU
  ``corpus_bleu([hyp], [[ref]])`` on that one sentence. Not WMT's Moses ``sentence-bleu``.
  System = mean of the segment scores.
* ``rouge1`` / ``rouge2`` / ``rougeL``: F-measure of Google's ``rouge-score`` package with
  Porter stemming (the summarisation baselines of SummEval and BARTScore); system = mean.

sacrebleu, sacremoses and rouge-score are optional (``pip install 'nlgscore[meta]'``). Each call
scores every distinct (hypothesis, reference) pair once: daRR data repeat translations.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Sequence, Tuple

from nlgscore.core.errors import ArgumentError, ArgumentTypeError
from nlgscore.core.extras import require

SEGMENT_METRICS = ("chrf", "bleu", "sentbleu", "sentence-bleu", "rouge1", "rouge2", "rougeL")
# The WMT22+ (mt-metrics-eval) segment-level definition of a baseline where it differs from the
# BARTScore-era one: segment BLEU is sacreBLEU's sentence_bleu, WMT's baseline since WMT21.
WMT22_SEGMENT = {"bleu": "sentence-bleu"}
# Names whose system-level score is a corpus statistic rather than the mean of segments.
CORPUS_METRICS = ("chrf", "bleu")


def _sacrebleu_metrics():
    return require("sacrebleu.metrics", "meta", "the chrF/BLEU baselines")


def _score_unique(
    hyps: Sequence[str], refs: Sequence[str], score_pair: Callable[[str, str], float]
) -> list[float]:
    if len(hyps) != len(refs):
        raise ArgumentError(f"hyps and refs differ in length: {len(hyps)} != {len(refs)}")
    for name, texts in (("hyps", hyps), ("refs", refs)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ArgumentTypeError(f"{name}[{i}] must be a string, got {type(text).__name__}")
    cache: Dict[Tuple[str, str], float] = {}
    scores = []
    for pair in zip(hyps, refs):
        if pair not in cache:
            cache[pair] = float(score_pair(*pair))
        scores.append(cache[pair])
    return scores


def chrf(hyps: Sequence[str], refs: Sequence[str]) -> Tuple[list[float], str]:
    """Sentence-level chrF (sacreBLEU defaults) and its signature.

    >>> scores, signature = chrf(["the cat sat"], ["the cat sat"])
    >>> scores, signature.split("|")[0]
    ([100.0], 'chrF')
    """
    metric = _sacrebleu_metrics().CHRF()
    scores = _score_unique(hyps, refs, lambda h, r: metric.sentence_score(h, [r]).score)
    return scores, f"chrF|{metric.get_signature().format()}|level:segment"


def sentbleu(hyps: Sequence[str], refs: Sequence[str]) -> Tuple[list[float], str]:
    """BARTScore-style sentence BLEU: Moses-tokenised text, sacreBLEU corpus BLEU per sentence.

    >>> scores, signature = sentbleu(["The cat sat on the mat."], ["The cat sat on the mat."])
    >>> round(scores[0], 6), signature.split("|")[0]
    (100.0, 'sentBLEU')
    """
    metrics = _sacrebleu_metrics()
    sacremoses = require("sacremoses", "meta", "the sentBLEU baseline")
    tokenizer = sacremoses.MosesTokenizer(lang="en")
    tokenized: Dict[str, str] = {}

    def moses(text: str) -> str:
        if text not in tokenized:
            tokenized[text] = tokenizer.tokenize(text, return_str=True, escape=True)
        return tokenized[text]

    # One BLEU object for all sentences: equal to sacrebleu.corpus_bleu's defaults, minus
    # re-building the metric for every call.
    metric = metrics.BLEU()
    scores = _score_unique(hyps, refs, lambda h, r: metric.corpus_score([moses(h)], [[moses(r)]]).score)
    version = getattr(sacremoses, "__version__", "unknown")
    return scores, f"sentBLEU|pretok:moses-en-escape|sacremoses:{version}|{metric.get_signature().format()}|level:segment"


def sentence_bleu(hyps: Sequence[str], refs: Sequence[str]) -> Tuple[list[float], str]:
    """sacreBLEU ``sentence_bleu`` per segment (13a, exp smoothing, effective order) and its signature.

    WMT's segment-level BLEU baseline since WMT21 (what mt-metrics-eval's ``BLEU`` files hold).

    >>> scores, signature = sentence_bleu(["the cat sat on a mat"], ["the cat sat on the mat"])
    >>> round(scores[0], 4), signature.split("|")[:2]
    (53.7285, ['sentenceBLEU', 'nrefs:1'])
    """
    metric = _sacrebleu_metrics().BLEU(effective_order=True)  # what sacrebleu.sentence_bleu builds
    scores = _score_unique(hyps, refs, lambda h, r: metric.sentence_score(h, [r]).score)
    return scores, f"sentenceBLEU|{metric.get_signature().format()}|level:segment"


def _rouge(kind: str) -> Callable[[Sequence[str], Sequence[str]], Tuple[list[float], str]]:
    def score(hyps: Sequence[str], refs: Sequence[str]) -> Tuple[list[float], str]:
        rouge_scorer = require("rouge_score.rouge_scorer", "meta", "the ROUGE baselines")
        scorer = rouge_scorer.RougeScorer([kind], use_stemmer=True)
        scores = _score_unique(hyps, refs, lambda h, r: scorer.score(r, h)[kind].fmeasure)
        return scores, f"ROUGE-{kind[5:]}|rouge-score|stem:porter|F|level:segment"

    score.__doc__ = f"{kind} F-measure per segment (rouge-score, Porter stemming) and its signature."
    return score


def string_metric(name: str) -> Callable[[Sequence[str], Sequence[str]], Tuple[list[float], str]]:
    """The segment-level scoring function of a baseline by name.

    >>> string_metric("chrf") is chrf, string_metric("bleu") is sentbleu
    (True, True)
    >>> round(string_metric("rouge1")(["the cat sat"], ["the cat"])[0][0], 3)
    0.8
    """
    functions = {"chrf": chrf, "bleu": sentbleu, "sentbleu": sentbleu, "sentence-bleu": sentence_bleu}
    key = name if name.startswith("rouge") else name.lower()
    if key in ("rouge1", "rouge2", "rougeL"):
        return _rouge(key)
    try:
        return functions[key]
    except KeyError:
        raise ArgumentError(f"unknown string metric {name!r}; choose from {SEGMENT_METRICS}") from None


def is_string_metric(name: str) -> bool:
    """Whether ``name`` is one of the string baselines (``chrf``, ``bleu``, ``rougeL`` ...).

    >>> is_string_metric("CHRF"), is_string_metric("rougeL"), is_string_metric("bertscore:minilm")
    (True, True, False)
    """
    return name.lower() in ("chrf", "bleu", "sentbleu", "sentence-bleu") or name in ("rouge1", "rouge2", "rougeL")


def corpus_metric(name: str):
    """The sacreBLEU metric object whose corpus statistic is ``name``'s system score, else None.

    >>> corpus_metric("chrf").__class__.__name__, corpus_metric("sentbleu")
    ('CHRF', None)
    """
    metrics = {"chrf": "CHRF", "bleu": "BLEU"}
    key = name.lower()
    if key not in metrics:
        return None
    return getattr(_sacrebleu_metrics(), metrics[key])()


def corpus_score(name: str, hyps: Sequence[str], refs: Sequence[str]) -> Optional[Tuple[float, str]]:
    """System-level corpus score of a corpus-level baseline (chrF, BLEU) and its signature.

    None for metrics whose system score is the mean of their segment scores.

    >>> score, signature = corpus_score("bleu", ["the cat sat on the mat"], ["the cat sat on the mat"])
    >>> round(score, 6), signature.split("|")[0]
    (100.0, 'BLEU')
    """
    metric = corpus_metric(name)
    if metric is None:
        return None
    result = metric.corpus_score(list(hyps), [list(refs)])
    label = "chrF" if name.lower() == "chrf" else "BLEU"
    return float(result.score), f"{label}|{metric.get_signature().format()}|level:system-corpus"
