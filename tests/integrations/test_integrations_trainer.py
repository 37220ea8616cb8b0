"""nlgscore.integrations.trainer.compute_metrics: decoding, -100 handling, reference caching,
and a real Seq2SeqTrainer (tiny BART from tests/golden, CPU) trained a few steps and evaluated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nlgscore.integrations.trainer import compute_metrics, restore_padding

TINY_BART = Path(__file__).parents[1] / "golden" / "tiny-bart"
SOURCES = ["the cat sat on the mat", "it is cold today", "a dog barks", "hello there", "good morning", "see you soon"]
TARGETS = ["a cat was on the mat", "the weather is cold", "dogs bark", "hi", "morning", "bye for now"]


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(TINY_BART)


def count_encoded_texts(scorer):
    """Spy on the encoder's real forward (it still runs): rows of every input batch."""
    seen = []
    # The embeddings run in both the packed and the stock forward, so they count every encoded row.
    handle = scorer.encoder.model.embeddings.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(int(kwargs["input_ids"].shape[0])), with_kwargs=True
    )
    return seen, handle


def test_minus_100_restored_and_ragged_labels_decoded(tokenizer, minilm_scorer):
    fn = compute_metrics(tokenizer, metric=minilm_scorer)
    ids = tokenizer(TARGETS[:2], padding=True)["input_ids"]
    labels = np.array(ids)
    labels[labels == tokenizer.pad_token_id] = -100  # as DataCollatorForSeq2Seq pads labels
    preds = np.full((2, labels.shape[1] + 3), -100)  # as gather pads generations across batches
    preds[:, : labels.shape[1]] = np.array(ids)
    assert fn.decode(labels) == TARGETS[:2] == fn.decode(preds)
    out = fn((preds, labels))
    assert out == pytest.approx({"bertscore_precision": 1.0, "bertscore_recall": 1.0, "bertscore_f1": 1.0}, abs=1e-5)
    assert restore_padding(np.array([[-100, 4]]), 1) == [[1, 4]]


def test_empty_generation_scores_zero_not_error(tokenizer, minilm_scorer):
    fn = compute_metrics(tokenizer, metric=minilm_scorer, prefix="bs")
    empty = [[tokenizer.bos_token_id, tokenizer.eos_token_id, -100]]  # generated nothing but specials
    label = tokenizer([TARGETS[0]])["input_ids"]
    with pytest.warns(UserWarning, match="empty candidate"):
        out = fn((empty, label))
    assert out == {"bs_precision": 0.0, "bs_recall": 0.0, "bs_f1": 0.0}


def test_logits_instead_of_ids_is_a_clear_error(tokenizer, minilm_scorer):
    with pytest.raises(ValueError, match="predict_with_generate"):
        compute_metrics(tokenizer, metric=minilm_scorer)((np.zeros((1, 3, 5), dtype=np.float32), [[5, 6]]))


def test_batch_eval_metrics_accumulates_until_compute_result(tokenizer, minilm_scorer):
    fn = compute_metrics(tokenizer, metric=minilm_scorer)
    ids = tokenizer(TARGETS[:3])["input_ids"]
    whole = fn((ids, ids[::-1]))
    assert fn((ids[:2], ids[::-1][:2]), compute_result=False) == {}
    assert fn((ids[2:], ids[::-1][2:]), compute_result=True) == pytest.approx(whole, abs=1e-6)


def test_seq2seq_trainer_evaluate_twice_encodes_references_once(tokenizer, tmp_path):
    import datasets
    import torch
    from transformers import (
        BartForConditionalGeneration,
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
    )

    torch.manual_seed(0)
    model = BartForConditionalGeneration.from_pretrained(TINY_BART)
    data = datasets.Dataset.from_dict({"src": SOURCES, "tgt": TARGETS}).map(
        lambda b: {**tokenizer(b["src"]), "labels": tokenizer(text_target=b["tgt"])["input_ids"]},
        batched=True,
        remove_columns=["src", "tgt"],
    )
    metrics_fn = compute_metrics(tokenizer, metric="bertscore:minilm", num_layers=4)
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=3,
        per_device_eval_batch_size=4,
        max_steps=3,
        learning_rate=1e-3,
        predict_with_generate=True,
        generation_max_length=8,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
    )
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=data,
        eval_dataset=data,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=metrics_fn,
    )
    trainer.train()

    texts = []
    original_score = metrics_fn.score
    metrics_fn.score = lambda preds, refs: texts.append((list(preds), list(refs))) or original_score(preds, refs)
    seen, handle = count_encoded_texts(metrics_fn.scorer)
    try:
        first = trainer.evaluate()
        first_count = sum(seen)
        second = trainer.evaluate()
        second_count = sum(seen) - first_count
    finally:
        handle.remove()

    for out in (first, second):
        assert set(out) >= {"eval_bertscore_precision", "eval_bertscore_recall", "eval_bertscore_f1"}
        assert 0.0 <= out["eval_bertscore_f1"] <= 1.0
    assert first["eval_bertscore_f1"] == pytest.approx(second["eval_bertscore_f1"], abs=1e-6)
    (preds1, refs1), (preds2, refs2) = texts
    assert refs1 == TARGETS and preds1 == preds2  # labels decoded back to the targets, in order
    assert first_count == len(set(preds1) | set(refs1))
    # Second evaluation: references come from the cache, and so do predictions that did not change
    # (cache_candidates, on by default here); only new predictions would be encoded. The reference
    # cache alone is tested in test_bertscore_reuse.py.
    assert second_count == len(set(preds2) - set(refs2) - set(preds1))
    assert second_count < first_count


def test_empty_eval_set_gives_no_scores_and_a_warning(tokenizer, minilm_scorer):
    fn = compute_metrics(tokenizer, metric=minilm_scorer)
    empty = np.zeros((0, 5), dtype=np.int64)  # the Trainer's arrays for an empty evaluation set
    assert fn.decode(empty) == []  # transformers 5 decodes [] as [''], a phantom empty pair
    with pytest.warns(UserWarning, match="empty evaluation set"):
        assert fn((empty, empty)) == {}


def test_last_empty_batch_does_not_pull_the_mean_down(tokenizer, minilm_scorer):
    fn = compute_metrics(tokenizer, metric=minilm_scorer)
    preds = tokenizer(SOURCES[:2], padding=True, return_tensors="np")["input_ids"]
    labels = tokenizer(TARGETS[:2], padding=True, return_tensors="np")["input_ids"]
    whole = fn((preds, labels))
    empty = np.zeros((0, preds.shape[1]), dtype=np.int64)
    assert fn((preds, labels), compute_result=False) == {}
    assert fn((empty, empty), compute_result=True) == whole  # the same items: the same bits


def test_model_is_loaded_when_compute_metrics_is_built(tokenizer, tmp_path):
    from nlgscore import registry

    registry.clear_cache()
    fn = compute_metrics(tokenizer, metric="bertscore:minilm", num_layers=3)
    assert [scorer.signature["L"] for scorer in registry.cached_scorers()] == ["3"]  # built by compute_metrics itself
    assert fn.scorer.signature["L"] == "3"
    missing = tmp_path / "no-such-model"
    with pytest.raises((OSError, ValueError), match="no-such-model"):  # fails before any training
        compute_metrics(tokenizer, metric=f"bartscore:{missing}")
