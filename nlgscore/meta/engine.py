"""Scoring for a meta-evaluation run: each model loaded once, one pass per model, finished scores kept.

* ``Scorers``: the metric specs of one run, every one a scorer of ``registry.cached`` (chrF, BLEU
  and ROUGE included: ``nlgscore.strings``), so a model is loaded once for the whole run (every
  language pair, every data set of it). Specs that differ only in an option of the scorer's
  ``one_pass`` capability share one pass and one model (BARTScore: ``direction="f"`` returns the
  precision and recall columns too, so ``f``, ``precision`` and ``recall`` come from one call;
  ``harmonic`` and ``src`` are calls of their own on the same model). System scores are the mean
  of the segment scores, except for chrF, BLEU and TER with any of their settings
  (``corpus_system``: the scorer's sacreBLEU ``corpus_score``, WMT's definition;
  docs/meta_definitions.md); BARTScore's Moses-tokenised sentBLEU keeps the mean. A metric whose
  scorer says ``lower_is_better`` (TER) is turned by the task runner before it correlates.
* ``ScoreCache``: segment scores on disk, keyed by the metric's signature (its model, revision,
  options and library versions, known before scoring), the nlgscore version and a digest of the
  exact inputs, so a re-run (after an interruption, or with one more metric) reuses what was
  computed and a changed input or setting is never served stale scores. Code changed without a
  version change is the one thing the key cannot see: ``--no-cache`` then.
* Document context (``score_in_context``, ``--context k``): one call per system, its segments in
  the data set's order with their document ids (``nlgscore.meta.doc_context``), cached under a key
  that holds ``ctx:k`` and the document ids, so scores of another context are never served.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.backend.batching import check_positive
from nlgscore.corpus.outputs.resumable import write_atomic
from nlgscore.errors import ArgumentError
from nlgscore.version import __version__

PathLike = Union[str, "os.PathLike[str]"]
# Distinct items per scoring call of a model metric when a cache is on: each finished chunk is kept,
# so an interrupted run loses at most one chunk (a few minutes of BERTScore-large on 2 CPU cores),
# and a chunk is large enough for length-sorted batching to pay off.
CHUNK = 2048
# Names whose system score is sacreBLEU's corpus statistic (the scorer's corpus_score), not a mean
# (nlgscore compare's paired tests take these two names); corpus_system adds TER and any settings.
SYSTEM_CORPUS = ("chrf", "bleu")
CORPUS_METRICS = ("chrf", "bleu", "ter")


def corpus_system(spec: str) -> bool:
    """Whether ``spec``'s system score is its sacreBLEU corpus statistic: chrF, BLEU and TER with
    any settings (``chrf:beta=3``, ``bleu:intl``), but not the Moses-tokenised sentBLEU, whose
    sentence scores are not of the text the corpus statistic reads.

    >>> corpus_system("chrf:beta=3"), corpus_system("bleu:intl"), corpus_system("ter"), corpus_system("sentbleu")
    (True, True, True, False)
    >>> corpus_system("bertscore:minilm"), corpus_system("http://localhost:8000")
    (False, False)
    """
    from nlgscore import registry

    if spec.startswith(("http://", "https://")):
        return False
    try:
        name, options = registry.spec_options(spec)
    except ValueError:
        return False
    return name in CORPUS_METRICS and options.get("tokenize") != "moses"


def short_name(spec: str) -> str:
    """A metric's name for tables: the spec with a checkpoint path reduced to its last part.

    >>> short_name("bertscore:/models/cache/roberta-large:L17"), short_name("chrf")
    ('bertscore:roberta-large:L17', 'chrf')
    """
    return ":".join(Path(part).name if ("/" in part or os.sep in part) else part for part in spec.split(":"))


def _digest(*columns: Optional[Sequence[str]]) -> str:
    sha = hashlib.sha256()
    for column in columns:
        sha.update(b"\x00none" if column is None else json.dumps(list(column), ensure_ascii=False).encode("utf-8"))
        sha.update(b"\x01")
    return sha.hexdigest()


class ScoreCache:
    """Segment scores of (spec, options, inputs) under ``folder`` (one small JSON file each).

    >>> import tempfile
    >>> cache = ScoreCache(tempfile.mkdtemp())
    >>> cache.get("chrf", "chrF|v1", ["a"], ["a"], None) is None
    True
    >>> cache.put("chrf", "chrF|v1", ["a"], ["a"], None, [100.0], "chrF|v1"); cache.get("chrf", "chrF|v1", ["a"], ["a"], None)
    ([100.0], 'chrF|v1')
    >>> cache.get("chrf", "chrF|v2", ["a"], ["a"], None) is None  # another version: scored again
    True
    """

    def __init__(self, folder: PathLike) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.hits = 0

    def _path(self, spec: str, signature: str, hyps, refs, srcs) -> Path:
        return self.folder / f"{_digest([spec, signature, __version__], hyps, refs, srcs)[:40]}.json"

    def get(self, spec: str, key: str, hyps, refs, srcs) -> Optional[Tuple[List[float], str]]:
        path = self._path(spec, key, hyps, refs, srcs)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or unreadable (a crash mid-write leaves no file: writes are atomic)
        if record.get("spec") != spec or record.get("items") != len(hyps):
            return None
        self.hits += 1
        return [float(v) for v in record["scores"]], str(record["signature"])

    def put(self, spec: str, key: str, hyps, refs, srcs, scores: Sequence[float], signature: str) -> None:
        record = {"spec": spec, "items": len(hyps), "signature": signature, "scores": [float(v) for v in scores]}
        write_atomic(self._path(spec, key, hyps, refs, srcs), json.dumps(record))


def unique_triples(
    hyps: Sequence[str], refs: Sequence[str], srcs: Optional[Sequence[str]]
) -> Tuple[List[Tuple[str, str, Optional[str]]], List[int]]:
    """The distinct (hypothesis, reference, source) triples and, per input, its triple's index
    (daRR data repeat translations: each distinct triple is scored once).

    >>> unique_triples(["a", "b", "a"], ["r", "r", "r"], None)
    ([('a', 'r', None), ('b', 'r', None)], [0, 1, 0])
    """
    position: Dict[Tuple[str, str, Optional[str]], int] = {}
    order = []
    sources = srcs if srcs is not None else [None] * len(hyps)
    for triple in zip(hyps, refs, sources):
        order.append(position.setdefault(triple, len(position)))
    return list(position), order


def _segment(
    scorer: Any, spec: str, hyps: Sequence[str], refs: Sequence[str], srcs: Optional[Sequence[str]], **call_options: Any
) -> Tuple[List[float], str]:
    """One score per hypothesis (input order) from ``scorer``'s primary column, and the signature.

    Only what the scorer uses is passed (``Scorer.needs``): a reference-based metric given sources
    could switch to another mode, and some data sets have no sources. A call with ``call_options``
    (a ``one_pass`` option's own value) gets every input there is, and scores with what it needs."""
    if len(hyps) != len(refs) or (srcs is not None and len(srcs) != len(hyps)):
        lengths = [len(hyps), len(refs)] + ([len(srcs)] if srcs is not None else [])
        raise ArgumentError(f"hyps, refs and srcs must have equal lengths, got {lengths}")
    unique, order = unique_triples(hyps, refs, srcs)
    needs = ("references", "sources") if call_options else tuple(getattr(scorer, "needs", ("references",)))
    kwargs: Dict[str, Any] = dict(call_options)
    if "references" in needs:
        kwargs["references"] = [t[1] for t in unique]
    if "sources" in needs and srcs is not None:
        kwargs["sources"] = [t[2] for t in unique]
    elif "sources" in needs and not call_options:
        raise ArgumentError(f"metric {spec!r} needs sources, but this data set has none")
    result = scorer.compute([t[0] for t in unique], **kwargs)
    column = result.columns()[result.primary]
    if len(column) != len(unique):
        raise ValueError(f"metric {spec!r} returned {len(column)} scores for {len(unique)} inputs")
    return [float(column[i]) for i in order], str(result.signature)


class Scorers:
    """Segment and system scores of metric specs for one run: scorers from ``registry.cached``,
    shared passes of ``one_pass`` options, finished chunks cached.

    >>> scores, signature = Scorers().score("chrf", ["the cat", "a cat"], ["the cat", "the cat"])
    >>> [round(s, 2) for s in scores], signature.split("|")[0]
    ([100.0, 31.25], 'nlgscore:chrf')
    >>> Scorers().system_scores("sentbleu", [["a"], ["b"]], ["a"], np.array([[100.0], [0.0]]))
    ([100.0, 0.0], 'system:mean-of-segments')
    """

    def __init__(
        self,
        options: Optional[Dict[str, Any]] = None,
        cache: Optional[ScoreCache] = None,
        record: bool = False,
        chunk: int = CHUNK,
    ) -> None:
        self.options = dict(options or {})
        self.cache = cache
        self.chunk = check_positive("chunk", chunk, allow_none=False)
        self._loaded: Dict[Any, Any] = {}  # spec -> scorer (registry.cached's), and shared one_pass results
        self.computed = 0  # scoring calls that ran (not served by the cache), for tests and notes
        self.scored: Optional[List[Tuple[str, Sequence[str], Sequence[str], Optional[Sequence[str]], List[float]]]] = (
            [] if record else None
        )  # what export() writes

    def export(self, folder: PathLike) -> List[Path]:
        """Write every score of this run as nlgscore JSONL, one file per metric in ``folder``:
        ``{"metric", "prediction", "reference", "source", "score"}`` per scored item, in scoring order."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        by_metric: Dict[str, List[str]] = {}
        for spec, hyps, refs, srcs, scores in self.scored or []:
            sources = srcs if srcs is not None else [None] * len(hyps)
            by_metric.setdefault(spec, []).extend(
                json.dumps(
                    {"metric": spec, "prediction": h, "reference": r, "source": s, "score": v}, ensure_ascii=False
                )
                for h, r, s, v in zip(hyps, refs, sources, scores)
            )
        paths = []
        for spec, lines in by_metric.items():
            paths.append(folder / (re.sub(r"[^A-Za-z0-9_.+-]", "_", short_name(spec)) + ".jsonl"))
            write_atomic(paths[-1], "\n".join(lines) + "\n")
        return paths

    def _scorer(self, spec: str) -> Any:
        from nlgscore import registry  # lazy: pulls in torch/transformers

        if spec not in self._loaded:
            self._loaded[spec] = registry.cached(spec, **self.options)
        return self._loaded[spec]

    def _shared_pass(self, spec: str) -> Optional[Tuple[str, str, str, Optional[str]]]:
        """``(spec of the shared scorer, option, this spec's value, its column or None)`` when ``spec``
        names a value of its scorer's ``one_pass`` option: that scorer (built with the pass's value)
        gives the value's column from one shared call, or (column None) scores with the value as a
        call option on the same model. None for any other spec (its own scorer, its own calls)."""
        from nlgscore import registry

        if spec.startswith(("http://", "https://")):
            return None
        name, parts = registry.parse_spec(spec)
        one_pass = getattr(registry.metric(name).scorer_class(), "one_pass", None)
        if one_pass is None:
            return None
        option, value, columns = one_pass
        given = registry.spec_options(spec)[1].get(option)
        if given is None or not parts or parts[-1] != given:  # the option is the spec's last part
            return None
        return ":".join([name, *parts[:-1], value]), option, given, columns.get(given)

    def score(
        self,
        spec: str,
        hyps: Sequence[str],
        refs: Sequence[str],
        srcs: Optional[Sequence[str]] = None,
        name: Optional[str] = None,
    ) -> Tuple[List[float], str]:
        """One score per hypothesis and the signature; from the cache when these inputs were scored.
        ``name``: the metric these scores are exported as (default ``spec``; a task scores ``bleu``
        with the spec of its protocol's definition)."""
        shared = self._shared_pass(spec)
        scorer = self._scorer(shared[0] if shared else spec)
        key = self._key(spec, scorer) if self.cache is not None else ""
        hit = self.cache.get(spec, key, hyps, refs, srcs) if self.cache is not None else None
        if hit is not None:
            return self._record(name or spec, hyps, refs, srcs, *hit)
        if shared is not None:
            scores, signature = self._one_pass(shared, scorer, hyps, refs, srcs)
        elif self.cache is not None and not getattr(scorer, "call_dependent", False):
            scores, signature = self._in_chunks(spec, key, scorer, hyps, refs, srcs)
        else:
            scores, signature = _segment(scorer, spec, hyps, refs, srcs)
            self.computed += 1
        if self.cache is not None:
            self.cache.put(spec, key, hyps, refs, srcs, scores, signature)
        return self._record(name or spec, hyps, refs, srcs, scores, signature)

    def check_context(self, spec: str, context: int) -> None:
        """Refuse ``--context`` for a metric that does not read document context, naming both.

        >>> Scorers().check_context("chrf", 2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: --context 2: metric 'chrf' does not read document context ...
        """
        if context > 0 and not getattr(self._scorer(spec), "takes_context", False):
            raise ArgumentError(
                f"--context {context}: metric {spec!r} does not read document context (BERTScore, Prism and "
                "BARTScore do); score it without --context, in a run of its own"
            )

    def score_in_context(
        self,
        spec: str,
        hyps: Sequence[str],
        refs: Sequence[str],
        srcs: Optional[Sequence[str]],
        doc_ids: Sequence[str],
        context: int,
        name: Optional[str] = None,
    ) -> Tuple[List[float], str]:
        """One score per segment of one system read after the previous ``context`` segments of its
        document (``doc_ids``), and the signature (``ctx:k`` in it); from the cache when these inputs
        were scored with this context and these documents. Never de-duplicated or chunked: a chunk
        boundary would cut a document.

        >>> scores, signature = Scorers().score_in_context(
        ...     "bertscore:minilm:L2", ["A cat.", "It slept."], ["The cat.", "It slept."], None, ["d", "d"], 1)
        >>> len(scores), "|ctx:1|" in signature
        (2, True)
        """
        from nlgscore.meta.doc_context import segment_scores_in_context

        self.check_context(spec, context)
        scorer = self._scorer(spec)
        cached_as = f"{spec}|ctx:{context}"
        key = f"{self._key(spec, scorer)}|ctx:{context}|docs:{_digest(doc_ids)}" if self.cache is not None else ""
        hit = self.cache.get(cached_as, key, hyps, refs, srcs) if self.cache is not None else None
        if hit is not None:
            return self._record(name or spec, hyps, refs, srcs, *hit)
        scores, signature = segment_scores_in_context(scorer, spec, hyps, refs, srcs, doc_ids, context)
        self.computed += 1
        if self.cache is not None:
            self.cache.put(cached_as, key, hyps, refs, srcs, scores, signature)
        return self._record(name or spec, hyps, refs, srcs, scores, signature)

    def _in_chunks(self, spec: str, key: str, model: Any, hyps, refs, srcs) -> Tuple[List[float], str]:
        """A metric's scores, ``self.chunk`` distinct items per call, each chunk cached as it
        finishes: an interrupted run keeps what it scored and its re-run scores only the rest (as
        ``score -o`` resumes after its last window). A pair's score does not depend on the other
        pairs of its call, so chunks give the numbers one call gives; a ``call_dependent`` scorer
        (an idf taken from each call's references) is scored in one call (``score``)."""
        cache = self.cache
        if cache is None:  # the caller chunks only into a cache: without one a metric is scored in one call
            raise ValueError("chunked scoring needs the score cache")
        unique, order = unique_triples(hyps, refs, srcs)
        values: List[float] = []
        signature = ""
        for start in range(0, len(unique), self.chunk):
            part = unique[start : start + self.chunk]
            h, r = [t[0] for t in part], [t[1] for t in part]
            s = None if srcs is None else [t[2] or "" for t in part]  # every triple holds its source
            hit = cache.get(f"{spec}|chunk", key, h, r, s)
            if hit is None:
                hit = _segment(model, spec, h, r, s)
                self.computed += 1
                cache.put(f"{spec}|chunk", key, h, r, s, *hit)
            values += hit[0]
            signature = hit[1]
        return [values[i] for i in order], signature

    def _record(self, spec: str, hyps, refs, srcs, scores: List[float], signature: str) -> Tuple[List[float], str]:
        if self.scored is not None:
            self.scored.append((spec, list(hyps), list(refs), None if srcs is None else list(srcs), list(scores)))
        return scores, signature

    def system_scores(
        self, spec: str, outputs: Sequence[Sequence[str]], refs: Sequence[str], segment: np.ndarray
    ) -> Tuple[List[float], str]:
        """One system-level score per system (``outputs[s]`` against ``refs``) and how it was computed:
        the corpus statistic where :func:`corpus_system` says so (cached), else the mean of ``segment[s]``."""
        if not corpus_system(spec):
            return [float(sum(row) / len(row)) for row in segment], "system:mean-of-segments"
        scorer = self._scorer(spec)
        flat = [line for lines in outputs for line in lines]
        key, name = self._key(spec, scorer) if self.cache is not None else "", f"{spec}|system:corpus"
        hit = self.cache.get(name, key, flat, list(refs) * len(outputs), None) if self.cache is not None else None
        if hit is not None:
            return hit[0], "system:corpus"
        values = [scorer.corpus_score(lines, refs) for lines in outputs]
        if self.cache is not None:
            self.cache.put(name, key, flat, list(refs) * len(outputs), None, values, "system:corpus")
        return values, "system:corpus"

    def lower_is_better(self, spec: str) -> bool:
        """Whether ``spec``'s scorer scores errors (TER: ``lower_is_better``), so that the tasks turn
        its scores before correlating them.

        >>> Scorers().lower_is_better("ter"), Scorers().lower_is_better("chrf")
        (True, False)
        """
        from nlgscore import registry

        if spec in self._loaded or spec.startswith(("http://", "https://")):
            return bool(getattr(self._scorer(spec), "lower_is_better", False))
        # the class says it: no scorer is built for the question (a shared pass may have served the spec)
        return bool(getattr(registry.metric(registry.parse_spec(spec)[0]).scorer_class(), "lower_is_better", False))

    def _key(self, spec: str, scorer: Any) -> str:
        """The signature the scores will carry, known before scoring (the scorer's, with the run
        options that change scores and the spec)."""
        options = {k: str(v) for k, v in sorted(self.options.items()) if k in ("dtype", "device")}
        return f"{scorer.signature}|{json.dumps(options)}|{spec}"

    def _one_pass(
        self, shared: Tuple[str, str, str, Optional[str]], scorer: Any, hyps, refs, srcs
    ) -> Tuple[List[float], str]:
        base, option, given, column = shared
        if column is None:  # a value the shared call does not give: its own call, on the same model
            self.computed += 1
            return _segment(scorer, base, hyps, refs, srcs, **{option: given})
        value = base.rsplit(":", 1)[1]
        key = ("one_pass", base, _digest(hyps, refs, srcs))
        if key not in self._loaded:  # one call gives every column of this spec and these inputs
            result = scorer.compute(list(hyps), references=list(refs), **{option: value})
            self._loaded[key] = (
                {name: [float(v) for v in values] for name, values in result.columns().items()},
                str(result.signature),
            )
            self.computed += 1
        columns, signature = self._loaded[key]
        return columns[column], signature.replace(f"{option}:{value}", f"{option}:{given}")
