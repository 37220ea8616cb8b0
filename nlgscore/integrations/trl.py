"""Scores as rewards for TRL's ``GRPOTrainer(reward_funcs=...)`` (and other TRL online trainers).

``reward_function(spec)`` returns a callable with TRL's reward signature
``(prompts, completions, completion_ids=None, **kwargs) -> list[float]``: one score per
completion, in order, against the dataset column TRL passes as a keyword argument.

* Completions may be plain strings or conversations (lists of ``{"role", "content"}``
  messages): the last assistant message is scored.
* References come from ``reference_column`` (a string or a list of strings per row: several
  references are aggregated by the metric's own rule, e.g. BERTScore's max). A source-based
  metric (``prism:src``, ``bartscore:...:src``) reads ``source_column`` instead
  (``source_column="prompt"`` scores against the prompt itself).
* A scorer that keeps embeddings (the ``caches_embeddings`` capability, BERTScore) caches the
  reference embeddings across steps: a reference is encoded once per run, not once per step.
* Every process scores its own batch: TRL calls the reward on each rank with that rank's
  completions and gathers the rewards itself, so the scorer never shards or gathers here.
* TRL logs the reward under the function's ``__name__``, ``<metric>_<column>`` (e.g.
  ``bertscore_f1``), as ``rewards/bertscore_f1/mean`` and ``/std``.
* :func:`async_reward_function` is the same reward as a coroutine: TRL runs async rewards
  concurrently (e.g. beside an LLM judge); the scoring itself runs in a worker thread.
* ``spec`` may be the URL of a running ``nlgscore serve`` (``"http://HOST:PORT"``): the model is
  then loaded once, on the server, instead of on every rank; the async form sends an async
  request, which the server merges with the other ranks'. Options are then the client's
  (``timeout``, ``retries``, ``api_key``); the reward stays picklable.

>>> reward = reward_function("bertscore:minilm", num_layers=2)
>>> reward.__name__
'bertscore_f1'
>>> chat = [[{"role": "assistant", "content": "It is cold today."}], [{"role": "assistant", "content": "Stocks fell."}]]
>>> rewards = reward(prompts=["Weather?", "Weather?"], completions=chat, reference=["The weather is cold today."] * 2)
>>> rewards[0] > rewards[1]
True
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List, Optional, Sequence

from nlgscore.backend.extras import MissingExtraError
from nlgscore.core.inputs import check_references, check_texts
from nlgscore.core.messages import last_text
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.registry import cached

# What GRPOTrainer adds to the dataset columns in a reward call (not columns: left out of errors).
TRAINER_KWARGS = ("trainer_state", "log_extra", "log_metric", "environments")
PROMPT = "prompt"  # source_column="prompt": score against the prompts TRL passes
SERVER_URL = ("http://", "https://")  # a spec naming a running `nlgscore serve` (nlgscore.registry.build)
# One reward computation at a time per process: async rewards run in threads, and a scorer's
# text cache is not meant for concurrent calls.
_SCORING = threading.Lock()


class RewardFunction:
    """The reward callable `reward_function` returns.

    Picklable: it holds the spec and options, and a copy loads the scorer (once per process) on
    its first call. Calling it takes TRL's ``(prompts, completions, completion_ids=None, **columns)``
    and gives one reward per completion, in order.

    Args:
        spec: a metric spec string, or a server's URL.
        reference_column: the dataset column holding the references (None: the metric needs none).
        source_column: the dataset column holding the sources, or ``"prompt"`` for TRL's prompts.
        column: the score column the rewards are (None: the primary one).
        name: the reward's logged name (None: ``<metric>_<column>``).
        options: the scorer's options (a server's client options for a URL).

    Raises:
        ArgumentTypeError: ``spec`` is not a string, or a column or name not a non-empty one.
        ArgumentError: a column the metric needs is not named, ``column`` is not a column of the
            metric, or ``accelerator=``/``shard=`` (each rank scores its own completions).
    """

    def __init__(
        self,
        spec: str,
        reference_column: Optional[str],
        source_column: Optional[str],
        column: Optional[str],
        name: Optional[str],
        options: Dict[str, Any],
    ) -> None:
        from nlgscore.registry import metric, spec_options

        if not isinstance(spec, str):
            raise ArgumentTypeError(
                f"spec must be a metric spec string such as 'bertscore:minilm', got {type(spec).__name__}"
            )
        for arg, value in (
            ("reference_column", reference_column),
            ("source_column", source_column),
            ("column", column),
            ("name", name),
        ):
            if value is not None and (not isinstance(value, str) or not value):
                raise ArgumentTypeError(f"{arg} must be a non-empty string or None, got {value!r}")
        for option in ("accelerator", "shard"):
            if options.get(option):  # the scorer's default: each rank's call is scored whole on that rank
                raise ArgumentError(
                    f"{option}= does not apply to a reward: TRL scores each process's completions on that process"
                )
        self.remote = spec.startswith(SERVER_URL)  # a running `nlgscore serve`: every rank sends it requests
        if not self.remote:
            metric_name, _ = spec_options(spec, options)
            if getattr(metric(metric_name).scorer_class(), "caches_embeddings", False):
                options.setdefault("cache_references", True)
        self.spec, self.options = spec, options
        self.reference_column, self.source_column, self.column = reference_column, source_column, column
        scorer = self.scorer  # load now: a model that cannot be loaded fails before training starts
        self.needs = tuple(scorer.needs)
        if "references" in self.needs and reference_column is None:
            raise ArgumentError(
                f"metric {spec!r} scores against references: pass reference_column= naming the dataset column that holds them"
            )
        if "sources" in self.needs and source_column is None:
            raise ArgumentError(
                f"metric {spec!r} scores against sources: pass source_column= naming the dataset column that holds them (or 'prompt')"
            )
        empty = scorer.compute([], **{need: [] for need in self.needs})
        if column is not None and column not in empty.columns():
            raise ArgumentError(f"column must be one of {', '.join(empty.columns())} for {spec!r}, got {column!r}")
        self.__name__ = name or f"{scorer.name}_{column or empty.primary}"

    @property
    def scorer(self) -> ScorerLike:
        return cached(self.spec, **self.options)

    def __call__(
        self,
        prompts: Optional[Sequence[Any]] = None,
        completions: Optional[Sequence[Any]] = None,
        completion_ids: Any = None,
        **kwargs: Any,
    ) -> List[float]:
        """One reward per completion, in order (see the module docstring)."""
        texts, inputs = self._inputs(prompts, completions, kwargs)
        with _SCORING:
            result = self.scorer.compute(texts, **inputs)
        return self._rewards(result)

    def _inputs(self, prompts: Any, completions: Any, kwargs: Dict[str, Any]) -> Any:
        texts = completion_texts(completions)
        return texts, {need: self._column(need, prompts, kwargs, len(texts)) for need in self.needs}

    def _rewards(self, result: Any) -> List[float]:
        if self.column is None:
            return [float(v) for v in result.scores]
        return [float(value) for value in result.columns()[self.column]]

    def _column(self, need: str, prompts: Any, kwargs: Dict[str, Any], n: int) -> List[Any]:
        """The references or sources of this batch, checked under the dataset column's name."""
        name = self.reference_column if need == "references" else self.source_column
        if name == PROMPT and need == "sources":
            values = [last_text(p, "user", f"prompts[{i}]") for i, p in enumerate(prompts or [])]
        elif name in kwargs:
            values = kwargs[name]
        else:
            given = sorted(k for k in kwargs if k not in TRAINER_KWARGS)
            arg = "reference_column" if need == "references" else "source_column"
            raise ArgumentError(
                f"reward {self.__name__}: the dataset has no column {name!r} ({arg}={name!r}); the trainer passed the columns {given}"
            )
        values = list(values) if not isinstance(values, str) else values
        if need == "references":
            return check_references(name, values, n)
        sources = check_texts(name, values)
        if len(sources) != n:
            raise ArgumentError(f"column {name!r} has {len(sources)} rows for {n} completions")
        return sources

    def __repr__(self) -> str:
        return f"reward_function({self.spec!r}, name={self.__name__!r})"


class AsyncRewardFunction(RewardFunction):
    """The reward as a coroutine function: TRL awaits rewards whose ``__call__`` is ``async``.

    A local scorer scores in a worker thread; a server gets an async request, which it merges with
    the other ranks'. Its constructor is `RewardFunction`'s.
    """

    # TRL tells a coroutine reward by its __call__: the override is async on purpose
    async def __call__(  # type: ignore[override]
        self,
        prompts: Optional[Sequence[Any]] = None,
        completions: Optional[Sequence[Any]] = None,
        completion_ids: Any = None,
        **kwargs: Any,
    ) -> List[float]:
        if self.remote:  # an async request: the server merges it with the other ranks' and rewards'
            texts, inputs = self._inputs(prompts, completions, kwargs)
            return self._rewards(await self.scorer.acompute(texts, **inputs))
        call = super().__call__
        return await asyncio.to_thread(call, prompts, completions, completion_ids, **kwargs)


def completion_texts(completions: Any) -> List[str]:
    """The text of each completion: a string as is, a conversation's last assistant message.

    Args:
        completions: TRL's completions, strings or conversations (lists of ``{"role", "content"}``,
            a content a string or text parts, joined).

    Returns:
        One text per completion.

    Raises:
        ArgumentTypeError: ``completions`` is not a list of strings or conversations.
        ArgumentError: a conversation has no assistant message.

    Example:
        >>> completion_texts(["a", [{"role": "user", "content": "q"}, {"role": "assistant", "content": "b"}]])
        ['a', 'b']
        >>> completion_texts([[{"role": "assistant", "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}]}]])
        ['cd']
    """
    if completions is None or isinstance(completions, (str, bytes, dict)) or not hasattr(completions, "__len__"):
        raise ArgumentTypeError(
            f"completions must be a list of strings or of conversations, got {type(completions).__name__}"
        )
    return [
        c if isinstance(c, str) else last_text(c, "assistant", f"completions[{i}]") for i, c in enumerate(completions)
    ]


def reward_function(
    spec: str,
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    column: Optional[str] = None,
    name: Optional[str] = None,
    **options: Any,
) -> RewardFunction:
    """A TRL reward function scoring completions with ``spec`` (see the module docstring).

    The model is loaded here, so that a model that cannot be loaded fails before training.

    Args:
        spec: a spec for ``nlgscore.registry.build`` (``"bertscore:minilm"``, ``"prism:src"``), or
            the URL of a running ``nlgscore serve`` (the model then loads once, on the server).
        reference_column: the dataset column TRL passes the references in (strings, or lists of
            strings per row); None for a source-only metric.
        source_column: the dataset column holding the sources, for a source-based metric;
            ``"prompt"`` scores against TRL's prompts (their last user message).
        column: the score column the rewards are (``"precision"``; None: the primary one).
        name: the name TRL logs the reward under (None: ``<metric>_<column>``, ``bertscore_f1``).
        **options: the scorer's options (``num_layers=``, ``device=``); with a URL, the client's
            (``timeout``, ``retries``, ``api_key``).

    Returns:
        The reward, for ``GRPOTrainer(reward_funcs=[...])``.

    Raises:
        ArgumentTypeError: as `RewardFunction`.
        ArgumentError: as `RewardFunction`.

    Example:
        >>> reward = reward_function("chrf", reference_column="answer")
        >>> reward.__name__, reward(prompts=["Weather?"], completions=["It is cold."], answer=["It is cold."])
        ('chrf_score', [100.0])
    """
    return RewardFunction(spec, reference_column, source_column, column, name, options)


def async_reward_function(
    spec: str,
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    column: Optional[str] = None,
    name: Optional[str] = None,
    **options: Any,
) -> AsyncRewardFunction:
    """`reward_function` as an ``async`` callable, for TRL's concurrent async rewards.

    Args:
        spec: as `reward_function`.
        reference_column: as `reward_function`.
        source_column: as `reward_function`.
        column: as `reward_function`.
        name: as `reward_function`.
        **options: as `reward_function`.

    Returns:
        The coroutine reward.

    Raises:
        ArgumentTypeError: as `RewardFunction`.
        ArgumentError: as `RewardFunction`.
        MissingExtraError: the installed TRL would not await a callable class (it needs a newer TRL).

    Example:
        >>> reward = async_reward_function("bertscore:minilm", num_layers=2)
        >>> asyncio.run(reward(prompts=["q"], completions=["It is cold."], reference=["It is cold."]))[0] > 0.99
        True
    """
    _check_trl_awaits_callable_classes()
    return AsyncRewardFunction(spec, reference_column, source_column, column, name, options)


def _check_trl_awaits_callable_classes() -> None:
    """TRL before ``trl.trainer.utils.is_async_callable`` (trl PR #7213) tests async rewards with
    ``inspect.iscoroutinefunction``, which misses a class with an ``async __call__`` (the picklable
    form): it would run this reward as a synchronous one and fail on the un-awaited coroutine."""
    try:
        from trl.trainer import utils
    except ImportError:
        return  # no TRL here: the coroutine is still usable on its own
    if not hasattr(utils, "is_async_callable"):
        raise MissingExtraError(
            "async_reward_function needs a TRL whose trainers await async callable classes (trl 1.16 does): "
            "pip install -U 'nlgscore[trl]', or use reward_function"
        )
