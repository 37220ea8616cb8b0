"""Every registered metric through every entry point, each equal to the API's numbers.

The entry points build through ``registry.build``/``registry.cached`` and read the scorer's
``needs``, so a metric added by CONTRIBUTING's recipe runs through all of them with no edit:
``tests/test_add_metric.py`` runs this file on a copy of the package with a reference+source
metric added. Entry points: ``nlgscore score``, ``nlgscore mbr``, the evaluate module,
``map_function`` (what the Ray adapter runs on each actor), the TRL reward (with TRL's empty
probe call), lighteval and ``nlgscore meta wmt19 --metric``.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from offline import ENTRY_POINTS
from ties import assert_canonical_best

import nlgscore
from nlgscore.cli import main

PREDS = ["The cat sat on the mat.", "Prices rose sharply.", "It is cold today."]
REFS = ["A cat was sitting on the mat.", "Prices increased steeply.", "The weather is cold."]
SRCS = ["Die Katze saß auf der Matte.", "Die Preise stiegen stark.", "Es ist heute kalt."]
TOLERANCE = 1e-5
METRICS = list(ENTRY_POINTS)
_SCORERS: dict = {}


def scorer(label: str):
    if label not in _SCORERS:
        _SCORERS[label] = nlgscore.load(ENTRY_POINTS[label].spec)
    return _SCORERS[label]


def inputs(label: str, n: int = len(PREDS)) -> dict:
    given = {"references": REFS[:n], "sources": SRCS[:n]}
    return {need: given[need] for need in scorer(label).needs}


def expected(label: str) -> list:
    return scorer(label).compute(PREDS, **inputs(label)).scores


def _run_cli(argv) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


@pytest.mark.parametrize("label", METRICS)
def test_cli_score(label, tmp_path):
    files = {"-c": PREDS, "-r": REFS, "-s": SRCS}
    flags = ["-c"] + [{"references": "-r", "sources": "-s"}[need] for need in scorer(label).needs]
    argv = ["score", ENTRY_POINTS[label].spec]
    for flag in flags:
        path = tmp_path / f"{flag[1]}.txt"
        path.write_text("\n".join(files[flag]) + "\n", encoding="utf-8")
        argv += [flag, str(path)]
    printed = json.loads(_run_cli(argv + ["--seg", "--json", "--no-progress", "--quiet"]))
    assert printed["scores"] == pytest.approx(expected(label), abs=TOLERANCE)


@pytest.mark.parametrize("label", METRICS)
def test_cli_mbr_equals_brute_force(label, tmp_path):
    needs = scorer(label).needs
    candidates = [PREDS[0], REFS[0], PREDS[1]]
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "source": SRCS[0], "candidates": candidates}) + "\n", encoding="utf-8")
    row = json.loads(_run_cli(["mbr", str(items), "--metric", ENTRY_POINTS[label].spec, "--no-progress", "--quiet"]))
    if needs == ("sources",):  # QE reranking: each candidate against the source
        utility = scorer(label).compute(candidates, sources=[SRCS[0]] * 3).scores
    else:  # each candidate against the others (never itself), with the item's source if the metric reads one
        utility = []
        for i, candidate in enumerate(candidates):
            others = [c for j, c in enumerate(candidates) if j != i]
            extra = {"sources": [SRCS[0]] * 2} if "sources" in needs else {}
            utility.append(float(np.mean(scorer(label).compute([candidate] * 2, others, **extra).scores)))
    assert row["expected_utility"] == pytest.approx(utility, abs=TOLERANCE)
    assert_canonical_best(
        row["best_index"], row["expected_utility"], utility, tol=TOLERANCE
    )  # a near-tie may go either way


@pytest.mark.parametrize("label", METRICS)
def test_evaluate_module(label):
    import evaluate

    entry = ENTRY_POINTS[label]
    module = evaluate.load(nlgscore.evaluate_module(entry.metric), entry.config, **entry.load)
    out = module.compute(predictions=PREDS, **inputs(label), **entry.compute)
    assert out[entry.key] == pytest.approx(expected(label), abs=TOLERANCE)


@pytest.mark.parametrize("label", METRICS)
def test_map_function(label):
    datasets = pytest.importorskip("datasets")
    needs = scorer(label).needs
    table = datasets.Dataset.from_dict({"prediction": PREDS, "reference": REFS, "source": SRCS})
    fn = nlgscore.map_function(
        ENTRY_POINTS[label].spec,
        reference_column="reference" if "references" in needs else None,
        source_column="source" if "sources" in needs else None,
        prefix="",
    )
    out = table.map(fn, batched=True, batch_size=2)
    assert out[scorer(label).compute(PREDS, **inputs(label)).primary] == pytest.approx(expected(label), abs=TOLERANCE)


@pytest.mark.parametrize("label", METRICS)
def test_trl_reward_and_its_empty_probe(label):
    from nlgscore.integrations.trl import reward_function

    needs = scorer(label).needs
    reward = reward_function(
        ENTRY_POINTS[label].spec,
        reference_column="reference" if "references" in needs else None,
        source_column="prompt" if "sources" in needs else None,
    )
    prompts = [[{"role": "user", "content": s}] for s in SRCS]
    completions = [[{"role": "assistant", "content": p}] for p in PREDS]
    assert reward(prompts=prompts, completions=completions, reference=REFS, trainer_state=None) == pytest.approx(
        expected(label), abs=TOLERANCE
    )
    assert reward(prompts=[], completions=[], reference=[], trainer_state=None) == []  # TRL's probe call


@pytest.mark.parametrize("label", METRICS)
def test_lighteval(label):
    pytest.importorskip("lighteval", reason="the lighteval extra is not installed")
    from lighteval.models.model_output import ModelResponse
    from lighteval.tasks.requests import Doc

    from nlgscore.integrations.lighteval import metric

    needs = scorer(label).needs
    lighteval_metric = metric(ENTRY_POINTS[label].spec, source_field="query" if "sources" in needs else None)
    docs = [Doc(query=src, choices=[ref], gold_index=[0]) for src, ref in zip(SRCS, REFS, strict=True)]
    name = scorer(label).name  # the metric's name and its columns' prefix
    rows = lighteval_metric.compute_sample(docs=docs, responses=[ModelResponse(text=[p]) for p in PREDS])[name]
    primary = scorer(label).compute(PREDS, **inputs(label)).primary
    assert [row[f"{name}_{primary}"] for row in rows] == pytest.approx(expected(label), abs=TOLERANCE)


@pytest.mark.parametrize("label", METRICS)
def test_meta_wmt19_metric(label, tmp_path):
    """``nlgscore meta wmt19 --metric``: Kendall's tau-like over daRR pairs equals the metric's own
    scores of the better and the worse translation (no ties in this fixture)."""
    if scorer(label).needs == ("sources",):
        pytest.skip(f"{label} is a source-only metric: WMT19 daRR rates translations against references")
    worse = ["Mat the on sat cat the.", "Prices went up.", "Cold."]
    pairs = [
        {
            "id": i,
            "lp": "xx-en",
            "src": SRCS[i],
            "ref": REFS[i],
            "better": {"system": "A", "text": PREDS[i]},
            "worse": {"system": "B", "text": worse[i]},
        }
        for i in range(3)
    ]
    (tmp_path / "wmt-xx-en.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    out = tmp_path / "out.json"
    _run_cli(
        [
            "meta",
            "wmt19",
            "--data",
            str(tmp_path),
            "--metric",
            ENTRY_POINTS[label].spec,
            "--bootstrap",
            "10",
            "--json-out",
            str(out),
            "--no-cache",
            "--quiet",
        ]
    )
    [tau] = [r["value"] for r in json.loads(out.read_text())["results"] if r["measure"] == "tau"]
    given = {"references": REFS, "sources": SRCS}
    extra = {need: given[need] for need in scorer(label).needs}
    better, bad = scorer(label).compute(PREDS, **extra).scores, scorer(label).compute(worse, **extra).scores
    concordant = sum(b > w for b, w in zip(better, bad, strict=True))
    assert tau == pytest.approx((concordant - (3 - concordant)) / 3, abs=1e-9)


def test_every_registered_metric_is_covered():
    from nlgscore import registry

    assert {entry.metric for entry in ENTRY_POINTS.values()} == set(registry.metric_names(builtin=True))
    assert Path(__file__).with_name("offline.py").is_file()
