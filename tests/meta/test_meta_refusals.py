"""Meta-evaluation: every refusal names its argument or its file:line, and an interrupted
run keeps the finished chunks of a model metric (items 4, 8 and the meta parts of 9)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("sacrebleu")

from mqm_folder import mqm_folder
from terminal import run_on_terminal

from nlgscore.cli import main
from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError
from nlgscore.meta import tasks
from nlgscore.meta.engine import ScoreCache, Scorers
from nlgscore.meta.report import json_text
from nlgscore.meta.tasks.human_scores import mqm

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
PAIR = {
    "id": 0,
    "lp": "xx-en",
    "src": "s",
    "ref": "the cat sat",
    "better": {"system": "A", "text": "the cat sat"},
    "worse": {"system": "B", "text": "a dog"},
}
DOC = {
    "id": "d1",
    "src": "a text",
    "refs": ["a b"],
    "systems": {"A": {"text": "a", "scores": {"coherence": 1}}, "B": {"text": "b", "scores": {"coherence": 2}}},
}


def _jsonl(path: Path, *records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture()
def data(tmp_path):
    _jsonl(tmp_path / "wmt-xx-en.jsonl", PAIR, dict(PAIR, id=1))
    _jsonl(tmp_path / "sum-summeval.jsonl", DOC)
    mqm_folder(tmp_path / "mqm")
    return tmp_path


def _cli(args, capsys):
    code = main(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("task", ["wmt19", "wmt21", "summeval", "mqm"])
def test_negative_seed_is_refused_naming_seed_in_every_meta_task(task, data, capsys):
    folder = {"wmt21": SHARED / "wmt21-de-en", "mqm": data / "mqm"}.get(task, data)
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    code, err = _cli(
        ["meta", task, "--data", str(folder), "--metric", "chrf", "--seed", "-1", "--no-cache", "--quiet"], capsys
    )
    assert code == 2 and "seed must be an integer >= 0 (--seed), got -1" in err
    assert "non-negative" not in err and "bug" not in err


@pytest.mark.parametrize("metric", ["chrf", "sentbleu"])
def test_negative_seed_and_absurd_samples_are_refused_by_compare(metric, tmp_path, capsys):
    for name, lines in (("r", "a b\nc d\n"), ("c1", "a b\nc e\n"), ("c2", "a x\nc d\n")):
        (tmp_path / f"{name}.txt").write_text(lines, encoding="utf-8")
    base = [
        "compare",
        "-r",
        str(tmp_path / "r.txt"),
        "-c",
        str(tmp_path / "c1.txt"),
        "-c",
        str(tmp_path / "c2.txt"),
        "--metric",
        metric,
    ]
    code, err = _cli(base + ["--seed", "-1"], capsys)
    assert code == 2 and "seed must be an integer >= 0 (--seed), got -1" in err
    code, err = _cli(base + ["--n-samples", "1000000000"], capsys)
    assert code == 2 and "n_samples must be at most 100000 (--n-samples)" in err


def test_absurd_resamples_are_refused_before_any_scoring(data, capsys):
    code, err = _cli(
        [
            "meta",
            "mqm",
            "--data",
            str(data / "mqm"),
            "--metric",
            "chrf",
            "--permutations",
            "1000000000",
            "--no-cache",
            "--quiet",
        ],
        capsys,
    )
    assert code == 2 and "permutations must be at most 100000 (--permutations), got 1000000000" in err
    with pytest.raises(ArgumentError, match=r"bootstrap must be at most 100000 \(--bootstrap\)"):
        tasks.wmt19(data, metrics=["chrf"], bootstrap=10**9)
    with pytest.raises(ArgumentError, match="permutations must be an integer >= 0"):
        mqm(data / "mqm", ["chrf"], permutations=-5)


def test_mqm_without_a_folder_names_folder():
    with pytest.raises(ArgumentError, match="folder is required"):
        mqm(None, ["chrf"])


def test_wmt19_limit_too_small_for_the_bootstrap_names_limit(data):
    with pytest.raises(
        ArgumentError, match=r"limit=1 leaves 1 daRR pair\(s\) of xx-en; the bootstrap needs at least 2"
    ):
        tasks.wmt19(data, metrics=["chrf"], limit=1)
    assert tasks.wmt19(data, metrics=["chrf"], limit=1, bootstrap=0).rows[0].value == 1.0
    with pytest.raises(ArgumentError, match=r"limit=1 leaves 1 document\(s\)"):
        tasks.summeval(data, metrics=["chrf"], limit=1)


@pytest.mark.parametrize(
    "record, message",
    [
        (dict(PAIR, ref=None), r"wmt-xx-en.jsonl:1: field 'ref' must be a string, got None"),
        (
            dict(PAIR, better={"system": "A", "text": 5}),
            r"wmt-xx-en.jsonl:1 \(better\): field 'text' must be a string, got 5",
        ),
        (dict(PAIR, src=["a"]), r"wmt-xx-en.jsonl:1: field 'src' must be a string"),
    ],
)
def test_bad_darr_records_name_file_and_line(record, message, tmp_path):
    _jsonl(tmp_path / "wmt-xx-en.jsonl", record)
    with pytest.raises(DataError, match=message):
        tasks.wmt19(tmp_path, metrics=["chrf"], bootstrap=0)


@pytest.mark.parametrize(
    "value, message",
    [
        ("high", "human score must be a number, got 'high'"),
        (float("nan"), r"human score is nan \(NaN or infinite\)"),
        (True, "human score must be a number, got True"),
    ],
)
def test_bad_summeval_human_scores_name_file_and_line(value, message, tmp_path):
    bad = json.loads(json.dumps(DOC))
    bad["systems"]["B"]["scores"]["coherence"] = value
    _jsonl(tmp_path / "sum-summeval.jsonl", DOC, bad)
    with pytest.raises(DataError, match=r"sum-summeval.jsonl:2 \(system B\), coherence: " + message):
        tasks.summeval(tmp_path, metrics=["chrf"], bootstrap=0)


def test_summeval_null_reference_and_numeric_summary_name_file_and_line(tmp_path):
    _jsonl(tmp_path / "sum-summeval.jsonl", dict(DOC, refs=[None]))
    with pytest.raises(DataError, match=r"sum-summeval.jsonl:1: refs must be a non-empty list of reference texts"):
        tasks.summeval(tmp_path, metrics=["chrf"], bootstrap=0)
    numeric = json.loads(json.dumps(DOC))
    numeric["systems"]["A"]["text"] = 7
    _jsonl(tmp_path / "sum-summeval.jsonl", numeric)
    with pytest.raises(DataError, match=r"sum-summeval.jsonl:1 \(system A\): field 'text' must be a string, got 7"):
        tasks.summeval(tmp_path, metrics=["chrf"], bootstrap=0)


def test_wmt21_and_mqm_score_entries_of_any_tuple_shape(tmp_path):
    folder = SHARED / "wmt21-de-en"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    export = tmp_path / "export"
    export.mkdir()
    direct = tasks.wmt21(folder, metrics=["chrf"], limit=30, bootstrap=0, export_scores=export)
    seg = str(next(export.glob("chrf-*.seg.score")))
    one = tasks.wmt21(folder, scores={"chrf": (seg,)}, limit=30, bootstrap=0)
    assert [r.value for r in one.rows if r.level == "segment"] == [r.value for r in direct.rows if r.level == "segment"]
    for bad in ((seg, seg, seg), (), (3,), 3):
        with pytest.raises(ArgumentTypeError, match=r"scores\['mine'\] must be a score file, 'SEG,SYS' or a"):
            tasks.wmt21(folder, scores={"mine": bad}, limit=30, bootstrap=0)
        with pytest.raises(ArgumentTypeError, match=r"scores\['mine'\] must be a score file"):
            mqm(tmp_path, scores={"mine": bad})
    with pytest.raises(ArgumentTypeError, match=r"scores\['mine'\] must be a score file path"):
        tasks.wmt19(tmp_path, scores={"mine": ("a.jsonl",)})


class _Interrupting:
    """A real loaded scorer whose compute raises KeyboardInterrupt (standing in for Ctrl-C) once
    ``allowed`` calls finished; it counts the items each call scores."""

    def __init__(self, scorer, allowed):
        self._scorer, self.allowed, self.items = scorer, allowed, []

    def __getattr__(self, name):
        return getattr(self._scorer, name)

    def compute(self, predictions, **kwargs):
        if len(self.items) >= self.allowed:
            raise KeyboardInterrupt
        self.items.append(len(predictions))
        return self._scorer.compute(predictions, **kwargs)


def test_interrupted_model_metric_keeps_finished_chunks_and_the_rerun_scores_only_the_rest(tmp_path, kernel):
    folder, spec, chunk = mqm_folder(tmp_path / "mqm"), "bertscore:minilm:L2", 3
    cache = tmp_path / "cache"

    class Watched(Scorers):
        def __init__(self, allowed):
            super().__init__(cache=ScoreCache(cache), chunk=chunk)
            self.allowed = allowed

        def _scorer(self, name):
            if name not in self._loaded:
                self._loaded[name] = _Interrupting(super()._scorer(name), self.allowed)
            return self._loaded[name]

    first = Watched(allowed=2)
    with pytest.raises(KeyboardInterrupt):
        mqm(folder, [spec], permutations=0, scorers=first)
    assert first._loaded[spec].items == [chunk, chunk]  # two chunks finished before the interrupt
    second = Watched(allowed=10**6)
    resumed = mqm(folder, [spec], permutations=0, scorers=second)
    distinct = 16  # 4 systems x 4 lines, every (output, reference) distinct
    assert sum(second._loaded[spec].items) == distinct - 2 * chunk  # only what was missing
    assert second.computed == -(-(distinct - 2 * chunk) // chunk)
    whole = mqm(folder, [spec], permutations=0)  # no cache: one call over every item
    # the same bytes: an item's score does not depend on the chunk it was scored in
    assert json_text(resumed.rows) == json_text(whole.rows) and str(resumed) == str(whole)


def test_an_interrupted_progress_bar_stays_where_the_work_stopped():
    """On a terminal (where bars are drawn): an interrupted run's bar stays at the items done, a
    finished one shows them all."""
    script = """
from nlgscore.backend.progress import ItemProgress
bar = ItemProgress(10, enabled=True, desc="test")
try:
    try:
        bar(1, 4)
        raise KeyboardInterrupt
    finally:
        bar.close()
except KeyboardInterrupt:
    pass
done = ItemProgress(10, enabled=True, desc="test")
done(1, 4)
done.close()
print(bar.position, bar.bar.n, done.position, done.bar.n)
"""
    code, out, _ = run_on_terminal([sys.executable, "-c", script], timeout=120)
    assert code == 0 and out.split() == [b"2", b"2", b"10", b"10"], out
