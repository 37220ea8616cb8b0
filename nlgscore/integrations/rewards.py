"""The reward adapters' one way to score: a scorer named by a server URL or a local spec, and
blocking or awaited rewards through it (a local scorer through its micro-batcher, so that the
concurrent samples of one process are merged; a server merges those of every process).

Used by the RL adapters beside this module (slime, NeMo-RL, SkyRL, verifiers); they read chat
messages with :mod:`nlgscore.core.messages`.

>>> scorer = reward_scorer(spec="bertscore:minilm:L2")
>>> [round(r, 4) for r in rewards(scorer, ["It is cold."], ["It is cold."], ["Is it cold?"])]
[1.0]
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.trl import SERVER_URL
from nlgscore.registry import cached


def reward_scorer(
    url: Optional[str] = None, spec: Optional[str] = None, options: Optional[Mapping[str, Any]] = None
) -> Any:
    """The scorer rewards are computed with: a ``nlgscore serve`` at ``url``, else a local ``spec``.

    Cached per process, so every reward call of a process shares one model (or one connection).

    Args:
        url: a server's address (``http://HOST:PORT``); give it or ``spec``, not both.
        spec: a local metric's spec (``"bertscore:minilm"``).
        options: the local scorer's options (a server's settings are its own).

    Returns:
        The scorer (a `RemoteScorer` for ``url``).

    Raises:
        ArgumentError: both or neither of ``url`` and ``spec``, a ``url`` of another scheme, or a
            server's address given as ``spec``.
        ArgumentTypeError: ``url`` or ``spec`` is not a non-empty string.
    """
    if (url is None) == (spec is None):
        raise ArgumentError(
            f"give url= (a `nlgscore serve` address) or spec= (a local metric), not {'both' if url else 'neither'}"
        )
    value = url if url is not None else spec
    if not isinstance(value, str) or not value:
        raise ArgumentTypeError(f"{'url' if url is not None else 'spec'} must be a non-empty string, got {value!r}")
    if url is not None and not url.startswith(SERVER_URL):
        raise ArgumentError(f"url must start with http:// or https://, got {url!r}")
    if spec is not None and spec.startswith(SERVER_URL):
        raise ArgumentError(f"spec names a server ({spec!r}): pass it as url=")
    return cached(value) if url is not None else cached(value, **dict(options or {}))


def _inputs(
    scorer: ScorerLike, references: Optional[Sequence[Any]], sources: Optional[Sequence[str]]
) -> Dict[str, Any]:
    """Only what the metric reads (a local scorer refuses what it does not need)."""
    needs = tuple(scorer.needs)
    return {name: value for name, value in (("references", references), ("sources", sources)) if name in needs}


def column_values(result: Any, column: Optional[str]) -> List[float]:
    """``result``'s primary scores, or its ``column``, as floats.

    Args:
        result: a Result (local or remote).
        column: the column read (None: the primary ``scores``).

    Returns:
        One float per item, in order.

    Raises:
        ArgumentError: ``column`` is not a column of the result (the message names the choices).

    Example:
        >>> from nlgscore.core.result import Result
        >>> column_values(Result("m", {"f1": [0.5], "precision": [0.25]}, "f1"), "precision")
        [0.25]
    """
    if column is None:
        return [float(v) for v in result.scores]
    columns = result.columns()
    if column not in columns:
        raise ArgumentError(f"column must be one of {', '.join(columns)}, got {column!r}")
    return [float(v) for v in columns[column]]


def rewards(
    scorer: Any,
    predictions: Sequence[str],
    references: Optional[Sequence[Any]] = None,
    sources: Optional[Sequence[str]] = None,
    column: Optional[str] = None,
) -> List[float]:
    """The rewards of ``predictions``, in order; blocking, and safe from many threads.

    A local scorer scores through its micro-batcher, so the concurrent calls of a process's threads
    are merged; a remote one sends one request, which the server merges with others.

    Args:
        scorer: the scorer (`reward_scorer`'s).
        predictions: the completions rewarded.
        references: one reference per prediction (or several); passed only if the metric needs them.
        sources: one source (prompt) per prediction; passed only if the metric needs them.
        column: the result column the rewards are (None: the primary scores).

    Returns:
        One reward per prediction.

    Raises:
        ArgumentError: an input the metric refuses, or an unknown ``column``.

    Example:
        >>> scorer = reward_scorer(spec="chrf")
        >>> rewards(scorer, ["It is cold."], ["It is cold."])
        [100.0]
    """
    inputs = _inputs(scorer, references, sources)
    if not isinstance(getattr(scorer, "url", None), str):  # a local scorer (a RemoteScorer has its server's url)
        from nlgscore.scheduler.microbatch import shared_batcher

        return column_values(shared_batcher(scorer).compute(list(predictions), **inputs), column)
    return column_values(scorer.compute(list(predictions), **inputs), column)


async def arewards(
    scorer: Any,
    predictions: Sequence[str],
    references: Optional[Sequence[Any]] = None,
    sources: Optional[Sequence[str]] = None,
    column: Optional[str] = None,
) -> List[float]:
    """`rewards`, awaited: a local scorer's ``acompute`` goes through its micro-batcher.

    Args:
        scorer: as `rewards` takes it.
        predictions: the completions rewarded, awaited together with other coroutines' calls.
        references: as `rewards`.
        sources: as `rewards`.
        column: as `rewards`.

    Returns:
        One reward per prediction, in order.

    Raises:
        ArgumentError: as `rewards`.
    """
    return column_values(await scorer.acompute(list(predictions), **_inputs(scorer, references, sources)), column)
