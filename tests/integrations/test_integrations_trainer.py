"""nlgscore.integrations.trainer: ``compute_metrics`` (decoding, -100 handling, reference caching,
sources from the Trainer's inputs, document context) and ``MetricCallback``, on a real
Seq2SeqTrainer (tiny BART from tests/golden, CPU) trained a few steps and evaluated, in one process
and under ``torchrun`` on two (gloo).

Every logged number is compared with ``==`` to what generating in the test and calling
``nlgscore.load(spec).compute(...)`` gives: the same process and the same CPU kernel (the ranks
are told the kernel this process's scorers ran, and report their signatures), and nlgscore's
scores do not depend on batching or on the rank that scored an item. Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nlgscore.errors import ArgumentError
from nlgscore.integrations.trainer import compute_metrics, restore_padding

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import trainer_ranks as recipe  # noqa: E402

TINY_BART = Path(__file__).parents[1] / "golden" / "tiny-bart"
TORCHRUN = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
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
    metrics_fn.score = lambda preds, refs, srcs=None: (
        texts.append((list(preds), list(refs))) or original_score(preds, refs, srcs)
    )
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


# -- sources, document context and MetricCallback on a trained Seq2SeqTrainer --------------------


@pytest.fixture(scope="module")
def trained(tokenizer, tmp_path_factory):
    """tiny-bart trained 2 steps, evaluated at step 2 (compute_metrics on Prism-src, and the two
    callbacks of the 2-rank script), then saved for the launched test."""
    import torch
    from transformers import BartForConditionalGeneration

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("trained")
    model = BartForConditionalGeneration.from_pretrained(TINY_BART)
    prism = compute_metrics(tokenizer, recipe.SPECS["prism"])
    trainer = recipe.seq2seq_trainer(
        model, tokenizer, str(folder / "run"), prism, max_steps=2, eval_strategy="steps", eval_steps=2
    )
    callbacks = recipe.add_callbacks(trainer)
    trainer.train()
    during = list(trainer.state.log_history)
    trainer.save_model(str(folder / "model"))
    return SimpleNamespace(trainer=trainer, prism=prism, callbacks=callbacks, during=during, model_dir=folder / "model")


def generate_as_the_trainer(model, tokenizer, data):
    """Generations made here as the Trainer makes them: its collator, its eval batches, its
    generation length (none of the code under test runs)."""
    import torch
    from transformers import DataCollatorForSeq2Seq

    collate = DataCollatorForSeq2Seq(tokenizer, model=model)
    data = data.remove_columns(["src", "tgt"])
    texts = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(data), recipe.EVAL_BATCH):
            batch = collate([data[i] for i in range(start, min(start + recipe.EVAL_BATCH, len(data)))])
            ids = model.generate(
                input_ids=batch["input_ids"],
                attention_mask=batch["attention_mask"],
                max_length=recipe.GENERATION_MAX_LENGTH,
            )
            texts += [text.strip() for text in tokenizer.batch_decode(ids, skip_special_tokens=True)]
    return texts


@pytest.fixture(scope="module")
def generations(trained, tokenizer):
    """The trained model's generations on the evaluation set."""
    texts = generate_as_the_trainer(trained.trainer.model, tokenizer, recipe.tokenized(tokenizer))
    assert len(texts) == len(recipe.SOURCES) and any(texts)
    return texts


@pytest.fixture(scope="module")
def expected(generations):
    """``expected(metric, key_prefix, **call)``: the mean of each column of
    ``nlgscore.load(spec).compute(generations, sources=SOURCES, **call)``, keyed as the Trainer keys them."""
    import nlgscore

    loaded = {}

    def means(metric: str, key_prefix: str, **call) -> dict:
        if metric not in loaded:
            loaded[metric] = nlgscore.load(recipe.SPECS[metric])
        result = loaded[metric].compute(generations, sources=recipe.SOURCES, **call)
        return {f"{key_prefix}_{name}": float(np.mean(values)) for name, values in result.columns().items()}

    return means


@pytest.fixture(scope="module")
def evaluated(trained):
    """``Trainer.evaluate()`` after training: compute_metrics (Prism-src) and both callbacks."""
    return trained.trainer.evaluate()


def subset(metrics: dict, keys) -> dict:
    return {key: metrics[key] for key in keys}


def test_compute_metrics_scores_generations_against_the_decoded_inputs(evaluated, expected):
    want = expected("prism", "eval_prism")
    assert set(want) == {"eval_prism_segment", "eval_prism_H_cand_given_src", "eval_prism_G_cand_given_src"}
    assert subset(evaluated, want) == want


def test_callbacks_log_their_scores_at_every_evaluation(trained, evaluated, expected):
    prism, bart = expected("prism", "eval_cb_prism"), expected("bartscore", "eval_cb_bart")
    assert list(bart) == ["eval_cb_bart_scores"]
    assert subset(evaluated, {**prism, **bart}) == {**prism, **bart}  # added to what evaluate() returns
    # logged through trainer.log, one entry per callback and evaluation, after the Trainer's own:
    # during training (step 2) and in the evaluation after it
    for want in (prism, bart):
        logged = [entry for entry in trained.trainer.state.log_history if set(want) <= set(entry)]
        assert [entry["step"] for entry in logged] == [2, 2]
        assert [subset(entry, want) for entry in logged] == [want, want]
        assert logged[0] in trained.during


def test_bartscore_source_to_hypothesis_in_compute_metrics(trained, tokenizer, tmp_path, expected):
    fn = compute_metrics(tokenizer, recipe.SPECS["bartscore"])
    assert fn.needs == ("sources",)
    trainer = recipe.seq2seq_trainer(trained.trainer.model, tokenizer, str(tmp_path), fn)
    want = expected("bartscore", "eval_bartscore")
    assert subset(trainer.evaluate(), want) == want


def test_batch_eval_metrics_collects_the_sources_too(trained, tokenizer, tmp_path, expected):
    trainer = recipe.seq2seq_trainer(
        trained.trainer.model, tokenizer, str(tmp_path), trained.prism, batch_eval_metrics=True
    )
    want = expected("prism", "eval_prism")
    assert subset(trainer.evaluate(), want) == want


def test_document_context_and_doc_ids_reach_the_scorer(trained, tokenizer, tmp_path, expected):
    from nlgscore.integrations.trainer_callback import MetricCallback

    fn = compute_metrics(tokenizer, recipe.SPECS["prism"], context=1, doc_ids=recipe.DOC_IDS)
    trainer = recipe.seq2seq_trainer(trained.trainer.model, tokenizer, str(tmp_path), fn)
    want = expected("prism", "eval_prism", context=1, doc_ids=recipe.DOC_IDS)
    assert want != expected("prism", "eval_prism")  # the context changes the numbers
    assert subset(trainer.evaluate(), want) == want
    short = compute_metrics(tokenizer, recipe.SPECS["prism"], context=1, doc_ids=recipe.DOC_IDS[:-1])
    ids = tokenizer(recipe.SOURCES, padding=True, return_tensors="np")["input_ids"]
    with pytest.raises(ArgumentError, match="doc_ids has 7 ids but the Trainer passed 8 rows"):
        short((ids, ids, ids))
    with pytest.raises(ArgumentError, match="doc_ids has 7 ids but the evaluation set has 8 examples"):
        MetricCallback(trainer, recipe.SPECS["prism"], prefix="qe", context=1, doc_ids=recipe.DOC_IDS[:-1]).score()
    with pytest.raises(ArgumentError, match="context=1 needs doc_ids"):
        compute_metrics(tokenizer, recipe.SPECS["prism"], context=1)
    with pytest.raises(ArgumentError, match="num_examples=6 but doc_ids has 8 ids"):
        compute_metrics(tokenizer, recipe.SPECS["prism"], context=1, doc_ids=recipe.DOC_IDS, num_examples=6)


def test_rows_past_num_examples_are_dropped_when_they_repeat_the_first(tokenizer):
    """2 processes, batches of 3, 8 examples: Seq2SeqTrainer passes 12 rows, the last 4 copies of
    the first 4 (their generations, made among other rows, may differ): they are dropped."""
    fn = compute_metrics(tokenizer, recipe.SPECS["prism"], num_examples=8)

    def encode(texts):
        return tokenizer(texts, padding=True, return_tensors="np")["input_ids"]

    preds, srcs = encode(recipe.TARGETS), encode(recipe.SOURCES)
    repeated = encode(recipe.TARGETS + ["another generation"] * 4), encode(recipe.SOURCES + recipe.SOURCES[:4])
    whole = fn((preds, preds, srcs))
    assert fn((repeated[0], repeated[0], repeated[1])) == whole
    assert compute_metrics(tokenizer, recipe.SPECS["prism"])((preds, preds, srcs)) == whole
    wrong = encode(recipe.SOURCES + recipe.SOURCES[1:5])
    with pytest.raises(ArgumentError, match="num_examples=8 but the Trainer passed 12 rows, and the sources"):
        fn((repeated[0], repeated[0], wrong))
    with pytest.raises(ArgumentError, match="num_examples=8 but the Trainer passed 4 predictions"):
        fn((preds[:4], preds[:4], srcs[:4]))


def test_a_source_metric_without_the_inputs_names_the_argument(trained, tokenizer, tmp_path):
    trainer = recipe.seq2seq_trainer(
        trained.trainer.model, tokenizer, str(tmp_path), trained.prism, include_for_metrics=[]
    )
    with pytest.raises(ArgumentError, match=r'include_for_metrics=\["inputs"\]'):
        trainer.evaluate()


def test_a_metric_of_references_and_sources_gets_both(tokenizer):
    """A scorer whose needs are both inputs (a COMET-style metric): the labels and the inputs decoded."""
    from nlgscore.extend import Scorer

    seen = []

    class Both(Scorer):
        name = "both"
        needs = ("references", "sources")
        columns = ("score",)

        def _score_items(self, items, state):
            seen.extend((item.prediction, item.reference, item.source) for item in items)
            return {"score": np.array([float(len(item.reference) + len(item.source)) for item in items])}

        def _finish(self, call, columns):
            from nlgscore.extend import Result

            return Result(self.make_signature(call), columns, "score")

        def _signature_fields(self, call):
            return {}

    fn = compute_metrics(tokenizer, Both())
    ids = [tokenizer([text])["input_ids"][0] for text in ("a cat", "the weather", "the cat sat")]
    assert fn((ids[:1], ids[1:2], ids[2:])) == {"both_score": float(len("the weather") + len("the cat sat"))}
    assert seen == [("a cat", "the weather", "the cat sat")]


def test_callback_every_and_the_model_mode_restored(trained, tokenizer, tmp_path):
    from nlgscore.integrations.trainer_callback import MetricCallback

    trainer = recipe.seq2seq_trainer(trained.trainer.model, tokenizer, str(tmp_path))  # no compute_metrics
    callback = MetricCallback(trainer, recipe.SPECS["prism"], every=2, prefix="qe")
    trainer.add_callback(callback)
    for _ in range(3):
        trainer.evaluate()
    assert [("eval_qe_segment" in entry) for entry in trainer.state.log_history if "eval_loss" in entry] == [
        False
    ] * 3  # the Trainer's own entries are left as they are
    assert sum("eval_qe_segment" in entry for entry in trainer.state.log_history) == 2  # the 1st and the 3rd
    model = trainer.model
    model.train()
    callback.score()
    assert model.training


def test_callback_on_a_dict_of_evaluation_sets_scores_each(trained, tokenizer, tmp_path):
    import nlgscore
    from nlgscore.integrations.trainer_callback import MetricCallback

    data = recipe.tokenized(tokenizer)
    sets = {"head": data.select(range(5)), "tail": data.select(range(5, 8))}
    trainer = recipe.seq2seq_trainer(trained.trainer.model, tokenizer, str(tmp_path))
    trainer.eval_dataset = sets
    trainer.add_callback(MetricCallback(trainer, recipe.SPECS["prism"], source_column="src", prefix="qe"))
    metrics = trainer.evaluate()
    scorer = nlgscore.load(recipe.SPECS["prism"])
    for name, part in sets.items():
        result = scorer.compute(generate_as_the_trainer(trainer.model, tokenizer, part), sources=part["src"])
        assert metrics[f"eval_{name}_qe_segment"] == float(np.mean(result.columns()["segment"])), name


def test_callback_arguments_are_checked_by_name(trained, tokenizer, tmp_path):
    from nlgscore.integrations.trainer_callback import MetricCallback

    trainer = recipe.seq2seq_trainer(trained.trainer.model, tokenizer, str(tmp_path), trained.prism)
    with pytest.raises(ArgumentError, match="prefix"):  # compute_metrics already gives eval_prism_*
        MetricCallback(trainer, recipe.SPECS["prism"])
    with pytest.raises(ArgumentError, match="every must be >= 1"):
        MetricCallback(trainer, recipe.SPECS["prism"], prefix="qe", every=0)
    with pytest.raises(ArgumentError, match="source_column: the dataset has no column 'text'"):
        MetricCallback(trainer, recipe.SPECS["prism"], prefix="qe", source_column="text").score()
    no_labels = recipe.tokenized(tokenizer).remove_columns(["labels"])
    with pytest.raises(ArgumentError, match="reference_column: the dataset has no column 'labels'"):
        MetricCallback(trainer, "bertscore:minilm:L4", no_labels).score()


def test_callback_takes_the_options_load_takes(trained, tokenizer, tmp_path, expected):
    """The callback is one more door of the option table: a call option (BARTScore's prompt)
    gives load's numbers, and an option the metric does not take gets the table's message."""
    from nlgscore.core.options import unknown_options
    from nlgscore.integrations.trainer_callback import MetricCallback
    from nlgscore.seq2seq.bartscore import BARTScorer

    trainer = recipe.seq2seq_trainer(trained.trainer.model, tokenizer, str(tmp_path))
    prompted = {"prompt": "Such as", "prompt_side": "decoder"}
    callback = MetricCallback(trainer, recipe.SPECS["bartscore"], prefix="bp", **prompted)
    want = {key.removeprefix("eval_"): value for key, value in expected("bartscore", "eval_bp", **prompted).items()}
    assert callback.score() == want
    assert want != {key.removeprefix("eval_"): value for key, value in expected("bartscore", "eval_bp").items()}
    with pytest.raises(TypeError) as err:
        MetricCallback(trainer, recipe.SPECS["bartscore"], prefix="bp", idf=True)
    assert str(err.value) == str(unknown_options(BARTScorer, ["idf"]))


# -- the same under torchrun on two processes ---------------------------------------------------


@pytest.fixture(scope="module")
def ranks(trained, evaluated, tmp_path_factory):
    folder = tmp_path_factory.mktemp("trainer-ranks")
    out = folder / "ranks.json"
    kernel = trained.prism.scorer.signature["kernel"]  # the ranks' scorers run this process's kernel
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
        NLGSCORE_ONEDNN="1" if kernel == "onednn" else "0",
    )
    cmd = [
        TORCHRUN,
        "--standalone",
        "--nproc_per_node",
        "2",
        str(SCRIPTS / "trainer_ranks.py"),
        str(trained.model_dir),
        str(out),
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 0, done.stderr[-4000:]  # every rank exits 0
    assert "terminate called" not in done.stderr
    reports = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["rank"], r["world"]) for r in reports] == [(0, 2), (1, 2)]
    return reports


def test_two_processes_evaluate_to_the_single_process_numbers_on_every_rank(ranks, trained, evaluated):
    want = recipe.scores_only(evaluated)
    assert set(want) >= {"eval_prism_segment", "eval_cb_prism_segment", "eval_cb_bart_scores"}
    signatures = [str(trained.prism.scorer.signature)] + [str(c.metrics.scorer.signature) for c in trained.callbacks]
    for report in ranks:
        assert report["signatures"] == signatures
        [warning] = report["warning"]  # without num_examples, on 2 processes
        assert "pass num_examples=len(eval_dataset)" in warning
        assert report["evaluate"] == want
        assert report["batched"] == subset(want, [key for key in want if key.startswith("eval_prism_")])
