"""String-matching baseline metrics for meta-evaluation: chrF and sentBLEU.

Settings follow the BARTScore paper's WMT19 baselines (its analysis code; ANCHORS 3.3):

* ``chrf``: sacreBLEU ``sentence_chrf`` defaults (character 6-grams, no word n-grams, beta 2).
* ``sentbleu``: Moses-tokenise hypothesis and reference (sacremoses, English, with XML
  escaping), then sacreBLEU ``corpus_bleu([hyp], [[ref]]).score`` on that single sentence
  (13a tokenisation, exponential smoothing). This is *not* WMT's Moses ``sentence-bleu``.

sacrebleu and sacremoses are optional (``pip install nlgscore[meta]``) and imported lazily.
Each call scores every distinct (hypothesis, reference) pair once: daRR data repeat the same
translation in many pairs.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence, Tuple

STRING_METRICS = ("chrf", "sentbleu")


def _require(module: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"the chrf/sentbleu baselines need {module}: pip install 'nlgscore[meta]' "
            "(sacrebleu>=2 and sacremoses)"
        ) from err


def _score_unique(
    hyps: Sequence[str], refs: Sequence[str], score_pair: Callable[[str, str], float]
) -> list[float]:
    if len(hyps) != len(refs):
        raise ValueError(f"hyps and refs differ in length: {len(hyps)} != {len(refs)}")
    for name, texts in (("hyps", hyps), ("refs", refs)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"{name}[{i}] must be a string, got {type(text).__name__}")
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
    metrics = _require("sacrebleu.metrics")
    metric = metrics.CHRF()
    scores = _score_unique(hyps, refs, lambda h, r: metric.sentence_score(h, [r]).score)
    return scores, f"chrF|{metric.get_signature().format()}|level:segment"


def sentbleu(hyps: Sequence[str], refs: Sequence[str]) -> Tuple[list[float], str]:
    """BARTScore-style sentence BLEU: Moses-tokenised text, sacreBLEU corpus BLEU per sentence.

    >>> scores, signature = sentbleu(["The cat sat on the mat."], ["The cat sat on the mat."])
    >>> round(scores[0], 6), signature.split("|")[0]
    (100.0, 'sentBLEU')
    """
    metrics = _require("sacrebleu.metrics")
    sacremoses = _require("sacremoses")
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


def string_metric(name: str) -> Callable[[Sequence[str], Sequence[str]], Tuple[list[float], str]]:
    """The scoring function of a baseline by name (``chrf`` or ``sentbleu``).

    >>> string_metric("chrf") is chrf
    True
    """
    functions = {"chrf": chrf, "sentbleu": sentbleu}
    try:
        return functions[name.lower()]
    except KeyError:
        raise ValueError(f"unknown string metric {name!r}; choose from {STRING_METRICS}") from None
