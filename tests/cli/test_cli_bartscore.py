"""`nlgscore bartscore` on small files with the tiny BART fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlgscore.cli import main

TINY = str(Path(__file__).parents[1] / "golden" / "tiny-bart")
GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "golden_bartscore.json").read_text(encoding="utf-8"))
CASES = GOLDEN["cases"][:3]


@pytest.fixture()
def files(tmp_path):
    paths = {}
    for key in ("hyp", "ref", "src"):
        paths[key] = tmp_path / f"{key}.txt"
        paths[key].write_text("\n".join(c[key] for c in CASES) + "\n", encoding="utf-8")
    return paths


def run_cli(capsys, *argv):
    code = main(["bartscore", "--checkpoint", TINY, "--device", "cpu", "--no-progress", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_system_score_and_segments(files, capsys):
    code, out, _ = run_cli(capsys, "-c", files["hyp"], "-r", files["ref"], "--seg")
    assert code == 0
    lines = out.strip().split("\n")
    assert len(lines) == len(CASES) + 2
    for line, case in zip(lines, CASES):
        f, p, r = map(float, line.split("\t"))
        assert f == pytest.approx(case["scores"]["batch_size_4"]["f_mean_p_r"], abs=1e-5)
        assert p == pytest.approx(case["scores"]["batch_size_4"]["precision_ref_to_hyp"], abs=1e-5)
    system, signature = lines[-2:]
    assert signature.startswith("nlgscore:bartscore|") and "tiny-bart" in signature and "|direction:f|" in signature
    assert system.startswith("BARTScore: ")
    mean = sum(c["scores"]["batch_size_4"]["f_mean_p_r"] for c in CASES) / len(CASES)
    assert float(system.split("BARTScore: ")[1]) == pytest.approx(mean, abs=1e-5)


def test_sources_json_and_options(files, capsys):
    code, out, _ = run_cli(capsys, "-c", files["hyp"], "-s", files["src"], "--json")
    data = json.loads(out)
    assert code == 0 and "|direction:src|" in data["signature"]
    assert data["scores"] == pytest.approx(
        [c["scores"]["batch_size_4"]["faithfulness_src_to_hyp"] for c in CASES], abs=1e-5
    )
    code, out, _ = run_cli(
        capsys,
        "-c",
        files["hyp"],
        "-r",
        files["ref"],
        "-r",
        files["src"],
        "--agg",
        "max",
        "--direction",
        "recall",
        "--prompt",
        "Such as",
        "--prompt-side",
        "decoder",
        "--json",
    )
    sig = json.loads(out)["signature"]
    assert code == 0 and "max|" in sig and "|prompt:Such_as|side:decoder|" in sig


def test_errors(files, tmp_path, capsys):
    code, _, err = run_cli(capsys, "-c", tmp_path / "missing.txt", "-r", files["ref"])
    assert code == 2 and "candidate file not found" in err
    code, _, err = run_cli(capsys, "-c", files["hyp"])
    assert code == 2 and "reference file" in err
    code, _, err = run_cli(capsys, "-c", files["hyp"], "-r", files["ref"], "--direction", "src")
    assert code == 2 and "-s" in err
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "-c", files["hyp"], "-r", short)
    assert code == 2 and "lines" in err
    code, _, err = run_cli(capsys, "-c", files["hyp"], "-r", files["ref"], "--variant", "bart-huge")
    assert code == 2 and "variant" in err
