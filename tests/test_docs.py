"""CONTRIBUTING.md's worked example ("Add a metric") runs as written; its claims match the tests."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent


def file_blocks(path: Path = REPO / "CONTRIBUTING.md"):
    """The code blocks of ``path`` that name the file they are (```python file=PATH), in order."""
    return dict(re.findall(r"```python file=(\S+)\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S))


def _triangle(namespace: dict):
    """CONTRIBUTING's scorer module and registry row, run in place (the row's import path swapped
    for the class the module defined here)."""
    from nlgscore import registry

    blocks = file_blocks()
    assert {"nlgscore/triangle/__init__.py", "nlgscore/registry.py", "metrics/triangle/triangle.py"} <= set(blocks), (
        "CONTRIBUTING.md lost a file of its worked example"
    )
    exec(compile(blocks["nlgscore/triangle/__init__.py"], "CONTRIBUTING.md", "exec"), namespace)
    row = blocks["nlgscore/registry.py"].replace('"nlgscore.triangle:TriangleScorer"', "TriangleScorer")
    exec(compile(row, "CONTRIBUTING.md", "exec"), {**namespace, "register": registry.register})


def test_contributing_add_a_metric_example_runs_and_plugs_into_the_table():
    from nlgscore import registry
    from nlgscore.integrations.datasets import map_function

    namespace: dict = {}
    try:
        _triangle(namespace)
        assert "triangle" in registry.metric_names()
        scorer = registry.load("triangle", max_tokens=256)
        assert scorer.runtime.max_tokens == 256 and scorer.needs == ("references", "sources")
        srcs = ["A cat sat on the mat.", "A cat sat on the mat."]
        result = scorer.compute(
            ["The cat sat.", "The cat sat."], ["A cat was sitting.", "Stocks fell sharply."], sources=srcs
        )
        assert result.scores[0] > result.scores[1]  # a paraphrase is closer than an unrelated text
        # de-duplication and input order: the same item twice gets the same score
        again = scorer.compute(
            ["Stocks fell sharply.", "The cat sat."], ["Stocks fell sharply.", "A cat was sitting."], sources=srcs
        )
        assert np.isclose(again.scores[1], result.scores[0], atol=1e-6)
        columns = map_function(scorer, source_column="source")(
            {"prediction": ["The cat sat."], "reference": ["A cat was sitting."], "source": srcs[:1]}
        )
        assert np.isclose(columns["triangle_quality"][0], result.scores[0], atol=1e-6)
        assert "nlgscore:triangle|model:all-MiniLM-L6-v2" in str(result.signature)
    finally:
        registry.unregister("triangle")


def test_contributing_reference_and_source_metric_scores_each_item_with_its_own_source():
    """The COMET-style example: items sharing prediction and reference but not source keep their
    own source (keyed on (prediction, reference), item 0 took item 2's source)."""
    from nlgscore import registry

    namespace: dict = {}
    try:
        _triangle(namespace)
        scorer = registry.load("triangle")
        hyps = ["The cat sat.", "Prices rose.", "The cat sat."]
        refs = ["A cat was sitting.", "Prices went up.", "A cat was sitting."]
        srcs = ["A cat sat on the mat.", "Prices rose sharply.", "Stock markets fell sharply in Asia."]
        together = scorer.compute(hyps, refs, sources=srcs).scores
        alone = [scorer.compute([h], [r], sources=[s]).scores[0] for h, r, s in zip(hyps, refs, srcs, strict=True)]
        np.testing.assert_allclose(together, alone, atol=1e-6)
        assert abs(together[0] - together[2]) > 1e-3  # the bug gave item 0 item 2's score
        # several references: the closest (max) per item, each with the item's source
        multi = scorer.compute(hyps[:1], [[refs[0], refs[1]]], sources=srcs[:1]).scores[0]
        best = max(scorer.compute([hyps[0]] * 2, refs[:2], sources=srcs[:1] * 2).scores)
        assert np.isclose(multi, best, atol=1e-6)
        with pytest.raises(ValueError, match="sources are required"):
            scorer.compute(hyps, refs)
    finally:
        registry.unregister("triangle")


def test_contributing_names_no_expected_failure_the_tests_do_not_have():
    """CONTRIBUTING said the reference+source MBR case was `xfail(strict=True)`
    after the last xfail marker had gone."""
    claimed = "xfail" in (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tests = [
        path for path in (REPO / "tests").rglob("test_*.py") if path.name != Path(__file__).name
    ]  # this test names the marker
    marked = any("mark.xfail" in path.read_text(encoding="utf-8") for path in tests)
    assert claimed == marked
