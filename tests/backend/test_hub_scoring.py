"""Scorers on Hub-hosted models and baselines, end to end, against the local Hub (tests/hubserver.py).

Shows that the model's snapshot commit is recorded in the signature, that a baseline published in
a configured Hub dataset repo (``NLGSCORE_BASELINE_REPO``) wins over the copy shipped in the wheel,
and that a repo without the file falls back to the shipped copy (or to a clear error when there is
none). Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hubserver import HubServer, folder_files

HERE = Path(__file__).resolve().parents[1]
HUB_BASELINE = b"LAYER,P,R,F\n" + b"".join(b"%d,0.5,0.25,0.125\n" % layer for layer in range(7))


def test_model_revision_and_baseline_sources_through_the_hub(tmp_path):
    with HubServer(lifetime=120) as hub:
        model = hub.add_repo("org/tiny-bart", folder_files(HERE / "golden" / "tiny-bart"))
        with_file = hub.add_repo("org/baselines", {"en/all-MiniLM-L6-v2.tsv": HUB_BASELINE}, repo_type="dataset")
        hub.add_repo("org/empty-baselines", {"README.md": b"no files yet\n"}, repo_type="dataset")
        env = dict(
            os.environ,
            HF_ENDPOINT=hub.endpoint,
            HF_HOME=str(tmp_path),
            HF_HUB_OFFLINE="0",
            HF_HUB_ETAG_TIMEOUT="3",
            HF_HUB_DOWNLOAD_TIMEOUT="5",
            HF_HUB_DISABLE_TELEMETRY="1",
        )
        done = subprocess.run(
            [
                sys.executable,
                str(HERE / "scripts" / "hub_scoring.py"),
                "org/tiny-bart",
                "org/baselines",
                "org/empty-baselines",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["model_signature"]["model"] == "org/tiny-bart"
    assert out["model_signature"]["revision"] == model["sha"]  # the commit, not "main"
    assert 0.0 < out["model_f1"] <= 1.0
    assert out["hub_source"] == out["hub_signature_rescale"] == f"hub:org/baselines@{with_file['sha']}"
    assert out["hub_baseline"] == [0.5, 0.25, 0.125]  # layer 4 of the Hub copy, not the shipped one
    assert out["fallback_source"] == "package:en/all-MiniLM-L6-v2.tsv"
    assert "no rescale baseline for lang='xx'" in out["missing_error"] and "org/empty-baselines" in out["missing_error"]
