"""The three metrics published with scripts/push_to_hub.py and loaded back as users load metrics.

``evaluate.load("<org>/<metric>")`` runs evaluate's own Hub code path (HubEvaluationModuleFactory:
``{HF_ENDPOINT}/spaces/<org>/<metric>/resolve/<rev>/<metric>.py``) against tests/hubserver.py on
127.0.0.1, and the loaded modules score with the embedded MiniLM and the tiny checkpoints. Each
side runs in its own process: huggingface_hub and evaluate read HF_ENDPOINT and the offline
switches at import time. Nothing is mocked; the models themselves load from local folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hubserver import HubServer

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
ORG = "nlgscore-test"

# Runs in the child: load each module from the Hub, score, and score the same inputs with the
# core scorers, so the test compares the two.
CHILD = r"""
import json, sys
import evaluate
from nlgscore.bertscore import BERTScorer
from nlgscore.seq2seq.bartscore import BARTScorer
from nlgscore.seq2seq.prism import PrismScorer

org, golden = sys.argv[1], sys.argv[2]
preds = ["The cat sat on the mat.", "Prices rose sharply."]
refs = [["A cat was sitting on the mat.", "x"], "Prices increased steeply."]
as_lists = [refs[0], [refs[1]]]
out = {}
bertscore = evaluate.load(f"{org}/bertscore")
out["bertscore"] = bertscore.compute(predictions=preds, references=refs, model_type="minilm", num_layers=4)["f1"]
out["bertscore_core"] = [float(v) for v in BERTScorer(model_type="minilm", num_layers=4).score(preds, as_lists).f1]
prism = evaluate.load(f"{org}/prism", "ref", checkpoint=f"{golden}/tiny-prism")
out["prism"] = prism.compute(predictions=preds, references=refs)["scores"]
out["prism_core"] = [float(v) for v in PrismScorer(f"{golden}/tiny-prism").score(preds, refs=as_lists).scores]
bartscore = evaluate.load(f"{org}/bartscore", "bart-large-cnn", checkpoint=f"{golden}/tiny-bart")
out["bartscore"] = bartscore.compute(predictions=preds, references=refs, device="cpu")["scores"]
out["bartscore_core"] = [float(v) for v in BARTScorer(checkpoint=f"{golden}/tiny-bart", device="cpu").compute(preds, as_lists).scores]
out["module_files"] = {name: sys.modules[type(m).__module__].__file__ for name, m in
                       (("bertscore", bertscore), ("prism", prism), ("bartscore", bartscore))}
print(json.dumps(out))
"""


def hub_env(endpoint: str, home: Path, **extra: str) -> dict:
    env = dict(
        os.environ,
        HF_ENDPOINT=endpoint,
        HF_HOME=str(home),
        HF_MODULES_CACHE=str(home / "modules"),
        HF_HUB_ETAG_TIMEOUT="3",
        HF_HUB_DOWNLOAD_TIMEOUT="5",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        HF_UPDATE_DOWNLOAD_COUNTS="0",
        TOKENIZERS_PARALLELISM="false",
    )
    env.update(extra)
    return env


def test_push_then_evaluate_load_from_the_hub(tmp_path):
    with HubServer(lifetime=240) as hub:
        push = subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "push_to_hub.py"),
                "all",
                "--namespace",
                ORG,
                "--token",
                "hf_local_test",
            ],
            env=hub_env(hub.endpoint, tmp_path, HF_HUB_OFFLINE="0"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert push.returncode == 0, push.stderr[-3000:]
        for name in ("bertscore", "prism", "bartscore"):
            files = hub.repo(f"{ORG}/{name}", repo_type="space")["files"]
            assert files[f"{name}.py"] == (ROOT / "metrics" / name / f"{name}.py").read_bytes()
        hub.requests.clear()
        # evaluate's Hub switch on, huggingface_hub's off: the module comes from the Hub, the models
        # from local folders (a model download would fail, not pass silently).
        env = hub_env(hub.endpoint, tmp_path, HF_EVALUATE_OFFLINE="0", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
        done = subprocess.run(
            [sys.executable, "-c", CHILD, ORG, str(GOLDEN)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        requests = list(hub.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("bertscore", "prism", "bartscore"):
        # evaluate asks for its own version's tag first, then falls back to main.
        assert ("GET", f"/spaces/{ORG}/{name}/resolve/main/{name}.py") in requests, requests
        assert str(tmp_path / "modules") in out["module_files"][name]  # imported from the downloaded copy
        assert len(out[name]) == 2
        for got, want in zip(out[name], out[f"{name}_core"]):
            assert abs(got - want) <= 1e-5, (name, out[name], out[f"{name}_core"])
    assert out["bertscore"][1] > 0.6  # the plain-string reference was not split into characters


BARE_NAME = r"""
import json, sys
import evaluate
try:
    evaluate.load("bertscore")
    error = None
except Exception as err:
    error = type(err).__name__
print(json.dumps({"error": error, "nlgscore_imported": any(m.split(".")[0] == "nlgscore" for m in sys.modules)}))
"""


def test_bare_name_reaches_the_hubs_canonical_module_never_nlgscore(tmp_path):
    """What the guide and the card say: evaluate.load("bertscore") asks the Hub for
    evaluate-metric/bertscore (bert_score's module) and nothing of nlgscore is loaded."""
    with HubServer(lifetime=60) as hub:  # holds no repo: the request is recorded, then refused
        env = hub_env(hub.endpoint, tmp_path, HF_EVALUATE_OFFLINE="0", HF_HUB_OFFLINE="0")
        done = subprocess.run(
            [sys.executable, "-c", BARE_NAME], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        requests = list(hub.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"error": "FileNotFoundError", "nlgscore_imported": False}
    asked = [path for _, path in requests if path.endswith("/bertscore.py")]
    assert asked and all(path.startswith("/spaces/evaluate-metric/bertscore/resolve/") for path in asked), requests
