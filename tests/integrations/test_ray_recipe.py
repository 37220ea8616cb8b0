"""The Ray Data recipe of docs/guides/corpora.md, run as written on a 2-CPU Ray cluster, finishes.

Before, ``concurrency=2`` actors held both CPUs while ``read_parquet``'s task waited for one: no
progress in 300 s and no word. The block after the ``ray-recipe`` marker is run verbatim in a
child process (only ``ray.init()`` gets ``num_cpus=2`` and quiet options, as a test cluster), reading
a real Parquet folder; a run that stops making progress fails at the timeout instead of hanging.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray Data is the 'ray' extra: pip install 'nlgscore[ray]'")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = (
    "ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 1024 * 1024, "
    'runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}})'
)


def recipe() -> str:
    text = (ROOT / "docs" / "guides" / "corpora.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- ray-recipe:.*?-->\n```python notest\n(.*?)```", text, re.S)
    assert match, "docs/guides/corpora.md lost its ray-recipe block"
    return match.group(1)


def test_readme_ray_recipe_makes_progress_on_two_cpus(tmp_path, minilm_scorer):
    import pyarrow as pa

    code = recipe()
    assert "ray.init()" in code and "concurrency=" in code
    preds = [f"the cat number {k} sat on the mat" for k in range(60)]
    refs = [f"a cat, item {k % 9}, was on a mat" for k in range(60)]
    (tmp_path / "corpus").mkdir()
    for part in range(3):  # three files: three read tasks, each asking Ray for a CPU
        rows = slice(20 * part, 20 * (part + 1))
        pq.write_table(
            pa.table({"prediction": preds[rows], "reference": refs[rows]}), tmp_path / "corpus" / f"part{part}.parquet"
        )
    script = code.replace("ray.init()", CLUSTER, 1)
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
        "RAY_DEDUP_LOGS": "0",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=420
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the Ray recipe made no progress in 420 s on a 2-CPU cluster (the scoring actors hold every CPU)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 CPU stays free for reading and writing" in done.stderr  # the adapted pool says why
    table = pq.read_table(tmp_path / "scores").to_pydict()
    order = sorted(range(len(table["prediction"])), key=lambda k: preds.index(table["prediction"][k]))
    assert [table["prediction"][k] for k in order] == preds  # every row once
    expected = minilm_scorer.compute(preds, references=refs).f1
    got = [table["bertscore_f1"][k] for k in order]
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 1e-5
