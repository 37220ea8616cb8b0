"""Model errors name the flag of where they are raised (--model/--checkpoint on
the command line, model_type=/checkpoint= in Python), give a command that can be pasted whole,
tell "offline mode is on" from "the Hub did not answer" from "no such model id", and suggest the
closest alias on a typo. The Hub is the tests' loopback server or a closed port, never the network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hubserver import HubServer

import nlgscore
from nlgscore.cli import main

REPO = Path(__file__).resolve().parents[2]
CANDS = str(REPO / "examples" / "cands.txt")
REFS = str(REPO / "examples" / "refs.txt")


def test_offline_typo_names_the_cli_flag_and_the_alias(capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["bertscore", "-m", "minlm", "-c", CANDS, "-r", REFS]) == 2
    err = capsys.readouterr().err
    assert "offline mode is on" in err and "did you mean --model minilm?" in err
    assert err.rstrip().endswith("did you mean --model minilm?")  # the closest known name only,
    assert "hf download" not in err  # never a command downloading the typo
    assert main(["prism", "--checkpoint", "org/prism", "--revision", "v2", "-c", CANDS, "-r", REFS]) == 2
    err = capsys.readouterr().err
    assert "run: HF_HUB_OFFLINE=0 hf download org/prism --revision v2 (or pass a local folder as --checkpoint)" in err


def test_python_errors_name_the_keyword(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OSError, match="did you mean model_type=minilm"):
        nlgscore.load("bertscore:minlm")
    with pytest.raises(OSError, match=r"as checkpoint=\)"):
        nlgscore.load("bartscore", checkpoint="org/no-such-bart")


def run_cli(*argv, env):
    done = subprocess.run(
        [sys.executable, "-m", "nlgscore", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    return done.returncode, done.stderr


def test_hub_that_does_not_answer(tmp_path):
    env = {
        "HF_HUB_OFFLINE": "0",
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HUB_ETAG_TIMEOUT": "2",
        "HF_HOME": str(tmp_path),
    }
    code, err = run_cli("bertscore", "-m", "roberta-lage", "-c", CANDS, "-r", REFS, env=env)
    assert code == 2 and "the Hub did not answer" in err and "did you mean --model roberta-large?" in err
    assert "hf download" not in err and err.rstrip().endswith("did you mean --model roberta-large?")


def test_no_such_model_on_the_hub(tmp_path):
    with HubServer() as hub:
        env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.endpoint, "HF_HOME": str(tmp_path)}
        code, err = run_cli("bartscore", "--checkpoint", "org/no-such-model", "-c", CANDS, "-r", REFS, env=env)
    assert (
        code == 2 and "there is no model 'org/no-such-model' (revision main) on the Hub (given as --checkpoint)" in err
    )
