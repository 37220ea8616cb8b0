"""``nlgscore score -i``: a table that cannot be read is one line naming the file (exit 2), never
"a bug in nlgscore"; a CSV field longer than the csv module's default limit is
read; a header naming a column twice is refused naming the column (it was scored silently, with
the last of the two columns' texts)."""

from __future__ import annotations

import csv
import json

import pytest

from nlgscore.cli import main

SPEC = "bertscore:minilm:L2"


def run(capsys, *argv: str):
    status = main(["score", SPEC, *argv, "--no-progress"])
    out = capsys.readouterr()
    return status, out.out, out.err


def assert_error(capsys, argv, *parts: str) -> None:
    status, _, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and "bug" not in err, err
    for part in parts:
        assert part in lines[0], lines[0]


@pytest.fixture
def good_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "good.parquet"
    pq.write_table(
        pa.table({"prediction": [f"a cat {k}" for k in range(200)], "reference": [f"the cat {k}" for k in range(200)]}),
        path,
    )
    return path


def test_an_empty_parquet_file_is_an_error_naming_it(tmp_path, capsys):
    path = tmp_path / "empty.parquet"
    path.write_bytes(b"")
    assert_error(capsys, ["-i", str(path)], str(path), "not a readable Parquet file")


def test_a_text_file_named_parquet_is_an_error_naming_it(tmp_path, capsys):
    path = tmp_path / "text.parquet"
    path.write_text("prediction,reference\na cat,the cat\n", encoding="utf-8")
    assert_error(capsys, ["-i", str(path)], str(path), "not a readable Parquet file")


def test_a_truncated_parquet_file_is_an_error_naming_it(tmp_path, good_parquet, capsys):
    path = tmp_path / "cut.parquet"
    data = good_parquet.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    assert_error(capsys, ["-i", str(path)], str(path), "not a readable Parquet file")


def test_a_csv_field_over_the_csv_modules_default_limit_is_read(tmp_path, capsys):
    long_text = "word " * 50_000  # 250,000 characters: over csv's 131,072 default
    path = tmp_path / "long.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [("prediction", "reference"), ("a short one", "a short one"), (long_text, "words")]
        )
    status, out, err = run(capsys, "-i", str(path), "--json")
    assert status == 0, err
    scores = json.loads(out)["f1"]
    assert len(scores) == 2 and scores[0] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_a_header_with_a_repeated_column_name_is_refused_naming_it(tmp_path, capsys, suffix, sep):
    path = tmp_path / f"dup{suffix}"
    path.write_text(
        sep.join(["prediction", "reference", "reference"]) + "\n" + sep.join(["a cat", "the cat", "a dog"]) + "\n",
        encoding="utf-8",
    )
    assert_error(capsys, ["-i", str(path)], f"{path}:1", "column 'reference' appears 2 times")
