"""What is a user error (one line, exit 2) and what is a bug (traceback,
exit 1), and the reliability fixes found by a bad-input probe of the core: a broken plug-in entry
point, errors relabelled as model-loading failures, a truncated vocab.txt, malformed spec parts."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import nlgscore
from nlgscore import registry
from nlgscore.backend.model_files import IncompleteModelError
from nlgscore.cli import main
from nlgscore.core.base import Scorer
from nlgscore.core.result import Result
from nlgscore.errors import ArgumentError, NlgscoreError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CANDS, REFS = str(EXAMPLES / "cands.txt"), str(EXAMPLES / "refs.txt")


def one_line(capsys, code: int, want: int = 2) -> str:
    err = capsys.readouterr().err
    assert code == want, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


# -- item 6: one malformed entry point of an installed plug-in -----------------------------------
def _dist(site: Path, dist: str, entries: str, module: str = "") -> None:
    """A real installed distribution: a dist-info folder (and a module) in a folder on sys.path."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[nlgscore.metrics]\n{entries}\n", encoding="utf-8")
    if module:
        (site / f"{dist.replace('-', '_')}.py").write_text(module, encoding="utf-8")


GOOD_PLUGIN = (
    "import numpy as np\n"
    "from nlgscore.core.base import Scorer\n"
    "from nlgscore.core.result import Result\n"
    "class Echo(Scorer):\n"
    "    name = 'goodecho'\n"
    "    def _score_items(self, items, state):\n"
    "        return {'one': np.ones(len(items))}\n"
    "    def _finish(self, call, columns):\n"
    "        return Result(self.make_signature(call), columns, 'one')\n"
    "    def _signature_fields(self, call):\n"
    "        return {}\n"
)


def test_a_malformed_entry_point_is_skipped_with_one_warning_naming_its_distribution(tmp_path, monkeypatch):
    _dist(tmp_path, "shouty-plugin", "Shouty = shouty_plugin:Scorer")
    _dist(tmp_path, "colonless-plugin", "colonless = colonless_plugin")
    _dist(tmp_path, "good-plugin", "goodecho = good_plugin:Echo", GOOD_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_read", False)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            names = registry.metric_names()
        messages = [str(w.message) for w in caught if "nlgscore.metrics entry point" in str(w.message)]
        assert len(messages) == 2, messages
        assert any("shouty-plugin" in m and "Shouty" in m for m in messages)
        assert any("colonless-plugin" in m and "colonless" in m for m in messages)
        # the other plug-in and the built-in metrics keep working
        assert {"bertscore", "prism", "bartscore", "goodecho"} <= set(names)
        assert nlgscore.load("goodecho").compute(["a", "b"], references=["c", "d"]).scores == [1.0, 1.0]
    finally:
        registry.unregister("goodecho")


# -- item 5: user errors are one line (exit 2), bugs show their traceback (exit 1) -----------------
@pytest.mark.parametrize(
    "spec, must",
    [
        ("bertscore:minilm:X4", "L<layer>"),
        ("bertscore:minilm:L-1", "L<layer> with a layer number >= 0"),
        ("bartscore:nope:sideways", "a direction (src"),
        ("bertscore::L4", "empty part"),
    ],
)
def test_malformed_spec_parts_say_what_the_part_must_look_like(spec, must, capsys):
    with pytest.raises(ArgumentError) as caught:
        registry.spec_options(spec)
    assert must in str(caught.value) and isinstance(caught.value, ValueError)
    err = one_line(capsys, main(["score", spec, "-c", CANDS, "-r", REFS, "--no-progress"]))
    assert must in err


class Broken(Scorer):
    """A metric with a bug deep inside: a plain ValueError that no user input explains."""

    name = "broken"

    def _score_items(self, items, state):
        return {"x": np.array(_deep_helper(len(items)))}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "x")

    def _signature_fields(self, call):
        return {}


def _deep_helper(n: int):
    raise ValueError("an internal invariant does not hold")


def test_a_bug_shows_its_traceback_and_exits_1(capsys):
    registry.register("broken", Broken, replace=True)
    try:
        code = main(["score", "broken", "-c", CANDS, "-r", REFS])
        err = capsys.readouterr().err
        assert code == 1, err
        assert "Traceback" in err and "_deep_helper" in err and "internal error" in err
        with pytest.raises(ValueError, match="invariant"):  # --debug re-raises it
            main(["score", "broken", "-c", CANDS, "-r", REFS, "--debug"])
    finally:
        registry.unregister("broken")


def test_every_user_error_class_is_an_nlgscore_error():
    from nlgscore.backend.extras import MissingExtraError
    from nlgscore.backend.models import ModelNotAvailableError
    from nlgscore.cli.options import UserError

    for cls in (UserError, MissingExtraError, ModelNotAvailableError, IncompleteModelError):
        assert issubclass(cls, NlgscoreError)


# -- item 6: an error outside the package is not relabelled as a model-loading failure -----------
def test_a_non_utf8_baseline_file_is_named_not_blamed_on_the_model(tmp_path, capsys):
    baseline = tmp_path / "baseline.tsv"
    baseline.write_bytes("LAYER,P,R,F\n0,0.5,0.5,0.5\n# café\n".encode("latin-1"))
    code = main(
        [
            "bertscore",
            "--model",
            "minilm",
            "-l",
            "0",
            "--rescale",
            "--baseline-path",
            str(baseline),
            "-c",
            CANDS,
            "-r",
            REFS,
            "--no-progress",
        ]
    )
    err = one_line(capsys, code)
    assert str(baseline) in err and "not UTF-8" in err and "cannot load the model" not in err


# -- item 6: a WordPiece vocab.txt that does not match the model is refused ----------------------
def _minilm_without_tokenizer_json(tmp_path: Path, keep_lines=None) -> Path:
    from nlgscore.backend.models import resolve

    source, folder = Path(resolve("minilm").path), tmp_path / "minilm"
    folder.mkdir(parents=True)
    for entry in source.iterdir():
        if entry.is_file() and entry.name not in ("tokenizer.json", "vocab.txt"):
            os.symlink(entry, folder / entry.name)  # the weights are read, never changed
    lines = (source / "vocab.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "vocab.txt").write_text("".join(lines[:keep_lines]), encoding="utf-8")
    return folder


def test_a_truncated_vocab_txt_is_refused_naming_the_folder_and_file(tmp_path):
    from nlgscore.bertscore import BERTScorer

    whole = _minilm_without_tokenizer_json(tmp_path / "whole")
    assert len(BERTScorer(model_type=str(whole), num_layers=4).compute(["a cat"], ["the cat"]).scores) == 1
    truncated = _minilm_without_tokenizer_json(tmp_path / "cut", keep_lines=3000)
    with pytest.raises(IncompleteModelError) as caught:
        BERTScorer(model_type=str(truncated), num_layers=4)
    message = str(caught.value)
    assert str(truncated) in message and "vocab.txt has 3000 tokens" in message and "30522" in message


# -- item 7: offline, a missing default model offers the embedded MiniLM ---------------------------
def test_offline_default_model_error_offers_the_embedded_minilm(monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    err = one_line(capsys, main(["bertscore", "-c", CANDS, "-r", REFS, "--no-progress"]))
    assert "'roberta-large' is not in the local cache" in err and "embedded MiniLM" in err and "--model minilm" in err
    with pytest.raises(OSError, match="model_type=minilm"):
        nlgscore.load("bertscore")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
