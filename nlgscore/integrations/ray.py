"""Scores as new columns of a Ray Data ``Dataset``: ``ds.map_batches(ScoreBatches, ...)``.

:class:`ScoreBatches` is a callable class, so Ray Data runs it on actors: each actor loads the
model once (in its constructor) and scores every batch it is given. Ray does the rest:
a pool of actors (``num_gpus`` each), streaming execution, and fault tolerance — an actor
that dies (a killed process, a lost node) is restarted and its batch re-run, since Ray Data gives
actor pools ``max_restarts=-1`` and ``max_task_retries=-1``. Output columns are named like
:func:`nlgscore.integrations.datasets.map_function`'s (``bertscore_precision``, ...), and the
input columns are kept.

>>> import numpy as np
>>> fn = ScoreBatches("bertscore:minilm", num_layers=2)
>>> out = fn({"prediction": np.array(["it is cold"], dtype=object), "reference": np.array(["it is freezing"], dtype=object)})
>>> sorted(out)
['bertscore_f1', 'bertscore_precision', 'bertscore_recall', 'prediction', 'reference']
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Optional

from nlgscore.backend.batching import check_positive
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.columns import ColumnScorer


class ScoreBatches:
    """The ``map_batches`` class: each actor loads the model once, in its constructor.

    Pass its arguments as ``fn_constructor_kwargs``; batches may be numpy (Ray's default), pandas
    or dicts of lists, and come back with the input columns and one ``float64`` column per score.

    Args:
        metric: a spec string (``"bertscore:minilm"``); each actor builds its own scorer from it.
        prediction_column: the column holding the predictions.
        reference_column: the column holding the references (strings or lists of strings); None
            for a source-only metric.
        source_column: the column holding the sources, for a metric that needs them.
        prefix: the score columns are ``<prefix>_<name>`` (None: the metric's name; ``""``: bare).
        **options: the scorer's options (``batch_size``, ``max_tokens``, ``device``,
            ``num_layers``, ...).

    Raises:
        ArgumentTypeError: ``metric`` is not a spec string (a scorer does not travel to actors).
        ArgumentError: a column or option the metric refuses, named.
    """

    def __init__(
        self,
        metric: str = "bertscore:minilm",
        prediction_column: str = "prediction",
        reference_column: Optional[str] = "reference",
        source_column: Optional[str] = None,
        prefix: Optional[str] = None,
        **options: Any,
    ) -> None:
        if not isinstance(metric, str):
            raise ArgumentTypeError(
                f"metric must be a spec string such as 'bertscore:minilm' (each actor loads it), got {type(metric).__name__}"
            )
        self.columns = ColumnScorer(
            metric, prediction_column, reference_column, source_column, prefix, options, door="ScoreBatches"
        )
        self.columns.scorer  # noqa: B018 -- load the model now, once per actor, not on the first batch

    def __call__(self, batch: Any) -> Any:
        if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas
            return self.columns.score_frame(batch)
        import numpy as np

        scores = self.columns.score(batch)
        return {**batch, **{name: np.asarray(values, dtype=np.float64) for name, values in scores.items()}}

    def __repr__(self) -> str:
        return f"ScoreBatches({self.columns.metric!r}, prefix={self.columns.output_prefix!r})"


def score_dataset(
    dataset: Any,
    metric: str = "bertscore:minilm",
    *,
    concurrency: int = 1,
    num_cpus: Optional[float] = None,
    num_gpus: Optional[float] = None,
    batch_size: int = 1024,
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    scorer_class: type = ScoreBatches,
    **options: Any,
) -> Any:
    """``dataset.map_batches(ScoreBatches, ...)`` on a fixed pool of actors.

    The pool must leave the read and write tasks a CPU, or nothing moves: actors holding every CPU
    wait for batches that the read task, waiting for a CPU, never produces (`actor_cpus`).

    Args:
        dataset: the Ray ``Dataset`` scored.
        metric: a spec string, built once per actor.
        concurrency: the number of scoring actors.
        num_cpus: the CPUs each actor asks for (None: 1, or an equal share of what the cluster has
            left after one CPU for reading and writing, with a warning saying so).
        num_gpus: the GPUs each actor asks for (None: none).
        batch_size: the rows per batch.
        prediction_column: the column holding the predictions.
        reference_column: the column holding the references; None for a source-only metric.
        source_column: the column holding the sources, for a metric that needs them.
        prefix: the score columns' prefix (None: the metric's name).
        scorer_class: the ``map_batches`` class: `ScoreBatches` or a subclass of it.
        **options: the scorer's options (or ``scorer_class``'s).

    Returns:
        The lazy Ray ``Dataset`` with the score columns (``.take_all()``, ``.write_parquet(...)``).

    Raises:
        ArgumentError: ``concurrency`` or ``batch_size`` is not positive, or ``num_cpus`` is not
            positive or leaves no CPU for reading and writing (the message names both numbers).
    """
    kwargs: Dict[str, Any] = {
        "metric": metric,
        "prediction_column": prediction_column,
        "reference_column": reference_column,
        "source_column": source_column,
        "prefix": prefix,
        **options,
    }
    check_positive("concurrency", concurrency, allow_none=False)
    check_positive("batch_size", batch_size, allow_none=False)
    import ray
    from ray.data import ActorPoolStrategy

    per_actor = actor_cpus(concurrency, num_cpus, cluster_cpus(ray))
    extra = {"num_gpus": num_gpus} if num_gpus else {}
    # A fixed pool through compute=: Ray >= 2.51 deprecates concurrency= for callable classes.
    return dataset.map_batches(
        scorer_class,
        fn_constructor_kwargs=kwargs,
        compute=ActorPoolStrategy(size=concurrency),
        batch_size=batch_size,
        batch_format="numpy",
        num_cpus=per_actor,
        **extra,
    )


# CPUs the actor pool leaves to Ray Data's read and write tasks (each of which asks for one CPU).
IO_CPUS = 1


def cluster_cpus(ray: Any) -> float:
    """The CPUs of the Ray cluster this process is connected to.

    Args:
        ray: the ``ray`` module.

    Returns:
        The cluster's CPUs; before ``ray.init()``, those Ray will start a local instance with (the
        CPUs this process may run on).
    """
    import os

    if ray.is_initialized():
        return float(ray.cluster_resources().get("CPU", 0.0))
    return float(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def actor_cpus(concurrency: int, num_cpus: Optional[float], total: float) -> float:
    """CPUs per scoring actor so that ``concurrency`` actors leave ``IO_CPUS`` (1) of ``total`` free.

    Args:
        concurrency: the number of scoring actors.
        num_cpus: the CPUs per actor asked for (None: 1, or an equal share of what is left).
        total: the cluster's CPUs (`cluster_cpus`).

    Returns:
        The CPUs each actor asks Ray for.

    Raises:
        ArgumentError: ``num_cpus`` is not a positive number, or the actors would leave no CPU free.

    Example:
        >>> actor_cpus(2, None, 8.0), actor_cpus(2, 0.5, 2.0)
        (1.0, 0.5)
        >>> actor_cpus(2, 1, 2.0)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: concurrency=2 actors x num_cpus=1 CPU each need 2 CPUs, but the Ray cluster has 2:
        Ray Data's read and write tasks need 1 CPU left, or the pipeline waits forever;
        use concurrency=1 or num_cpus=0.5 (or None: nlgscore picks the share)
    """
    if num_cpus is not None and (
        isinstance(num_cpus, bool) or not isinstance(num_cpus, (int, float)) or not num_cpus > 0
    ):
        raise ArgumentError(f"num_cpus must be a positive number of CPUs per actor (or None), got {num_cpus!r}")
    room = total - IO_CPUS
    share = room / concurrency
    if num_cpus is None:
        if share >= 1:
            return 1.0
        if share > 0:
            warnings.warn(
                f"the Ray cluster has {total:g} CPUs: each of the {concurrency} scoring actors asks for {share:g} CPU "
                f"so that {IO_CPUS} CPU stays free for reading and writing (give num_cpus= to choose)",
                stacklevel=3,
            )
            return share
    elif concurrency * num_cpus <= room:
        return float(num_cpus)
    asked = (
        f"concurrency={concurrency} actors x num_cpus={num_cpus if num_cpus is not None else 1:g} CPU each need "
        f"{concurrency * (num_cpus or 1):g} CPUs, but the Ray cluster has {total:g}"
    )
    if room <= 0:
        raise ArgumentError(
            f"{asked}: Ray Data's read and write tasks need {IO_CPUS} CPU besides the scoring actors; "
            f"start Ray with more CPUs (ray.init(num_cpus=2) or more)"
        )
    raise ArgumentError(
        f"{asked}: Ray Data's read and write tasks need {IO_CPUS} CPU left, or the pipeline waits forever; "
        f"use concurrency={max(1, int(room))} or num_cpus={share:g} (or None: nlgscore picks the share)"
    )
