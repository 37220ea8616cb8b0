"""Models and baselines through the real huggingface_hub client, against a local Hub (tests/hubserver.py).

Nothing is mocked: the client downloads over HTTP from 127.0.0.1, stores files in a temporary
HF_HOME, and each scenario runs in a fresh process because huggingface_hub reads HF_ENDPOINT,
HF_HOME and HF_HUB_OFFLINE at import time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from hubserver import HubServer, folder_files

HERE = Path(__file__).resolve().parents[1]
TINY_BART = HERE / "golden" / "tiny-bart"
CLIENT = HERE / "scripts" / "hub_client.py"
BASELINE = b"LAYER,P,R,F\n0,0.1,0.2,0.3\n1,0.4,0.5,0.6\n"
BASELINE_REPO = "nlgscore/rescale-baselines"  # the repo id in nlgscore/data/hub.json
CONFIGURED = {"NLGSCORE_BASELINE_REPO": BASELINE_REPO}  # a Hub repo of baselines is read only when configured


@pytest.fixture()
def hub():
    with HubServer(lifetime=60) as server:
        server.add_repo("org/tiny-bart", folder_files(TINY_BART))
        server.add_repo(BASELINE_REPO, {"en/org/tiny-bart.tsv": BASELINE}, repo_type="dataset")
        yield server


def client(endpoint: str, home: Path, *args: str, offline: bool = False, extra: Optional[dict] = None) -> dict:
    env = dict(os.environ)
    env.pop("NLGSCORE_BASELINE_REPO", None)
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HOME=str(home),
        HF_HUB_OFFLINE="1" if offline else "0",
        HF_HUB_ETAG_TIMEOUT="3",
        HF_HUB_DOWNLOAD_TIMEOUT="5",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    env.update(extra or {})
    env.pop("TRANSFORMERS_OFFLINE", None)
    done = subprocess.run([sys.executable, str(CLIENT), *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_model_download_then_cache_with_hub_down_then_offline(hub, tmp_path):
    first = client(hub.endpoint, tmp_path, "model", "org/tiny-bart")
    assert "error" not in first, first
    # The revision recorded in signatures is the snapshot commit, not "main".
    assert first["revision"] == hub.repo("org/tiny-bart")["sha"]
    assert first["name"] == "org/tiny-bart"
    assert folder_files(Path(first["path"])) == folder_files(TINY_BART)
    downloads = [p for m, p in hub.requests if m == "GET" and "/resolve/" in p]
    assert len(downloads) == len(folder_files(TINY_BART))

    hub.stop()  # a Hub outage: connections are refused from now on
    cached = client(hub.endpoint, tmp_path, "model", "org/tiny-bart")
    assert cached.get("path") == first["path"], cached
    assert cached["seconds"] < 15  # falls back to the cache, no hang

    offline = client(hub.endpoint, tmp_path, "model", "org/tiny-bart", offline=True)
    assert offline.get("path") == first["path"], offline


def test_model_offline_and_not_cached_gives_clear_error(hub, tmp_path):
    out = client(hub.endpoint, tmp_path, "model", "org/tiny-bart", offline=True)
    assert out["error"] == "ModelNotAvailableError"
    assert "hf download org/tiny-bart" in out["message"]
    assert not hub.requests or all("/tiny-bart" not in p for _, p in hub.requests)


def test_model_missing_repo_gives_model_not_available(hub, tmp_path):
    out = client(hub.endpoint, tmp_path, "model", "org/no-such-model")
    assert out["error"] == "ModelNotAvailableError"
    assert "org/no-such-model" in out["message"]


def test_model_hub_down_and_not_cached_fails_fast(hub, tmp_path):
    hub.stop()
    out = client(hub.endpoint, tmp_path, "model", "org/tiny-bart")
    assert out["error"] == "ModelNotAvailableError"
    assert "the Hub did not answer" in out["message"]  # not "offline mode" nor "no such model"
    assert out["seconds"] < 15


def test_revision_pinning(hub, tmp_path):
    repo = hub.repo("org/tiny-bart")
    old = repo["sha"]
    repo["files"]["README.md"] = b"# updated\n"
    hub._commit(repo)
    pinned = client(hub.endpoint, tmp_path, "model", "org/tiny-bart", old)
    latest = client(hub.endpoint, tmp_path, "model", "org/tiny-bart")
    assert pinned["revision"] == old
    assert latest["revision"] == repo["sha"] != old
    assert not (Path(pinned["path"]) / "README.md").exists()
    assert (Path(latest["path"]) / "README.md").read_bytes() == b"# updated\n"
    unknown = client(hub.endpoint, tmp_path, "model", "org/tiny-bart", "v9.9")
    assert unknown["error"] == "ModelNotAvailableError"
    assert "v9.9" in unknown["message"]


def test_baseline_download_cache_offline(hub, tmp_path):
    first = client(hub.endpoint, tmp_path, "baseline", "en", "org/tiny-bart", extra=CONFIGURED)
    path, source = first["found"]
    assert Path(path).read_bytes() == BASELINE
    assert Path(path).as_posix().endswith("en/org/tiny-bart.tsv")  # <lang>/<model>.tsv layout
    assert source == f"hub:{BASELINE_REPO}@{hub.repo(BASELINE_REPO, 'dataset')['sha']}"

    hub.stop()
    assert client(hub.endpoint, tmp_path, "baseline", "en", "org/tiny-bart", extra=CONFIGURED)["found"] == [
        path,
        source,
    ]
    offline = client(hub.endpoint, tmp_path, "baseline", "en", "org/tiny-bart", offline=True, extra=CONFIGURED)
    assert offline["found"] == [path, source]


def test_baseline_not_configured_makes_no_request(hub, tmp_path):
    """The repo of hub.json holds the file, but nothing configures it: no look-up, no request."""
    assert client(hub.endpoint, tmp_path, "baseline", "en", "org/tiny-bart")["found"] is None
    assert hub.requests == []


def test_baseline_missing_file_or_repo_or_hub_gives_none(hub, tmp_path):
    # None lets nlgscore.baselines fall back to the copies shipped in the wheel.
    assert client(hub.endpoint, tmp_path, "baseline", "xx", "org/tiny-bart", extra=CONFIGURED)["found"] is None
    assert client(hub.endpoint, tmp_path, "baseline", "en", "org/tiny-bart", "org/no-such-repo")["found"] is None
    offline = client(
        hub.endpoint, tmp_path / "offline", "baseline", "en", "org/tiny-bart", offline=True, extra=CONFIGURED
    )
    assert offline["found"] is None
    hub.stop()
    down = client(hub.endpoint, tmp_path / "down", "baseline", "en", "org/tiny-bart", extra=CONFIGURED)
    assert down["found"] is None and down["seconds"] < 5  # no retry loop before the fallback


def test_stalled_hub_times_out_instead_of_hanging(hub, tmp_path):
    hub.stall = 30  # accepts connections, never answers in time; HF_HUB_*_TIMEOUT are 3 and 5 s
    model = client(hub.endpoint, tmp_path, "model", "org/tiny-bart")
    assert model["error"] == "ModelNotAvailableError" and model["seconds"] < 12, model
    baseline = client(hub.endpoint, tmp_path, "baseline", "en", "org/tiny-bart", extra=CONFIGURED)
    assert baseline["found"] is None and baseline["seconds"] < 12, baseline
