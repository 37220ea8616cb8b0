"""The multi-process recipe of docs/guides/distributed.md, run as written: its ``score.py`` under ``torchrun`` on two CPU
processes prints, on each process, the scores one process prints.

The script is taken verbatim from the guide's block after the ``launch-recipe`` marker, so the
documentation cannot drift from what works. (That the two processes split the pairs rather
than each scoring everything is checked by tests/backend/test_distributed.py, counting encoder rows.)
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _recipe() -> str:
    text = (ROOT / "docs" / "guides" / "distributed.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- launch-recipe:.*?-->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/guides/distributed.md lost its launch-recipe block"
    return match.group(1)


def test_readme_torchrun_recipe_two_processes_equal_one(tmp_path):
    script = tmp_path / "score.py"
    script.write_text(_recipe(), encoding="utf-8")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(ROOT)  # the script reads examples/ relative to a checkout
    try:
        exec(compile(_recipe(), "docs/guides/distributed.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    single = namespace["result"].scores
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    two = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node", "2", str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert two.returncode == 0, two.stderr[-3000:]
    # Each rank prints its list in one write, but the two ranks share the pipe, so a list may be
    # followed by the other rank's list before its newline ("[...][...]\n\n"): find the lists.
    printed = [ast.literal_eval(found) for found in re.findall(r"\[[^\[\]]*\]", two.stdout)]
    assert len(printed) == 2 and len(single) == 5
    for scores in printed:  # every process holds every score, in input order
        assert scores == pytest.approx(single, abs=1e-6)


def test_cli_output_under_torchrun_rank_zero_writes_every_row(tmp_path):
    """``nlgscore score ... -o`` on two processes: the windows are split, rank 0 writes all rows."""
    import nlgscore

    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    out = tmp_path / "scores.tsv"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    cmd = [
        torchrun,
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "nlgscore",
        "score",
        "bertscore:minilm:L2",
        "-c",
        "examples/cands.txt",
        "-r",
        "examples/refs.txt",
        "-o",
        str(out),
        "--window",
        "2",
        "--no-progress",
    ]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("f1: ") == 1  # one summary line: rank 0's
    cands = (ROOT / "examples" / "cands.txt").read_text(encoding="utf-8").splitlines()
    refs = (ROOT / "examples" / "refs.txt").read_text(encoding="utf-8").splitlines()
    want = nlgscore.load("bertscore:minilm:L2").compute(cands, references=refs).columns()["f1"]
    rows = out.read_text(encoding="utf-8").splitlines()
    assert rows[0] == "precision\trecall\tf1" and len(rows) == len(cands) + 1
    assert [float(row.split("\t")[2]) for row in rows[1:]] == pytest.approx(want, abs=1e-6)
