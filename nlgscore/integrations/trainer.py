"""``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)``.

The returned callable decodes the generated ids and the labels (``-100`` restored to the pad
token first: the Trainer pads labels and cross-process gathers with ``-100``), scores them and
returns the mean of every score column, e.g. ``{"bertscore_precision": …, "bertscore_recall": …,
"bertscore_f1": …}``.

* The model is resolved and loaded when ``compute_metrics(...)`` is called, so that a model that
  cannot be loaded fails before training starts, not after the first generation pass.
* A metric that can keep embeddings across calls (``caches_embeddings`` on its class: BERTScore)
  keeps reference embeddings across evaluations (``cache_references=True``), keyed by
  their text: the second evaluation of the same eval set encodes only the new predictions; and
  predictions that did not change since an earlier evaluation are not encoded again either
  (``cache_candidates=True``).
* Under a multi-process Trainer (``torchrun``/``accelerate launch``), every rank calls
  ``compute_metrics`` with the same gathered arrays, so the call shards (``shard=True``): the
  ranks compare a digest of their inputs, split the pairs, and gather the scores back in order,
  so no rank repeats another's work and every rank returns the same dict.
* ``batch_eval_metrics=True`` is supported: texts are collected batch by batch and scored when
  the Trainer passes ``compute_result=True``.

>>> from transformers import AutoTokenizer
>>> tok = AutoTokenizer.from_pretrained("tests/golden/tiny-bart")
>>> fn = compute_metrics(tok, metric="bertscore:minilm", num_layers=4)
>>> ids = tok(["the weather is cold today"])["input_ids"]
>>> sorted(fn((ids, ids)))  # an EvalPrediction or a (predictions, label_ids) pair
['bertscore_f1', 'bertscore_precision', 'bertscore_recall']
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.datasets import metric_prefix
from nlgscore.registry import cached


def restore_padding(ids: Any, pad_token_id: int) -> List[List[int]]:
    """Rows of token ids with every negative id (``-100``) replaced by the pad token.

    Accepts a 2-D array (as the Trainer passes) or ragged lists of ids.

    >>> restore_padding([[5, 6, -100], [7, -100, -100]], pad_token_id=1)
    [[5, 6, 1], [7, 1, 1]]
    >>> restore_padding([[5], [7, -100]], pad_token_id=1)
    [[5], [7, 1]]
    """
    rows = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    if rows and not isinstance(rows[0], (list, tuple)) and not hasattr(rows[0], "__len__"):
        rows = [rows]  # a single sequence
    out = []
    for row in rows:
        array = np.asarray(row)
        if array.dtype.kind == "f":  # logits instead of ids: the Trainer was not generating
            raise ArgumentError(
                "predictions are floating-point logits, not generated token ids; use "
                "Seq2SeqTrainingArguments(predict_with_generate=True)"
            )
        array = array.astype(np.int64).reshape(-1)
        out.append(np.where(array < 0, pad_token_id, array).tolist())
    return out


class GenerationMetrics:
    """The ``compute_metrics`` callable; see :func:`compute_metrics`."""

    def __init__(
        self, tokenizer: Any, metric: Union[str, ScorerLike], prefix: Optional[str], options: Dict[str, Any]
    ) -> None:
        if tokenizer is None or not hasattr(tokenizer, "batch_decode"):
            raise ArgumentTypeError("tokenizer must be a transformers tokenizer (with batch_decode)")
        if not isinstance(metric, (str, ScorerLike)):
            raise ArgumentTypeError(
                f"metric must be a spec string such as 'bertscore' or a Scorer, got {type(metric).__name__}"
            )
        if isinstance(metric, ScorerLike) and options:
            raise ArgumentError(f"options {sorted(options)} only apply to a metric given as a spec string")
        if isinstance(metric, str) and _caches_embeddings(metric):
            options.setdefault("cache_references", True)
            options.setdefault("cache_candidates", True)
        self.tokenizer = tokenizer
        self.metric = metric
        self.prefix = prefix if prefix is not None else metric_prefix(metric)
        self.options = options
        self._pending: List[List[str]] = [[], []]  # predictions, references (batch_eval_metrics)
        self.scorer  # noqa: B018 -- load now: an unavailable model fails before training, not at the first evaluation

    @property
    def scorer(self) -> ScorerLike:
        if isinstance(self.metric, ScorerLike):
            return self.metric
        return cached(self.metric, **self.options)

    def decode(self, ids: Any) -> List[str]:
        """Token ids → stripped texts, special tokens removed, ``-100`` treated as padding."""
        if isinstance(ids, tuple):  # some models return (generated ids, extra outputs)
            ids = ids[0]
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        if pad is None:
            raise ArgumentError("the tokenizer has neither a pad nor an eos token to restore -100 to")
        rows = restore_padding(ids, pad)
        if not rows:  # a zero-row batch: transformers 5 decodes [] as [''], a phantom empty pair
            return []
        return [text.strip() for text in self.tokenizer.batch_decode(rows, skip_special_tokens=True)]

    def score(self, predictions: Sequence[str], references: Sequence[str]) -> Dict[str, float]:
        """Mean of each score column over the pairs (``{}`` and a warning for an empty evaluation set)."""
        if len(predictions) != len(references):
            raise ArgumentError(f"got {len(predictions)} predictions for {len(references)} references")
        sep = "_" if self.prefix else ""
        if not predictions:
            warnings.warn("compute_metrics got an empty evaluation set; no scores", stacklevel=3)
            return {}
        # Every rank calls compute_metrics with the same gathered arrays: the call is split across
        # the ranks (their inputs compared first) and every rank gets every score.
        result = self.scorer.compute(list(predictions), references=list(references), shard=True)
        return {f"{self.prefix}{sep}{name}": float(np.mean(values)) for name, values in result.columns().items()}

    def __call__(self, eval_pred: Any, compute_result: Optional[bool] = None) -> Dict[str, float]:
        predictions, labels = _unpack(eval_pred)
        preds, refs = self.decode(predictions), self.decode(labels)
        if compute_result is None:
            return self.score(preds, refs)
        self._pending[0].extend(preds)
        self._pending[1].extend(refs)
        if not compute_result:
            return {}
        (preds, refs), self._pending = self._pending, [[], []]
        return self.score(preds, refs)

    def __repr__(self) -> str:
        return f"compute_metrics(metric={self.metric!r}, prefix={self.prefix!r})"


def _caches_embeddings(spec: str) -> bool:
    """Whether the scorer of ``spec`` can keep embeddings across calls (its class's capability flag).

    >>> _caches_embeddings("bertscore:minilm"), _caches_embeddings("prism:ref")
    (True, False)
    """
    from nlgscore.registry import metric, parse_spec

    return bool(getattr(metric(parse_spec(spec)[0]).scorer_class(), "caches_embeddings", False))


def _unpack(eval_pred: Any):
    if hasattr(eval_pred, "predictions") and hasattr(eval_pred, "label_ids"):
        return eval_pred.predictions, eval_pred.label_ids
    predictions, labels = eval_pred[:2]
    return predictions, labels


def compute_metrics(
    tokenizer: Any, metric: Union[str, ScorerLike] = "bertscore", prefix: Optional[str] = None, **options: Any
) -> GenerationMetrics:
    """A ``compute_metrics(EvalPrediction)`` for ``Seq2SeqTrainer`` (see the module docstring).

    ``metric`` is a spec for :func:`nlgscore.registry.build` (``"bertscore"``, ``"bertscore:minilm"``,
    ``"prism:ref"``, ``"bartscore:bart-large-cnn"``) whose constructor gets ``options`` (for
    example ``num_layers=``, ``device=``, ``accelerator=``), or a ready scorer (a ScorerLike). Keys are
    ``<prefix>_<column>``; ``prefix`` defaults to the metric name.
    """
    return GenerationMetrics(tokenizer, metric, prefix, dict(options))
