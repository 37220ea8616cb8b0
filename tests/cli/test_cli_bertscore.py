"""`nlgscore bertscore` end to end on the example files (MiniLM)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nlgscore.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_seg_and_system_line(capsys, minilm_scorer):
    assert (
        main(
            [
                "bertscore",
                "--model",
                "minilm",
                "-l",
                "4",
                "-c",
                str(EXAMPLES / "cands.txt"),
                "-r",
                str(EXAMPLES / "refs.txt"),
                "--seg",
                "--no-progress",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.strip().split("\n")
    cands = (EXAMPLES / "cands.txt").read_text().strip().split("\n")
    refs = (EXAMPLES / "refs.txt").read_text().strip().split("\n")
    expected = minilm_scorer.score(cands, refs)
    assert len(lines) == len(cands) + 2
    seg = np.array([[float(x) for x in line.split("\t")] for line in lines[:-2]])
    np.testing.assert_allclose(seg[:, 2], expected.f1, atol=1e-6)
    system, signature = lines[-2:]  # the values on their own line first, then the signature
    p, r, f = (f"{expected.system[k]:.6f}" for k in ("precision", "recall", "f1"))
    assert system == f"P: {p} R: {r} F1: {f}" and signature == str(expected.signature)


def test_json_multi_reference(capsys):
    cands, refs = str(EXAMPLES / "cands.txt"), str(EXAMPLES / "refs.txt")
    assert (
        main(["bertscore", "--model", "minilm", "-c", cands, "-r", refs, "-r", cands, "--json", "--no-progress"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert {"precision", "recall", "f1", "system", "signature"} <= set(out)
    assert out["f1"] == pytest.approx([1.0] * len(out["f1"]), abs=1e-5)  # the candidate itself is a reference


def test_rescale_of_the_embedded_model_needs_no_lang(capsys):
    """`-m minilm --rescale` was refused for want of --lang; the embedded model
    is English and its baseline ships with the package."""
    files = ["-c", str(EXAMPLES / "cands.txt"), "-r", str(EXAMPLES / "refs.txt"), "--json", "--no-progress"]
    assert main(["bertscore", "-m", "minilm", "--rescale", *files]) == 0
    defaulted = json.loads(capsys.readouterr().out)
    assert main(["bertscore", "-m", "minilm", "--rescale", "--lang", "en", *files]) == 0
    explicit = json.loads(capsys.readouterr().out)
    assert "|rescale:package:en/all-MiniLM-L6-v2.tsv|" in defaulted["signature"] and defaulted == explicit


def test_missing_file_is_an_error_not_text(capsys):
    assert main(["bertscore", "--model", "minilm", "-c", "The cat sat.", "-r", str(EXAMPLES / "refs.txt")]) == 2
    assert "candidate file not found" in capsys.readouterr().err


def test_line_count_mismatch(tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert (
        main(["bertscore", "--model", "minilm", "-c", str(EXAMPLES / "cands.txt"), "-r", str(short), "--no-progress"])
        == 2
    )
    assert "lines" in capsys.readouterr().err
