"""One CLI convention and its parts: bert-score's spellings, stdin,
help for every command, a fast `nlgscore --help`, quiet model loading under --no-progress."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlgscore.cli import COMMANDS, main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
TINY_BART = REPO / "tests" / "golden" / "tiny-bart"


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_bert_score_spellings_are_aliases(capsys):
    cands, refs = str(EXAMPLES / "cands.txt"), str(EXAMPLES / "refs.txt")
    ours = run_json(
        capsys,
        [
            "bertscore",
            "--model",
            "minilm",
            "-l",
            "3",
            "-b",
            "2",
            "--idf",
            "-c",
            cands,
            "-r",
            refs,
            "--json",
            "--no-progress",
        ],
    )
    theirs = run_json(
        capsys,
        [
            "bertscore",
            "--model_type",
            "minilm",
            "--num_layers",
            "3",
            "--batch_size",
            "2",
            "--idf",
            "-v",
            "-c",
            cands,
            "-r",
            refs,
            "--json",
            "--no-progress",
        ],
    )
    short = run_json(
        capsys,
        [
            "bertscore",
            "-m",
            "minilm",
            "-l",
            "3",
            "-b",
            "2",
            "--idf",
            "-c",
            cands,
            "-r",
            refs,
            "--json",
            "--no-progress",
        ],
    )
    assert ours == theirs == short and "|L:3|" in ours["signature"]


def test_rescale_with_baseline_alias(capsys, bertscore_golden, tmp_path):
    baseline = tmp_path / "b.tsv"
    baseline.write_text(bertscore_golden["baseline_file_text"], encoding="utf-8")
    common = [
        "bertscore",
        "-m",
        "minilm",
        "-c",
        str(EXAMPLES / "cands.txt"),
        "-r",
        str(EXAMPLES / "refs.txt"),
        "--json",
        "--no-progress",
    ]
    ours = run_json(capsys, [*common, "--rescale", "--baseline-path", str(baseline)])
    theirs = run_json(capsys, [*common, "--rescale_with_baseline", "--baseline_path", str(baseline)])
    assert ours == theirs and "|rescale:file:b.tsv|" in ours["signature"]


def test_dash_reads_stdin(capsys, monkeypatch):
    cands = EXAMPLES / "cands.txt"
    from_file = run_json(
        capsys,
        ["bertscore", "-m", "minilm", "-c", str(cands), "-r", str(EXAMPLES / "refs.txt"), "--json", "--no-progress"],
    )
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbf" + cands.read_bytes()), encoding="utf-8")
    )
    from_stdin = run_json(
        capsys, ["bertscore", "-m", "minilm", "-c", "-", "-r", str(EXAMPLES / "refs.txt"), "--json", "--no-progress"]
    )
    assert from_stdin == from_file
    assert main(["bertscore", "-m", "minilm", "-c", "-", "-r", "-"]) == 2
    assert "only one of -c, -r and -s" in capsys.readouterr().err


def test_s_is_sources_everywhere(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["bertscore", "-m", "minilm", "-c", str(EXAMPLES / "cands.txt"), "-r", str(EXAMPLES / "refs.txt"), "-s"])
    assert exit_.value.code == 2 and "use --seg" in capsys.readouterr().err


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and out.startswith(f"usage: nlgscore {command}") and len(out.splitlines()) > 3


def test_help_imports_neither_torch_nor_transformers():
    code = (
        "import sys\nfrom nlgscore.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\nassert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "bertscore" in done.stdout and "bench" in done.stdout


def test_a_warning_is_one_line_naming_no_source_file(tmp_path):
    """The real command printed Python's `<path>/stream/windows.py:71: UserWarning: ...`
    and the source line below it."""
    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text("a cat\n", encoding="utf-8")
    refs.write_text("word " * 600 + "\n", encoding="utf-8")  # over MiniLM's 512 tokens
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nlgscore",
            "score",
            "bertscore:minilm",
            "--long-inputs",
            "truncate",
            "-c",
            str(cands),
            "-r",
            str(refs),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "nlgscore: warning: BERTScore: 1 input(s) longer than 512 tokens were truncated"
    ]


def test_no_progress_hides_the_loading_bars(capsys, tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a cat\n", encoding="utf-8")
    assert main(["bartscore", "--checkpoint", str(TINY_BART), "-c", str(path), "-r", str(path), "--no-progress"]) == 0
    assert "Loading weights" not in capsys.readouterr().err


@pytest.mark.parametrize("flags, bars", [([], True), (["--no-progress"], False), (["--quiet"], False)])
def test_loading_bars_in_a_fresh_process_follow_the_flags(tmp_path, flags, bars):
    path = tmp_path / "c.txt"
    path.write_text("a cat\n", encoding="utf-8")
    from terminal import run_on_terminal

    code, _, err = run_on_terminal(  # stderr a terminal: bars are drawn only there (nlgscore.backend.progress)
        [
            sys.executable,
            "-m",
            "nlgscore",
            "bartscore",
            "--checkpoint",
            str(TINY_BART),
            "-c",
            str(path),
            "-r",
            str(path),
            *flags,
        ],
        cwd=REPO,
        timeout=300,
        env={
            k: v for k, v in os.environ.items() if k not in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")
        },
    )
    assert code == 0, err
    assert (b"Loading weights" in err) is bars
