"""An inspect-ai scorer: ``Task(..., scorer=nlgscore.integrations.inspect.scorer("bertscore:minilm"))``.

inspect-ai scores each sample on its own, in an ``async`` scorer, with many samples in flight
at once. :func:`scorer` returns an inspect ``@scorer`` whose per-sample calls go through the
scorer's micro-batcher (:meth:`~nlgscore.core.base.Scorer.acompute`): the samples that finish
generating together are scored in one ``compute`` (one encoder pass), not one forward pass each.

* The prediction is the sample's completion (``state.output.completion``); the references are
  the sample's ``Target`` (several targets = several references, aggregated by the metric's own
  rule, e.g. BERTScore's max); a source-based metric (``prism:src``) reads the sample's input
  (``state.input_text``: the text, or the last user message of a chat input).
* Each sample's ``Score.value`` is the metric's primary score (``column=`` picks another, e.g.
  ``"precision"``); ``Score.metadata`` holds every column and the signature. The task's metrics
  are ``mean()`` and ``stderr()`` of the values.
* ``max_batch`` / ``max_wait_ms`` give this scorer its own :class:`~nlgscore.scheduler.microbatch.MicroBatcher`
  with those settings; by default it shares the scorer's (``scorer.acompute``). A spec that is a
  server's URL (``"http://127.0.0.1:8000"``) scores on that server, which batches the requests.
* inspect-ai is imported when :func:`scorer` is called, never by ``import nlgscore``; the model
  is loaded then too, so a model that cannot be loaded fails before the evaluation starts.

>>> from inspect_ai.scorer import Target
>>> score = scorer("bertscore:minilm", num_layers=2)
>>> class State:  # the two TaskState fields the scorer reads
...     class output:
...         completion = "It is cold today."
...     input_text = "Weather?"
...     sample_id = 1
>>> import asyncio
>>> round(asyncio.run(score(State(), Target(["The weather is cold today.", "It is cold today."]))).value, 4)
1.0
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional

from nlgscore.backend.extras import require
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.datasets import metric_prefix
from nlgscore.integrations.trl import SERVER_URL
from nlgscore.registry import cached


class SampleScorer:
    """What the inspect scorer does for one sample, without inspect's registry (see `scorer`).

    The model is loaded (or the server reached) on construction, so a failure shows before the
    evaluation starts.

    Args:
        spec: a metric spec (``"bertscore:minilm"``) or a server's URL.
        column: the result column a sample's ``Score.value`` is (None: the primary score).
        max_batch: with ``max_wait_ms``, gives this scorer its own micro-batcher with these
            settings (None for both: the scorer's shared one); refused for a server.
        max_wait_ms: the own micro-batcher's wait for batch mates, in milliseconds.
        options: the scorer's options, with a spec.

    Raises:
        ArgumentTypeError: ``spec`` is not a string, or ``column`` not a non-empty one.
        ArgumentError: ``column`` is not a column of the metric, or ``max_batch``/``max_wait_ms``
            with a server.
    """

    def __init__(
        self,
        spec: str,
        column: Optional[str],
        max_batch: Optional[int],
        max_wait_ms: Optional[float],
        options: Dict[str, Any],
    ) -> None:
        if not isinstance(spec, str):
            raise ArgumentTypeError(
                f"spec must be a metric spec string such as 'bertscore:minilm' (or a server URL), got {type(spec).__name__}"
            )
        if column is not None and (not isinstance(column, str) or not column):
            raise ArgumentTypeError(f"column must be a non-empty string or None, got {column!r}")
        self.spec, self.options, self.column = spec, dict(options), column
        scorer = self.scorer  # loads the model now (or reaches the server): a failure shows before the evaluation
        self.needs = tuple(scorer.needs)
        if spec.startswith(SERVER_URL):  # the server batches the requests; max_batch/max_wait_ms are its flags
            if max_batch is not None or max_wait_ms is not None:
                raise ArgumentError(
                    f"max_batch/max_wait_ms do not apply to a server ({spec!r}): they are flags of `nlgscore serve`"
                )
            self.batcher: Any = scorer  # RemoteScorer.acompute: an async request
        elif max_batch is not None or max_wait_ms is not None:
            from nlgscore.scheduler.microbatch import DEFAULT_MAX_BATCH, DEFAULT_MAX_WAIT_MS, MicroBatcher

            self.batcher = MicroBatcher(
                scorer,
                max_batch=DEFAULT_MAX_BATCH if max_batch is None else max_batch,
                max_wait_ms=DEFAULT_MAX_WAIT_MS if max_wait_ms is None else max_wait_ms,
            )
        else:
            from nlgscore.scheduler.microbatch import shared_batcher

            self.batcher = shared_batcher(scorer)  # the one behind scorer.acompute
        if column is not None:
            empty = scorer.compute([], **{need: [] for need in self.needs})
            if column not in empty.columns():
                raise ArgumentError(f"column must be one of {', '.join(empty.columns())} for {spec!r}, got {column!r}")

    @property
    def scorer(self) -> Any:
        return cached(self.spec, **self.options)

    async def __call__(self, state: Any, target: Any) -> Any:
        """The sample's ``Score``: its completion scored against its target (and input)."""
        from inspect_ai.scorer import Score

        prediction = state.output.completion
        inputs: Dict[str, Any] = {}
        if "references" in self.needs:
            references = list(target)
            if not references:
                raise ArgumentError(
                    f"sample {state.sample_id!r} has an empty target: {self.spec!r} scores against references (Sample(target=...))"
                )
            inputs["references"] = [references[0] if len(references) == 1 else references]
        if "sources" in self.needs:
            inputs["sources"] = [state.input_text]
        result = await self.batcher.acompute([prediction], **inputs)
        row = result.rows()[0]
        value = result.scores[0] if self.column is None else row[self.column]
        return Score(
            value=float(value), answer=prediction, metadata={"columns": row, "signature": str(result.signature)}
        )


@functools.lru_cache(maxsize=None)
def _registered(name: str) -> Callable[..., Any]:
    """The inspect scorer factory registered under ``name`` (once per name: inspect's registry
    records the factory's arguments in the log, so a logged scorer can be made again)."""
    api = require("inspect_ai.scorer", "inspect", "an inspect-ai scorer")

    def nlgscore_scorer(
        spec: str,
        column: Optional[str] = None,
        max_batch: Optional[int] = None,
        max_wait_ms: Optional[float] = None,
        **options: Any,
    ) -> Any:
        sample_scorer = SampleScorer(spec, column, max_batch, max_wait_ms, options)

        async def score(state: Any, target: Any) -> Any:
            return await sample_scorer(state, target)

        score.nlgscore = sample_scorer  # type: ignore[attr-defined]  # its batcher, for statistics
        return score

    nlgscore_scorer.__name__ = name
    return api.scorer(metrics=[api.mean(), api.stderr()], name=name)(nlgscore_scorer)


def scorer(
    spec: str,
    column: Optional[str] = None,
    name: Optional[str] = None,
    max_batch: Optional[int] = None,
    max_wait_ms: Optional[float] = None,
    **options: Any,
) -> Any:
    """An inspect-ai scorer scoring each sample's completion with ``spec``, batched across samples.

    It is an ``async`` callable with inspect's registry information (see the module docstring);
    the task's metrics are ``mean()`` and ``stderr()`` of the values.

    Args:
        spec: a spec for ``nlgscore.registry.build`` (``"bertscore:minilm"``), or a server's URL
            (``"http://127.0.0.1:8000"``), which batches the requests itself.
        column: the result column each ``Score.value`` is (``"precision"``; None: the primary
            score); ``Score.metadata`` holds every column and the signature either way.
        name: the scorer's name in inspect's logs (None: the metric's name, ``"bertscore"``).
        max_batch: the most samples one scoring run holds, on this scorer's own micro-batcher
            (None, with ``max_wait_ms`` None: the scorer's shared one).
        max_wait_ms: how long a sample waits for batch mates on the own micro-batcher, in
            milliseconds.
        **options: the scorer's options (``num_layers=``, ``device=``, ...), with a spec.

    Returns:
        The inspect scorer, for ``Task(..., scorer=...)``.

    Raises:
        ArgumentTypeError: ``name`` is not a non-empty string, or as `SampleScorer`.
        ArgumentError: as `SampleScorer`.
        MissingExtraError: inspect-ai is not installed (the ``inspect`` extra).
    """
    if name is None:
        name = "nlgscore" if not isinstance(spec, str) or spec.startswith(SERVER_URL) else metric_prefix(spec)
    if not isinstance(name, str) or not name:
        raise ArgumentTypeError(f"name must be a non-empty string or None, got {name!r}")
    return _registered(name)(spec, column=column, max_batch=max_batch, max_wait_ms=max_wait_ms, **options)
