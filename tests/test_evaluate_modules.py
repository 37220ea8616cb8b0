"""Every shipped ``evaluate`` module (``metrics/<name>/<name>.py``), discovered per folder as
evaluate's own common test does: loaded through evaluate's module factory, its ``_compute`` takes
no ``**kwargs`` (evaluate forwards unknown arguments there), and its own ``>>>`` examples run and pass.
A module added by CONTRIBUTING's recipe is covered with no edit here."""

from __future__ import annotations

import doctest
import importlib
import inspect
from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parent.parent
MODULES = sorted(p.parent.name for p in (REPO / "metrics").glob("*/*.py") if p.stem == p.parent.name)


def test_every_registered_metric_ships_a_module():
    from nlgscore.registry import metric_names

    assert set(metric_names(builtin=True)) <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_contract_and_its_examples(name, monkeypatch):
    monkeypatch.chdir(REPO)  # the examples name tests/golden checkpoints relative to the checkout
    factory = evaluate.loading.evaluation_module_factory(str(REPO / "metrics" / name), module_type="metric")
    module = importlib.import_module(factory.module_path)
    main = evaluate.loading.import_main_class(factory.module_path)
    assert issubclass(main, evaluate.Metric)
    assert all(p.kind is not p.VAR_KEYWORD for p in inspect.signature(main._compute).parameters.values())
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, raise_on_error=False)
    assert results.attempted > 0, f"metrics/{name}/{name}.py has no >>> example"
    assert results.failed == 0
