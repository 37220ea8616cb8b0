"""`nlgscore prism` end to end on the tiny-prism checkpoint."""

import json
from pathlib import Path

import pytest

from nlgscore.cli import main
from nlgscore.seq2seq.prism import PrismScorer

TINY = str(Path(__file__).parents[1] / "golden" / "tiny-prism")
CANDS = ["Hi world.", "This is a Test."]
REFS = ["Hello world.", "This is a test."]
SRCS = ["Bonjour le monde.", "C'est un test."]


@pytest.fixture()
def files(tmp_path):
    paths = {}
    for name, lines in (("cands", CANDS), ("refs", REFS), ("srcs", SRCS)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def scorer():
    return PrismScorer(TINY)


def test_ref_seg_and_system_line(files, capsys, scorer):
    assert (
        main(
            [
                "prism",
                "-c",
                str(files["cands"]),
                "-r",
                str(files["refs"]),
                "--checkpoint",
                TINY,
                "--seg",
                "--no-progress",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.strip().split("\n")
    expected = scorer.score(CANDS, refs=REFS)
    assert [float(x) for x in lines[:2]] == pytest.approx(expected.scores, abs=1e-6)
    assert lines[2:] == [f"Prism-ref: {expected.score:.6f}", str(expected.signature)]


def test_src_json(files, capsys, scorer):
    assert (
        main(
            [
                "prism",
                "-c",
                str(files["cands"]),
                "-s",
                str(files["srcs"]),
                "--checkpoint",
                TINY,
                "--temperature",
                "0.95",
                "--json",
                "--no-progress",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    expected = PrismScorer(TINY, temperature=0.95).score(CANDS, srcs=SRCS)
    assert {"H_cand_given_src", "G_cand_given_src", "system", "signature"} <= set(out)
    assert "|mode:src|T:0.95|" in out["signature"]
    assert out[expected.primary] == pytest.approx(expected.scores, abs=1e-9)


def test_refs_and_srcs_are_exclusive(files, capsys):
    assert main(["prism", "-c", str(files["cands"]), "-r", str(files["refs"]), "-s", str(files["srcs"])]) == 2
    assert "not both" in capsys.readouterr().err


def test_missing_file_and_bad_lang_are_one_line_errors(files, capsys):
    assert main(["prism", "-c", "Hi world.", "-r", str(files["refs"]), "--checkpoint", TINY]) == 2
    assert "candidate file not found" in capsys.readouterr().err
    assert (
        main(["prism", "-c", str(files["cands"]), "-r", str(files["refs"]), "--checkpoint", TINY, "--lang", "xx"]) == 2
    )
    assert "lang 'xx'" in capsys.readouterr().err


def test_line_count_mismatch(files, tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert main(["prism", "-c", str(files["cands"]), "-s", str(short), "--checkpoint", TINY]) == 2
    assert "has 1 lines" in capsys.readouterr().err
