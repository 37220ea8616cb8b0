"""Metric cards (hub_cards/<metric>/) and scripts/push_to_hub.py.

Every built-in metric of the registry has a card. The cards' "How to Use" code runs for real,
with the Hub ids swapped for the local module folders and, for the three metrics whose models
live on the Hub, tiny checkpoints (every swap must apply, so the test cannot silently download).
The upload runs the real huggingface_hub client against tests/hubserver.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from hubserver import HubServer

from nlgscore.registry import metric_names

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
METRICS = metric_names(builtin=True)
SECTIONS = (
    "## Metric Description",
    "## How to Use",
    "### Inputs",
    "## Output Values",
    "### Values from Popular Papers",
    "## Limitations and Bias",
    "## Citation",
)
MODEL_SWAPS = {
    "bertscore": {'"roberta-large"': '"minilm"'},
    "prism": {'"dariast/prism"': f'"{GOLDEN}/tiny-prism"'},
    "bartscore": {'"facebook/bart-large-cnn"': f'"{GOLDEN}/tiny-bart"'},
}


def swaps(name: str) -> dict:
    """Hub id -> local stand-in in the card of ``name``: its module folder, and its model if any."""
    return {f'"nlgscore/{name}"': f'"{ROOT}/metrics/{name}"', **MODEL_SWAPS.get(name, {})}


def test_model_swaps_name_registered_metrics():
    assert set(MODEL_SWAPS) <= set(METRICS)


def space_files(name: str) -> dict:
    """The Space's files of ``name`` as scripts/push_to_hub.py picks them (its own card files, or the shared ones)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from push_to_hub import space_files as files
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return files(name)


def card(name: str):
    return parse_card(space_files(name)["README.md"].read_text(encoding="utf-8"), name)


def parse_card(text: str, name: str):
    """A card's YAML header (a dict) and its body."""
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, f"{name}: README.md must start with a YAML header between --- lines"
    return yaml.safe_load(match.group(1)), match.group(2)


def how_to_use_blocks(body: str) -> list:
    """The python blocks of a card's How to Use section."""
    return re.findall(r"```python\n(.*?)```", body.split("## How to Use", 1)[1].split("\n## ", 1)[0], re.S)


@pytest.mark.parametrize("name", METRICS)
def test_card_header_and_sections(name):
    check_header_and_sections(*card(name))


def check_header_and_sections(header: dict, body: str) -> None:
    """What every card needs (CONTRIBUTING's "Its card" lists it)."""
    assert {
        "title",
        "emoji",
        "colorFrom",
        "colorTo",
        "sdk",
        "sdk_version",
        "app_file",
        "pinned",
        "tags",
        "description",
    } <= set(header)
    assert header["sdk"] == "gradio" and header["app_file"] == "app.py" and header["pinned"] is False
    assert {"evaluate", "metric"} <= set(header["tags"])
    assert isinstance(header["description"], str) and len(header["description"]) > 80
    positions = [body.find(section) for section in SECTIONS]
    assert -1 not in positions, [s for s, p in zip(SECTIONS, positions, strict=True) if p == -1]
    assert positions == sorted(positions)
    citation = body.split("## Citation", 1)[1]  # a BibTeX entry of any type: a metric may have no conference paper
    assert re.search(r"```bibtex\n@(inproceedings|article|misc|book|phdthesis|techreport)\{[^,\s]+,", citation), (
        "Citation: no BibTeX entry"
    )


@pytest.mark.parametrize("name", METRICS)
def test_card_how_to_use_runs_on_tiny_models(name):
    _, body = card(name)
    blocks = how_to_use_blocks(body)
    assert blocks, f"{name}: no python code in How to Use"
    for code in blocks:
        for hub_id, local in swaps(name).items():
            code = code.replace(hub_id, local)
        assert "nlgscore/" not in code.replace("nlgscore.", ""), "a Hub id was left unswapped"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"hub_cards/{name}/README.md", "exec"), {"__name__": "card"})
        assert out.getvalue().strip(), "the example printed nothing"
    used = "".join(blocks)
    assert all(hub_id in used for hub_id in swaps(name)), "every swap must apply"


@pytest.mark.parametrize("name", METRICS)
def test_app_and_requirements(name):
    files = space_files(name)
    source = files["app.py"].read_text(encoding="utf-8")
    compile(source, str(files["app.py"]), "exec")
    # its own app names its module; the shared one loads the one module the Space holds
    assert "launch_gradio_widget" in source and (f'"{name}.py"' in source or files["app.py"].parent.name == "_space")
    lines = [line.split("#")[0].strip() for line in files["requirements.txt"].read_text(encoding="utf-8").splitlines()]
    # The bare nlgscore line is what push_to_hub.py replaces with the uploaded wheel.
    assert "nlgscore" in lines and any(r.startswith("evaluate") for r in lines)


def test_shared_space_app_loads_the_module_beside_it(tmp_path, monkeypatch):
    """hub_cards/_space/app.py, in a Space folder holding one module: it loads that module.
    Gradio is not installed here, so only its widget launcher is replaced (it records the module)."""
    import runpy

    import evaluate.utils

    shutil.copy(ROOT / "hub_cards" / "_space" / "app.py", tmp_path / "app.py")
    shutil.copy(ROOT / "metrics" / "prism" / "prism.py", tmp_path / "prism.py")
    launched = []
    monkeypatch.setattr(evaluate.utils, "launch_gradio_widget", launched.append)
    runpy.run_path(str(tmp_path / "app.py"), run_name="__main__")
    assert [type(module).__name__ for module in launched] == ["Prism"]


def push_script(*args: str, endpoint: str = "http://127.0.0.1:9", home: Path = None):
    env = dict(
        os.environ, HF_ENDPOINT=endpoint, HF_HUB_OFFLINE="0", HF_HUB_ETAG_TIMEOUT="3", HF_HUB_DISABLE_TELEMETRY="1"
    )
    if home is not None:
        env["HF_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "push_to_hub.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_push_dry_run_lists_card_and_module():
    done = push_script("all", "--dry-run")
    assert done.returncode == 0, done.stderr
    for name in METRICS:
        assert f"space nlgscore/{name}:" in done.stdout
        for target in ("README.md", "app.py", "requirements.txt", f"{name}.py"):
            assert f"  {target} <- " in done.stdout
    assert "committed" not in done.stdout
    assert "nlgscore line: ./nlgscore-" in done.stdout and ".whl <- (built from this checkout)" in done.stdout
    bare = push_script("prism", "--dry-run", "--wheel", "none")
    assert bare.returncode == 0 and ".whl" not in bare.stdout and "nlgscore line: as is" in bare.stdout
    missing = push_script("prism", "--wheel", "no/such.whl", "--token", "x")
    assert missing.returncode == 1 and "--wheel: no such file" in missing.stderr


def test_push_uploads_to_a_hub(tmp_path):
    with HubServer(lifetime=60) as hub:
        for _ in range(2):  # the second run updates the existing Space (exist_ok)
            done = push_script(
                "bertscore", "--namespace", "me", "--token", "hf_local_test", endpoint=hub.endpoint, home=tmp_path
            )
            assert done.returncode == 0, done.stderr
        space = hub.repo("me/bertscore", repo_type="space")
    assert space["sdk"] == "gradio"
    expected = {p.name: p.read_bytes() for p in (ROOT / "hub_cards" / "bertscore").iterdir() if p.is_file()}
    expected["bertscore.py"] = (ROOT / "metrics" / "bertscore" / "bertscore.py").read_bytes()
    wheel = [name for name in space["files"] if name.endswith(".whl")]
    assert len(wheel) == 1 and wheel[0].startswith("nlgscore-")  # built from the checkout and uploaded
    # The Space installs the uploaded wheel: nlgscore is not on PyPI.
    expected["requirements.txt"] = expected["requirements.txt"].replace(b"\nnlgscore\n", f"\n./{wheel[0]}\n".encode())
    assert f"./{wheel[0]}".encode() in expected["requirements.txt"]
    with zipfile.ZipFile(io.BytesIO(space["files"].pop(wheel[0]))) as archive:
        assert "nlgscore/evaluate_modules/bertscore/bertscore.py" in archive.namelist()
    assert space["files"] == expected
    assert len(space["history"]) == 3  # created empty, then one commit per push


def test_every_cards_options_table_is_the_codes():
    """The options table of every card is what scripts/cards.py makes from the option tables now
    (run ``python scripts/cards.py --write`` after changing an option), and names every option."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cards.py"), "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    from nlgscore.core.options import option_rows
    from nlgscore.registry import metric

    for name in METRICS:
        for path in (ROOT / "metrics" / name / "README.md", ROOT / "hub_cards" / name / "README.md"):
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                inputs = text[text.index("### Inputs") :]
                for row in option_rows(metric(name).scorer_class()):
                    assert f"| `{row.name}` |" in inputs, (path, row.name)
