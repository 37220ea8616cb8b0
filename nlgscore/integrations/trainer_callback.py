"""``MetricCallback``: a Trainer callback that generates on an evaluation set and logs its scores.

``compute_metrics`` scores what the Trainer generated; the callback generates by itself, so it
works with a plain ``Trainer`` too, with a set other than the one the Trainer evaluates, and with
raw text columns the Trainer's collator never sees (the Trainer drops the columns its model does
not take from the batches it builds, not from ``trainer.eval_dataset``). At each evaluation
(every ``every``-th) it:

1. generates from the dataset's ``input_ids`` in batches of ``per_device_eval_batch_size``
   (padded by the tokenizer, as ``DataCollatorForSeq2Seq`` pads them), under ``torch.no_grad``
   with the model in eval mode, its mode restored after, with the Trainer's generation settings
   (``generation_max_length``, ``generation_num_beams``) unless ``generation_kwargs`` says otherwise;
2. takes the sources and references from the text columns it is given, else decodes them from
   ``input_ids`` and ``labels``;
3. scores them (the mean of each score column) and logs them through ``trainer.log``, so they are
   in ``trainer.state.log_history`` and reach every reporting integration's ``on_log``; the keys
   (``eval_<prefix>_<column>``, the evaluation's ``metric_key_prefix`` first) are also added to the
   metrics the evaluation returns, so ``metric_for_best_model`` can name them.

Under several processes (``torchrun``, ``accelerate launch``), each rank generates a contiguous
share of the batches with its own copy of the model (DDP; a model sharded by FSDP or DeepSpeed
ZeRO-3 is refused): the batches are those of one process, so a row is generated among the same
rows whatever the number of processes. The texts are gathered to every rank in dataset order and
scored with ``shard=True`` (every rank holds the same texts, and each scores its share of them);
the Trainer's ``log`` reports from the main process only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from transformers import TrainerCallback

from nlgscore.backend.distributed import Ranks
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.trainer import GenerationMetrics

__all__ = ["MetricCallback", "metric_key_prefix"]


def metric_key_prefix(metrics: Optional[Mapping]) -> str:
    """The ``metric_key_prefix`` of an evaluation's metrics (``"eval"`` when they do not say).

    ``Trainer.evaluate`` always adds ``<prefix>_runtime`` and ``<prefix>_samples_per_second``;
    a dict of evaluation sets is evaluated with ``eval_<name>``.

    Args:
        metrics: the metrics ``on_evaluate`` gets.

    Returns:
        The prefix the Trainer put before every key of this evaluation.

    Example:
        >>> metric_key_prefix({"eval_news_loss": 1.0, "eval_news_runtime": 0.1, "eval_news_samples_per_second": 9.0})
        'eval_news'
        >>> metric_key_prefix(None)
        'eval'
    """
    tail = "_runtime"
    found = [key[: -len(tail)] for key in metrics or () if key.endswith(tail)]
    found = [prefix for prefix in found if f"{prefix}_samples_per_second" in (metrics or {})]
    return found[0] if len(found) == 1 else "eval"


class MetricCallback(TrainerCallback):
    """Scores the model's generations on a dataset at each evaluation and logs them where the Trainer logs.

    A callback's hooks do not get the trainer, so it is given here; add the callback to the same
    trainer: ``trainer.add_callback(MetricCallback(trainer, ...))``.

    Args:
        trainer: the ``Trainer``/``Seq2SeqTrainer`` whose model generates and whose ``log`` reports.
        metric: a spec (``"prism:src:<checkpoint>:en"``, ``"bartscore:<checkpoint>:src"``,
            ``"bertscore:minilm"``) or a ready scorer (a ScorerLike).
        dataset: rows with ``input_ids`` (and ``labels`` or text columns). None: the trainer's
            ``eval_dataset`` at each evaluation (of a dict of them, the one being evaluated).
        tokenizer: pads the inputs and decodes; None: the trainer's ``processing_class``.
        source_column: the column of source texts (None: decoded from ``input_ids``).
        reference_column: the column of reference texts (None: decoded from ``labels``).
        generation_kwargs: arguments of ``model.generate`` (over the Trainer's ``generation_max_length``
            and ``generation_num_beams``).
        prefix: the keys' prefix after the evaluation's (None: the metric's name).
        every: score at the 1st evaluation and every ``every``-th after it.
        batch_size: rows per ``generate`` call (None: ``per_device_eval_batch_size``).
        context: read each sentence after the previous ``context`` sentences of its document.
        doc_ids: one document id per dataset row, in order (required with ``context``).
        **options: the scorer's options, given to :func:`nlgscore.registry.cached` with the spec.

    Raises:
        ArgumentTypeError: ``trainer`` is not a Trainer, there is no tokenizer, or an argument has
            the wrong type.
        ArgumentError: ``every``/``batch_size`` below 1, ``prefix`` gives the keys the trainer's
            ``compute_metrics`` already gives, or the model is sharded across processes (FSDP,
            DeepSpeed ZeRO-3), where each process cannot generate alone.

    Example:
        >>> import tempfile
        >>> from datasets import Dataset
        >>> from transformers import AutoTokenizer, AutoModelForSeq2SeqLM, Seq2SeqTrainer, Seq2SeqTrainingArguments
        >>> tok = AutoTokenizer.from_pretrained("tests/golden/tiny-bart")
        >>> data = Dataset.from_dict({"src": ["the cat sat on the mat", "it is cold"]})
        >>> data = data.map(lambda batch: tok(batch["src"]), batched=True)
        >>> args = Seq2SeqTrainingArguments(tempfile.mkdtemp(), use_cpu=True, report_to=[], generation_max_length=6)
        >>> model = AutoModelForSeq2SeqLM.from_pretrained("tests/golden/tiny-bart")
        >>> trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=data, processing_class=tok)
        >>> trainer.add_callback(MetricCallback(trainer, "prism:src:tests/golden/tiny-prism:en", source_column="src"))
        >>> sorted(key for key in trainer.evaluate() if "prism" in key)
        ['eval_prism_G_cand_given_src', 'eval_prism_H_cand_given_src', 'eval_prism_segment']
        >>> "eval_prism_segment" in trainer.state.log_history[-1]
        True
    """

    def __init__(
        self,
        trainer: Any,
        metric: Union[str, ScorerLike] = "bertscore",
        dataset: Any = None,
        *,
        tokenizer: Any = None,
        source_column: Optional[str] = None,
        reference_column: Optional[str] = None,
        generation_kwargs: Optional[Mapping] = None,
        prefix: Optional[str] = None,
        every: int = 1,
        batch_size: Optional[int] = None,
        context: int = 0,
        doc_ids: Optional[Sequence[Any]] = None,
        **options: Any,
    ) -> None:
        if not all(hasattr(trainer, name) for name in ("log", "model", "args", "state")):
            raise ArgumentTypeError(
                f"trainer must be a transformers Trainer (with log, model, args and state), got {type(trainer).__name__}"
            )
        if getattr(trainer, "is_fsdp_enabled", False) or _zero3():
            raise ArgumentError(
                "trainer: its model is sharded across the processes (FSDP or DeepSpeed ZeRO-3), so a process "
                "cannot generate on its share alone; score the Trainer's own generations with compute_metrics"
            )
        tokenizer = tokenizer if tokenizer is not None else getattr(trainer, "processing_class", None)
        if tokenizer is None or not hasattr(tokenizer, "pad"):
            raise ArgumentTypeError(
                "tokenizer: the trainer has no processing_class to pad and decode with; pass tokenizer= "
                "(or build the Trainer with processing_class=tokenizer)"
            )
        for name, column in (("source_column", source_column), ("reference_column", reference_column)):
            if column is not None and not isinstance(column, str):
                raise ArgumentTypeError(f"{name} must be a column name (str) or None, got {type(column).__name__}")
        if generation_kwargs is not None and not isinstance(generation_kwargs, Mapping):
            raise ArgumentTypeError(
                f"generation_kwargs must be a dict of model.generate arguments, got {type(generation_kwargs).__name__}"
            )
        self.every = _positive("every", every)
        self.batch_size = None if batch_size is None else _positive("batch_size", batch_size)
        self.metrics = GenerationMetrics(tokenizer, metric, prefix, dict(options), context=context, doc_ids=doc_ids)
        other = getattr(trainer, "compute_metrics", None)
        if isinstance(other, GenerationMetrics) and other.prefix == self.metrics.prefix:
            raise ArgumentError(
                f"prefix: the trainer's compute_metrics already gives the keys {other.prefix!r}_...; "
                "pass another prefix= so that neither overwrites the other"
            )
        self.trainer = trainer
        self.dataset = dataset
        self.tokenizer = tokenizer
        self.source_column = source_column
        self.reference_column = reference_column
        self.generation_kwargs = dict(generation_kwargs or {})
        self.evaluations: Dict[str, int] = {}  # evaluations seen per metric_key_prefix, scored or not (every=)

    # -- the hook -----------------------------------------------------------------------------
    def on_evaluate(
        self, args: Any, state: Any, control: Any, metrics: Optional[Dict[str, float]] = None, **kwargs: Any
    ) -> None:
        """Score the dataset and log ``<metric_key_prefix>_<prefix>_<column>``, every ``every``-th evaluation.

        The Trainer calls it after each evaluation; each evaluation set of a dict of them counts its
        own evaluations. The new keys are added to ``metrics`` too, so ``metric_for_best_model`` may
        name them.

        Args:
            args: the Trainer's ``TrainingArguments`` (not read).
            state: the Trainer's ``TrainerState`` (not read).
            control: the Trainer's ``TrainerControl`` (not read).
            metrics: the evaluation's metrics: its ``metric_key_prefix`` is read from their keys, and
                the scores are added to them.
            **kwargs: the rest the Trainer passes (model, tokenizer, dataloaders; not read).

        Raises:
            ArgumentError: a key the evaluation already has (another ``prefix=`` is needed), or a dict
                of evaluation sets none of which is the one evaluated.
        """
        key_prefix = metric_key_prefix(metrics)  # each set of a dict of evaluation sets counts its own
        seen = self.evaluations[key_prefix] = self.evaluations.get(key_prefix, 0) + 1
        if (seen - 1) % self.every:
            return
        logs = {f"{key_prefix}_{name}": value for name, value in self.score(self._dataset(key_prefix)).items()}
        if not logs:
            return
        taken = sorted(set(logs) & set(metrics or {}))
        if taken:
            raise ArgumentError(
                f"prefix: the evaluation already has the keys {taken}; pass another prefix= to MetricCallback"
            )
        if metrics is not None:
            metrics.update(logs)  # what evaluate() returns: metric_for_best_model may name these keys
        self.trainer.log(dict(logs))  # log adds the epoch to the dict it is given

    # -- the steps ----------------------------------------------------------------------------
    def score(self, dataset: Any = None) -> Dict[str, float]:
        """Generate on ``dataset`` and score: ``{"<prefix>_<column>": mean}`` (no evaluation prefix).

        Args:
            dataset: rows with ``input_ids``; None: the callback's dataset, else the trainer's ``eval_dataset``.

        Returns:
            The mean of each score column (``{}`` and a warning for an empty dataset).

        Raises:
            ArgumentError: the dataset lacks a column the metric needs (the message names the argument).
        """
        dataset = self._dataset("eval") if dataset is None else dataset
        predictions, references, sources = self._texts(dataset)
        return self.metrics.score(predictions, references, sources)

    def _texts(self, dataset: Any) -> Tuple[List[str], Optional[List[Any]], Optional[List[str]]]:
        """The generations on ``dataset`` (every row, in order, on every rank), and the references
        and sources the metric needs (None for the others)."""
        n = len(dataset)
        needs = self.metrics.needs
        sources = references = None
        if "sources" in needs:
            sources = (
                _column(dataset, self.source_column, "source_column")
                if self.source_column is not None
                else self.metrics.decode(_column(dataset, "input_ids", "source_column"))
            )
        if "references" in needs:
            references = (
                _column(dataset, self.reference_column, "reference_column")
                if self.reference_column is not None
                else self.metrics.decode(_column(dataset, "labels", "reference_column"))
            )
        size = self.batch_size or int(getattr(self.trainer.args, "per_device_eval_batch_size", 8))
        batches = [(start, min(start + size, n)) for start in range(0, n, size)]
        accelerator = getattr(self.trainer, "accelerator", None)
        count = int(getattr(accelerator, "num_processes", 1))
        ranks = Ranks(int(getattr(accelerator, "process_index", 0)), count)
        predictions = self._generate(dataset, [batches[i] for i in ranks.share(len(batches))])
        if count > 1:
            from accelerate.utils import gather_object

            predictions = gather_object(predictions)  # in rank order: the shares are contiguous
        return predictions, references, sources

    def generation_settings(self) -> Dict[str, Any]:
        """The arguments the callback gives ``model.generate``.

        Returns:
            The Trainer's ``generation_max_length`` (as ``max_length``) and ``generation_num_beams``
            (as ``num_beams``) where set, with ``generation_kwargs`` over them.
        """
        settings: Dict[str, Any] = {}
        for name, key in (("generation_max_length", "max_length"), ("generation_num_beams", "num_beams")):
            value = getattr(self.trainer.args, name, None)
            if value is not None:
                settings[key] = value
        settings.update(self.generation_kwargs)
        return settings

    def _generate(self, dataset: Any, batches: Sequence[Tuple[int, int]]) -> List[str]:
        """Decoded generations of the rows of ``batches`` (``(start, stop)`` ranges of ``dataset``), in order."""
        import torch

        model = self.trainer.model
        device = next(model.parameters()).device
        settings = self.generation_settings()
        was_training = model.training
        model.eval()
        out: List[str] = []
        try:
            with torch.no_grad():
                for start, stop in batches:
                    rows = [dataset[i] for i in range(start, stop)]
                    keys = [key for key in ("input_ids", "attention_mask") if key in rows[0]]
                    if "input_ids" not in keys:
                        raise ArgumentError(
                            f"dataset: the rows have no input_ids to generate from (keys: {sorted(rows[0])})"
                        )
                    features = [{key: _ids(row[key]) for key in keys} for row in rows]
                    batch = self.tokenizer.pad(features, return_tensors="pt")
                    generated = model.generate(**{key: batch[key].to(device) for key in keys}, **settings)
                    out.extend(self.metrics.decode(getattr(generated, "sequences", generated).cpu()))
        finally:
            model.train(was_training)
        return out

    def _dataset(self, key_prefix: str) -> Any:
        """The dataset to score at an evaluation named ``key_prefix``."""
        if self.dataset is not None:
            return self.dataset
        data = getattr(self.trainer, "eval_dataset", None)
        if isinstance(data, Mapping):  # evaluated one by one, as eval_<name>
            names = [name for name in data if key_prefix.endswith(f"_{name}")]
            if not names:
                raise ArgumentError(
                    f"dataset: the trainer's eval_dataset is a dict ({', '.join(map(str, data))}) and none is "
                    f"the one evaluated as {key_prefix!r}; pass dataset="
                )
            data = data[max(names, key=len)]
        if data is None:
            raise ArgumentError("dataset: the trainer has no eval_dataset; pass dataset= to MetricCallback")
        return data

    def __repr__(self) -> str:
        return f"MetricCallback(metric={self.metrics.metric!r}, prefix={self.metrics.prefix!r}, every={self.every})"


def _zero3() -> bool:
    """Whether DeepSpeed ZeRO-3 (parameters sharded across processes) is on."""
    try:
        from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled
    except ImportError:  # a transformers without the DeepSpeed integration
        return False
    return bool(is_deepspeed_zero3_enabled())


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    if value < 1:
        raise ArgumentError(f"{name} must be >= 1, got {value}")
    return value


def _ids(value: Any) -> List[int]:
    """A row's ids as a list (a formatted dataset gives tensors)."""
    return [int(token) for token in (value.tolist() if hasattr(value, "tolist") else value)]


def _column(dataset: Any, name: str, argument: str) -> List[Any]:
    """Column ``name`` of every row of ``dataset``; a missing column names ``argument``."""
    names = getattr(dataset, "column_names", None)
    if names is not None:  # a datasets.Dataset: the whole column at once
        if name not in names:
            raise ArgumentError(f"{argument}: the dataset has no column {name!r} (columns: {', '.join(names)})")
        return list(dataset[name])
    rows = [dataset[i] for i in range(len(dataset))]
    missing = [i for i, row in enumerate(rows) if name not in row]
    if missing:
        raise ArgumentError(f"{argument}: row {missing[0]} of the dataset has no {name!r}")
    return [row[name] for row in rows]
