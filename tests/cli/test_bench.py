"""``nlgscore bench``: the user's comparison with bert_score on their own files.

It never asserts a timing (a shared machine is noisy); it checks that both sides scored the same
pairs with the same model and layer, that their F1 agree, and what a user without bert_score reads.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlgscore.cli import main
from nlgscore.cli.bench import compare

CANDS, REFS = "examples/cands.txt", "examples/refs.txt"


def test_compare_alternates_and_counts_rounds():
    order = []
    out = compare(lambda: order.append("a") or [1.0], lambda: order.append("b") or [2.0], rounds=3)
    # a warm-up each, then a b | b a | a b: a busy phase of the machine falls on both sides alike
    assert order == ["a", "b", "a", "b", "b", "a", "a", "b"]
    assert [len(s) for s in out["seconds"]] == [3, 3] and out["scores"] == [[1.0], [2.0]]


def test_bench_compares_with_bert_score(capsys):
    pytest.importorskip("bert_score", reason="bert_score is not installed (the optional [bench] extra)")
    assert main(["bench", "-c", CANDS, "-r", REFS, "--rounds", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pairs"] == 5 and report["model"] == "all-MiniLM-L6-v2" and report["num_layers"] == 4
    # 1e-5: the house tolerance against the reference implementation
    assert report["max_abs_diff_f1"] <= 1e-5
    assert set(report["sides"]) == {"nlgscore", "bert_score"} and report["speedup"] > 0
    assert main(["bench", "-c", CANDS, "-r", REFS, "--rounds", "1"]) == 0
    text = capsys.readouterr().out
    assert "speed-up" in text and "Target" not in text and "../shared" not in text


def _bench_stderr(*flags: str) -> str:
    """stderr of ``nlgscore bench`` in a process of its own (as in a CI log: not a terminal)."""
    done = subprocess.run(
        [sys.executable, "-m", "nlgscore", "bench", "-c", CANDS, "-r", REFS, "--rounds", "1", *flags],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
        env={k: v for k, v in os.environ.items() if k not in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")}
        | {"HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0 and "speed-up" in done.stdout, done.stderr
    return done.stderr


def test_bench_keeps_library_progress_bars_out_of_logs_unless_asked():
    pytest.importorskip("bert_score", reason="bert_score is not installed (the optional [bench] extra)")
    quiet = _bench_stderr()
    assert "Loading weights" not in quiet and "it/s" not in quiet and "%|" not in quiet, quiet
    asked = _bench_stderr("--progress")  # bert_score's model loads through transformers' loading bar
    assert "Loading weights" in asked, asked


def test_bench_without_bert_score_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "bert_score", None)  # as in an environment without it
    assert main(["bench", "-c", CANDS, "-r", REFS]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("nlgscore bench: error:")
        and 'pip install "nlgscore[bench]"' in err
        and len(err.splitlines()) == 1
    )


def test_bench_refuses_misaligned_files(tmp_path, capsys):
    pytest.importorskip("bert_score", reason="bert_score is not installed (the optional [bench] extra)")
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert main(["bench", "-c", str(short), "-r", REFS]) == 2
    assert "--cands has 1 lines and --refs 5" in capsys.readouterr().err
