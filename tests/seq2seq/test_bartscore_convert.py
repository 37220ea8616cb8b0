"""The bart-large-cnn-para routes: ``para_weights=bart.pth``, the converter, ``checkpoint=<converted folder>``.

The authors' ``bart.pth`` is stood in for by tests/golden/tiny-bart with every parameter moved
deterministically, saved as ``torch.save(model.state_dict())`` (today's layout) and in the
layouts of older transformers versions and of the authors' training wrapper. The converted
folder must score bit for bit as the state dict loaded at start-up, and anything that does not
fit must be refused naming the argument.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

import nlgscore
from nlgscore.backend.model_files import IncompleteModelError
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.seq2seq import bartscore
from nlgscore.seq2seq.bartscore import BARTScorer
from nlgscore.seq2seq.bartscore_convert import convert_pth, main

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests" / "golden" / "tiny-bart")
HYPS = ["The cat sat on the mat.", "Prices rose sharply.", ""]
REFS = ["A cat was sitting on the mat.", "In the final quarter, prices increased steeply.", "Nothing was said."]
TIED = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight")


def _state(path):
    return torch.load(path, weights_only=True)


@pytest.fixture(scope="module")
def pth(tmp_path_factory):
    """Folder with bart.pth (today's layout), old.pth (no tied copies, no final_logits_bias, as
    older transformers versions saved them) and wrapped.pth (the authors' ShardedBART prefix)."""
    from transformers import AutoModelForSeq2SeqLM

    torch.set_num_threads(1)
    model = AutoModelForSeq2SeqLM.from_pretrained(TINY)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():  # parameters, not state-dict keys: tied copies stay equal
            param.add_(0.05 * torch.randn(param.shape, generator=gen))
    folder = tmp_path_factory.mktemp("pth")
    state = model.state_dict()
    torch.save(state, folder / "bart.pth")
    torch.save({k: v for k, v in state.items() if k not in TIED + ("final_logits_bias",)}, folder / "old.pth")
    torch.save({f"model.{k}": v for k, v in state.items()}, folder / "wrapped.pth")
    convert_pth(str(folder / "bart.pth"), str(folder / "converted"), base=TINY, log=None)
    return folder


@pytest.fixture(scope="module")
def base_scores():
    return BARTScorer(checkpoint=TINY, device="cpu").score(REFS, HYPS)


def test_converted_folder_scores_as_para_weights(pth, base_scores):
    para = BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(pth / "bart.pth"), device="cpu")
    converted = BARTScorer(checkpoint=str(pth / "converted"), variant="bart-large-cnn-para", device="cpu")
    assert converted.score(REFS, HYPS) == para.score(REFS, HYPS)  # the same weights: the same bits
    assert converted.score(REFS, HYPS) != pytest.approx(base_scores, abs=1e-3)  # and not the base's
    sha = hashlib.sha256((pth / "bart.pth").read_bytes()).hexdigest()
    assert converted.signature["para"] == f"converted-bart.pth-sha256-{sha[:16]}"
    assert para.signature["para"].startswith("file-bart.pth-")
    record = json.loads((pth / "converted" / "bartscore_para.json").read_text())
    assert record["weights"]["sha256"] == sha and record["self_check"]["logits_equal"] is True
    assert record["self_check"]["max_abs_logprob_change_from_base"] > 0.01
    # "bartscore:<folder>" names no variant: the folder's record says which one it is.
    loaded = nlgscore.load(f"bartscore:{pth / 'converted'}", device="cpu")
    assert (
        loaded.signature["variant"] == "bart-large-cnn-para" and loaded.signature["para"] == converted.signature["para"]
    )
    assert loaded.score(REFS, HYPS) == para.score(REFS, HYPS)


@pytest.mark.parametrize(
    "name,notes",
    [
        ("old.pth", {"filled_tied": list(TIED), "kept_from_model": ["final_logits_bias"], "stripped_prefix": None}),
        ("wrapped.pth", {"filled_tied": [], "kept_from_model": [], "stripped_prefix": "model."}),
    ],
)
def test_older_layouts_give_the_same_weights(pth, tmp_path, name, notes):
    record = convert_pth(str(pth / name), str(tmp_path / "out"), base=TINY, log=None)
    assert {k: record["state_dict"][k] for k in notes} == notes
    ours, reference = (
        load_file(tmp_path / "out" / "model.safetensors"),
        load_file(pth / "converted" / "model.safetensors"),
    )
    assert ours.keys() == reference.keys() and all(ours[k].equal(reference[k]) for k in ours)
    para = BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(pth / name), device="cpu")
    assert para.score(REFS, HYPS) == BARTScorer(checkpoint=str(tmp_path / "out"), device="cpu").score(REFS, HYPS)


def _malformed(state):
    """File name -> (content, error, what the message must say after naming the file)."""
    return {
        "wrong_shape.pth": (
            dict(state, **{"model.encoder.layers.0.fc1.weight": torch.zeros(3, 5)}),
            ArgumentError,
            r"model\.encoder\.layers\.0\.fc1\.weight: \(3, 5\) in the file, \(64, 32\) in the model",
        ),
        "bias_shape.pth": (
            dict(state, final_logits_bias=torch.ones(1, 3)),
            ArgumentError,
            r"final_logits_bias: \(1, 3\) in the file",
        ),
        "extra.pth": (
            dict(state, **{"model.extra.weight": torch.ones(2)}),
            ArgumentError,
            r"unexpected keys \['model\.extra\.weight'\]",
        ),
        "missing.pth": (
            {k: v for k, v in state.items() if k != "model.decoder.layers.1.fc2.bias"},
            ArgumentError,
            r"missing keys \['model\.decoder\.layers\.1\.fc2\.bias'\]",
        ),
        "list.pth": (list(state.values()), ArgumentTypeError, r"not a state dict of tensors \(got list\)"),
        "nested.pth": ({"model": state}, ArgumentTypeError, r"'model' holds \w*[dD]ict, not a tensor"),
        "empty.pth": ({}, ArgumentError, r"empty state dict"),
    }


@pytest.mark.parametrize("name", list(_malformed({})))
def test_malformed_pth_is_refused_naming_the_argument(pth, tmp_path, name):
    content, error, pattern = _malformed(_state(pth / "bart.pth"))[name]
    torch.save(content, tmp_path / name)
    with pytest.raises(error, match=rf"bart_pth '.*{name}'.*{pattern}"):
        convert_pth(str(tmp_path / name), str(tmp_path / "out"), base=TINY, log=None)
    assert not (tmp_path / "out" / "bartscore_para.json").exists()
    with pytest.raises(error, match=rf"para_weights '.*{name}'.*{pattern}"):  # the same check at start-up
        BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(tmp_path / name), device="cpu")


def test_unreadable_files_are_refused(tmp_path):
    class Payload:
        def __reduce__(self):
            return (print, ("ran",))

    torch.save({"x": Payload()}, tmp_path / "code.pth")
    (tmp_path / "text.pth").write_text("not a torch file")
    with pytest.raises(ArgumentTypeError, match=r"bart_pth .*code\.pth' holds Python objects besides tensors"):
        convert_pth(str(tmp_path / "code.pth"), str(tmp_path / "out"), base=TINY, log=None)
    with pytest.raises(ArgumentTypeError, match=r"bart_pth .*text\.pth' is not a file torch\.save wrote"):
        convert_pth(str(tmp_path / "text.pth"), str(tmp_path / "out"), base=TINY, log=None)
    with pytest.raises(FileNotFoundError, match=r"bart_pth .*nope\.pth' is not a file"):
        convert_pth(str(tmp_path / "nope.pth"), str(tmp_path / "out"), base=TINY, log=None)
    with pytest.raises(ArgumentError, match=r"out_dir .* already holds files"):  # never over another model
        convert_pth(str(tmp_path / "code.pth"), TINY, base=TINY, log=None)


def test_self_check_refuses_a_folder_that_does_not_reproduce_the_model(pth, tmp_path, monkeypatch):
    from transformers import BartForConditionalGeneration

    save = BartForConditionalGeneration.save_pretrained

    def save_then_corrupt(self, folder, **kwargs):  # a faulty writer: one weight lands changed on disk
        save(self, folder, **kwargs)
        from safetensors.torch import save_file

        weights = load_file(Path(folder) / "model.safetensors")
        weights["model.encoder.layers.0.fc1.bias"] += 1
        save_file(weights, Path(folder) / "model.safetensors", metadata={"format": "pt"})

    monkeypatch.setattr(BartForConditionalGeneration, "save_pretrained", save_then_corrupt)
    with pytest.raises(
        IncompleteModelError,
        match=r"self-check failed: .* weights differ at \['model\.encoder\.layers\.0\.fc1\.bias'\]",
    ):
        convert_pth(str(pth / "bart.pth"), str(tmp_path / "out"), base=TINY, log=None)
    assert not (tmp_path / "out" / "bartscore_para.json").exists()  # not a finished conversion


def test_the_error_without_weights_gives_routes_that_work(pth, tmp_path):
    with pytest.raises(ArgumentError, match="para_weights=") as caught:
        BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", device="cpu")
    message = str(caught.value)
    with pytest.raises(ArgumentError, match=re.escape(message)):  # said before the base would be downloaded
        BARTScorer(variant="bart-large-cnn-para", device="cpu")
    assert "para_weights='path/to/bart.pth'" in message and "checkpoint='bart-large-cnn-para-hf'" in message
    # The command the message gives, run as given (with this test's file, folder and base model).
    command = re.search(r"`(python -m [^`]+)`", message).group(1).split()
    assert command[3:] == ["path/to/bart.pth", "bart-large-cnn-para-hf"]
    argv = [sys.executable, *command[1:3], str(pth / "bart.pth"), "bart-large-cnn-para-hf", "--base", TINY]
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "self-check:" in run.stdout and "reproduces the loaded model's logits exactly" in run.stdout
    scorer = BARTScorer(
        checkpoint=str(tmp_path / "bart-large-cnn-para-hf"), variant="bart-large-cnn-para", device="cpu"
    )
    assert scorer.signature["para"].startswith("converted-bart.pth-sha256-")


def test_the_script_is_the_same_command(pth, tmp_path, capsys):
    script = [sys.executable, str(ROOT / "scripts" / "convert_bartscore_pth.py")]
    argv = [*script, str(pth / "old.pth"), str(tmp_path / "out"), "--base", TINY]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0 and "self-check:" in run.stdout, run.stderr
    assert main([str(tmp_path / "nope.pth"), str(tmp_path / "out2"), "--base", TINY]) == 1
    assert "convert_bartscore_pth: error: bart_pth" in capsys.readouterr().err


def test_the_record_decides_the_variant(pth, tmp_path):
    with pytest.raises(ArgumentError, match=r"variant='bart-large' contradicts checkpoint"):
        BARTScorer(checkpoint=str(pth / "converted"), variant="bart-large", device="cpu")
    bad = tmp_path / "bad"
    bad.mkdir()
    for item in (pth / "converted").iterdir():
        (bad / item.name).write_bytes(item.read_bytes())
    (bad / "bartscore_para.json").write_text(json.dumps({"variant": "bart-large-cnn-para", "weights": {}}))
    with pytest.raises(ArgumentError, match=r"checkpoint: .*bartscore_para\.json' is not a BARTScore para record"):
        BARTScorer(checkpoint=str(bad), device="cpu")


def test_the_tables_converted_copy_is_loaded_directly(pth, monkeypatch):
    variants = json.loads(json.dumps(bartscore.variant_table()))
    variants["bart-large-cnn-para"]["converted"]["hub_repo"] = str(pth / "converted")
    monkeypatch.setattr(bartscore, "variant_table", lambda: variants)
    scorer = BARTScorer(variant="bart-large-cnn-para", device="cpu")
    assert scorer.signature["para"].startswith("converted-bart.pth-sha256-") and scorer.resolved.name == "converted"
    variants["bart-large-cnn-para"]["converted"]["hub_repo"] = TINY  # a copy without its record
    with pytest.raises(ArgumentError, match=r"converted\.hub_repo .* has no bartscore_para\.json"):
        BARTScorer(variant="bart-large-cnn-para", device="cpu")
