"""The rescale baselines' Hub repo: configured only, published by scripts/push_to_hub.py, read back.

The shipped copies are the default, so whoever controls a Hub repo cannot move rescaled numbers
unless a user (``NLGSCORE_BASELINE_REPO``) or the package (a commit in ``hub.json``) chose it.
Publishing and reading run the real huggingface_hub client against tests/hubserver.py, each in
a fresh process (huggingface_hub reads HF_ENDPOINT and HF_HOME at import); the server counts
every request, so "nothing configured" is checked as "no request at all".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from hubserver import HubServer

from nlgscore.backend.hub import ENV_REPO, configured_baseline_repo
from nlgscore.backend.tables import table
from nlgscore.errors import ArgumentError, DataError

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "tests" / "scripts" / "hub_client.py"
REPO = "me/rescale-baselines"  # --namespace me, and the repo name of hub.json
SHIPPED_L4 = [
    float(v) for v in (ROOT / "baselines" / "en" / "all-MiniLM-L6-v2.tsv").read_text().splitlines()[5].split(",")[1:]
]


def run(args: list, endpoint: str, home: Path, extra: Optional[dict] = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != ENV_REPO}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HOME=str(home),
        HF_HUB_OFFLINE="0",
        HF_HUB_ETAG_TIMEOUT="3",
        HF_HUB_DOWNLOAD_TIMEOUT="5",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        **(extra or {}),
    )
    env.pop("TRANSFORMERS_OFFLINE", None)
    return subprocess.run([sys.executable, *map(str, args)], env=env, capture_output=True, text=True, timeout=120)


def rescale_source(endpoint: str, home: Path, extra: Optional[dict] = None) -> dict:
    done = run([CLIENT, "rescale", "en"], endpoint, home, extra)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_publish_then_configured_repo_is_read_and_recorded(tmp_path):
    with HubServer(lifetime=120) as hub:
        push = [ROOT / "scripts" / "push_to_hub.py", "baselines", "--namespace", "me", "--token", "hf_local_test"]
        done = run(push, hub.endpoint, tmp_path / "push")
        assert done.returncode == 0, done.stderr[-3000:]
        repo = hub.repo(REPO, repo_type="dataset")
        shipped = {
            p.relative_to(ROOT / "baselines").as_posix(): p.read_bytes()
            for p in (ROOT / "baselines").rglob("*")
            if p.suffix == ".tsv" or p.name == "README.md"
        }
        assert repo["files"] == shipped and len(shipped) > 50
        # The commit to pin is printed, with the setting that pins it.
        assert f"committed {repo['sha']}" in done.stdout
        assert f"NLGSCORE_BASELINE_REPO={REPO}@{repo['sha']}" in done.stdout
        published = repo["sha"]

        read = rescale_source(hub.endpoint, tmp_path / "read", {ENV_REPO: f"{REPO}@{published}"})
        assert read["rescale"] == f"hub:{REPO}@{published}" and read["baseline"] == pytest.approx(SHIPPED_L4)

        # A repo's file that differs from the shipped one is what the scorer uses, and the commit
        # read (not the branch asked for) is recorded.
        repo["files"]["en/all-MiniLM-L6-v2.tsv"] = b"LAYER,P,R,F\n" + b"".join(
            b"%d,0.5,0.25,0.125\n" % layer for layer in range(7)
        )
        hub._commit(repo)
        moved = rescale_source(hub.endpoint, tmp_path / "moved", {ENV_REPO: REPO})
        assert moved["rescale"] == f"hub:{REPO}@{repo['sha']}" != read["rescale"]
        assert moved["baseline"] == [0.5, 0.25, 0.125]


def test_nothing_configured_reads_the_shipped_copy_without_any_request(tmp_path):
    with HubServer(lifetime=60) as hub:
        # The project's repo holds a different file: it must not be read while nothing names it.
        hub.add_repo(table("hub")["baseline_repo_id"], {"en/all-MiniLM-L6-v2.tsv": b"LAYER,P,R,F\n"}, "dataset")
        out = rescale_source(hub.endpoint, tmp_path)
        off = rescale_source(hub.endpoint, tmp_path, {ENV_REPO: "none"})
        assert hub.requests == []
    assert out["rescale"] == off["rescale"] == "package:en/all-MiniLM-L6-v2.tsv"
    assert out["baseline"] == pytest.approx(SHIPPED_L4)


def test_push_baselines_dry_run_and_empty_folder(tmp_path):
    dry = run([ROOT / "scripts" / "push_to_hub.py", "baselines", "--dry-run"], "http://127.0.0.1:9", tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "dataset nlgscore/rescale-baselines:" in dry.stdout and "committed" not in dry.stdout
    assert "  en/roberta-large.tsv <- baselines/en/roberta-large.tsv" in dry.stdout
    assert "__init__.py" not in dry.stdout
    empty = run(
        [ROOT / "scripts" / "push_to_hub.py", "baselines", "--dry-run", "--folder", tmp_path],
        "http://127.0.0.1:9",
        tmp_path,
    )
    assert empty.returncode == 1 and "--folder: no <lang>/<model>.tsv baseline" in empty.stderr


PROJECT = {"baseline_repo_id": "nlgscore/rescale-baselines", "baseline_commit": None}


@pytest.mark.parametrize(
    "value, expected",
    [
        ("", None),
        ("none", None),
        ("me/b", ("me/b", "main")),
        ("me/b@v1.0", ("me/b", "v1.0")),
        ("me/b@" + "a" * 40, ("me/b", "a" * 40)),
    ],
)
def test_environment_variable(value, expected):
    assert configured_baseline_repo({ENV_REPO: value}, PROJECT) == expected


@pytest.mark.parametrize("value", ["rescale-baselines", "me/b@", "a/b/c", "../x@main", "me/b c"])
def test_malformed_environment_variable_is_named(value):
    with pytest.raises(ArgumentError, match=ENV_REPO):
        configured_baseline_repo({ENV_REPO: value}, PROJECT)


def test_recorded_commit_is_used_only_as_a_commit():
    pinned = dict(PROJECT, baseline_commit="0123456789abcdef0123456789abcdef01234567")
    assert configured_baseline_repo({}, pinned) == ("nlgscore/rescale-baselines", pinned["baseline_commit"])
    assert configured_baseline_repo({ENV_REPO: "me/b@v2"}, pinned) == ("me/b", "v2")  # the user's choice wins
    assert configured_baseline_repo({ENV_REPO: "none"}, pinned) is None
    with pytest.raises(DataError, match="baseline_commit must be a 40-hex commit"):
        configured_baseline_repo({}, dict(PROJECT, baseline_commit="main"))


def test_the_package_records_no_moving_branch():
    hub = table("hub")
    assert "baseline_revision" not in hub
    assert hub["baseline_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", hub["baseline_commit"])
    assert configured_baseline_repo({}) == (
        None if hub["baseline_commit"] is None else (hub["baseline_repo_id"], hub["baseline_commit"])
    )
