"""CONTRIBUTING's "Add a metric" recipe, followed for real on a copy of the package.

The recipe: a new metric = its folder, one registry row and its card. This test copies the
package to a temporary folder and adds CONTRIBUTING's worked example, a reference+source metric
(COMET-style, on the embedded MiniLM), by writing each ``python file=PATH`` block of CONTRIBUTING.md
to the file it names (the registry row appended at the bottom of ``nlgscore/registry.py``) and its
card (the ``markdown file=`` block), and nothing else. Then, in a subprocess whose ``PYTHONPATH``
is the copy, it runs the registry-parametrised tests on the new metric: every entry point (``nlgscore score`` and ``mbr``,
the evaluate module, ``map_function``, the TRL reward and its empty probe, lighteval, ``nlgscore
meta wmt19 --metric``), the empty call, the properties, the cards, the layout and the Hub push
listing, the evaluate module's own examples, and the new module's doctests with the registry's and
the package's. If the metric
needed one more edit anywhere, these would fail or would not see it. The size of the addition
(files and lines) is measured on the copy and printed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from test_cards import check_header_and_sections, how_to_use_blocks, parse_card
from test_docs import file_blocks

ROOT = Path(__file__).resolve().parent.parent
NAME = "triangle"


def contributing_card() -> str:
    """The worked example's card, as CONTRIBUTING.md shows it (a ````markdown file= block)."""
    blocks = dict(
        re.findall(r"````markdown file=(\S+)\n(.*?)````", (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"), re.S)
    )
    assert f"metrics/{NAME}/README.md" in blocks, "CONTRIBUTING.md lost the worked example's card"
    return blocks[f"metrics/{NAME}/README.md"]


def test_contributings_card_meets_what_the_card_tests_check():
    """The card CONTRIBUTING.md shows passes test_cards' checks as it stands: the
    header and sections, a BibTeX entry, and a How to Use that loads the Hub id and prints."""
    header, body = parse_card(contributing_card(), NAME)
    check_header_and_sections(header, body)
    [code] = how_to_use_blocks(body)
    assert f'evaluate.load("nlgscore/{NAME}")' in code and "print(" in code


# what the copy runs: the registry-parametrised tests, selected for the new metric
TESTS = (
    "test_entry_points.py",
    "test_empty_call.py",
    "test_evaluate_modules.py",
    "test_properties.py",
    "test_cards.py",
    "test_layout.py",
)


def _copy(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in ("nlgscore", "metrics", "hub_cards", "baselines", "scripts"):
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    (target / "tests").mkdir()
    helpers = [
        path.name for path in (ROOT / "tests").glob("*.py") if not path.name.startswith("test_")
    ]  # conftest, servers, ties ...
    for name in (*helpers, *TESTS):
        shutil.copy(ROOT / "tests" / name, target / "tests" / name)
    (target / "tests" / "golden").symlink_to(ROOT / "tests" / "golden")
    for name in ("setup.cfg", "setup.py", "pyproject.toml"):
        shutil.copy(ROOT / name, target / name)
    # The checkout's editable install maps these two packages to the checkout's folders; in the
    # copy they are reached through the package folder, as in an installed wheel.
    (target / "nlgscore" / "evaluate_modules").symlink_to(target / "metrics")
    (target / "nlgscore" / "baselines").symlink_to(target / "baselines")


def _add_metric_by_the_recipe(target: Path) -> dict:
    """CONTRIBUTING's blocks written to the files they name, and the cards; ``{path: lines added}``."""
    added = {}
    for path, code in file_blocks().items():
        file = target / path
        if file.exists():  # the registry row: appended at the bottom
            file.write_text(file.read_text(encoding="utf-8") + code, encoding="utf-8")
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(code, encoding="utf-8")
        added[path] = len(code.splitlines())
    card = f"metrics/{NAME}/README.md"  # the module's card, also its Hub Space's (hub_cards/_space/ has the rest)
    (target / card).write_text(contributing_card(), encoding="utf-8")
    added[card] = len(contributing_card().splitlines())
    return added


def test_a_reference_and_source_metric_added_by_the_recipe_runs_through_every_entry_point(tmp_path):
    _copy(tmp_path)
    added = _add_metric_by_the_recipe(tmp_path)
    code = {path: n for path, n in added.items() if not path.endswith("README.md")}
    # the target: its folder, one registry row and its card; at most 3 files besides the card
    assert set(added) - set(code) == {f"metrics/{NAME}/README.md"}
    assert set(code) == {f"nlgscore/{NAME}/__init__.py", "nlgscore/registry.py", f"metrics/{NAME}/{NAME}.py"}
    assert added["nlgscore/registry.py"] <= 3
    print(
        f"recipe: {len(code)} files besides the card, +{sum(code.values())} lines; the card +{added[f'metrics/{NAME}/README.md']} "
        f"lines: {added}"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    assert (
        str(tmp_path)
        in subprocess.run(
            [sys.executable, "-c", "import nlgscore; print(nlgscore.__file__)"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        ).stdout
    )
    selected = f"{NAME} or layout or push_dry_run or covered"
    # the evaluate module's own examples run in test_evaluate_modules (as evaluate's common test runs them)
    doctests = [f"nlgscore/{NAME}/__init__.py", "nlgscore/registry.py", "nlgscore/__init__.py"]
    out = ""
    for args in (["-k", selected, *(f"tests/{name}" for name in TESTS)], ["--doctest-modules", *doctests]):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        out += done.stdout + done.stderr
        assert done.returncode == 0, out[-6000:]
    passed = re.findall(
        r"^PASSED (\S+)", out, re.M
    )  # an expected failure is not a pass: the recipe claims every entry point
    for test in (
        "test_cli_score",
        "test_evaluate_module",
        "test_map_function",
        "test_trl_reward_and_its_empty_probe",
        "test_lighteval",
        "test_meta_wmt19_metric",
        "test_cli_mbr_equals_brute_force",
        "test_empty_call_returns_the_columns_without_any_hook_seeing_zero_items",
        "test_evaluate_modules.py::test_load",  # evaluate's LocalModuleTest: the contract and its examples
        "test_one_finite_score_per_item_or_a_named_error",
        "test_permuting_or_duplicating_pairs",
        "test_evaluate_module_cli_and_api_agree",
        "test_card_header_and_sections",
        "test_card_how_to_use_runs_on_tiny_models",
        "test_app_and_requirements",
    ):
        assert any(test in p and NAME in p for p in passed), f"{test}[{NAME}] did not pass:\n{out[-3000:]}"
    for module in doctests:  # every doctest of the new modules, and the registry's, ran and passed
        assert any(p.startswith(module) for p in passed), f"no doctest of {module} passed:\n{out[-3000:]}"
    assert any("test_push_dry_run_lists_card_and_module" in p for p in passed)
    assert any("test_every_subpackage_has_a_layer" in p for p in passed)
    assert any("test_every_registered_metric_is_covered" in p for p in passed)
