"""``nlgscore mbr`` under ``torchrun`` on two CPU processes: every rank decodes, rank 0 alone writes
(the shared resumable driver's rank-0 rule). On main each rank printed every choice and wrote the
matrix file. Real processes and the embedded MiniLM; nothing is mocked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from nlgscore.mbr import decode


def test_two_processes_print_each_choice_once_and_equal_one(tmp_path, minilm_scorer):
    items = [
        {"id": k, "candidates": [f"a cat sat {k}", "the cat sat", f"a dog ran {k % 3}", "stocks fell"]}
        for k in range(10)
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    npz = tmp_path / "u.npz"
    done = subprocess.run(
        [
            torchrun,
            "--standalone",
            "--nproc_per_node",
            "2",
            "-m",
            "nlgscore",
            "mbr",
            str(path),
            "--metric",
            "bertscore:minilm:L4",
            "--chunk",
            "3",
            "--matrix-out",
            str(npz),
            "--no-progress",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["id"] for row in rows] == list(range(10))  # once each, in input order
    want = decode(minilm_scorer, items, keep_matrices=True)
    for row, choice in zip(rows, want):
        np.testing.assert_allclose(row["expected_utility"], choice.expected_utility, atol=1e-6, rtol=0)
    with np.load(npz) as matrices:
        assert sorted(matrices.files, key=int) == [str(k) for k in range(10)]
        np.testing.assert_allclose(matrices["3"], want[3].matrix, atol=1e-6, rtol=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl", "u.npz"]
