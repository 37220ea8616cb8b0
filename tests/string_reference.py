"""The string metrics' definitions computed by their own libraries (sacreBLEU, sacremoses, rouge-score)
at test time, independently of nlgscore: what the registry's ``chrf``/``bleu``/``rouge`` scorers and
every meta number built on them must equal exactly (the definitions of docs/meta_definitions.md)."""

from __future__ import annotations

from typing import List, Sequence


def chrf(hyps: Sequence[str], refs: Sequence[str]) -> List[float]:
    import sacrebleu

    return [sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(hyps, refs)]


def sentence_bleu(hyps: Sequence[str], refs: Sequence[str]) -> List[float]:
    import sacrebleu

    return [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, refs)]


def sentbleu(hyps: Sequence[str], refs: Sequence[str]) -> List[float]:
    """BARTScore's WMT19 sentBLEU: Moses-tokenised (English, escaped), corpus BLEU of the one sentence."""
    import sacrebleu
    from sacremoses import MosesTokenizer

    moses = MosesTokenizer(lang="en")

    def tok(text: str) -> str:
        return moses.tokenize(text, return_str=True, escape=True)

    return [sacrebleu.corpus_bleu([tok(h)], [[tok(r)]]).score for h, r in zip(hyps, refs)]


def rouge(kind: str, hyps: Sequence[str], refs: Sequence[str]) -> List[float]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer([kind], use_stemmer=True)
    return [scorer.score(r, h)[kind].fmeasure for h, r in zip(hyps, refs)]


def corpus(name: str, hyps: Sequence[str], refs: Sequence[str]) -> float:
    """sacreBLEU's corpus chrF or BLEU (WMT's system-level baselines)."""
    import sacrebleu

    statistic = {"chrf": sacrebleu.corpus_chrf, "bleu": sacrebleu.corpus_bleu}[name]
    return statistic(list(hyps), [list(refs)]).score
