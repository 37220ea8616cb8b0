"""Scores as new columns of a Ray Data ``Dataset``: ``ds.map_batches(ScoreBatches, ...)``.

:class:`ScoreBatches` is a callable class, so Ray Data runs it on actors: each actor loads the
model once (in its constructor) and scores every batch it is given. Ray does the rest:
``concurrency`` actors (``num_gpus`` each), streaming execution, and fault tolerance — an actor
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

from typing import Any, Dict, Optional

from nlgscore.core.batching import check_positive
from nlgscore.core.errors import ArgumentTypeError
from nlgscore.integrations.datasets import ScoreColumns


def _plain(values: Any) -> list:
    """A Ray batch column (a numpy array, maybe of arrays for list cells) as Python lists/strings."""
    return [v.tolist() if hasattr(v, "tolist") else v for v in values]


class ScoreBatches:
    """The ``map_batches`` class: ``ScoreBatches(metric, prediction_column=..., reference_column=...,
    source_column=None, prefix=None, **options)``, the arguments of ``map_function``; pass them as
    ``fn_constructor_kwargs``. ``options`` go to the scorer (``batch_size``, ``max_tokens``,
    ``device``, ``num_layers`` ...). Batches may be numpy (Ray's default), pandas or dicts of lists.
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
            raise ArgumentTypeError(f"metric must be a spec string such as 'bertscore:minilm' (each actor loads it), got {type(metric).__name__}")
        self.columns = ScoreColumns(metric, prediction_column, reference_column, source_column, prefix, options)
        self.columns.scorer  # noqa: B018 -- load the model now, once per actor, not on the first batch

    def __call__(self, batch: Any) -> Any:
        if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas
            scores = self.columns({name: _plain(batch[name].to_numpy()) for name in batch.columns})
            out = batch.copy()
            for name, values in scores.items():
                out[name] = values
            return out
        import numpy as np

        scores = self.columns({name: _plain(values) for name, values in batch.items()})
        return {**batch, **{name: np.asarray(values, dtype=np.float64) for name, values in scores.items()}}

    def __repr__(self) -> str:
        return f"ScoreBatches({self.columns.metric!r}, prefix={self.columns.output_prefix!r})"


def score_dataset(
    dataset: Any,
    metric: str = "bertscore:minilm",
    *,
    concurrency: int = 1,
    num_gpus: Optional[float] = None,
    batch_size: int = 1024,
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    scorer_class: type = ScoreBatches,
    **options: Any,
) -> Any:
    """``dataset.map_batches(ScoreBatches, ...)`` with ``concurrency`` actors of ``num_gpus`` GPUs
    each and ``batch_size`` rows per batch; ``options`` go to the scorer (or to ``scorer_class``, a
    subclass of :class:`ScoreBatches`). Returns the lazy Ray ``Dataset`` (``.take_all()``,
    ``.write_parquet(...)``)."""
    kwargs: Dict[str, Any] = {"metric": metric, "prediction_column": prediction_column, "reference_column": reference_column,
                              "source_column": source_column, "prefix": prefix, **options}
    check_positive("concurrency", concurrency, allow_none=False)
    from ray.data import ActorPoolStrategy

    extra = {"num_gpus": num_gpus} if num_gpus else {}
    # A fixed pool through compute=: Ray >= 2.51 deprecates concurrency= for callable classes.
    return dataset.map_batches(scorer_class, fn_constructor_kwargs=kwargs, compute=ActorPoolStrategy(size=concurrency),
                               batch_size=batch_size, batch_format="numpy", **extra)
