"""Fine-tune BART on paraphrase pairs the way the BARTScore authors made ``bart-large-cnn-para``.

The paper (Yuan et al. 2021, section 3.3.2): BART fine-tuned on CNN/DailyMail is fine-tuned
further on ParaBank2, "a random subset of 30,000 data ... for one epoch with a batch size of 20
and a learning rate of 5e-5", on two 2080Ti GPUs in under an hour. The authors' training code
(neulab/BARTScore ``train/reproduce``) fixes what the paper leaves out, and the defaults here
follow it:

* base ``facebook/bart-large-cnn``; AdamW (epsilon 1e-8, no weight decay); the learning rate
  decays linearly to zero over ``epochs * (pairs // batch + 1)`` steps, with no warm-up; seed 666;
  both texts truncated at 1,024 tokens; full fp32;
* the source is the pair's ``text`` and the target its ``summary``: their ParaBank2 file holds
  lines such as ``{"text": "1994 German Grand Prix", "summary": "1994 Grand Prix of Germany"}``
  (the paper does not say which side is which);
* the loss of a batch is the mean over its examples of each example's mean target-token
  cross-entropy (they run the examples one at a time and add ``loss / batch_size``), not the
  token-weighted mean ``Seq2SeqTrainer`` computes by default: :class:`AuthorsLossTrainer`.

Input: a JSONL file (``{"text": ..., "summary": ...}``, or ``source``/``target``) or a TSV file
(``source<TAB>target``; ``--columns I,J`` picks two 0-based columns of a wider file, such as a
ParaBank2 release whose lines hold a sentence and its paraphrases). With more pairs than
``--pairs`` (30,000), a random subset of that size is drawn (``--seed``). Output: a Hugging Face
checkpoint folder (``model.safetensors``, config, tokenizer, and ``bartscore_para.json`` recording
the data's and the weights' SHA-256 and the settings) that ``BARTScorer(checkpoint=OUT)`` and
``nlgscore.load("bartscore:OUT")`` load, signed ``para:finetuned-sha256-…``; ``--save-pth`` also
writes ``bart.pth`` in the authors' format (``torch.save(model.state_dict())``), which
``para_weights=`` reads.

What a full run needs. Data: ParaBank2 (https://nlp.jhu.edu/parabank/, tens of millions of
pairs) cannot be downloaded here, and the authors did not publish their 30,000-pair subset, so
a rerun draws its own subset and gives weights close to, not equal to, their ``bart.pth``.
Steps: 30,000 / 20 = 1,500 optimiser steps. Memory: bart-large-cnn has 406M parameters, and fp32
weights, gradients and AdamW's two moments take 6.5 GB before activations; one step of 20 pairs
of about 49 tokens a side (a randomly initialised model of bart-large's sizes, on CPU) peaked at
9.7 GB resident, so a GPU of 12 GB or more holds the paper's batch in one piece (the authors
split the model over two 11 GB 2080Ti; ``--per-device-batch 10`` halves the activations). Time:
that step took 52 s on 2 CPU cores (about 22 hours for the run: use a GPU); the paper reports
under an hour on two 2080Ti, and the run's ~4e15 floating-point operations (6 x 406M parameters x
~1,000 tokens a step x 1,500 steps) are minutes on one current datacentre GPU.

Usage::

    python scripts/finetune_bartscore_para.py parabank2.jsonl bart-large-cnn-para-ft
    python scripts/finetune_bartscore_para.py pairs.tsv out --base tests/golden/tiny-bart --pairs 8 --batch-size 4 --cpu
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's nlgscore, run from anywhere

from nlgscore.seq2seq.bartscore_para import PARA_RECORD, PARA_VARIANT, file_sha256

# The paper's settings (section 3.3.2) and the authors' training code's (train/reproduce/args.py, finetune.py).
PAPER = {"base": "facebook/bart-large-cnn", "pairs": 30000, "epochs": 1, "batch_size": 20, "learning_rate": 5e-5}
AUTHORS = {"seed": 666, "adam_epsilon": 1e-8, "weight_decay": 0.0, "warmup_steps": 0, "max_length": 1024}
SOURCE_KEYS, TARGET_KEYS = ("text", "source"), ("summary", "target")


def read_pairs(path: str, columns: Optional[Tuple[int, int]] = None) -> List[Tuple[str, str]]:
    """(source, target) pairs of a JSONL or TSV file, in file order.

    Args:
        path: ``*.jsonl``/``*.json`` (one object per line: ``text``/``summary`` or
            ``source``/``target``) or any other name, read as tab-separated values.
        columns: the TSV columns of the source and the target (0-based; default the first two).

    Returns:
        The pairs, stripped, as the authors' loader strips them.

    Raises:
        ValueError: a line lacks a source or a target (naming ``data`` and the line).

    Example:
        >>> import tempfile
        >>> path = tempfile.mktemp(suffix=".tsv")
        >>> _ = open(path, "w").write("0.9\\tA cat sat.\\tThe cat was sitting.\\n")
        >>> read_pairs(path, columns=(1, 2))
        [('A cat sat.', 'The cat was sitting.')]
    """
    pairs = []
    with open(path, encoding="utf-8", newline="") as handle:
        if path.endswith((".jsonl", ".json")):
            rows = [(n, line, _json_pair(line)) for n, line in enumerate(handle, 1) if line.strip()]
        else:
            tsv = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            rows = [(n, "\t".join(row), _tsv_pair(row, columns or (0, 1))) for n, row in enumerate(tsv, 1)]
    for number, line, pair in rows:
        if pair is None or not pair[0].strip() or not pair[1].strip():
            raise ValueError(f"data {path}:{number}: no source and target there ({line[:80]!r})")
        pairs.append((pair[0].strip(), pair[1].strip()))
    if not pairs:
        raise ValueError(f"data {path!r} holds no pairs")
    return pairs


def _json_pair(line: str) -> Optional[Tuple[str, str]]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    source = next((obj[k] for k in SOURCE_KEYS if isinstance(obj.get(k), str)), None)
    target = next((obj[k] for k in TARGET_KEYS if isinstance(obj.get(k), str)), None)
    return (source, target) if source is not None and target is not None else None


def _tsv_pair(row: List[str], columns: Tuple[int, int]) -> Optional[Tuple[str, str]]:
    return (row[columns[0]], row[columns[1]]) if len(row) > max(columns) else None


def choose_pairs(pairs: List[Tuple[str, str]], count: int, seed: int) -> List[Tuple[str, str]]:
    """A random subset of ``count`` pairs (the paper's "random subset"), or all of them if fewer.

    Args:
        pairs: every pair read.
        count: how many to keep.
        seed: the draw's seed.

    Returns:
        The subset, in the order drawn.

    Example:
        >>> choose_pairs([("a", "b"), ("c", "d"), ("e", "f")], 2, seed=0)
        [('c', 'd'), ('e', 'f')]
    """
    return list(pairs) if len(pairs) <= count else random.Random(seed).sample(pairs, count)


def _trainer_class() -> Any:
    from transformers import Seq2SeqTrainer

    class AuthorsLossTrainer(Seq2SeqTrainer):
        """Seq2SeqTrainer with the authors' loss: per example, the mean over its target tokens;
        per optimiser step, the sum over its examples divided by the step's batch size."""

        loss_is_scaled_for_ga = True  # already divided by the whole step's batch, accumulation included

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            import torch

            labels = inputs["labels"]
            outputs = model(**{k: v for k, v in inputs.items() if k != "labels"})
            losses = torch.nn.functional.cross_entropy(
                outputs.logits.flatten(0, 1).float(), labels.flatten(), ignore_index=-100, reduction="none"
            ).view_as(labels)
            counted = labels.ne(-100)
            per_example = (losses * counted).sum(1) / counted.sum(1).clamp(min=1)
            step_batch = self.args.per_device_train_batch_size * self.args.gradient_accumulation_steps
            loss = per_example.sum() / step_batch
            return (loss, outputs) if return_outputs else loss

    return AuthorsLossTrainer


def finetune(args: argparse.Namespace) -> Dict[str, Any]:
    """Fine-tune ``args.base`` on ``args.data`` and save the checkpoint folder ``args.out_dir``.

    Args:
        args: the parsed command line (:func:`parse_args`).

    Returns:
        The record written to ``OUT/bartscore_para.json``.

    Raises:
        ValueError: the data cannot be read as pairs, or the batch sizes do not divide.
        OSError: the base model cannot be found.

    Example:
        >>> import json, tempfile
        >>> data = tempfile.mktemp(suffix=".jsonl")
        >>> line = json.dumps({"text": "A cat sat.", "summary": "The cat was sitting."})
        >>> _ = open(data, "w").write(line + "\\n")
        >>> args = parse_args([data, tempfile.mkdtemp(), "--base", "tests/golden/tiny-bart", "--cpu"])
        >>> record = finetune(args)  # doctest: +ELLIPSIS
        {'train_runtime': ...}
        >>> record["training"]["steps"], record["weights"]["kind"]
        (1, 'finetune')
    """
    import torch
    from transformers import (
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
        DataCollatorForSeq2Seq,
        Seq2SeqTrainingArguments,
        get_linear_schedule_with_warmup,
    )

    from nlgscore.backend.models import resolve

    if args.batch_size % args.per_device_batch:
        raise ValueError(
            f"--batch-size {args.batch_size} is not a multiple of --per-device-batch {args.per_device_batch}"
        )
    read = read_pairs(args.data, args.columns)
    pairs = choose_pairs(read, args.pairs, args.seed)
    resolved = resolve(args.base, args.revision, flag="--base")
    tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    model = AutoModelForSeq2SeqLM.from_pretrained(resolved.path, dtype=torch.float32)
    examples = [
        {
            "input_ids": tokenizer(src, max_length=args.max_length, truncation=True)["input_ids"],
            "labels": tokenizer(text_target=tgt, max_length=args.max_length, truncation=True)["input_ids"],
        }
        for src, tgt in pairs
    ]
    # The authors' schedule length: epochs * (pairs // batch + 1) steps, whatever --max-steps stops at.
    schedule = args.epochs * (len(examples) // args.batch_size + 1)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=args.learning_rate, eps=AUTHORS["adam_epsilon"], weight_decay=args.weight_decay
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, schedule)
    scratch = tempfile.mkdtemp(prefix="finetune_bartscore_para-")  # the Trainer's own files, not the model's
    training = Seq2SeqTrainingArguments(
        output_dir=scratch,
        per_device_train_batch_size=args.per_device_batch,
        gradient_accumulation_steps=args.batch_size // args.per_device_batch,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps if args.max_steps is not None else -1,
        learning_rate=args.learning_rate,
        seed=args.seed,
        data_seed=args.seed,
        bf16=args.bf16,
        use_cpu=args.cpu,
        save_strategy="no",
        logging_steps=args.logging_steps,
        report_to="none",
        remove_unused_columns=False,
        disable_tqdm=True,
    )
    trainer = _trainer_class()(
        model=model,
        args=training,
        train_dataset=examples,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        processing_class=tokenizer,
        optimizers=(optimizer, scheduler),
    )
    started = time.perf_counter()
    metrics = trainer.train().metrics
    seconds = time.perf_counter() - started
    shutil.rmtree(scratch, ignore_errors=True)
    # save_pretrained rather than Trainer.save_model, which adds a pickled training_args.bin.
    trainer.model.save_pretrained(args.out_dir)
    tokenizer.save_pretrained(args.out_dir)
    if args.save_pth:
        torch.save(trainer.model.state_dict(), os.path.join(args.out_dir, "bart.pth"))
    record = _record(args, resolved, len(read), len(pairs), trainer.state.global_step, seconds, metrics)
    with open(os.path.join(args.out_dir, PARA_RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2)
    return record


def _weights_digest(out_dir: str) -> Tuple[str, str]:
    """(file names, SHA-256) of the saved weights: one file, or every shard in name order."""
    import hashlib

    names = sorted(name for name in os.listdir(out_dir) if name.endswith(".safetensors"))
    if len(names) == 1:
        return names[0], file_sha256(os.path.join(out_dir, names[0]))
    digest = hashlib.sha256("".join(file_sha256(os.path.join(out_dir, n)) for n in names).encode())
    return "+".join(names), digest.hexdigest()


def _record(
    args: argparse.Namespace, resolved: Any, read: int, used: int, steps: int, seconds: float, metrics: Dict
) -> Dict[str, Any]:
    names, sha = _weights_digest(args.out_dir)
    return {
        "variant": PARA_VARIANT,
        "weights": {"kind": "finetune", "file": names, "sha256": sha},
        "base": {"checkpoint": args.base, "name": resolved.name, "revision": resolved.revision},
        "data": {
            "file": os.path.basename(args.data),
            "sha256": file_sha256(args.data),
            "pairs_read": read,
            "pairs_used": used,
        },  # fmt: skip
        "training": {
            "epochs": args.epochs,
            "batch_size": args.batch_size,
            "per_device_batch": args.per_device_batch,
            "learning_rate": args.learning_rate,
            "weight_decay": args.weight_decay,
            "warmup_steps": args.warmup_steps,
            "max_length": args.max_length,
            "seed": args.seed,
            "bf16": args.bf16,
            "steps": steps,
            "seconds": round(seconds, 2),
            "train_loss": metrics.get("train_loss"),
        },
        "finetuned_with": "scripts/finetune_bartscore_para.py (transformers Seq2SeqTrainer, the authors' loss)",
    }


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line, the paper's settings as defaults; argparse exits on a bad value.

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).

    Returns:
        The settings.

    Example:
        >>> args = parse_args(["pairs.jsonl", "out"])
        >>> args.pairs, args.epochs, args.batch_size, args.learning_rate
        (30000, 1, 20, 5e-05)
    """
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", help="paraphrase pairs: JSONL (text/summary) or TSV (source<TAB>target)")
    parser.add_argument("out_dir", help="output folder for the fine-tuned checkpoint")
    parser.add_argument("--base", default=PAPER["base"], help=f"model to fine-tune (default {PAPER['base']})")
    parser.add_argument("--revision", default=None, help="the base's Hub revision")
    parser.add_argument(
        "--columns", type=_columns, default=None, help="TSV source,target columns (0-based; default 0,1)"
    )
    parser.add_argument("--pairs", type=int, default=PAPER["pairs"], help="random subset size (default 30000)")
    parser.add_argument("--epochs", type=int, default=PAPER["epochs"], help="default 1")
    parser.add_argument("--batch-size", type=int, default=PAPER["batch_size"], help="pairs per optimiser step (20)")
    parser.add_argument(
        "--per-device-batch", type=int, default=None, help="pairs per forward pass (default --batch-size)"
    )
    parser.add_argument("--learning-rate", type=float, default=PAPER["learning_rate"], help="default 5e-5")
    parser.add_argument("--weight-decay", type=float, default=AUTHORS["weight_decay"], help="default 0")
    parser.add_argument("--warmup-steps", type=int, default=AUTHORS["warmup_steps"], help="default 0")
    parser.add_argument("--max-length", type=int, default=AUTHORS["max_length"], help="truncation, tokens (1024)")
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (for tests)")
    parser.add_argument("--seed", type=int, default=AUTHORS["seed"], help="subset, shuffling, dropout (666)")
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast (the authors trained in fp32)")
    parser.add_argument("--cpu", action="store_true", help="train on the CPU even where a GPU is present")
    parser.add_argument("--logging-steps", type=int, default=50, help="print the loss every N steps")
    parser.add_argument("--save-pth", action="store_true", help="also write bart.pth in the authors' format")
    args = parser.parse_args(argv)
    args.per_device_batch = args.per_device_batch or args.batch_size
    for name in ("pairs", "epochs", "batch_size", "per_device_batch", "max_length"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    return args


def _columns(text: str) -> Tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"--columns takes two 0-based column numbers such as 1,2, got {text!r}")
    return int(parts[0]), int(parts[1])


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Fine-tune, then print steps, pairs, time and loss; 1 and one error line on failure.

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).

    Returns:
        The exit status.

    Example:
        >>> main(["missing.jsonl", "out"])
        1
    """
    args = parse_args(argv)
    try:
        record = finetune(args)
    except (ValueError, OSError) as err:
        print(f"finetune_bartscore_para: error: {err}", file=sys.stderr)
        return 1
    train = record["training"]
    print(
        f"wrote {args.out_dir}: {train['steps']} steps on {record['data']['pairs_used']} pairs in "
        f"{train['seconds']:.1f} s ({train['steps'] / max(train['seconds'], 1e-9):.2f} steps/s), "
        f"train loss {train['train_loss']:.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
