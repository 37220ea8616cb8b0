"""The call-path benchmark (``python -m benchmarks call_path``) in its tiny form: every path and
scorer on a handful of items, run as a user runs it. It checks the report's structure and that
every item got its score; it never asserts a timing (the machine is shared and noisy)."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_call_path_scores_every_item_of_every_path(tmp_path):
    out = tmp_path / "call-path.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "call_path",
            "--sizes",
            "1,9",
            "--repeats",
            "1",
            "--json",
            str(out),
            "--profile",
            str(tmp_path / "profile.txt"),
            "--profile-case",
            "null:merged:9",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["environment"]["cores"] >= 1 and report["repeats"] == 1
    rows = report["rows"]
    cases = {(row["scorer"], row["path"], row["items"]) for row in rows}
    assert cases == {
        (s, p, n) for s in ("tiny", "null") for p in ("compute", "matrix", "merged", "acompute") for n in (1, 9)
    }
    expected = {
        "compute": {1: 1, 9: 9},
        "merged": {1: 1, 9: 9},
        "acompute": {1: 1, 9: 9},
        "matrix": {1: 1, 9: 8},
    }  # matrix: 1x8 cells for 9
    for row in rows:
        assert row["scored"] == row["expected"] == expected[row["path"]][row["items"]], row
        assert row["wall_us_per_item"] > 0 and row["cpu_us_per_item"] >= 0
    assert "make_call" in (tmp_path / "profile.txt").read_text()  # the merged path checks each call: the profile saw it


def test_call_path_refuses_an_unknown_path():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "call_path", "--paths", "serve"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--paths" in done.stderr and "serve" in done.stderr
