"""Adding a meta-evaluation data set is one descriptor: a toy data set made here (a TSV of
system, item, human score and output, and a reference file), its loader returning the one data model
(``EvalSet``), a descriptor with its measure rows, run by the generic runner from the library and
from ``nlgscore meta`` with no other edit. Values are checked against scipy and sacreBLEU."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

sacrebleu = pytest.importorskip("sacrebleu")

from nlgscore.cli import main  # noqa: E402
from nlgscore.meta.data.files import read_lines  # noqa: E402
from nlgscore.meta.data.model import EvalSet  # noqa: E402
from nlgscore.meta.stats import CORRELATIONS, pairwise_accuracy  # noqa: E402
from nlgscore.meta.tasks import descriptors  # noqa: E402
from nlgscore.meta.tasks.generic import TaskDescriptor, run  # noqa: E402
from nlgscore.meta.tasks.measures import Measure, item_scores, system_scores  # noqa: E402

REFS = ["the cat sat on the mat", "a dog ran in the park", "it is raining today", "she reads a book", "we eat rice"]
OUTPUTS = {
    "good": ["the cat sat on a mat", "a dog ran in the park", "it is raining today", "she reads books", "we eat rice"],
    "mid": ["the cat sat", "a dog ran", "it rains today", "she reads", "we eat"],
    "bad": ["cat", "dog ran", "rain", "book", "rice"],
}
HUMAN = {"good": [5, 6, 6, 4, 6], "mid": [3, 2, 4, 3, 2], "bad": [1, 2, 0, 1, 2]}


def _toy(folder: Path) -> Path:
    folder.mkdir()
    (folder / "ref.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    rows = [f"{s}\t{i}\t{HUMAN[s][i]}\t{OUTPUTS[s][i]}" for s in OUTPUTS for i in range(len(REFS))]
    (folder / "judgments.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def load_toy(folder, limit=None) -> EvalSet:
    """The loader: one TSV row per (system, item), the reference file."""
    refs = read_lines(Path(folder) / "ref.txt")
    n = min(len(refs), limit or len(refs))
    systems, hyps, human = [], {}, {}
    for line in read_lines(Path(folder) / "judgments.tsv"):
        system, item, score, text = line.split("\t")
        if system not in hyps:
            systems.append(system)
            hyps[system], human[system] = [""] * len(refs), np.full(len(refs), np.nan)
        hyps[system][int(item)], human[system][int(item)] = text, float(score)
    seg = np.array([human[s][:n] for s in systems])
    return EvalSet(
        "toy",
        systems,
        [hyps[s][:n] for s in systems],
        [refs[:n]],
        human={"segment": seg, "system": seg.mean(axis=1)},
        lines=len(refs),
    )


TOY = TaskDescriptor(
    "toy",
    load_toy,
    (
        Measure("system", "accuracy", system_scores, pairwise_accuracy),
        Measure(
            "segment",
            "pearson",
            item_scores,
            lambda h, m: CORRELATIONS["pearson"](h.ravel(), m.ravel()),
            resampling="bootstrap",
        ),  # (items, systems): the bootstrap resamples items
    ),
)


def test_a_toy_descriptor_runs_through_the_generic_runner(tmp_path):
    folder = _toy(tmp_path / "toy")
    table = run(TOY, ["chrf"], data=folder, bootstrap=200, seed=7)
    values = {(r.level, r.measure): r for r in table.rows}
    chrf_seg = np.array([[sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(OUTPUTS[s], REFS)] for s in OUTPUTS])
    human = np.array([HUMAN[s] for s in OUTPUTS], dtype=float)
    expected = scipy_stats.pearsonr(human.ravel(), chrf_seg.ravel()).statistic
    assert values["segment", "pearson"].value == pytest.approx(expected, abs=1e-12)
    low, high = values["segment", "pearson"].ci_low, values["segment", "pearson"].ci_high
    assert low <= expected <= high and "bootstrap:200|seed:7" in values["segment", "pearson"].signature
    corpus = [sacrebleu.corpus_chrf(OUTPUTS[s], [REFS]).score for s in OUTPUTS]
    assert corpus[0] > corpus[1] > corpus[2] and values["system", "accuracy"].value == 1.0
    assert values["system", "accuracy"].signature.endswith("system:corpus")
    # a precomputed score file in mt-metrics-eval's format gives the same rows
    seg_file = tmp_path / "mine.seg.score"
    seg_file.write_text(
        "".join(f"{s}\t{v!r}\n" for s, row in zip(OUTPUTS, chrf_seg.tolist()) for v in row), encoding="utf-8"
    )
    again = run(TOY, scores={"mine": str(seg_file)}, data=folder)
    assert again.rows[1].value == pytest.approx(expected, abs=1e-12) and again.rows[1].signature.startswith("scores:")


def test_the_same_descriptor_is_a_meta_subcommand(tmp_path, monkeypatch, capsys):
    folder = _toy(tmp_path / "toy")
    row = descriptors.from_protocol(
        TOY, "toy judgments", "A toy data set.", "judgments.tsv, ref.txt", "1-6 ratings", "ref.txt"
    )  # a bootstrap measure: --bootstrap, derived from the rows
    assert row.resampling == "bootstrap"
    monkeypatch.setitem(descriptors.DESCRIPTORS, "toy", row)
    code = main(
        [
            "meta",
            "toy",
            "--data",
            str(folder),
            "--metric",
            "chrf",
            "--bootstrap",
            "100",
            "--json",
            "--no-cache",
            "--quiet",
            "--limit",
            "4",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["task"] == "toy"
    assert [(r["level"], r["measure"]) for r in out["results"]] == [("system", "accuracy"), ("segment", "pearson")]
    assert out["results"][1]["ci_low"] is not None
    code = main(["meta", "toy", "--data", str(folder), "--metric", "chrf", "--seed", "-3", "--no-cache", "--quiet"])
    assert code == 2 and "seed must be an integer >= 0" in capsys.readouterr().err


BAGEL_ROWS = [  # the d2t-bagel.jsonl record layout: one output per sample, several references, aspects
    {"id": i, "src": f"inform(name=X{i})", "refs": [ref, ref.upper()], "text": text, "scores": {"quality": q}}
    for i, (ref, text, q) in enumerate(zip(REFS, OUTPUTS["mid"], [4.0, 2.5, 5.0, 1.0, 3.5]))
]


def load_bagel_toy(path, limit=None) -> EvalSet:
    """The recipe's loader for a BAGEL-style file: one 'system', the samples as items, the first reference."""
    rows = [json.loads(line) for line in read_lines(path)][:limit]
    human = np.array([[row["scores"]["quality"] for row in rows]])
    return EvalSet(
        "bagel",
        ["output"],
        [[row["text"] for row in rows]],
        [[row["refs"][0] for row in rows]],
        human={"segment": human, "system": human.mean(axis=1)},
    )


def test_a_bagel_descriptor_with_spearman_runs_by_the_recipe(tmp_path, monkeypatch, capsys):
    # Data-to-text is meta-evaluated with a corpus-level Spearman (BARTScore Sec. 4): the recipe's measure
    # reads it from the one table, stats.CORRELATIONS (it was missing there: "internal error").
    path = tmp_path / "bagel.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in BAGEL_ROWS), encoding="utf-8")
    bagel = TaskDescriptor(
        "bagel",
        load_bagel_toy,
        (Measure("segment", "spearman", item_scores, lambda h, m: CORRELATIONS["spearman"](h.ravel(), m.ravel())),),
        system_level=False,
    )
    table = run(bagel, ["chrf"], data=path)
    chrf_seg = [sacrebleu.sentence_chrf(row["text"], [row["refs"][0]]).score for row in BAGEL_ROWS]
    expected = scipy_stats.spearmanr([row["scores"]["quality"] for row in BAGEL_ROWS], chrf_seg).statistic
    assert table.rows[0].value == pytest.approx(expected, abs=1e-12)
    monkeypatch.setitem(
        descriptors.DESCRIPTORS,
        "bagel",
        descriptors.from_protocol(bagel, "BAGEL", "BAGEL data-to-text.", "bagel.jsonl", "quality", "first reference"),
    )
    code = main(["meta", "bagel", "--data", str(path), "--metric", "chrf", "--json", "--no-cache", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["results"][0]["value"] == pytest.approx(expected, abs=1e-12)
    from nlgscore.meta.stats import correlation

    with pytest.raises(ValueError, match="method must be one of pearson, kendall, spearman, got 'tau'"):
        correlation(np.ones((2, 2)), np.ones((2, 2)), "tau")
