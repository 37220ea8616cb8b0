"""``nlgscore.mbr.decode_to_file``: the library's chunked, resumable MBR loop that
``nlgscore mbr`` only calls, and ``nbest``. Real MiniLM; nothing is mocked."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from ties import assert_canonical_best

from nlgscore.cli import main
from nlgscore.errors import ArgumentError
from nlgscore.mbr import MBRItem, decode, decode_to_file

SPEC = "bertscore:minilm:L4"
ITEMS = [
    MBRItem(
        [
            "The cat sat on the mat.",
            "A cat was sitting on the mat.",
            "Stocks fell on Monday.",
            "The cat sat on the mat.",
        ],
        id="a",
    ),
    MBRItem(["It rains.", "Rain is falling.", "It is raining."], ["It is raining.", "Rain falls."], "Es regnet.", 7),
    MBRItem(["Good morning.", "Hello there."], id="c"),
]


def rows_of(text: str):
    return [json.loads(line) for line in text.splitlines()]


def test_file_equals_decode_and_nbest_lists_the_best_first(tmp_path, minilm_scorer):
    out, npz = tmp_path / "chosen.jsonl", tmp_path / "u.npz"
    summary = decode_to_file(minilm_scorer, ITEMS, out, matrix_out=npz, nbest=3, chunk=2)
    assert (summary.items, summary.resumed_at) == (3, 0)
    rows = rows_of(out.read_text(encoding="utf-8"))
    want = decode(minilm_scorer, ITEMS, keep_matrices=True)
    for item, row, choice in zip(ITEMS, rows, want):
        assert row["id"] == item.id and row["best"] == item.candidates[row["best_index"]]
        # chunks of 2 items and one call group the items differently (1e-6: above the largest fp32
        # move across batchings and kernels, 2.4e-7); item
        # c is a near-tie (F1 is symmetric up to rounding): the tie rule, not an argmax, decides
        assert_canonical_best(row["best_index"], row["expected_utility"], choice.expected_utility, tol=1e-6)
        eu = np.asarray(row["expected_utility"])
        np.testing.assert_allclose(eu, choice.expected_utility, atol=1e-6, rtol=0)
        # nbest: min(K, N) entries, utilities descending, ties to the lower index, first = best
        order = sorted(range(item.n), key=lambda i: (-eu[i], i))[:3]
        assert [c["index"] for c in row["nbest"]] == order and len(row["nbest"]) == min(3, item.n)
        assert row["nbest"][0]["index"] == row["best_index"]
        assert [c["candidate"] for c in row["nbest"]] == [item.candidates[i] for i in order]
        assert [c["expected_utility"] for c in row["nbest"]] == [row["expected_utility"][i] for i in order]
    with np.load(npz) as matrices:
        assert sorted(matrices.files) == ["7", "a", "c"]
        np.testing.assert_allclose(matrices["7"], want[1].matrix, atol=1e-6, rtol=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chosen.jsonl", "u.npz"]  # no sidecars left


def test_a_stream_gets_each_chunk_and_no_nbest_by_default(minilm_scorer):
    stream = io.StringIO()
    decode_to_file(minilm_scorer, ITEMS, stream, chunk=1)
    rows = rows_of(stream.getvalue())
    assert [r["id"] for r in rows] == ["a", 7, "c"] and all("nbest" not in r for r in rows)


def test_cli_nbest(tmp_path, capsys):
    path = tmp_path / "items.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i.id, "candidates": i.candidates}) + "\n" for i in ITEMS), encoding="utf-8"
    )
    assert main(["mbr", str(path), "--metric", SPEC, "--nbest", "2", "--no-progress"]) == 0
    rows = rows_of(capsys.readouterr().out)
    assert [len(r["nbest"]) for r in rows] == [2, 2, 2] and all(r["nbest"][0]["index"] == r["best_index"] for r in rows)
    with pytest.raises(SystemExit) as exit_:
        main(["mbr", str(path), "--metric", SPEC, "--nbest", "0"])
    assert exit_.value.code == 2 and "--nbest" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"nbest": 0}, "^nbest must be"),
        ({"nbest": True}, "^nbest must be"),
        ({"chunk": 0}, "^chunk must be"),
        ({"matrix_out": "/no/such/u.npz"}, "^matrix_out"),
    ],
)
def test_bad_arguments_name_the_argument(minilm_scorer, kwargs, message):
    with pytest.raises(ArgumentError, match=message):
        decode_to_file(minilm_scorer, ITEMS, io.StringIO(), **kwargs)
