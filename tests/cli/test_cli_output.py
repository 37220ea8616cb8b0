"""One output path. Every command prints through ``nlgscore.cli.output.emit``
with ``--format text|json|tsv`` (``--json`` the alias of ``--format json``): the same result
gives the same numbers in all three forms, json is one line, tsv is a header then one row per
item (null and empty cells for NaN: see the doctests of nlgscore.cli.output)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlgscore import registry
from nlgscore.cli import main
from nlgscore.core.base import Scorer
from nlgscore.core.result import Result

PREDS = ["the cat sat", "a b c", "x"]
REFS = ["the cat ran", "a b c", "y"]


class Jaccard(Scorer):
    """Word-set Jaccard similarity, and its square as a second column."""

    name = "jaccard"

    def _score_items(self, items, state):
        sets = [(set(i.prediction.split()), set(i.reference.split())) for i in items]
        scores = np.array([len(a & b) / len(a | b) for a, b in sets])
        return {"jaccard": scores, "squared": scores**2}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "jaccard")

    def _signature_fields(self, call):
        return {}


@pytest.fixture
def files(tmp_path):
    registry.register("jaccard", Jaccard, replace=True)
    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text("\n".join(PREDS) + "\n", encoding="utf-8")
    refs.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    yield ["-c", str(cands), "-r", str(refs)]
    registry.unregister("jaccard")


def run(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_the_three_formats_of_a_result_carry_the_same_numbers(files, capsys):
    text = run(capsys, "score", "jaccard", *files, "--seg")
    as_json = run(capsys, "score", "jaccard", *files, "--format", "json")
    alias = run(capsys, "score", "jaccard", *files, "--json")
    tsv = run(capsys, "score", "jaccard", *files, "--format", "tsv")
    assert as_json == alias and len(as_json.strip().splitlines()) == 1
    data = json.loads(as_json)
    assert data["jaccard"] == pytest.approx([0.5, 1.0, 0.0]) and data["squared"] == pytest.approx([0.25, 1.0, 0.0])
    lines = tsv.rstrip("\n").split("\n")
    assert lines[0].split("\t") == ["jaccard", "squared"] and len(lines) == 1 + len(PREDS)
    assert [float(line.split("\t")[0]) for line in lines[1:]] == pytest.approx(data["jaccard"])
    *seg_lines, system, signature = text.strip().split("\n")  # the system values, then the signature apart
    seg = [float(line) for line in seg_lines]
    assert seg == pytest.approx(data["jaccard"], abs=1e-6) and system == f"jaccard: {data['score']:.6f}"
    assert signature == data["signature"]


def test_compare_prints_through_the_same_path(tmp_path, capsys):
    refs, base, system = tmp_path / "r.txt", tmp_path / "b.txt", tmp_path / "s.txt"
    refs.write_text("the cat sat on the mat\nprices rose sharply\nit is cold today\n", encoding="utf-8")
    base.write_text("a cat on a mat\nprices fell\nit is warm\n", encoding="utf-8")
    system.write_text("the cat sat on the mat\nprices rose\nit is cold today\n", encoding="utf-8")
    argv = ["compare", "-r", str(refs), "-c", str(base), "-c", str(system), "--metric", "chrf", "--n-samples", "50"]
    data = json.loads(run(capsys, *argv, "--json"))
    tsv = run(capsys, *argv, "--format", "tsv").rstrip("\n").split("\n")
    assert tsv[0].split("\t")[:3] == ["system", "baseline", "score"] and len(tsv) == 3
    assert float(tsv[2].split("\t")[2]) == pytest.approx(data["systems"][1]["score"])
    assert tsv[1].split("\t")[-1] == ""  # the baseline has no p-value
    text = run(capsys, *argv)
    assert "(baseline)" in text and data["signature"] in text


def test_an_unknown_format_is_refused_by_the_parser(files, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["score", "jaccard", *files, "--format", "xml"])
    assert caught.value.code == 2 and "invalid choice: 'xml'" in capsys.readouterr().err


def test_emit_refuses_an_unknown_format_naming_it():
    from nlgscore.cli.output import emit
    from nlgscore.errors import ArgumentError

    with pytest.raises(ArgumentError, match="format must be one of text, json, tsv, got 'xml'"):
        emit(Result.__new__(Result), "xml")


@pytest.mark.parametrize("command", ["bench", "compare", "score", "bertscore", "prism", "bartscore"])
def test_every_printing_command_takes_format_and_json(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    usage = capsys.readouterr().out
    assert "--format {text,json,tsv}" in usage and "--json" in usage
