"""``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)``, and :class:`MetricCallback`.

The returned callable decodes the generated ids and the labels (``-100`` restored to the pad
token first: the Trainer pads labels and cross-process gathers with ``-100``), scores them and
returns the mean of every score column, e.g. ``{"bertscore_precision": …, "bertscore_recall": …,
"bertscore_f1": …}``.

* A metric that scores against sources (``prism:src``, BARTScore's ``src`` direction) reads the
  evaluation inputs: ``Seq2SeqTrainingArguments(include_for_metrics=["inputs"])`` makes the Trainer
  pass them (``EvalPrediction.inputs``, the input ids padded and gathered like the labels), and they
  are decoded the same way. A metric that reads references and sources gets both.
* ``context=k`` with ``doc_ids=`` (one document id per evaluation example, in the evaluation
  set's order) reads each sentence after the previous ``k`` of its document: the Trainer
  evaluates in order, so the ids line up with the rows.
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
* There, give ``num_examples=len(eval_dataset)`` (or ``doc_ids=``, of that length). The
  evaluation batches of N processes are completed with copies of the first examples (accelerate's
  ``even_batches``), and ``Seq2SeqTrainer`` gathers with ``accelerator.gather``, which keeps them
  (the plain ``Trainer``'s ``gather_for_metrics`` drops them), so the arrays are longer than the
  evaluation set by those copies, which would be scored twice. With the length known they are
  dropped (after checking that they repeat the first rows); without it a warning says so.
* ``batch_eval_metrics=True`` is supported: texts are collected batch by batch and scored when
  the Trainer passes ``compute_result=True``. The Trainer gathers each batch's predictions and
  labels across processes but passes this process's own batch as the inputs, so the sources of
  every process are gathered here, in the order of the gathered predictions.

:class:`~nlgscore.integrations.trainer_callback.MetricCallback` (``nlgscore.MetricCallback``; its
own module, so that this one needs no transformers) scores its own generations at every evaluation.

>>> from transformers import AutoTokenizer
>>> tok = AutoTokenizer.from_pretrained("tests/golden/tiny-bart")
>>> fn = compute_metrics(tok, metric="bertscore:minilm", num_layers=4)
>>> ids = tok(["the weather is cold today"])["input_ids"]
>>> sorted(fn((ids, ids)))  # an EvalPrediction or a (predictions, label_ids) pair
['bertscore_f1', 'bertscore_precision', 'bertscore_recall']
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.core.context import check_context
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.datasets import metric_prefix
from nlgscore.registry import cached

__all__ = ["GenerationMetrics", "compute_metrics", "restore_padding"]

# What the error of a source-based metric without the inputs tells the reader to set.
INPUTS_FIX = 'Seq2SeqTrainingArguments(include_for_metrics=["inputs"])'


def restore_padding(ids: Any, pad_token_id: int) -> List[List[int]]:
    """Rows of token ids with every negative id (``-100``, the Trainer's padding of labels and of
    gathered predictions) replaced by the pad token, so a tokenizer can decode them.

    Args:
        ids: a 2-D array (as the Trainer passes), ragged lists of ids, or one sequence.
        pad_token_id: the tokenizer's pad token (decoding with ``skip_special_tokens`` drops it).

    Returns:
        One list of ids per row.

    Raises:
        ArgumentError: the values are floating-point logits, not generated ids (the Trainer was
            not generating: ``predict_with_generate=True`` is needed).

    Example:
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
    """The ``compute_metrics`` callable; see :func:`compute_metrics`.

    Args:
        tokenizer: the tokenizer that decodes predictions, labels and inputs.
        metric: a spec string or a ready scorer.
        prefix: the keys' prefix (None: the metric's name).
        options: the scorer's options (a spec string only), given to :func:`nlgscore.registry.cached`.
        context: previous sentences of its document each sentence is read after (0: none).
        doc_ids: one document id per evaluation example, in the evaluation set's order.
        num_examples: the evaluation set's length (None: ``len(doc_ids)`` where given): rows the
            Trainer passes past it are the copies that completed the last batches, and are dropped.

    Raises:
        ArgumentTypeError: ``tokenizer`` cannot decode, ``metric`` is neither a spec nor a scorer,
            or ``context``/``doc_ids`` have the wrong type.
        ArgumentError: options given with a ready scorer, ``context`` without ``doc_ids``, or
            ``num_examples`` below 0 or other than ``len(doc_ids)``.

    Example:
        >>> from transformers import AutoTokenizer
        >>> tok = AutoTokenizer.from_pretrained("tests/golden/tiny-bart")
        >>> fn = GenerationMetrics(tok, "prism:src:tests/golden/tiny-prism:en", None, {})
        >>> fn.needs
        ('sources',)
    """

    def __init__(
        self,
        tokenizer: Any,
        metric: Union[str, ScorerLike],
        prefix: Optional[str],
        options: Dict[str, Any],
        context: int = 0,
        doc_ids: Optional[Sequence[Any]] = None,
        num_examples: Optional[int] = None,
    ) -> None:
        if tokenizer is None or not hasattr(tokenizer, "batch_decode"):
            raise ArgumentTypeError("tokenizer must be a transformers tokenizer (with batch_decode)")
        if not isinstance(metric, (str, ScorerLike)):
            raise ArgumentTypeError(
                f"metric must be a spec string such as 'bertscore' or a Scorer, got {type(metric).__name__}"
            )
        if isinstance(metric, ScorerLike) and options:
            raise ArgumentError(f"options {sorted(options)} only apply to a metric given as a spec string")
        # Checked now (types, each document's lines consecutive), against the evaluation set's length later.
        size = len(doc_ids) if doc_ids is not None and hasattr(doc_ids, "__len__") else 0
        context, _ = check_context(context, doc_ids, size)
        if isinstance(metric, str) and _caches_embeddings(metric):
            options.setdefault("cache_references", True)
            options.setdefault("cache_candidates", True)
        self.tokenizer = tokenizer
        self.metric = metric
        self.prefix = prefix if prefix is not None else metric_prefix(metric)
        self.options = options
        self.context = context
        self.doc_ids = None if doc_ids is None else list(doc_ids)
        self.num_examples = _num_examples(num_examples, self.doc_ids)
        self._num_examples_given = num_examples is not None  # which argument an error names
        self._warned = False  # the warning of a multi-process evaluation without num_examples, once
        # predictions, references, sources collected batch by batch (batch_eval_metrics)
        self._pending: Tuple[List[str], List[str], List[str]] = ([], [], [])
        self.scorer  # noqa: B018 -- load now: an unavailable model fails before training, not at the first evaluation

    @property
    def scorer(self) -> ScorerLike:
        """The scorer (built once per process for a spec: :func:`nlgscore.registry.cached`)."""
        if isinstance(self.metric, ScorerLike):
            return self.metric
        return cached(self.metric, **self.options)

    @property
    def needs(self) -> Tuple[str, ...]:
        """The inputs the metric scores with: ``"references"`` (the labels), ``"sources"`` (the inputs), or both."""
        return tuple(self.scorer.needs)

    def decode(self, ids: Any) -> List[str]:
        """Token ids to stripped texts, special tokens removed, ``-100`` treated as padding.

        Args:
            ids: a batch of generated ids or labels (a 2-D array or ragged lists); a tuple, as some
                models return it, is read as its first entry (the generated ids).

        Returns:
            One text per row (none for a batch of no rows).

        Raises:
            ArgumentError: the tokenizer has neither a pad nor an eos token to restore ``-100`` to, or
                the ids are logits.
        """
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

    def score(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence[str]] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> Dict[str, float]:
        """Mean of each score column over the predictions (``{}`` and a warning for an empty evaluation set).

        Args:
            predictions: the decoded generations, in evaluation order.
            references: one reference per prediction (None for a metric that reads none).
            sources: one source per prediction (None for a metric that reads none).

        Returns:
            ``{"<prefix>_<column>": mean}`` for every score column.

        Raises:
            ArgumentError: an input the metric needs is missing or of another length, or ``doc_ids``
                does not have one id per prediction.
        """
        for name, given in (("references", references), ("sources", sources)):
            if given is not None and len(given) != len(predictions):
                raise ArgumentError(f"got {len(predictions)} predictions for {len(given)} {name}")
        sep = "_" if self.prefix else ""
        if not predictions:
            warnings.warn("compute_metrics got an empty evaluation set; no scores", stacklevel=3)
            return {}
        extra: Dict[str, Any] = {}
        if self.doc_ids is not None:
            if len(self.doc_ids) != len(predictions):
                raise ArgumentError(
                    f"doc_ids has {len(self.doc_ids)} ids but the evaluation set has {len(predictions)} examples: "
                    "pass one document id per evaluation example, in the evaluation set's order"
                )
            extra = {"context": self.context, "doc_ids": self.doc_ids}
        # Every rank calls with the same texts (the Trainer's gathered arrays, or the callback's
        # gathered generations): the call is split across the ranks (their inputs compared first)
        # and every rank gets every score.
        result = self.scorer.compute(
            list(predictions),
            references=None if references is None else list(references),
            sources=None if sources is None else list(sources),
            shard=True,
            **extra,
        )
        return {f"{self.prefix}{sep}{name}": float(np.mean(values)) for name, values in result.columns().items()}

    def texts(self, eval_pred: Any) -> Tuple[List[str], Optional[List[str]], Optional[List[str]]]:
        """The predictions, and the references and sources the metric needs (None for the others), decoded.

        Args:
            eval_pred: an ``EvalPrediction`` or a ``(predictions, label_ids[, inputs])`` tuple.

        Returns:
            ``(predictions, references or None, sources or None)``.

        Raises:
            ArgumentError: the metric needs sources and ``eval_pred`` has no inputs (the message names
                ``include_for_metrics=["inputs"]``).
        """
        predictions, labels, inputs = _unpack(eval_pred)
        preds = self.decode(predictions)
        needs = self.needs
        refs = self.decode(labels) if "references" in needs else None
        srcs = None
        if "sources" in needs:
            if inputs is None:
                raise ArgumentError(
                    f"{self.scorer.name} scores predictions against their sources, but the Trainer passed no "
                    f"inputs to compute_metrics; set {INPUTS_FIX} so that it passes the input ids"
                )
            if isinstance(inputs, Mapping):  # batch_eval_metrics: this process's own batch, not gathered
                if "input_ids" not in inputs:
                    raise ArgumentError(f"the evaluation inputs have no input_ids to decode (keys: {sorted(inputs)})")
                srcs = _rows_of_every_process(self.decode(inputs["input_ids"]), len(preds))
            else:
                srcs = self.decode(inputs)
        return preds, refs, srcs

    def __call__(self, eval_pred: Any, compute_result: Optional[bool] = None) -> Dict[str, float]:
        preds, refs, srcs = self.texts(eval_pred)
        if compute_result is None:
            return self.score(*self.evaluation_set(preds, refs, srcs))
        for pending, texts in zip(self._pending, (preds, refs, srcs), strict=True):
            pending.extend(texts or ())
        if not compute_result:
            return {}
        (preds, refs, srcs), self._pending = self._pending, ([], [], [])
        needs = self.needs
        refs_or_none = refs if "references" in needs else None
        return self.score(*self.evaluation_set(preds, refs_or_none, srcs if "sources" in needs else None))

    def evaluation_set(
        self, predictions: List[str], references: Optional[List[str]], sources: Optional[List[str]]
    ) -> Tuple[List[str], Optional[List[str]], Optional[List[str]]]:
        """The rows of the evaluation set: the first ``num_examples``, the copies past them dropped.

        Args:
            predictions: the decoded rows the Trainer passed.
            references: their references (None where the metric reads none).
            sources: their sources (None where the metric reads none).

        Returns:
            The same three, cut to ``num_examples`` rows (unchanged where it is None).

        Raises:
            ArgumentError: fewer rows than ``num_examples``, or rows past it that are not copies of the
                first rows (``num_examples`` is then not the evaluation set's length).

        Example:
            >>> from transformers import AutoTokenizer
            >>> tok = AutoTokenizer.from_pretrained("tests/golden/tiny-bart")
            >>> fn = compute_metrics(tok, "prism:src:tests/golden/tiny-prism:en", num_examples=3)
            >>> # 2 processes, batches of 2: the second process's batch is completed with the first example
            >>> fn.evaluation_set(["x", "y", "z", "x again"], None, ["a", "b", "c", "a"])
            (['x', 'y', 'z'], None, ['a', 'b', 'c'])
        """
        n = self.num_examples
        if n is None:
            if _world_size() > 1 and not self._warned:
                self._warned = True
                warnings.warn(
                    f"compute_metrics on {_world_size()} processes without num_examples: Seq2SeqTrainer gathers "
                    "the evaluation batches with the copies of the first examples that complete the last "
                    "batches, so those are scored twice; pass num_examples=len(eval_dataset) (or doc_ids=)",
                    stacklevel=3,
                )
            return predictions, references, sources
        given = f"num_examples={n}" if self.doc_ids is None or self._num_examples_given else f"doc_ids has {n} ids"
        if len(predictions) < n:
            raise ArgumentError(
                f"{given} but the Trainer passed {len(predictions)} predictions: it must be the evaluation set's length"
            )
        extra = len(predictions) - n
        if n == 0:  # an empty evaluation set: nothing to score (and nothing the copies could repeat)
            return [], None if references is None else [], None if sources is None else []
        for name, texts in (("references", references), ("sources", sources)):
            if texts is not None and any(texts[n + i] != texts[i % n] for i in range(extra)):
                raise ArgumentError(
                    f"{given} but the Trainer passed {len(predictions)} rows, and the {name} past the "
                    f"first {n} do not repeat the first ones: it must be the evaluation set's length"
                )
        cut = (None if texts is None else texts[:n] for texts in (references, sources))
        return (predictions[:n], *cut)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"compute_metrics(metric={self.metric!r}, prefix={self.prefix!r})"


def _num_examples(num_examples: Any, doc_ids: Optional[List[Any]]) -> Optional[int]:
    """The evaluation set's length from ``num_examples`` and ``doc_ids`` (None where neither says)."""
    if num_examples is None:
        return None if doc_ids is None else len(doc_ids)
    if isinstance(num_examples, bool) or not isinstance(num_examples, int):
        raise ArgumentTypeError(
            f"num_examples must be an int (the evaluation set's length), got {type(num_examples).__name__}"
        )
    if num_examples < 0:
        raise ArgumentError(f"num_examples must be >= 0 (the evaluation set's length), got {num_examples}")
    if doc_ids is not None and len(doc_ids) != num_examples:
        raise ArgumentError(f"num_examples={num_examples} but doc_ids has {len(doc_ids)} ids (one per example)")
    return num_examples


def _world_size() -> int:
    """The processes of the running process group (1 without one; a process that never imported
    torch runs none)."""
    import sys

    if "torch.distributed" not in sys.modules:
        return 1
    import torch.distributed as dist

    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _rows_of_every_process(rows: List[str], n: int) -> List[str]:
    """The first ``n`` of every process's ``rows``, in process order: what the Trainer's gather
    makes of a batch.

    >>> _rows_of_every_process(["a", "b"], 2)  # one process: its own rows
    ['a', 'b']
    """
    world = _world_size()
    if world > 1:
        import torch.distributed as dist

        everyone: List[Any] = [None] * world
        dist.all_gather_object(everyone, rows)  # every rank calls compute_metrics at every batch
        rows = [text for part in everyone for text in part]
    if len(rows) < n:
        raise ArgumentError(f"got {n} predictions but the inputs of the batch have {len(rows)} rows")
    return rows[:n]


def _caches_embeddings(spec: str) -> bool:
    """Whether the scorer of ``spec`` can keep embeddings across calls (its class's capability flag).

    >>> _caches_embeddings("bertscore:minilm"), _caches_embeddings("prism:ref")
    (True, False)
    """
    from nlgscore.registry import metric, parse_spec

    return bool(getattr(metric(parse_spec(spec)[0]).scorer_class(), "caches_embeddings", False))


def _unpack(eval_pred: Any) -> Tuple[Any, Any, Any]:
    """``(predictions, label_ids, inputs or None)`` of an ``EvalPrediction`` or a tuple."""
    if hasattr(eval_pred, "predictions") and hasattr(eval_pred, "label_ids"):
        return eval_pred.predictions, eval_pred.label_ids, getattr(eval_pred, "inputs", None)
    items = tuple(eval_pred)
    return items[0], items[1], items[2] if len(items) > 2 else None


def compute_metrics(
    tokenizer: Any,
    metric: Union[str, ScorerLike] = "bertscore",
    prefix: Optional[str] = None,
    *,
    context: int = 0,
    doc_ids: Optional[Sequence[Any]] = None,
    num_examples: Optional[int] = None,
    **options: Any,
) -> GenerationMetrics:
    """A ``compute_metrics(EvalPrediction)`` for ``Seq2SeqTrainer`` (see the module docstring).

    Args:
        tokenizer: the tokenizer of the model being trained (decodes predictions, labels, inputs).
        metric: a spec for :func:`nlgscore.registry.build` (``"bertscore"``, ``"bertscore:minilm"``,
            ``"prism:src:<checkpoint>:en"``, ``"bartscore:bart-large-cnn:src"``) or a ready scorer
            (a ScorerLike). A metric that scores against sources needs
            ``Seq2SeqTrainingArguments(include_for_metrics=["inputs"])``.
        prefix: the keys' prefix (None: the metric's name); the Trainer adds ``eval_``.
        context: read each sentence after the previous ``context`` sentences of its document.
        doc_ids: one document id per evaluation example, in the evaluation set's order (required
            with ``context``).
        num_examples: ``len(eval_dataset)``, for a Trainer on several processes (None: ``len(doc_ids)``
            where given): the rows past it, copies that completed the last batches, are dropped.
        **options: the scorer's options (``num_layers=``, ``device=``, ``batch_size=`` ...), given
            to :func:`nlgscore.registry.cached` with the spec.

    Returns:
        The callable: ``fn(eval_pred, compute_result=None)`` → ``{"<prefix>_<column>": mean}``.

    Raises:
        ArgumentTypeError: ``tokenizer`` cannot decode or ``metric`` is neither a spec nor a scorer.
        ArgumentError: options with a ready scorer, ``context`` without ``doc_ids``; when called,
            a source-based metric without the inputs, ``doc_ids`` of another length than the
            evaluation set, or rows that do not fit ``num_examples``.

    Example:
        >>> from transformers import AutoTokenizer
        >>> tok = AutoTokenizer.from_pretrained("tests/golden/tiny-bart")
        >>> fn = compute_metrics(tok, metric="prism:src:tests/golden/tiny-prism:en")
        >>> gen, src = tok(["a cat sat"])["input_ids"], tok(["the cat sat"])["input_ids"]
        >>> sorted(fn((gen, gen, src)))  # predictions, label_ids, inputs
        ['prism_G_cand_given_src', 'prism_H_cand_given_src', 'prism_segment']
        >>> try:
        ...     fn((gen, gen))  # no inputs: the Trainer was not asked for them
        ... except ArgumentError as err:
        ...     print(str(err).split("; ")[1])
        set Seq2SeqTrainingArguments(include_for_metrics=["inputs"]) so that it passes the input ids
    """
    return GenerationMetrics(
        tokenizer, metric, prefix, dict(options), context=context, doc_ids=doc_ids, num_examples=num_examples
    )
