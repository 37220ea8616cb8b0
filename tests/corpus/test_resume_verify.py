"""A resume verifies what it reuses, and a refused resume names the field that
differs (item 10).

On main, ``nlgscore mbr -o --matrix-out`` resumed after its ``.parts`` folder was deleted
finished with 28 of 40 matrices, and after a checkpoint count raised by hand with 104 of 120
rows, both with exit 0. Here an MBR run on the embedded MiniLM is interrupted (Ctrl-C raised
from the real ``matrix`` call of its fourth chunk, as in ``test_cli_mbr``) after 12 of 40 items;
its side files are then damaged the way a user or a disk would, and the resume must refuse,
naming what is wrong, and never publish a short output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nlgscore.cli import main
from nlgscore.corpus.outputs.resumable import ResumableOutput, describe_mismatch, sidecar_paths
from nlgscore.errors import ArgumentError, DataError

SPEC = "bertscore:minilm:L2"
WORDS = "the a cat dog sat ran on under mat rug".split()
N, CHUNK = 40, 4


def _items(path: Path) -> Path:
    rows = [
        {"id": f"s{k}", "candidates": [" ".join(WORDS[(k + j) % 10 : (k + j) % 10 + 3]) or "x" for j in range(3)]}
        for k in range(N)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture()
def interrupted(tmp_path, monkeypatch):
    """An ``mbr -o --matrix-out`` run stopped by Ctrl-C after 12 items; returns (command, out, npz)."""
    from nlgscore.bertscore.scorer import BERTScorer

    out, npz = tmp_path / "chosen.jsonl", tmp_path / "u.npz"
    args = [
        "mbr",
        str(_items(tmp_path / "items.jsonl")),
        "--metric",
        SPEC,
        "--chunk",
        str(CHUNK),
        "--no-progress",
        "-o",
        str(out),
        "--matrix-out",
        str(npz),
    ]
    real, calls = BERTScorer.matrix, []

    def interrupt_fourth(self, *a, **k):  # the real matrix; Ctrl-C arrives during the fourth chunk
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(BERTScorer, "matrix", interrupt_fourth)
    assert main(args) == 130
    monkeypatch.setattr(BERTScorer, "matrix", real)
    checkpoint = sidecar_paths(out)["checkpoint"]
    assert json.loads(checkpoint.read_text())["done"] == 12 and not out.exists()
    return args, out, npz


def _refused(args, capsys, *needles):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def test_deleted_parts_folder_is_refused_not_finished_short(interrupted, capsys):
    args, out, npz = interrupted
    parts = npz.with_name(npz.name + ".parts")
    assert sorted(p.name for p in parts.iterdir()) == ["000000000000.npz", "000000000004.npz", "000000000008.npz"]
    for part in parts.iterdir():
        part.unlink()
    parts.rmdir()
    _refused(args, capsys, "cannot resume", "matrices of items 1-4", "missing", "--restart")
    assert not out.exists() and not npz.exists()
    assert main(args + ["--restart"]) == 0
    with np.load(npz) as matrices:
        assert len(matrices.files) == N
    assert len(out.read_text().splitlines()) == N


def test_a_part_holding_other_items_is_refused(interrupted, capsys):
    args, out, npz = interrupted
    parts = npz.with_name(npz.name + ".parts")
    (parts / "000000000004.npz").write_bytes((parts / "000000000000.npz").read_bytes())
    _refused(args, capsys, "cannot resume", "000000000004.npz should hold the matrices of items 5-8", "missing ['s4'")
    (parts / "000000000008.npz").write_bytes(b"not a zip")
    (parts / "000000000004.npz").unlink()
    _refused(args, capsys, "matrices of items 5-8")


def test_a_count_raised_by_hand_is_refused(interrupted, capsys):
    args, out, npz = interrupted
    checkpoint = sidecar_paths(out)["checkpoint"]
    record = json.loads(checkpoint.read_text())
    record["done"] = 16
    checkpoint.write_text(json.dumps(record))
    _refused(args, capsys, "cannot resume", "holds 12 item rows but its checkpoint", "counts 16", "--restart")
    assert not out.exists()
    record["done"] = 12  # put back: the run resumes and completes
    checkpoint.write_text(json.dumps(record))
    assert main(args) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == [f"s{k}" for k in range(N)]
    with np.load(npz) as matrices:
        assert sorted(matrices.files) == sorted(row["id"] for row in rows)


def test_a_partial_file_changed_after_its_checkpoint_is_refused(interrupted, capsys):
    args, out, _ = interrupted
    partial = sidecar_paths(out)["partial"]
    data = bytearray(partial.read_bytes())
    data[10] = ord("#") if data[10] != ord("#") else ord("%")  # same length and line count: only the checksum sees it
    partial.write_bytes(bytes(data))
    _refused(args, capsys, "cannot resume", "another SHA-256", "--restart")


def test_resumable_output_with_a_header_counts_item_rows(tmp_path):
    out = tmp_path / "scores.tsv"
    writer = ResumableOutput(out, {"metric": "toy"})
    writer.append("0.5\n0.25\n", 2, {"sum": 0.75}, header="score\n")
    writer.append("1.0\n", 1)
    del writer
    checkpoint = sidecar_paths(out)["checkpoint"]
    record = json.loads(checkpoint.read_text())
    assert (record["done"], record["header_lines"]) == (3, 1)
    for done in (4, 2):  # raised or lowered by hand
        checkpoint.write_text(json.dumps(dict(record, done=done)))
        with pytest.raises(DataError, match=f"holds 3 item rows but its checkpoint .* counts {done}"):
            ResumableOutput(out, {"metric": "toy"})
    checkpoint.write_text(json.dumps(dict(record, version=1)))
    with pytest.raises(DataError, match="unreadable .*version 1"):
        ResumableOutput(out, {"metric": "toy"})
    checkpoint.write_text(json.dumps(record))
    again = ResumableOutput(out, {"metric": "toy"})
    assert again.done == 3
    assert again.finish().read_text() == "score\n0.5\n0.25\n1.0\n"


def test_a_refused_resume_names_the_field_that_differs(interrupted, capsys):
    args, out, _ = interrupted
    err = _refused(
        args + ["--dtype", "bfloat16"], capsys, "cannot resume", "metric dtype: float32 → bfloat16", "--restart"
    )
    assert "nlgscore:bertscore" not in err and "..." not in err  # no truncated signatures
    err = _refused(args + ["--nbest", "2", "--chunk", "8"], capsys, "chunk: 4 → 8", "nbest: None → 2")
    assert err.index("chunk") < err.index("nbest")


def test_describe_mismatch_of_real_signatures(minilm_scorer, tmp_path):
    from nlgscore.bertscore import BERTScorer

    other = BERTScorer(model_type="minilm", num_layers=2, idf=False)
    text = describe_mismatch(
        {"signature": str(minilm_scorer.signature), "window": 4}, {"signature": str(other.signature), "window": 4}
    )
    assert text == "signature L: 4 → 2"
    ResumableOutput(tmp_path / "o.tsv", {"metric": "a"})  # leaves a checkpoint of another identity
    with pytest.raises(ArgumentError, match="cannot resume .*: metric: 'a' → 'b'; "):
        ResumableOutput(tmp_path / "o.tsv", {"metric": "b"})
