"""``nlgscore score`` on tables (-i JSONL/CSV/Parquet with column options) and with -o: the same
scores as the text-file inputs, any window; clear one-line errors for contradictory inputs."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from nlgscore.cli import main

SPEC = "bertscore:minilm:L2"
PREDS = ["it is freezing today", "the cat sat on the mat", "dogs bark, at night", 'she said "no"', "the end"]
REFS = ["the weather is cold today", "a cat was sitting on the mat", "a dog barks", "she refused", "it ends"]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(PREDS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(
        "".join(json.dumps({"hyp": p, "ref": r}) + "\n" for p, r in zip(PREDS, REFS)), encoding="utf-8"
    )
    with open(tmp_path / "t.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("prediction", "reference"), *zip(PREDS, REFS)])
    return tmp_path


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_tables_and_windows_equal_text_files(files, capsys):
    base = _json(
        capsys, ["score", SPEC, "-c", str(files / "c.txt"), "-r", str(files / "r.txt"), "--json", "--no-progress"]
    )
    jsonl = _json(
        capsys,
        [
            "score",
            SPEC,
            "-i",
            str(files / "t.jsonl"),
            "--pred-column",
            "hyp",
            "--ref-column",
            "ref",
            "--window",
            "2",
            "--json",
            "--no-progress",
        ],
    )
    table = _json(capsys, ["score", SPEC, "-i", str(files / "t.csv"), "--window", "3", "--json", "--no-progress"])
    for other in (jsonl, table):
        np.testing.assert_allclose(other["f1"], base["f1"], atol=1e-6)
        assert other["signature"] == base["signature"]


def test_output_file_tsv_and_jsonl(files, capsys):
    base = _json(
        capsys, ["score", SPEC, "-c", str(files / "c.txt"), "-r", str(files / "r.txt"), "--json", "--no-progress"]
    )
    out = files / "scores.jsonl"
    summary = _json(
        capsys, ["score", SPEC, "-i", str(files / "t.csv"), "-o", str(out), "--window", "2", "--json", "--no-progress"]
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    np.testing.assert_allclose([row["f1"] for row in rows], base["f1"], atol=1e-6)
    assert summary["items"] == 5 and summary["score"] == pytest.approx(base["score"], abs=1e-6)
    assert not (files / "scores.jsonl.partial").exists() and not (files / "scores.jsonl.ckpt.json").exists()
    tsv = files / "scores.tsv"
    assert (
        main(["score", SPEC, "-c", str(files / "c.txt"), "-r", str(files / "r.txt"), "-o", str(tsv), "--no-progress"])
        == 0
    )
    system, signature = capsys.readouterr().out.strip().split("\n")  # the values first, then the signature
    assert system == f"f1: {summary['score']:.6f}" and signature.startswith("nlgscore:bertscore|")
    lines = tsv.read_text().splitlines()
    assert lines[0] == "precision\trecall\tf1" and len(lines) == 6


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-i", "t.jsonl", "-c", "c.txt"], "either -i TABLE or text files"),
        (["-r", "r.txt"], "give the candidates"),
        (["-c", "c.txt"], "give references (-r) or sources (-s)"),
        (["-i", "t.jsonl"], "t.jsonl:1: no column 'prediction'"),
        (["-c", "c.txt", "-r", "r.txt", "-o", "out.csv"], "name it .tsv or .jsonl"),
    ],
)
def test_input_mistakes_are_one_line(files, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(files)
    assert main(["score", SPEC, *argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
