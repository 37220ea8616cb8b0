"""Scoring for a meta-evaluation run: each model loaded once, one pass per model, finished scores kept.

* ``Scorers``: the metric specs of one run. A model-based spec is loaded once for the whole run
  (every language pair, every data set of it), and BARTScore specs that differ only in their
  direction share one pass: ``direction="f"`` already returns the precision and recall columns,
  so ``f``, ``harmonic``, ``precision`` and ``recall`` come from one call (``src`` is its own).
* ``ScoreCache``: segment scores on disk, keyed by the metric's signature (its model, revision,
  options and library versions, known before scoring), the nlgscore version and a digest of the
  exact inputs, so a re-run (after an interruption, or with one more metric) reuses what was
  computed and a changed input or setting is never served stale scores. Code changed without a
  version change is the one thing the key cannot see: ``--no-cache`` then.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.core.batching import check_positive
from nlgscore.core.errors import ArgumentError
from nlgscore.meta.data.files import write_atomic
from nlgscore.meta.scoring import segment_scores, system_scores, unique_triples

PathLike = Union[str, "os.PathLike[str]"]
# Distinct items per scoring call of a model metric when a cache is on: each finished chunk is kept,
# so an interrupted run loses at most one chunk (a few minutes of BERTScore-large on 2 CPU cores),
# and a chunk is large enough for length-sorted batching to pay off.
CHUNK = 2048
# The BARTScore directions one direction="f" call provides (its columns), and how.
_FROM_F = {"f": "scores", "precision": "precision", "recall": "recall", "harmonic": None}


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
        from nlgscore import __version__

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


def _bart_group(spec: str) -> Optional[Tuple[str, str]]:
    """``(the spec with direction f, direction)`` for a BARTScore spec naming its direction: every
    direction of one checkpoint shares one loaded model (``src`` gets its own pass, the rest one f pass).

    >>> _bart_group("bartscore:bart-large-cnn:recall"), _bart_group("bartscore:bart-large-cnn")
    (('bartscore:bart-large-cnn:f', 'recall'), None)
    """
    parts = spec.split(":")
    if parts[0].lower() != "bartscore" or len(parts) < 3 or parts[-1] not in (*_FROM_F, "src"):
        return None
    return ":".join(parts[:-1] + ["f"]), parts[-1]


class Scorers:
    """Segment scores of metric specs for one run: models loaded once, BARTScore directions in one pass."""

    def __init__(self, options: Optional[Dict[str, Any]] = None, cache: Optional[ScoreCache] = None,
                 record: bool = False, chunk: int = CHUNK) -> None:
        self.options = dict(options or {})
        self.cache = cache
        self.chunk = check_positive("chunk", chunk, allow_none=False)
        self._loaded: Dict[str, Any] = {}
        self.computed = 0  # scoring calls that ran (not served by the cache), for tests and notes
        self.scored: Optional[List[Tuple[str, Sequence[str], Sequence[str], Optional[Sequence[str]], List[float]]]] = (
            [] if record else None)  # what export() writes

    def export(self, folder: PathLike) -> List[Path]:
        """Write every score of this run as nlgscore JSONL, one file per metric in ``folder``:
        ``{"metric", "prediction", "reference", "source", "score"}`` per scored item, in scoring order."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        by_metric: Dict[str, List[str]] = {}
        for spec, hyps, refs, srcs, scores in self.scored or []:
            sources = srcs if srcs is not None else [None] * len(hyps)
            by_metric.setdefault(spec, []).extend(
                json.dumps({"metric": spec, "prediction": h, "reference": r, "source": s, "score": v}, ensure_ascii=False)
                for h, r, s, v in zip(hyps, refs, sources, scores))
        paths = []
        for spec, lines in by_metric.items():
            paths.append(folder / (re.sub(r"[^A-Za-z0-9_.+-]", "_", short_name(spec)) + ".jsonl"))
            write_atomic(paths[-1], "\n".join(lines) + "\n")
        return paths

    def _scorer(self, spec: str) -> Any:
        from nlgscore import registry  # lazy: pulls in torch/transformers

        if spec not in self._loaded:
            self._loaded[spec] = registry.build(spec, **self.options)
        return self._loaded[spec]

    def score(self, spec: str, hyps: Sequence[str], refs: Sequence[str], srcs: Optional[Sequence[str]] = None) -> Tuple[List[float], str]:
        """One score per hypothesis and the signature; from the cache when these inputs were scored.

        >>> scores, signature = Scorers().score("chrf", ["the cat", "a cat"], ["the cat", "the cat"])
        >>> [round(s, 2) for s in scores], signature.split("|")[0]
        ([100.0, 31.25], 'chrF')
        """
        key = self._expected_signature(spec) if self.cache is not None else ""
        hit = self.cache.get(spec, key, hyps, refs, srcs) if self.cache is not None else None
        if hit is not None:
            return self._record(spec, hyps, refs, srcs, *hit)
        group = _bart_group(spec)
        model = None if group is not None else self._model(spec)
        if group is not None:
            scores, signature = self._bart_direction(group, hyps, refs, srcs)
        elif self.cache is not None and model is not None and not getattr(model, "idf", False):
            scores, signature = self._in_chunks(spec, key, model, hyps, refs, srcs)
        else:
            scores, signature = segment_scores(spec, hyps, refs, srcs, self.options, scorer=model)
            self.computed += 1
        if self.cache is not None:
            self.cache.put(spec, key, hyps, refs, srcs, scores, signature)
        return self._record(spec, hyps, refs, srcs, scores, signature)

    def _in_chunks(self, spec: str, key: str, model: Any, hyps, refs, srcs) -> Tuple[List[float], str]:
        """A model metric's scores, ``self.chunk`` distinct items per call, each chunk cached as it
        finishes: an interrupted run keeps what it scored and its re-run scores only the rest (as
        ``score -o`` resumes after its last window). A pair's score does not depend on the other
        pairs of its call, so chunks give the numbers one call gives; an idf taken from each call's
        references would not, and such a scorer is scored in one call (``score``)."""
        unique, order = unique_triples(hyps, refs, srcs)
        values: List[float] = []
        signature = ""
        for start in range(0, len(unique), self.chunk):
            part = unique[start:start + self.chunk]
            h, r, s = [t[0] for t in part], [t[1] for t in part], None if srcs is None else [t[2] for t in part]
            hit = self.cache.get(f"{spec}|chunk", key, h, r, s)
            if hit is None:
                hit = segment_scores(spec, h, r, s, self.options, scorer=model)
                self.computed += 1
                self.cache.put(f"{spec}|chunk", key, h, r, s, *hit)
            values += hit[0]
            signature = hit[1]
        return [values[i] for i in order], signature

    def _record(self, spec: str, hyps, refs, srcs, scores: List[float], signature: str) -> Tuple[List[float], str]:
        if self.scored is not None:
            self.scored.append((spec, list(hyps), list(refs), None if srcs is None else list(srcs), list(scores)))
        return scores, signature

    def system_scores(self, spec: str, outputs: Sequence[Sequence[str]], refs: Sequence[str],
                      segment: np.ndarray) -> Tuple[List[float], str]:
        """``nlgscore.meta.scoring.system_scores`` with the corpus scores (chrF, BLEU) cached too."""
        from nlgscore.meta.baselines import CORPUS_METRICS

        if self.cache is None or spec.lower() not in CORPUS_METRICS:
            return system_scores(spec, outputs, refs, segment)
        flat = [line for lines in outputs for line in lines]
        key, name = self._expected_signature(spec), f"{spec}|system:corpus"
        hit = self.cache.get(name, key, flat, list(refs) * len(outputs), None)
        if hit is not None:
            return hit[0], "system:corpus"
        values, how = system_scores(spec, outputs, refs, segment)
        self.cache.put(name, key, flat, list(refs) * len(outputs), None, values, how)
        return values, how

    def _expected_signature(self, spec: str) -> str:
        """The signature the scores will carry, before scoring: a one-line probe for a string metric,
        the loaded scorer's signature for a model (plus the run options that change scores)."""
        from nlgscore.meta.baselines import is_string_metric

        if is_string_metric(spec):
            return segment_scores(spec, ["a"], ["a"])[1]
        group = _bart_group(spec)
        scorer = self._scorer(group[0] if group else spec)
        options = {k: str(v) for k, v in sorted(self.options.items()) if k in ("dtype", "device")}
        return f"{scorer.signature}|{json.dumps(options)}|{spec}"

    def _model(self, spec: str) -> Any:
        from nlgscore.meta.baselines import is_string_metric

        return None if is_string_metric(spec) else self._scorer(spec)

    def _bart_direction(self, group: Tuple[str, str], hyps, refs, srcs) -> Tuple[List[float], str]:
        base, direction = group
        if direction == "src":  # source -> hypothesis: its own pass, on the model the other directions use
            if srcs is None:
                raise ArgumentError(f"metric {base[:-2]}:src needs sources, but this data set has none")
            result = self._scorer(base).compute(list(hyps), sources=list(srcs), direction="src")
            self.computed += 1
            return [float(v) for v in result.columns()[result.primary]], str(result.signature)
        key = ("bart-f", base, _digest(hyps, refs))
        if key not in self._loaded:  # one f pass gives every direction of this spec and these inputs
            scorer = self._scorer(base)
            result = scorer.compute(list(hyps), references=list(refs), direction="f")
            self._loaded[key] = ({name: [float(v) for v in values] for name, values in result.columns().items()},
                                 str(result.signature))
            self.computed += 1
        columns, signature = self._loaded[key]
        if direction == "harmonic":
            p, r = columns["precision"], columns["recall"]
            scores = [(a * b) / (a + b) for a, b in zip(p, r)]  # the scorer's own formula, same operands
        else:
            scores = columns[_FROM_F[direction]]
        return scores, signature.replace("direction:f", f"direction:{direction}")
