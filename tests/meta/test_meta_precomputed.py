"""Score files for --scores: every format's errors name the file, the line and the key."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlgscore.meta.data.precomputed import (
    parse_scores_option,
    read_darr_scores,
    read_summeval_scores,
    read_system_scores,
    read_wmt21_scores,
)


def _write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _darr(tmp_path, records):
    return _write(tmp_path, "d.jsonl", [r if isinstance(r, str) else json.dumps(r) for r in records])


def test_darr_scores_in_file_order_of_ids(tmp_path):
    path = _darr(tmp_path, [{"id": "b", "better": 2, "worse": 1}, {"id": "a", "better": 0.5, "worse": 0.25}])
    better, worse = read_darr_scores(path, ["a", "b"])
    assert better.tolist() == [0.5, 2.0] and worse.tolist() == [0.25, 1.0]


@pytest.mark.parametrize(
    "records,message",
    [
        ([{"id": 0, "better": 1, "worse": 0}], r"d\.jsonl: no score for '1' \(1 of 2 items missing\)"),
        (
            [
                {"id": 0, "better": 1, "worse": 0},
                {"id": 1, "better": 1, "worse": 0},
                {"id": 7, "better": 1, "worse": 0},
            ],
            r"d\.jsonl:3: unknown item '7'",
        ),
        (
            [{"id": 0, "better": 1, "worse": 0}, {"id": 0, "better": 2, "worse": 0}],
            r"d\.jsonl:2: duplicate item '0' \(first at 1\)",
        ),
        (
            [{"id": 0, "better": 1, "worse": 0}, '{"id": 1, "better": NaN, "worse": 0}'],
            r"d\.jsonl:2: score of '1' is nan",
        ),
        ([{"id": 0, "better": "high", "worse": 0}], r"d\.jsonl:1: score of '0' is not a number: 'high'"),
        ([{"id": 0, "worse": 0}], r"d\.jsonl:1: missing field\(s\) \['better'\]"),
        (["{not json"], r"d\.jsonl:1: not valid JSON"),
    ],
)
def test_darr_score_errors(tmp_path, records, message):
    with pytest.raises(ValueError, match=message):
        read_darr_scores(_darr(tmp_path, records), ["0", "1"])


def test_wmt21_scores_matrix_ignored_systems_and_errors(tmp_path):
    rows = [f"{s}\t{line}\t{i + line / 10}" for i, s in enumerate(["A", "B"]) for line in (1, 2)]
    path = _write(tmp_path, "s.tsv", rows + ["HUMAN\t1\t9"])
    np.testing.assert_allclose(
        read_wmt21_scores(path, ["A", "B"], 2, ignored=["A", "B", "HUMAN"]), [[0.1, 0.2], [1.1, 1.2]]
    )
    with pytest.raises(ValueError, match=r"s\.tsv:5: unknown item \('HUMAN', '1'\)"):
        read_wmt21_scores(path, ["A", "B"], 2)  # HUMAN is not a system of this folder
    missing = _write(tmp_path, "m.tsv", rows[:3])
    with pytest.raises(ValueError, match=r"m\.tsv: no score for \('B', '2'\)"):
        read_wmt21_scores(missing, ["A", "B"], 2)
    extra = _write(tmp_path, "e.tsv", rows + ["A\t3\t0.5"])
    with pytest.raises(ValueError, match=r"e\.tsv:5: unknown item \('A', '3'\)"):
        read_wmt21_scores(extra, ["A", "B"], 2)
    nan = _write(tmp_path, "n.tsv", rows[:3] + ["B\t2\tnan"])
    with pytest.raises(ValueError, match=r"n\.tsv:4: score of \('B', '2'\) is nan"):
        read_wmt21_scores(nan, ["A", "B"], 2)
    fields = _write(tmp_path, "f.tsv", ["A 1 0.5"])
    with pytest.raises(ValueError, match=r"f\.tsv:1: expected 3 tab-separated fields, got 1"):
        read_wmt21_scores(fields, ["A"], 1)


def test_system_scores(tmp_path):
    path = _write(tmp_path, "sys.tsv", ["B\t2.5", "A\t1"])
    assert read_system_scores(path, ["A", "B"]).tolist() == [1.0, 2.5]
    with pytest.raises(ValueError, match=r"sys\.tsv:2: duplicate item 'B' \(first at 1\)"):
        read_system_scores(_write(tmp_path, "sys.tsv", ["B\t2.5", "B\t1"]), ["A", "B"])


def test_summeval_scores(tmp_path):
    records = [
        {"id": d, "system": s, "score": i}
        for i, (d, s) in enumerate([("d1", "M0"), ("d1", "M1"), ("d0", "M1"), ("d0", "M0")])
    ]
    path = _write(tmp_path, "s.jsonl", [json.dumps(r) for r in records])
    assert read_summeval_scores(path, ["d0", "d1"], ["M0", "M1"]).tolist() == [[3, 2], [0, 1]]
    with pytest.raises(ValueError, match=r"s\.jsonl: no score for \('d2', 'M0'\), \('d2', 'M1'\)"):
        read_summeval_scores(path, ["d0", "d1", "d2"], ["M0", "M1"])


def test_parse_scores_option():
    assert parse_scores_option(["a=x.tsv", "b=y=z.tsv"]) == {"a": "x.tsv", "b": "y=z.tsv"}
    with pytest.raises(ValueError, match="NAME=FILE"):
        parse_scores_option(["x.tsv"])
    with pytest.raises(ValueError, match="given twice"):
        parse_scores_option(["a=x", "a=y"])
