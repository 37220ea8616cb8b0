"""scripts/finetune_bartscore_para.py: the paper's recipe over Seq2SeqTrainer, run for a few steps
on tests/golden/tiny-bart and 8 pairs on CPU; its folder must load and score as a checkpoint."""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from pathlib import Path

import pytest
import torch

import nlgscore
from nlgscore.seq2seq.bartscore import BARTScorer

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests" / "golden" / "tiny-bart")
PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    ("Stocks fell sharply on Monday.", "Markets dropped on Monday."),
    ("The meeting starts at noon.", "The meeting begins at 12 pm."),
    ("She went to the market to buy apples.", "She visited the market for apples."),
    ("Prices rose in the last quarter.", "Prices went up last quarter."),
    ("He is a liar.", "He does not tell the truth."),
    ("It was sunny in Almaty on Monday.", "On Monday the weather in Almaty was sunny."),
    ("Can I take a look?", "May I have a look?"),
]
HYPS, REFS = ["The cat sat.", "Stocks fell."], ["A cat was sitting.", "Markets dropped."]


@pytest.fixture(scope="module")
def script():
    torch.set_num_threads(1)
    sys.path.insert(0, str(ROOT / "scripts"))  # the script is a file, not a module of the package
    return importlib.import_module("finetune_bartscore_para")


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    path.write_text("".join(json.dumps({"text": s, "summary": t}) + "\n" for s, t in PAIRS), encoding="utf-8")
    return path


def test_defaults_are_the_papers(script, tmp_path):
    args = script.parse_args([str(tmp_path / "pairs.jsonl"), str(tmp_path / "out")])
    assert (args.base, args.pairs, args.epochs, args.batch_size, args.learning_rate) == (
        "facebook/bart-large-cnn", 30000, 1, 20, 5e-5,
    )  # fmt: skip
    assert (args.per_device_batch, args.seed, args.weight_decay, args.warmup_steps, args.max_length) == (
        20,
        666,
        0,
        0,
        1024,
    )


def test_finetuned_folder_loads_and_scores(script, pairs_file, tmp_path, capsys):
    out = tmp_path / "ft"
    argv = [str(pairs_file), str(out), "--base", TINY, "--batch-size", "4", "--per-device-batch", "2", "--cpu",
            "--learning-rate", "1e-3", "--save-pth"]  # fmt: skip
    assert script.main(argv) == 0
    assert "2 steps on 8 pairs" in capsys.readouterr().out
    record = json.loads((out / "bartscore_para.json").read_text())
    assert record["training"]["steps"] == 2 and record["data"]["pairs_used"] == 8
    assert record["data"]["sha256"] == hashlib.sha256(pairs_file.read_bytes()).hexdigest()
    sha = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    assert record["weights"] == {"kind": "finetune", "file": "model.safetensors", "sha256": sha}
    assert not (out / "training_args.bin").exists()  # a model folder, not a trainer's run folder

    tuned = nlgscore.load(f"bartscore:{out}", device="cpu")
    assert tuned.signature["para"] == f"finetuned-sha256-{sha[:16]}"
    assert tuned.signature["variant"] == "bart-large-cnn-para"
    base = BARTScorer(checkpoint=TINY, device="cpu").score(REFS, HYPS)
    assert tuned.score(REFS, HYPS) != pytest.approx(base, abs=1e-3)  # the steps moved the weights
    # bart.pth in the authors' format: the base model plus para_weights= gives the same scores.
    para = BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(out / "bart.pth"), device="cpu")
    assert para.score(REFS, HYPS) == tuned.score(REFS, HYPS)


def test_the_loss_is_the_authors(script, tmp_path):
    """Per example the mean over its target tokens; the step's sum divided by its batch size
    (accumulation included), as the authors' loop of single examples adding loss / batch_size."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainingArguments

    model = AutoModelForSeq2SeqLM.from_pretrained(TINY).eval()  # no dropout: both sides see one model
    tokenizer = AutoTokenizer.from_pretrained(TINY)
    examples = [
        {"input_ids": tokenizer(s)["input_ids"], "labels": tokenizer(text_target=t)["input_ids"]} for s, t in PAIRS[:3]
    ]
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=3, gradient_accumulation_steps=2, use_cpu=True,
        report_to="none",
    )  # fmt: skip
    trainer = script._trainer_class()(model=model, args=args, processing_class=tokenizer)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)(examples)
    with torch.no_grad():
        loss = trainer.compute_loss(model, batch)
        authors = sum(
            model(input_ids=torch.tensor([e["input_ids"]]), labels=torch.tensor([e["labels"]])).loss / 6
            for e in examples
        )
        token_mean = model(**batch).loss  # Seq2SeqTrainer's default: every token of the batch weighs the same
    assert loss.item() == pytest.approx(authors.item(), rel=1e-6)
    assert loss.item() != pytest.approx(token_mean.item() / 2, rel=1e-3)


def test_reading_pairs(script, tmp_path):
    tsv = tmp_path / "parabank.tsv"
    tsv.write_text('0.81\t"Quoted" source.\tA paraphrase.\tAnother one.\n', encoding="utf-8")
    assert script.read_pairs(str(tsv), columns=(1, 3)) == [('"Quoted" source.', "Another one.")]
    assert script.read_pairs(str(tsv), columns=(0, 1))[0][0] == "0.81"
    with pytest.raises(ValueError, match=r"data .*parabank\.tsv:1: no source and target"):
        script.read_pairs(str(tsv), columns=(1, 4))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a", "summary": "b"}\n{"text": "only a source"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"data .*bad\.jsonl:2: no source and target"):
        script.read_pairs(str(bad))
    assert script.choose_pairs(PAIRS, 3, seed=666) == script.choose_pairs(PAIRS, 3, seed=666) != PAIRS[:3]
    assert script.main([str(bad), str(tmp_path / "out"), "--base", TINY, "--cpu"]) == 1
    with pytest.raises(SystemExit):
        script.parse_args([str(bad), str(tmp_path / "out"), "--columns", "1"])
