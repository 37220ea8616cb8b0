"""A Seq2SeqTrainer on the tiny BART, scored with source-based metrics; rank 0 writes what each rank got.

Launched by tests/integrations/test_integrations_trainer.py as
``torchrun --nproc_per_node 2 tests/scripts/trainer_ranks.py MODEL_DIR OUT.json`` (CPU, gloo), on
the model that test trained; the test builds the same Trainer with :func:`seq2seq_trainer` in one
process and compares. The Trainer starts the process group (accelerate); the script ends it with
``trainer.end()`` and by exiting (a rank that hung or aborted would fail the launch).

Per rank it records ``evaluate``: ``Trainer.evaluate()`` with ``compute_metrics`` on Prism-src
(``num_examples=8``: the 2 ranks' batches of 3 are completed with copies of the first rows, which
Seq2SeqTrainer's gather keeps) and two :class:`~nlgscore.integrations.trainer_callback.MetricCallback`
(Prism-src from the text column, BARTScore s→h from the decoded ``input_ids``); ``batched``: the
same ``compute_metrics`` with ``batch_eval_metrics=True``; ``warning``: what a ``compute_metrics``
without ``num_examples`` warns on 2 processes; and ``signatures``, the scorers' signatures (the
kernel among them).
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SPECS = {
    "prism": f"prism:src:{GOLDEN / 'tiny-prism'}:en",  # Prism-src: quality estimation from the source
    "bartscore": f"bartscore:{GOLDEN / 'tiny-bart'}:src",  # BARTScore s→h (faithfulness, coherence)
}
SOURCES = [
    "the cat sat on the mat",
    "it is cold today",
    "a dog barks at night",
    "hello there",
    "good morning to you",
    "see you soon",
    "the train is late again",
    "we went to the sea",
]
TARGETS = ["a cat was on the mat", "the weather is cold", "dogs bark", "hi", "morning", "bye", "late train", "sea trip"]
DOC_IDS = ["a", "a", "a", "b", "b", "c", "c", "c"]  # three documents of consecutive lines
EVAL_BATCH = 3  # 8 rows: a short last batch, and 3 batches that 2 ranks do not split evenly
GENERATION_MAX_LENGTH = 8


def tokenized(tokenizer: Any) -> Any:
    """The pairs as a ``datasets.Dataset``: the text columns (``src``, ``tgt``) kept beside
    ``input_ids``/``attention_mask``/``labels`` (the Trainer drops them from its batches)."""
    import datasets

    data = datasets.Dataset.from_dict({"src": SOURCES, "tgt": TARGETS})
    return data.map(
        lambda b: {**tokenizer(b["src"]), "labels": tokenizer(text_target=b["tgt"])["input_ids"]}, batched=True
    )


def seq2seq_trainer(model: Any, tokenizer: Any, output_dir: str, compute_metrics: Any = None, **overrides: Any) -> Any:
    """The test's ``Seq2SeqTrainer``: CPU, no reporting, generating for its metrics with the inputs passed."""
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    settings: Dict[str, Any] = dict(
        output_dir=output_dir,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=EVAL_BATCH,
        learning_rate=1e-3,
        predict_with_generate=True,
        include_for_metrics=["inputs"],
        generation_max_length=GENERATION_MAX_LENGTH,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    settings.update(overrides)
    data = tokenized(tokenizer)
    return Seq2SeqTrainer(
        model=model,
        args=Seq2SeqTrainingArguments(**settings),
        train_dataset=data,
        eval_dataset=data,
        processing_class=tokenizer,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=compute_metrics,
    )


def add_callbacks(trainer: Any) -> list:
    """Prism-src read from the ``src`` column, and BARTScore s→h from the decoded ``input_ids``."""
    from nlgscore.integrations.trainer_callback import MetricCallback

    callbacks = [
        MetricCallback(trainer, SPECS["prism"], source_column="src", prefix="cb_prism"),
        MetricCallback(trainer, SPECS["bartscore"], prefix="cb_bart"),
    ]
    for callback in callbacks:
        trainer.add_callback(callback)
    return callbacks


def scores_only(metrics: Dict[str, float]) -> Dict[str, float]:
    """The metric keys of an evaluation (no loss, runtime, speed or epoch)."""
    return {key: value for key, value in metrics.items() if any(name in key for name in ("prism", "bart"))}


def main(model_dir: str, out_path: str) -> None:
    import torch
    import torch.distributed as dist
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from nlgscore.integrations.trainer import compute_metrics

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir)
    with tempfile.TemporaryDirectory() as tmp:
        prism = compute_metrics(tokenizer, SPECS["prism"], num_examples=len(SOURCES))
        trainer = seq2seq_trainer(model, tokenizer, tmp, compute_metrics=prism)
        callbacks = add_callbacks(trainer)
        report: Dict[str, Any] = {"rank": dist.get_rank(), "world": dist.get_world_size()}
        report["evaluate"] = scores_only(trainer.evaluate())
        batched = seq2seq_trainer(model, tokenizer, tmp, compute_metrics=prism, batch_eval_metrics=True)
        report["batched"] = scores_only(batched.evaluate())
        ids = tokenizer(SOURCES[:2], padding=True, return_tensors="np")["input_ids"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compute_metrics(tokenizer, SPECS["prism"])((ids, ids, ids))
        report["warning"] = [str(w.message) for w in caught if "num_examples" in str(w.message)]
        report["signatures"] = [str(prism.scorer.signature)] + [str(c.metrics.scorer.signature) for c in callbacks]
        everyone: list = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, report)
        if dist.get_rank() == 0:
            Path(out_path).write_text(json.dumps(everyone), encoding="utf-8")
        trainer.end()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
