"""Segment and system scores of any metric given by a spec string, for meta-evaluation.

String baselines (``chrf``, ``bleu``, ``sentbleu``, ``rouge1/2/L``) are scored here
(``nlgscore.meta.baselines``); any other spec
(``bertscore:minilm``, ``prism:ref``, ``bartscore:bart-large-cnn``, ...) goes to
``nlgscore.registry.build``, imported only then so string metrics work without the model
stack. Meta-evaluation data repeat translations (a daRR pair shares them with other
pairs), so each distinct (hypothesis, reference, source) triple is scored once.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from nlgscore.core.errors import ArgumentError
from nlgscore.meta.baselines import (
    CORPUS_METRICS,
    corpus_score,
    is_string_metric,
    string_metric,
)


def unique_triples(
    hyps: Sequence[str], refs: Sequence[str], srcs: Optional[Sequence[str]]
) -> Tuple[List[Tuple[str, str, Optional[str]]], List[int]]:
    position: Dict[Tuple[str, str, Optional[str]], int] = {}
    order = []
    sources = srcs if srcs is not None else [None] * len(hyps)
    for triple in zip(hyps, refs, sources):
        order.append(position.setdefault(triple, len(position)))
    return list(position), order


def segment_scores(
    spec: str, hyps: Sequence[str], refs: Sequence[str], srcs: Optional[Sequence[str]] = None,
    options: Optional[Dict[str, Any]] = None, scorer: Any = None,
) -> Tuple[List[float], str]:
    """One score per hypothesis (input order) from metric ``spec``, and its signature.

    ``options`` go to ``nlgscore.registry.build(spec, **options)`` (device, batch size, progress:
    the run-time options every scorer takes). ``scorer`` is an already loaded scorer of ``spec``
    (a run loads each model once).

    >>> scores, signature = segment_scores("chrf", ["a cat", "the cat"], ["the cat", "the cat"])
    >>> [round(s, 2) for s in scores], signature.startswith("chrF|")
    ([31.25, 100.0], True)
    """
    if len(hyps) != len(refs) or (srcs is not None and len(srcs) != len(hyps)):
        lengths = [len(hyps), len(refs)] + ([len(srcs)] if srcs is not None else [])
        raise ArgumentError(f"hyps, refs and srcs must have equal lengths, got {lengths}")
    if is_string_metric(spec):
        return string_metric(spec)(hyps, refs)
    from nlgscore import registry  # lazy: pulls in torch/transformers

    unique, order = unique_triples(hyps, refs, srcs)
    if scorer is None:
        scorer = registry.build(spec, **dict(options or {}))
    # Pass only what the scorer uses (Scorer.needs): a reference-based metric given
    # sources could switch to another mode, and some data sets have no sources.
    needs = tuple(getattr(scorer, "needs", ("references",)))
    kwargs = {}
    if "references" in needs:
        kwargs["references"] = [t[1] for t in unique]
    if "sources" in needs:
        if srcs is None:
            raise ArgumentError(f"metric {spec!r} needs sources, but this data set has none")
        kwargs["sources"] = [t[2] for t in unique]
    result = scorer.compute([t[0] for t in unique], **kwargs)
    column = result.columns()[result.primary]
    if len(column) != len(unique):
        raise ValueError(f"metric {spec!r} returned {len(column)} scores for {len(unique)} inputs")
    return [float(column[i]) for i in order], str(result.signature)


def system_scores(
    spec: str, hyps: Sequence[Sequence[str]], refs: Sequence[str], segment: Sequence[Sequence[float]]
) -> Tuple[List[float], str]:
    """One system-level score per system and how it was computed.

    ``hyps[s]`` are system ``s``'s outputs for ``refs``; ``segment[s]`` its segment scores.
    chrF and BLEU get sacreBLEU's corpus-level score (WMT's system-level baselines); every
    other metric the mean of its segment scores.

    >>> system_scores("chrf", [["the cat"], ["a dog"]], ["the cat"], [[100.0], [10.0]])[1]
    'system:corpus'
    >>> system_scores("sentbleu", [["a"], ["b"]], ["a"], [[100.0], [0.0]])
    ([100.0, 0.0], 'system:mean-of-segments')
    """
    if spec.lower() not in CORPUS_METRICS:
        return [float(sum(row) / len(row)) for row in segment], "system:mean-of-segments"
    return [corpus_score(spec, h, refs)[0] for h in hyps], "system:corpus"
