"""``nlgscore mbr``: JSONL in, JSONL choices and .npz matrices out, resumable -o, errors naming the
argument or file:line, and the brute-force choices on WMT21 de-en system outputs (skipped when
../shared/data is absent). Real models (embedded MiniLM); nothing is mocked."""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from nlgscore.cli import main
from nlgscore.mbr import MBRItem, decode

SPEC = "bertscore:minilm:L4"
ITEMS = [
    {"id": "a", "candidates": ["The cat sat on the mat.", "A cat was sitting on the mat.", "Stocks fell on Monday."]},
    {
        "id": 7,
        "source": "Es regnet.",
        "candidates": ["It rains.", "Rain is falling.", "It is raining."],
        "pseudo_references": ["It is raining.", "Rain falls."],
    },
    {"id": "c", "candidates": ["Good morning.", "Good morning!", "Hello there."]},
]


def write_items(path: Path, items=ITEMS) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def read_rows(path: Path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_round_trip_equals_the_python_api(tmp_path, minilm_scorer):
    items = write_items(tmp_path / "items.jsonl")
    out, npz = tmp_path / "chosen.jsonl", tmp_path / "u.npz"
    assert main(["mbr", str(items), "--metric", SPEC, "-o", str(out), "--matrix-out", str(npz), "--no-progress"]) == 0
    rows = read_rows(out)
    expected = decode(
        minilm_scorer,
        [MBRItem(i["candidates"], i.get("pseudo_references"), i.get("source"), i["id"]) for i in ITEMS],
        keep_matrices=True,
    )
    assert [r["id"] for r in rows] == ["a", 7, "c"]
    for row, choice in zip(rows, expected):
        assert set(row) == {"id", "best", "best_index", "expected_utility"}
        assert (row["best"], row["best_index"]) == (choice.best, choice.best_index)
        np.testing.assert_allclose(row["expected_utility"], choice.expected_utility, atol=1e-6, rtol=0)
    with np.load(npz) as matrices:
        assert sorted(matrices.files) == ["7", "a", "c"] and matrices["7"].shape == (3, 2)
        np.testing.assert_allclose(matrices["a"], expected[0].matrix, atol=1e-6, rtol=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chosen.jsonl", "items.jsonl", "u.npz"]  # no sidecars left


def test_stdin_to_stdout(tmp_path, monkeypatch, capsys):
    data = "".join(json.dumps(item) + "\n" for item in ITEMS[:1]).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["mbr", "-", "--metric", SPEC, "--no-progress"]) == 0
    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["id"] == "a" and row["best_index"] in (0, 1)


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    from nlgscore.bertscore.scorer import BERTScorer

    items = write_items(tmp_path / "items.jsonl")
    args = ["mbr", str(items), "--metric", SPEC, "--chunk", "1", "--no-progress"]
    assert main([*args, "-o", str(tmp_path / "whole.jsonl"), "--matrix-out", str(tmp_path / "whole.npz")]) == 0
    real, calls = BERTScorer.matrix, []

    def interrupt_third(self, *a, **k):  # the real matrix; Ctrl-C arrives during the third chunk
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(BERTScorer, "matrix", interrupt_third)
    out, npz = tmp_path / "part.jsonl", tmp_path / "part.npz"
    assert main([*args, "-o", str(out), "--matrix-out", str(npz)]) == 130
    assert not out.exists()
    calls.clear()
    monkeypatch.setattr(BERTScorer, "matrix", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    assert main([*args, "-o", str(out), "--matrix-out", str(npz)]) == 0
    assert len(calls) == 1  # only the unfinished item was decoded again
    assert out.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    with np.load(npz) as got, np.load(tmp_path / "whole.npz") as whole:
        assert sorted(got.files) == sorted(whole.files)
        for key in whole.files:
            np.testing.assert_allclose(got[key], whole[key], atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"id": 1, "candidates": ["a", "b"]}', "not json"], "items.jsonl:2: not valid JSON"),
        (['{"id": 1}'], "items.jsonl:1: 'candidates' is required"),
        (['{"candidates": ["a", "b"]}'], "items.jsonl:1: 'id' is required"),
        (['{"id": 1, "candidates": ["a", 2]}'], r"items.jsonl:1: item 1: candidates\[1\]"),
        (['{"id": 1, "candidates": ["a", "b"], "refs": []}'], "items.jsonl:1: unknown field"),
        (['{"id": 1, "candidates": ["a", "b"]}', '{"id": 1, "candidates": ["c", "d"]}'], "more than once"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path, capsys, lines, message):
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["mbr", str(path), "--metric", SPEC, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nlgscore mbr: error:" in err and len(err.strip().splitlines()) == 1
    assert __import__("re").search(message, err), err


def test_bad_arguments(tmp_path, capsys):
    items = write_items(tmp_path / "items.jsonl")
    assert main(["mbr", str(tmp_path / "missing.jsonl"), "--metric", SPEC]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["mbr", str(items), "--metric", "nometric"]) == 2
    assert "nometric" in capsys.readouterr().err
    assert main(["mbr", str(items), "--metric", SPEC, "-o", str(tmp_path / "no" / "out.jsonl")]) == 2
    assert "-o" in capsys.readouterr().err
    assert main(["mbr", str(items), "--metric", SPEC, "--column", "nope", "--no-progress"]) == 2
    assert "column" in capsys.readouterr().err


def test_wmt21_system_outputs_give_the_brute_force_choices(tmp_path, minilm_scorer):
    from conftest import require_data

    folder = require_data("wmt21-de-en")
    systems = [p.read_text(encoding="utf-8").split("\n") for p in sorted(folder.glob("hyp.*.en"))]
    assert len(systems) == 19
    segments = range(12)
    items = [{"id": f"seg{s}", "candidates": [system[s] for system in systems]} for s in segments]
    path = write_items(tmp_path / "wmt21.jsonl", items)
    out = tmp_path / "chosen.jsonl"
    assert main(["mbr", str(path), "--metric", SPEC, "-o", str(out), "--no-progress"]) == 0
    rows = read_rows(out)
    # Brute force: compute over every (candidate, other candidate) pair of every item in one call
    # (the pair path: these pairs cover 1/12 of the call's product), mean, first argmax.
    pairs = [(k, i, j) for k in range(len(items)) for i in range(19) for j in range(19) if i != j]
    scores = minilm_scorer.compute(
        [items[k]["candidates"][i] for k, i, _ in pairs], [items[k]["candidates"][j] for k, _, j in pairs]
    ).scores
    for k, row in enumerate(rows):
        mine = [s for (owner, _, _), s in zip(pairs, scores) if owner == k]
        means = [math.fsum(mine[i * 18 : (i + 1) * 18]) / 18 for i in range(19)]
        np.testing.assert_allclose(row["expected_utility"], means, atol=1e-6, rtol=0)
        best = int(np.argmax(means))
        others = [m for i, m in enumerate(means) if items[k]["candidates"][i] != items[k]["candidates"][best]]
        runner_up = max(others, default=-math.inf)  # every system may output the same text
        if means[best] - runner_up > 1e-6:  # not a near-tie between different texts
            assert items[k]["candidates"][row["best_index"]] == items[k]["candidates"][best]
            assert row["best_index"] == best  # a duplicate of the best: the lowest index
