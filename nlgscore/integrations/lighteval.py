"""A metric for lighteval tasks: ``LightevalTaskConfig(..., metrics=[metric("bertscore:minilm")])``.

``metric(spec)`` returns a lighteval ``SampleLevelMetric`` with ``batched_compute=True``: lighteval
hands it all the samples of a task at once, and they are scored in one ``compute`` call (one
encoder pass over the distinct texts, references de-duplicated), not one sample at a time.

* The prediction is the response's first text (``ModelResponse.final_text[0]``); the references
  are the document's golds (``Doc.get_golds()``, several golds = several references, aggregated
  by the metric's own rule). A source-based metric (``prism:src``) reads ``source_field``: an
  attribute of the ``Doc`` (``"query"``) or a key of ``Doc.specific``.
* Each sample's value is the dict of every score column (``{"bertscore_precision": …,
  "bertscore_recall": …, "bertscore_f1": …}``); the corpus aggregation returns each column's mean
  and its standard error (lighteval's ``mean_stderr``), so the task's results hold every column.
  (lighteval 0.13's ``apply_metric`` indexes a batched metric's output by its name, which only a
  single-name metric has; a grouping metric with a list of names fails there, so the columns
  travel together under the one name.)
* lighteval is imported when :func:`metric` is called, never by ``import nlgscore``.

>>> from lighteval.models.model_output import ModelResponse
>>> from lighteval.tasks.requests import Doc
>>> m = metric("bertscore:minilm", num_layers=2)
>>> docs = [Doc(query="Weather?", choices=["It is cold today."], gold_index=0)] * 2
>>> responses = [ModelResponse(text=["It is cold today."]), ModelResponse(text=["Stocks fell."])]
>>> rows = m.compute_sample(docs=docs, responses=responses)["bertscore"]
>>> round(rows[0]["bertscore_f1"], 4), rows[1]["bertscore_f1"] < 0.9
(1.0, True)
>>> sorted(m.get_corpus_aggregations()["bertscore"](rows))[:2]
['bertscore_f1', 'bertscore_f1_stderr']
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Dict, List, Optional, Sequence

from nlgscore.backend.extras import require
from nlgscore.core.inputs import check_references, check_texts
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.datasets import metric_prefix
from nlgscore.registry import cached


class ColumnMeans:
    """Corpus aggregation of per-sample column dicts: every column's mean and ``<column>_stderr``."""

    __name__ = "mean"  # lighteval picks its stderr function by this name; the dict carries its own

    def __call__(self, rows: Sequence[Dict[str, float]]) -> Dict[str, float]:
        from lighteval.metrics.utils.stderr import mean_stderr

        out: Dict[str, float] = {}
        for name in rows[0] if rows else ():
            values = [float(row[name]) for row in rows]
            out[name] = math.fsum(values) / len(values)
            out[f"{name}_stderr"] = mean_stderr(values) if len(values) > 1 else 0.0
        return out


class Columns:
    """What the lighteval computation does, without lighteval's base class: samples to column dicts.

    The model is loaded on construction, so a missing model fails before the evaluation.

    Args:
        spec: a metric spec string (``"bertscore:minilm"``).
        prefix: the columns' prefix and the metric's name (None: the metric's name; ``""``: bare).
        source_field: where a source-based metric reads a doc's source: an attribute of the
            ``Doc`` (``"query"``) or a key of ``Doc.specific``.
        normalize_pred: applied to each prediction before it is scored.
        normalize_gold: applied to each gold before it is scored.
        options: the scorer's options.

    Raises:
        ArgumentTypeError: ``spec`` is not a string, or a normalizer is not callable.
        ArgumentError: a source-based metric without ``source_field``.
    """

    def __init__(
        self,
        spec: str,
        prefix: Optional[str],
        source_field: Optional[str],
        normalize_pred: Optional[Callable[[str], str]],
        normalize_gold: Optional[Callable[[str], str]],
        options: Dict[str, Any],
    ) -> None:
        if not isinstance(spec, str):
            raise ArgumentTypeError(
                f"spec must be a metric spec string such as 'bertscore:minilm', got {type(spec).__name__}"
            )
        for arg, fn in (("normalize_pred", normalize_pred), ("normalize_gold", normalize_gold)):
            if fn is not None and not callable(fn):
                raise ArgumentTypeError(f"{arg} must be a callable str -> str or None, got {type(fn).__name__}")
        self.spec, self.options = spec, dict(options)
        self.prefix = prefix if prefix is not None else metric_prefix(spec)
        self.source_field = source_field
        self.normalize_pred, self.normalize_gold = normalize_pred, normalize_gold
        self.needs = tuple(self.scorer.needs)  # loads the model now: a missing model fails before evaluation
        if "sources" in self.needs and not source_field:
            raise ArgumentError(
                f"metric {spec!r} scores against sources: pass source_field= (a Doc attribute such as 'query', or a key of Doc.specific)"
            )

    @property
    def scorer(self) -> ScorerLike:
        return cached(self.spec, **self.options)

    def rows(self, docs: Sequence[Any], responses: Sequence[Any]) -> List[Dict[str, float]]:
        """One dict of score columns per (doc, response), in order, from one ``compute`` call.

        Args:
            docs: lighteval's ``Doc`` of each sample: its golds are the references.
            responses: lighteval's ``ModelResponse`` of each sample: its first final text is scored.

        Returns:
            Per sample, ``{"<prefix>_<column>": score}`` for every column of the result.

        Raises:
            ArgumentError: ``docs`` and ``responses`` differ in length, a response has no text, a
                doc's ``gold_index`` is not one of its choices, or a doc lacks ``source_field``.
        """
        if len(docs) != len(responses):
            raise ArgumentError(f"got {len(docs)} docs for {len(responses)} responses")
        predictions = check_texts("responses (final_text[0])", [_first_text(r, i) for i, r in enumerate(responses)])
        if self.normalize_pred:
            predictions = [self.normalize_pred(p) for p in predictions]
        inputs: Dict[str, Any] = {}
        if "references" in self.needs:
            golds = [_golds(doc, i) for i, doc in enumerate(docs)]
            if self.normalize_gold:
                golds = [[self.normalize_gold(g) for g in row] for row in golds]
            inputs["references"] = check_references("golds", golds, len(predictions))
        if "sources" in self.needs:
            inputs["sources"] = check_texts(
                f"sources ({self.source_field})", [self._source(doc, i) for i, doc in enumerate(docs)]
            )
        result = self.scorer.compute(predictions, **inputs)
        sep = "_" if self.prefix else ""
        return [{f"{self.prefix}{sep}{name}": value for name, value in row.items()} for row in result.rows()]

    def _source(self, doc: Any, i: int) -> Any:
        field = self.source_field or ""  # set: the constructor refused a source metric without it
        specific = getattr(doc, "specific", None) or {}
        if field in specific:
            return specific[field]
        if hasattr(doc, field):
            return getattr(doc, field)
        raise ArgumentError(f"docs[{i}] has no attribute or specific[{field!r}] (source_field={field!r})")


def _golds(doc: Any, i: int) -> List[Any]:
    """``doc.get_golds()`` with every ``gold_index`` checked first (an index past the choices was an
    IndexError from inside lighteval)."""
    indices = doc.gold_index if isinstance(doc.gold_index, (list, tuple)) else [doc.gold_index]
    choices = doc.choices or []
    for index in indices:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(choices):
            raise ArgumentError(
                f"docs[{i}].gold_index {index!r} is not the index of one of its {len(choices)} choices "
                f"(0 to {len(choices) - 1})"
                if choices
                else f"docs[{i}] has no choices for gold_index {index!r}"
            )
    return list(doc.get_golds())


def _first_text(response: Any, i: int) -> Any:
    texts = getattr(response, "final_text", None)
    if not texts:
        raise ArgumentError(f"responses[{i}] has no text to score (ModelResponse.final_text is {texts!r})")
    return texts[0]


@functools.lru_cache(maxsize=None)
def _computation_class() -> type:
    """The ``SampleLevelComputation`` subclass, made on first use so lighteval loads only then."""
    base = require("lighteval.metrics.metrics_sample", "lighteval", "a lighteval metric").SampleLevelComputation

    class NlgscoreComputation(base, Columns):  # type: ignore[misc, valid-type]
        """nlgscore scores for lighteval: ``compute(docs=, responses=)`` (batched) or one sample."""

        def compute(
            self, doc: Any = None, model_response: Any = None, docs: Any = None, responses: Any = None, **kwargs: Any
        ) -> Any:
            if docs is not None or responses is not None:
                return self.rows(docs or [], responses or [])
            return self.rows([doc], [model_response])[0]

        def __str__(self) -> str:  # lighteval prints task configs with str(); not the model
            return f"nlgscore({self.spec!r})"

    return NlgscoreComputation


def metric(
    spec: str,
    prefix: Optional[str] = None,
    source_field: Optional[str] = None,
    normalize_pred: Optional[Callable[[str], str]] = None,
    normalize_gold: Optional[Callable[[str], str]] = None,
    **options: Any,
) -> Any:
    """A lighteval ``SampleLevelMetric`` (batched) scoring generations with ``spec``.

    lighteval hands it all the samples of a task at once, scored in one ``compute`` call (see the
    module docstring); the corpus value of each column is its mean with ``<column>_stderr``.

    Args:
        spec: a spec for ``nlgscore.registry.build`` (``"bertscore:minilm"``).
        prefix: the metric's name and the columns' prefix (None: the metric's name, ``"bertscore"``).
        source_field: for a source-based metric (``prism:src``), a ``Doc`` attribute (``"query"``)
            or a key of ``Doc.specific`` holding the source.
        normalize_pred: applied to the predictions first, as lighteval's own metrics allow.
        normalize_gold: applied to the golds first.
        **options: the scorer's options (``num_layers=``, ``device=``, ...).

    Returns:
        The metric, for ``LightevalTaskConfig(..., metrics=[...])``.

    Raises:
        ArgumentTypeError: as `Columns`.
        ArgumentError: as `Columns`.
        MissingExtraError: lighteval is not installed (the ``lighteval`` extra).
    """
    utils = require("lighteval.metrics.utils.metric_utils", "lighteval", "a lighteval metric")
    sampling = require("lighteval.tasks.requests", "lighteval", "a lighteval metric").SamplingMethod
    computation = _computation_class()(spec, prefix, source_field, normalize_pred, normalize_gold, options)
    return utils.SampleLevelMetric(
        metric_name=computation.prefix or computation.scorer.name,
        higher_is_better=True,
        category=sampling.GENERATIVE,
        sample_level_fn=computation,
        corpus_level_fn=ColumnMeans(),
        batched_compute=True,
    )
