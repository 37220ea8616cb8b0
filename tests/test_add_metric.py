"""CONTRIBUTING's "Add a metric" recipe, followed for real on a copy of the package.

The recipe is: one package folder (``nlgscore/<metric>/``), one registry row at the bottom of
``nlgscore/registry.py``, and the metric's evaluate module and card (``metrics/<metric>/``,
``hub_cards/<metric>/``). This test copies the package to a temporary folder, adds a toy metric
(unigram overlap, no model) by exactly those steps and nothing else, then runs the
registry-parametrised tests (properties through the API, the evaluate module and the CLI; the
cards; the layer check; the Hub push script's listing) on the copy, in a subprocess whose
``PYTHONPATH`` is the copy. If a metric needed one more edit anywhere, these tests would fail or
would not see it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "overlap"

SCORER = '''"""Unigram overlap: the F1 of the two texts' word sets (a toy metric for the recipe test)."""

import numpy as np

from nlgscore.core.base import Scorer
from nlgscore.core.result import Result


def _f1(prediction: str, reference: str) -> float:
    a, b = set(prediction.split()), set(reference.split())
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 1.0


class OverlapScorer(Scorer):
    name = "overlap"
    needs = ("references",)
    multiref = "max"

    def _score_items(self, items, state):
        return {"f1": np.array([_f1(i.prediction, i.reference) for i in items], dtype=float)}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, primary="f1")

    def _signature_fields(self, call):
        return {"tok": "space"}
'''

MODULE = '''"""Unigram overlap as a Hugging Face evaluate module, computed by nlgscore."""

import datasets
import evaluate

import nlgscore

_TEXT = datasets.Value("string", id="sequence")


class Overlap(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="F1 of the word sets of prediction and reference.", citation="", inputs_description="",
            features=[datasets.Features({"predictions": _TEXT, "references": datasets.Sequence(_TEXT)}),
                      datasets.Features({"predictions": _TEXT, "references": _TEXT})],
        )

    def _compute(self, predictions, references):
        result = nlgscore.load("overlap").compute(list(predictions), list(references))
        return {"scores": result.scores, "mean": result.score, "signature": str(result.signature)}
'''

CARD = '''---
title: Overlap
emoji: 🤗
colorFrom: blue
colorTo: red
sdk: gradio
sdk_version: 4.0.0
app_file: app.py
pinned: false
tags:
- evaluate
- metric
description: >-
  Unigram overlap: the F1 of the word sets of a prediction and its reference, computed by nlgscore;
  a toy metric that shows how a metric is added.
---

# Metric Card for Overlap

## Metric Description
The F1 of the two texts' sets of space-separated words.

## How to Use
```python
import evaluate
overlap = evaluate.load("nlgscore/overlap")
print(overlap.compute(predictions=["the cat sat"], references=["the cat ran"])["scores"])
```

### Inputs
predictions and references, lists of strings.

## Output Values
scores, one per prediction, in [0, 1].

### Values from Popular Papers
None: a toy.

## Limitations and Bias
Words only.

## Citation
@inproceedings{none, title={None}}
'''

APP = '''from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

launch_gradio_widget(evaluate.load(str(Path(__file__).with_name("overlap.py"))))
'''


def _copy(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in ("nlgscore", "metrics", "hub_cards", "baselines", "scripts"):
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    (target / "tests").mkdir()
    for name in ("conftest.py", "hubserver.py", "test_properties.py", "test_cards.py", "test_layout.py"):
        shutil.copy(ROOT / "tests" / name, target / "tests" / name)
    (target / "tests" / "golden").symlink_to(ROOT / "tests" / "golden")
    for name in ("setup.cfg", "setup.py", "pyproject.toml"):
        shutil.copy(ROOT / name, target / name)
    # The checkout's editable install maps these two packages to the checkout's folders; in the
    # copy they are reached through the package folder, as in an installed wheel.
    (target / "nlgscore" / "evaluate_modules").symlink_to(target / "metrics")
    (target / "nlgscore" / "baselines").symlink_to(target / "baselines")


def _add_metric_by_the_recipe(target: Path) -> None:
    package = target / "nlgscore" / NAME  # 1. one package folder
    package.mkdir()
    (package / "__init__.py").write_text('"""The overlap metric."""\n', encoding="utf-8")
    (package / "scorer.py").write_text(SCORER, encoding="utf-8")
    registry = target / "nlgscore" / "registry.py"  # 2. one registry row, at the bottom
    registry.write_text(registry.read_text(encoding="utf-8")
                        + f'register("{NAME}", "nlgscore.{NAME}.scorer:OverlapScorer", help="unigram overlap: {NAME}")\n',
                        encoding="utf-8")
    module = target / "metrics" / NAME  # 3. its evaluate module and card
    module.mkdir()
    (module / f"{NAME}.py").write_text(MODULE, encoding="utf-8")
    (module / "README.md").write_text(CARD, encoding="utf-8")
    card = target / "hub_cards" / NAME
    card.mkdir()
    (card / "README.md").write_text(CARD, encoding="utf-8")
    (card / "app.py").write_text(APP, encoding="utf-8")
    (card / "requirements.txt").write_text("nlgscore\nevaluate>=0.4\ngradio\n", encoding="utf-8")


def test_a_metric_added_by_the_recipe_passes_the_registry_tests(tmp_path):
    _copy(tmp_path)
    _add_metric_by_the_recipe(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    selected = f"{NAME} or layout or push_dry_run or swaps"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "-k", selected,
         "tests/test_properties.py", "tests/test_cards.py", "tests/test_layout.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    passed = re.findall(r"^PASSED (\S+)", out, re.M)
    # the copy, not the checkout, was tested, and every registry-parametrised test saw the new metric
    assert str(tmp_path) in subprocess.run([sys.executable, "-c", "import nlgscore; print(nlgscore.__file__)"],
                                           env=env, cwd=tmp_path, capture_output=True, text=True).stdout
    for test in ("test_one_finite_score_per_item_or_a_named_error", "test_permuting_or_duplicating_pairs",
                 "test_ragged_references", "test_evaluate_module_cli_and_api_agree", "test_card_header_and_sections",
                 "test_card_how_to_use_runs_on_tiny_models", "test_app_and_requirements"):
        assert any(test in p and f"[{NAME}]" in p for p in passed), f"{test}[{NAME}] did not pass:\n{out[-3000:]}"
    assert any("test_push_dry_run_lists_card_and_module" in p for p in passed)
    assert any("test_every_subpackage_has_a_layer" in p for p in passed)
