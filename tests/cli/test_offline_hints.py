"""Offline, the error for a Hub id that is not cached offers only what that metric's family can
load, and following the hint as written works: the embedded MiniLM for BERTScore; for Prism and
BARTScore (encoder-decoders) a local folder or a Hugging Face cache holding the model, never the
BERT alias. Each command runs as a subprocess with HF_HUB_OFFLINE=1 and its own (empty) HF_HOME,
so no cache of the machine can answer for the model."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import nlgscore
from nlgscore.backend.models import ModelNotAvailableError
from nlgscore.backend.tables import table

REPO = Path(__file__).resolve().parents[2]
CANDS = str(REPO / "examples" / "cands.txt")
REFS = str(REPO / "examples" / "refs.txt")
TINY = {"prism": REPO / "tests" / "golden" / "tiny-prism", "bartscore": REPO / "tests" / "golden" / "tiny-bart"}
# Hub ids not cached under an empty HF_HOME; BARTScore's default is also one of BERTScore's models,
# which is how it came to be offered BERTScore's embedded MiniLM.
NOT_CACHED = {"prism": "org/prism-not-cached", "bartscore": "facebook/bart-large-cnn"}
# A placeholder in a hint: "<a local folder>", "<its hub folder>" (what the user fills in).
OFFERED = r"(<[^>]+>|\S+?)(?=[ ;)]|$)"


def run(argv: List[str], home: Path, **env: str) -> Tuple[int, str, str]:
    """``python ARGV`` offline with ``home`` as HF_HOME (and ``env`` on top): (status, stdout, stderr)."""
    environ = {k: v for k, v in os.environ.items() if k != "HF_HUB_CACHE"}
    environ.update(HF_HUB_OFFLINE="1", HF_HOME=str(home), **env)
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=REPO, env=environ, timeout=300)
    return done.returncode, done.stdout, done.stderr


def cli(*argv: str, home: Path, **env: str) -> Tuple[int, str, str]:
    return run(["-m", "nlgscore", *argv], home, **env)


def one_line(err: str) -> str:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def encoder_only_names() -> List[str]:
    """Names a seq2seq hint must not offer: the packaged alias and BERTScore's encoder-only models."""
    seq2seq = ("bart", "t5", "pegasus", "marian", "prism", "m2m", "nllb", "opus")
    names = [a for a in table("aliases") if not a.startswith("_")]
    return names + [m for m in table("bertscore_model2layers") if not any(s in m.lower() for s in seq2seq)]


def hub_cache(root: Path, repo_id: str, folder: Path) -> Path:
    """A Hugging Face cache (``<root>/hub``) holding ``folder``'s files as ``repo_id`` at main."""
    commit = "0" * 40
    repo = root / "hub" / f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(folder, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return root


def test_bertscore_offers_the_embedded_minilm_and_it_scores(tmp_path):
    code, _, err = cli("bertscore", "-c", CANDS, "-r", REFS, "--no-progress", home=tmp_path)
    line = one_line(err)
    assert code == 2 and "'roberta-large' is not in the local cache" in line
    offered = re.search(r"needs no download: --model " + OFFERED, line).group(1)
    assert offered == "minilm"
    code, out, err = cli("bertscore", "-c", CANDS, "-r", REFS, "--no-progress", "--model", offered, home=tmp_path)
    assert code == 0 and out.strip(), err


@pytest.mark.parametrize("metric", ["prism", "bartscore"])
def test_seq2seq_hint_names_no_encoder_and_each_route_it_names_works(tmp_path, metric):
    repo_id = NOT_CACHED[metric]
    command = (metric, "--checkpoint", repo_id, "-c", CANDS, "-r", REFS, "--no-progress")
    code, _, err = cli(*command, home=tmp_path / "empty")
    line = one_line(err)
    assert code == 2 and f"model '{repo_id}' is not in the local cache and offline mode is on" in line
    named = re.findall(r"(?<![\w/.-])(" + "|".join(map(re.escape, encoder_only_names())) + r")(?![\w/.-])", line)
    assert named == [], f"a hint for an encoder-decoder metric names encoder models {named}: {line}"
    assert "model_type" not in line and "--model" not in line
    offered = set(re.findall(r"--checkpoint " + OFFERED, line))
    assert offered == {"<a local folder>"}, line
    # --checkpoint <a local folder>, filled in with a folder holding a saved encoder-decoder
    filled = [str(TINY[metric]) if a == repo_id else a for a in command]
    code, out, err = cli(*filled, home=tmp_path / "empty")
    assert code == 0 and out.strip(), err
    # HF_HOME=<a copy of ~/.cache/huggingface that holds the model>: the same command now loads it
    route = re.search(r"(HF_HOME)=<a copy of ~/\.cache/huggingface that holds " + re.escape(repo_id) + ">", line)
    assert route, line
    home = hub_cache(tmp_path / "copy", repo_id, TINY[metric])
    code, out, err = cli(*command, home=home)
    assert code == 0 and out.strip(), err
    # (or HF_HUB_CACHE=<its hub folder>)
    assert "(or HF_HUB_CACHE=<its hub folder>)" in line
    code, out, err = cli(*command, home=tmp_path / "empty", HF_HUB_CACHE=str(home / "hub"))
    assert code == 0 and out.strip(), err


PYTHON = """
import sys, nlgscore
try:
    nlgscore.load(sys.argv[1], checkpoint=sys.argv[2])
except nlgscore.ModelNotAvailableError as err:
    print(err)
"""


@pytest.mark.parametrize("metric", ["prism", "bartscore"])
def test_python_hint_names_the_keyword_and_a_folder_as_it_says_loads(tmp_path, metric):
    code, out, err = run(["-c", PYTHON, metric, NOT_CACHED[metric]], tmp_path)
    assert code == 0 and "is not in the local cache" in out, err
    assert "checkpoint=<a local folder>" in out and "minilm" not in out.lower()
    scorer = nlgscore.load(metric, checkpoint=str(TINY[metric]))
    assert len(scorer.compute(["a cat"], ["the cat"]).scores) == 1


def test_a_seq2seq_typo_is_never_matched_to_an_encoder(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotAvailableError) as caught:
        nlgscore.load("bartscore", checkpoint="roberta-larg")
    assert "did you mean" not in str(caught.value) and "roberta-large" not in str(caught.value)
    with pytest.raises(ModelNotAvailableError, match=r"did you mean checkpoint=facebook/bart-large\?"):
        nlgscore.load("bartscore", checkpoint="facebook/bart-larg")
    with pytest.raises(ModelNotAvailableError, match=r"did you mean model_type=roberta-large\?"):
        nlgscore.load("bertscore", model_type="roberta-larg")
