"""Every option of every metric's option table, through every door, gives the number the metric's
own constructor or call gives it; an option a metric does not take is refused with one message
wherever it is given.

The doors: ``nlgscore.load``, ``map_function`` (``datasets.map``), ``compute_metrics`` (the
Trainer), the ``evaluate`` module, ``nlgscore score --option`` and ``nlgscore serve --option``
(the options the serve command builds its scorer with), and ``/v1/score`` per-request fields on a
real server. Each row of each table (``nlgscore.core.options``) has a case below, or a reason in
``ELSEWHERE`` naming the test that covers it: a new option without either fails
:func:`test_every_option_has_a_case`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

import nlgscore
from nlgscore import registry
from nlgscore.core.options import option_rows, unknown_options

GOLDEN = Path(__file__).resolve().parent / "golden"
# Punctuation and word order, so that BLEU's tokenisations and ROUGE's types give other numbers.
PREDS = ["the cat sat on the mat.", "at night, a dog barks", "it's cold today"]
REFS = ["on the mat, a cat was sitting.", "dogs bark loudly at night", "the weather is cold today"]
SPECS = {
    "bertscore": "bertscore:minilm",
    "prism": f"prism:ref:{GOLDEN / 'tiny-prism'}",
    "bartscore": f"bartscore:{GOLDEN / 'tiny-bart'}",
    "chrf": "chrf",
    "bleu": "bleu",
    "rouge": "rouge",
    "ter": "ter",
}
# (option, value, the command line's spelling of it), per metric; run-time options for every metric.
RUNTIME = [("batch_size", 1, "1"), ("max_tokens", 64, "64"), ("progress", False, "false"), ("device", "cpu", "cpu")]
RUNTIME += [("dtype", "float32", "float32"), ("shard", True, "true")]  # one process: shard scores here
CASES: Dict[str, List[Any]] = {
    "bertscore": [
        ("num_layers", 3, "3"),
        ("lang", "en", "en"),
        ("idf", True, "true"),
        ("idf_sents", REFS + ["a cat and a dog"], json.dumps(REFS + ["a cat and a dog"])),
        ("rescale_with_baseline", True, "true"),
        ("max_length", 6, "6"),
        ("long_inputs", "truncate", "truncate"),
        ("window_stride", 2, "2"),
        ("cache_references", True, "true"),
        ("reference_cache_size", 10, "10"),
        ("cache_candidates", True, "true"),
        ("reference_cache_bytes", 1 << 20, str(1 << 20)),
        ("kernel", "mkl", "mkl"),
        ("kernel", "onednn", "onednn"),
        ("forward", "tokens", "tokens"),
    ],
    "prism": [
        ("lang", "de", "de"),
        ("temperature", 0.5, "0.5"),
        ("mode", "ref", "ref"),
        ("long_inputs", "error", "error"),
        ("kernel", "mkl", "mkl"),
        ("forward", "tokens", "tokens"),
    ],
    "bartscore": [
        ("variant", "bart-large", "bart-large"),
        ("max_length", 6, "6"),
        ("direction", "recall", "recall"),
        ("long_inputs", "truncate", "truncate"),
        ("prompt", "Such as", "Such as"),
        ("prompt", ["Such as", "In other words"], '["Such as", "In other words"]'),
        ("prompt_side", "decoder", "decoder"),
        ("agg", "max", "max"),
        ("kernel", "mkl", "mkl"),
        ("forward", "tokens", "tokens"),
    ],
    "chrf": [("char_order", 4, "4"), ("word_order", 2, "2"), ("beta", 3, "3"), ("multiref", "max", "max")],
    "bleu": [
        ("tokenize", "moses", "moses"),
        ("tokenize", "intl", "intl"),
        ("lowercase", True, "true"),
        ("multiref", "max", "max"),
    ],
    "rouge": [("rouge_type", "rouge1", "rouge1")],
    "ter": [
        ("case_sensitive", True, "true"),
        ("normalized", True, "true"),
        ("no_punct", True, "true"),
        ("asian_support", True, "true"),
    ],
}
# Options that change the numbers of PREDS/REFS (so that a door dropping one would fail).
CHANGES = {
    "bertscore": {"num_layers", "idf", "idf_sents", "rescale_with_baseline", "max_length"},
    "prism": {"lang", "temperature"},
    "bartscore": {"max_length", "direction", "prompt"},
    "chrf": {"char_order", "word_order", "beta"},
    "bleu": {"tokenize"},
    "rouge": {"rouge_type"},
    "ter": {"normalized", "no_punct"},
}
ELSEWHERE = {
    "model_type": "the spec names the model (tests/test_registry.py)",
    "checkpoint": "the spec names the model (tests/test_registry.py)",
    "revision": "a Hub revision: tests/backend/test_hub_scoring.py against the loopback Hub",
    "para_weights": "the authors' bart.pth: tests/seq2seq/test_bartscore_convert.py",
    "baseline_path": "a baseline file with rescale_with_baseline: tests/bertscore/test_baselines.py",
    "calibration": "a file of nlgscore calibrate: tests/calibration/test_calibrate.py",
    "all_layers": "one row per layer: tests/bertscore/test_bertscore.py",
    "context": "needs doc_ids per call: tests/bertscore/test_doc_context.py, tests/test_evaluate_modules.py",
    "accelerator": "an accelerate.Accelerator, not text: tests/backend/test_distributed.py",
}
# An option each metric does not take: refused with one message at every door.
FOREIGN = {
    "bertscore": "prompt",
    "prism": "idf",
    "bartscore": "idf",
    "chrf": "prompt",
    "bleu": "prompt",
    "rouge": "idf",
    "ter": "multiref",
}


def cases():
    for name, own in CASES.items():
        for option, value, text in own + RUNTIME:
            yield pytest.param(name, option, value, text, id=f"{name}-{option}-{text[:12]}")


def scorer_class(name: str) -> type:
    return registry.metric(name).scorer_class()


def expected(name: str, option: str, value: Any) -> Dict[str, Any]:
    """The metric's own number: its constructor given the option, or its call."""
    row = next(row for row in option_rows(scorer_class(name)) if row.name == option)
    _, spec_given = registry.spec_options(SPECS[name])
    if row.constructor:
        scorer = scorer_class(name)(**{**spec_given, option: value})
        return scorer.compute(PREDS, REFS).columns()
    return scorer_class(name)(**spec_given).compute(PREDS, REFS, **{option: value}).columns()


def primary(columns: Dict[str, Any], name: str) -> List[float]:
    return columns[
        {"bertscore": "f1", "prism": "segment", "chrf": "score", "bleu": "score", "rouge": "score", "ter": "score"}.get(
            name, "scores"
        )
    ]


def test_every_option_has_a_case():
    covered = {name: {case[0] for case in own + RUNTIME} for name, own in CASES.items()}
    for name in registry.metric_names(builtin=True):
        for row in option_rows(scorer_class(name)):
            assert row.name in covered[name] or row.name in ELSEWHERE, f"{name}: option {row.name} has no case"


@pytest.mark.parametrize("name,option,value,text", list(cases()))
def test_load_and_map_function(name, option, value, text):
    want = expected(name, option, value)
    assert nlgscore.load(SPECS[name], **{option: value}).compute(PREDS, REFS).columns() == want
    if option in CHANGES[name]:  # the control: the option moves this number, so a door that drops it fails
        assert expected(name, "device", "cpu") != want
    from nlgscore.integrations.datasets import idf_sentences, map_function

    if option == "idf":  # idf of each map batch is refused; idf of the dataset is idf_sents
        with pytest.raises(ValueError, match="idf_sents="):
            map_function(SPECS[name], idf=True)
        got = map_function(SPECS[name], idf_sents=idf_sentences({"reference": REFS}))(
            {"prediction": PREDS, "reference": REFS}
        )
        assert got == {f"{name}_{k}": v for k, v in expected(name, "idf_sents", REFS).items()}
        return
    got = map_function(SPECS[name], **{option: value})({"prediction": PREDS, "reference": REFS})
    assert got == {f"{name}_{k}": v for k, v in want.items()}


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(GOLDEN / "tiny-bart")


@pytest.mark.parametrize("name,option,value,text", list(cases()))
def test_compute_metrics(name, option, value, text, tokenizer):
    from nlgscore.integrations.trainer import compute_metrics

    ids = tokenizer(PREDS, padding=True, return_tensors="np")["input_ids"]
    labels = tokenizer(REFS, padding=True, return_tensors="np")["input_ids"]
    assert tokenizer.batch_decode(ids, skip_special_tokens=True) == PREDS  # the texts survive the round trip
    got = compute_metrics(tokenizer, SPECS[name], **{option: value})((ids, labels))
    want = {f"{name}_{k}": float(np.mean(v)) for k, v in expected(name, option, value).items()}
    assert got == want


def evaluate_module(name: str) -> Any:
    import evaluate

    config = ("ref",) if name == "prism" else ()  # bartscore's default config: the variant= of a call is free
    tiny = {"prism": "tiny-prism", "bartscore": "tiny-bart"}
    load = {"checkpoint": str(GOLDEN / tiny[name])} if name in tiny else {}
    return evaluate.load(nlgscore.evaluate_module(name), *config, **load)


def evaluate_columns(name: str, answer: Dict[str, Any]) -> Dict[str, Any]:
    if name == "bertscore":
        return {k: answer[k] for k in ("precision", "recall", "f1")}
    return {"scores": answer["scores"]}


@pytest.mark.parametrize("name,option,value,text", list(cases()))
def test_evaluate_module(name, option, value, text):
    given = {"model_type": "minilm"} if name == "bertscore" else {}
    given[option] = value
    answer = evaluate_module(name).compute(predictions=PREDS, references=REFS, **given)
    want = expected(name, option, value)
    if name == "bertscore":
        assert evaluate_columns(name, answer) == {k: want[k] for k in ("precision", "recall", "f1")}
    else:
        assert answer["scores"] == primary(want, name)


@pytest.fixture(scope="module")
def text_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doors")
    (folder / "c.txt").write_text("\n".join(PREDS) + "\n", encoding="utf-8")
    (folder / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return folder


def run_cli(argv: List[str]) -> Any:
    from nlgscore.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name,option,value,text", list(cases()))
def test_score_and_serve_commands(name, option, value, text, text_files):
    want = primary(expected(name, option, value), name)
    files = ["-c", str(text_files / "c.txt"), "-r", str(text_files / "r.txt")]
    status, out, err = run_cli(["score", SPECS[name], *files, "--seg", "--json", "--quiet", "-O", f"{option}={text}"])
    if option == "idf":  # a corpus is scored in windows: idf of each window is refused, as by map_function
        assert status == 2 and "idf_sents=" in err
    else:
        assert status == 0, err
        assert json.loads(out)["scores"] == want
    # nlgscore serve: the scorer its flags and --option build (the server itself: the tests below)
    from nlgscore.cli import build_parser
    from nlgscore.cli.serve import scorer_options

    args = build_parser().parse_args(["serve", SPECS[name], "-O", f"{option}={text}"])
    built = registry.build(SPECS[name], **scorer_options(args))
    assert primary(built.compute(PREDS, REFS).columns(), name) == want


@pytest.mark.parametrize("name", list(SPECS))
def test_a_foreign_option_is_refused_with_one_message_at_every_door(name, tokenizer, text_files):
    option = FOREIGN[name]
    message = str(unknown_options(scorer_class(name), [option]))
    from nlgscore.integrations.datasets import map_function
    from nlgscore.integrations.trainer import compute_metrics

    for door in (
        lambda: nlgscore.load(SPECS[name], **{option: "x"}),
        lambda: map_function(SPECS[name], **{option: "x"}),
        lambda: compute_metrics(tokenizer, SPECS[name], **{option: "x"}),
        lambda: evaluate_module(name).compute(predictions=PREDS, references=REFS, **{option: "x"}),
    ):
        with pytest.raises(TypeError) as err:
            door()
        assert str(err.value) == message
    files = ["-c", str(text_files / "c.txt"), "-r", str(text_files / "r.txt")]
    status, _, err = run_cli(["score", SPECS[name], "-O", f"{option}=x", *files])
    assert status == 2 and message in err
    import subprocess
    import sys

    # a server that failed to refuse would keep running: a subprocess with a timeout
    done = subprocess.run(
        [sys.executable, "-m", "nlgscore", "serve", SPECS[name], "--port", "0", "-O", f"{option}=x"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and message in done.stderr


# -- /v1/score on real servers: per-request options and refusals ------------------------------
@pytest.fixture(scope="module")
def bart_server():
    from servers import serving

    yield from serving(SPECS["bartscore"])


@pytest.fixture(scope="module")
def bert_server():
    from servers import serving

    yield from serving(SPECS["bertscore"], "-O", "idf=true")


@pytest.mark.parametrize(
    "option,value",
    [("prompt", "Such as"), ("prompt", ["Such as", "In other words"]), ("prompt_side", "decoder")]
    + [("direction", "recall"), ("agg", "max")],
)
def test_v1_score_takes_the_per_request_options(bart_server, option, value):
    answer = bart_server.post("/v1/score", json={"predictions": PREDS, "references": REFS, option: value})
    assert answer.status_code == 200, answer.text
    assert answer.json()["scores"] == primary(expected("bartscore", option, value), "bartscore")
    with_prompt = {"prompt": "Such as", "prompt_side": "decoder"}
    answer = bart_server.post("/v1/score", json={"predictions": PREDS, "references": REFS, **with_prompt})
    want = nlgscore.load(SPECS["bartscore"]).compute(PREDS, REFS, **with_prompt).scores
    assert answer.json()["scores"] == want
    client = nlgscore.load(bart_server.url)  # the client sends the option in the body
    assert client.compute(PREDS, REFS, **{option: value}).scores == primary(
        expected("bartscore", option, value), "bartscore"
    )


def test_v1_score_refuses_settings_and_foreign_options(bert_server, bart_server):
    # the server was started with --option idf=true: its numbers are the idf ones
    answer = bert_server.post("/v1/score", json={"predictions": PREDS, "references": REFS})
    assert answer.json()["scores"] == nlgscore.load(SPECS["bertscore"], idf=True).compute(PREDS, REFS).scores
    for server, field in ((bert_server, "idf"), (bart_server, "max_length")):
        answer = server.post("/v1/score", json={"predictions": PREDS, "references": REFS, field: 1})
        assert answer.status_code == 400
        assert answer.json()["error"].startswith(f"{field}: a setting of this server's scorer, not of a request")
    answer = bert_server.post("/v1/score", json={"predictions": PREDS, "references": REFS, "prompt": "x"})
    assert answer.status_code == 400
    assert (
        answer.json()["error"] == f"unknown field(s) prompt: {unknown_options(scorer_class('bertscore'), ['prompt'])}"
    )
    answer = bart_server.post("/v1/score", json={"predictions": PREDS, "references": REFS, "prompt_side": "middle"})
    assert answer.status_code == 400 and "prompt_side must be one of encoder, decoder" in answer.json()["error"]


def test_option_spellings_on_the_command_line():
    from nlgscore.core.options import parse_assignment

    cls = scorer_class("bertscore")
    for text, want in (("idf=yes", True), ("idf=off", False), ("num-layers=4", 4)):
        assert parse_assignment(cls, text)[1] == want
    for text, message in (
        ("idf=maybe", "option idf takes true or false"),
        ("num_layers=four", "option num_layers takes an integer"),
        ("idf_sents=a b", "option idf_sents takes @FILE"),
        ("idf", "an option is NAME=VALUE"),
    ):
        with pytest.raises(ValueError, match=message):
            parse_assignment(cls, text)
    parser = argparse.ArgumentParser()
    from nlgscore.cli.options import add_metric_option, metric_option_settings

    add_metric_option(parser)
    args = parser.parse_args(["-O", "lang=de"])
    from nlgscore.cli.options import UserError

    with pytest.raises(UserError, match="contradicts the flag"):
        metric_option_settings(args, SPECS["prism"], {"lang": "en"})


@pytest.fixture(scope="module")
def bart_workers():
    from servers import serving

    yield from serving(SPECS["bartscore"], "--workers", "2")


def test_v1_score_options_through_worker_processes(bart_workers):
    """Under --workers the HTTP workers learn the per-request options from the model process and
    forward them with the job: the same answers as one process."""
    body = {"predictions": PREDS, "references": REFS, "prompt": ["Such as", "In other words"], "agg": "max"}
    answer = bart_workers.post("/v1/score", json=body)
    assert answer.status_code == 200, answer.text
    want = nlgscore.load(SPECS["bartscore"]).compute(PREDS, REFS, prompt=body["prompt"], agg="max").scores
    assert answer.json()["scores"] == want
    answer = bart_workers.post("/v1/score", json={"predictions": PREDS, "references": REFS, "max_length": 6})
    assert answer.status_code == 400 and answer.json()["error"].startswith("max_length: a setting of this server's")
    answer = bart_workers.post("/v1/score", json={"predictions": PREDS, "references": REFS, "idf": True})
    assert answer.json()["error"] == f"unknown field(s) idf: {unknown_options(scorer_class('bartscore'), ['idf'])}"
