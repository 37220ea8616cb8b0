"""Every shipped ``evaluate`` module (``metrics/<name>/<name>.py``) passes evaluate's own module test.

huggingface/evaluate checks each module of its repository with ``LocalModuleTest.test_load`` in
``tests/test_metric_common.py``. CI here cannot fetch that file, so :func:`test_load` follows it
step by step, run against this checkout's ``metrics/`` folder from the repository root (as
evaluate runs it from its own):

1. ``get_local_module_names``: every folder ``glob("./metrics/*/")`` finds is a module to test.
2. ``doctest.ELLIPSIS_MARKER = "[...]"`` and no option flags: a ``...`` in an expected output
   is literal, and whitespace must match.
3. ``evaluation_module_factory(os.path.join("metrics", name), module_type="metric")``, then the
   module is imported from the path the factory gives, and ``import_main_class`` finds its class.
4. No ``**kwargs`` in the class's ``_compute`` (evaluate forwards unknown arguments there).
5. ``patch_intensive_calls``: for ``bertscore``, bert_score's ``get_model`` and
   ``bert_cos_score_idf`` are replaced (evaluate's Hub module runs on bert_score; this one never
   calls it, so its examples compute real numbers under the patch too).
6. ``use_local_metrics``: ``evaluate.load`` is patched so that ``evaluate.load(name, ...)``
   loads ``os.path.join("metrics", name)``; an absolute path (``nlgscore.evaluate_module``) is
   left as it is by ``os.path.join``.
7. ``doctest.testmod(module, verbose=True, raise_on_error=True)``: the first failing example
   raises; an unexpected exception is re-raised as itself.
8. ``results.failed == 0`` and ``results.attempted > 1``.

A module added by CONTRIBUTING's recipe is covered with no edit here.
"""

from __future__ import annotations

import contextlib
import doctest
import glob
import importlib
import inspect
import os
from pathlib import Path
from unittest.mock import patch

import pytest

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parent.parent
MODULES = sorted(p.parent.name for p in (REPO / "metrics").glob("*/*.py") if p.stem == p.parent.name)


def get_local_module_names() -> list:
    """Step 1, run from the repository root. ``metrics/`` is a package here (shipped as
    ``nlgscore.evaluate_modules``), so Python may write ``metrics/__pycache__/``; git ignores it
    and a fresh clone, where evaluate's test runs, has none."""
    return [d.split(os.sep)[-2] for d in glob.glob("./metrics/*/") if d.split(os.sep)[-2] != "__pycache__"]


def test_every_registered_metric_ships_a_module():
    from nlgscore.registry import metric_names

    assert set(metric_names(builtin=True)) <= set(MODULES)


def test_evaluates_discovery_finds_exactly_the_modules(monkeypatch):
    monkeypatch.chdir(REPO)
    assert sorted(get_local_module_names()) == MODULES
    assert {"bertscore", "prism", "bartscore", "bleu", "chrf", "rouge"} <= set(MODULES)


@contextlib.contextmanager
def patch_intensive_calls(evaluation_module_name: str):
    """Step 5: evaluate's ``patch_bertscore`` for the module named bertscore, else nothing."""
    if evaluation_module_name != "bertscore" or importlib.util.find_spec("bert_score") is None:
        yield
        return
    import torch

    def bert_cos_score_idf(model, refs, *args, **kwargs):
        return torch.tensor([[1.0, 1.0, 1.0]] * len(refs))

    with patch("bert_score.scorer.get_model"), patch("bert_score.scorer.bert_cos_score_idf") as mock_bert_cos:
        mock_bert_cos.side_effect = bert_cos_score_idf
        yield


@contextlib.contextmanager
def use_local_metrics(evaluation_module_type: str):
    """Step 6: ``evaluate.load(name)`` loads ``./<type>s/<name>``, with evaluate's own loader."""
    load = evaluate.load

    def load_local_metric(evaluation_module_name, *args, **kwargs):
        return load(os.path.join(evaluation_module_type + "s", evaluation_module_name), *args, **kwargs)

    with patch("evaluate.load") as mock_load:
        mock_load.side_effect = load_local_metric
        yield


@pytest.mark.parametrize("evaluation_module_name", MODULES)
def test_load(evaluation_module_name, monkeypatch):
    evaluation_module_type = "metric"
    monkeypatch.chdir(REPO)  # evaluate's test runs from its repository root
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", "[...]")  # step 2 (restored after the test)
    evaluation_module = importlib.import_module(
        evaluate.loading.evaluation_module_factory(
            os.path.join(evaluation_module_type + "s", evaluation_module_name), module_type=evaluation_module_type
        ).module_path
    )  # step 3
    evaluation_instance = evaluate.loading.import_main_class(evaluation_module.__name__)
    assert issubclass(evaluation_instance, evaluate.Metric)
    parameters = inspect.signature(evaluation_instance._compute).parameters
    assert all(p.kind != p.VAR_KEYWORD for p in parameters.values())  # step 4: no **kwargs
    with patch_intensive_calls(evaluation_module_name), use_local_metrics(evaluation_module_type):
        try:
            results = doctest.testmod(evaluation_module, verbose=True, raise_on_error=True)  # step 7
        except doctest.UnexpectedException as e:
            raise e.exc_info[1] from None  # the exception the example raised, as itself
    assert results.failed == 0  # step 8
    assert results.attempted > 1
