"""``nlgscore score ... -o OUT`` survives kill -9 at any moment: resumed, the output is byte-identical.

Real subprocesses of the CLI are killed with SIGKILL at random moments (during start-up, right
after a window's checkpoint, in the middle of a window), then the same command is run again.
After every kill OUT does not exist yet, the checkpoint's count never goes back, and the partial
file holds exactly the checkpointed rows, equal to the start of an uninterrupted run's output.
A changed input file or setting refuses to resume; ``--restart`` starts over. MiniLM at layer 1
on 48 short pairs in windows of 4 keeps each process to a few seconds.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlgscore.cli import main

WINDOW = 4
WORDS = "the a cat dog sat ran on under mat rug today night cold warm house tree".split()


def _corpus(tmp_path: Path):
    rng = random.Random(7)
    cands = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) for _ in range(48)]
    refs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) for _ in range(48)]
    (tmp_path / "c.txt").write_text("\n".join(cands) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")


def _command(out: Path, *extra: str):
    return [
        sys.executable,
        "-m",
        "nlgscore",
        "score",
        "bertscore:minilm:L1",
        "-c",
        "c.txt",
        "-r",
        "r.txt",
        "-o",
        str(out),
        "--window",
        str(WINDOW),
        "--no-progress",
        "--device",
        "cpu",
        *extra,
    ]


ENV = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")


def _run(cwd: Path, out: Path) -> None:
    done = subprocess.run(_command(out), cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _checkpoint(out: Path):
    try:
        return json.loads(out.with_name(out.name + ".ckpt.json").read_text())
    except (OSError, ValueError):
        return None


def _kill_at(cwd: Path, out: Path, rng: random.Random, target: int, jitter: float = 0.02) -> None:
    """Start the command and SIGKILL it once the checkpoint reaches ``target`` rows (plus a random
    pause of up to one window's time, so some kills land mid-window); target 0: a random delay."""
    proc = subprocess.Popen(_command(out), cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if target == 0:
            time.sleep(rng.uniform(0.0, 3.0))
        else:
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                state = _checkpoint(out)
                if state and state["done"] >= target and not state.get("complete"):
                    break
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, jitter))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The corpus and the output of one uninterrupted run."""
    folder = tmp_path_factory.mktemp("corpus")
    _corpus(folder)
    _run(folder, folder / "reference.tsv")
    return folder / "reference.tsv"


def _copy_corpus(reference: Path, tmp_path: Path) -> None:
    for name in ("c.txt", "r.txt"):
        (tmp_path / name).write_bytes((reference.parent / name).read_bytes())


def test_kill_nine_then_resume_is_byte_identical(reference, tmp_path):
    _copy_corpus(reference, tmp_path)
    want = reference.read_bytes()
    lines = want.decode().splitlines(keepends=True)
    assert len(lines) == 49 and lines[0] == "precision\trecall\tf1\n"

    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    out, done_before, resumed_mid_run = tmp_path / "scores.tsv", 0, False
    for target in (0, rng.choice([4, 8, 12, 16]), rng.choice([24, 28, 32, 36])):
        _kill_at(tmp_path, out, rng, target)
        state = _checkpoint(out)
        if out.exists():  # the run finished before the kill landed: it must be complete
            assert out.read_bytes() == want, f"seed {seed}"
            out.unlink()
            continue
        if state is None:
            continue  # killed before the run began
        assert state["done"] >= done_before and state["done"] % WINDOW == 0, f"seed {seed}: {state['done']}"
        partial = out.with_name(out.name + ".partial").read_bytes()
        assert partial[: state["bytes"]] == want[: state["bytes"]], f"seed {seed}"
        assert partial[: state["bytes"]].count(b"\n") == state["done"] + (1 if state["done"] else 0)
        resumed_mid_run |= 0 < state["done"] < 48
        done_before = state["done"]
    assert resumed_mid_run, f"seed {seed}: no kill landed during scoring"
    _run(tmp_path, out)
    assert out.read_bytes() == want, f"seed {seed}"
    assert not out.with_name(out.name + ".partial").exists() and _checkpoint(out) is None


def test_changed_input_or_setting_refuses_to_resume_and_restart_starts_over(reference, tmp_path, capsys):
    _copy_corpus(reference, tmp_path)
    out = tmp_path / "scores.tsv"
    _kill_at(tmp_path, out, random.Random(1), 8, jitter=0.0)
    assert _checkpoint(out)["done"] >= 8 and not out.exists()

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        refs = Path("r.txt").read_text(encoding="utf-8")
        Path("r.txt").write_text(refs.replace("cat", "kitten", 1), encoding="utf-8")
        assert main(_command(out)[3:]) == 2
        err = capsys.readouterr().err
        assert "cannot resume" in err and "references r.txt: 'size=" in err and "--restart" in err
        Path("r.txt").write_text(refs, encoding="utf-8")
        assert main(_command(out, "--window", "16")[3:]) == 2
        assert "window: 4 → 16" in capsys.readouterr().err
        assert main(_command(out)[3:] + ["--dtype", "bfloat16"]) == 2
        err = capsys.readouterr().err  # the field that differs, not two truncated signatures
        assert "signature dtype: float32 → bfloat16" in err and "nlgscore:bertscore" not in err
        assert not out.exists()
        assert main(_command(out, "--restart")[3:]) == 0
        assert "f1:" in capsys.readouterr().out
    finally:
        os.chdir(cwd)
    assert out.read_bytes() == reference.read_bytes()
