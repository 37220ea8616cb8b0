"""The WMT24/WMT25 readers on folders and files built in the test: WMT's ESA CSVs (upstream filtering,
latest rating per annotator, mean over annotators, CANARY line), WMT24 MQM TSVs (WMT's weights),
mt-metrics-eval's folder layout (None, locale pairs, standard gold and reference, WMT24++ without
gold) and WMT25's paragraph JSONL; every malformed input is refused naming the file and line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.data.esa import read_esa
from nlgscore.meta.data.mqm_tsv import read_mqm_tsv
from nlgscore.meta.data.paragraphs import read_paragraphs
from nlgscore.meta.data.wmt_sets import load_wmt, read_human_scores, standard

SYSTEMS = ("S1", "S2", "S3")
SRC = ["CANARY GUID x", "one", "two", "three", "four"]
DOCS = ["canary", "d1", "d1", "d2", "d2"]


def _texts(root: Path, lp: str = "en-cs", systems=SYSTEMS, refs=("refA",)) -> Path:
    files = {f"sources/{lp}.txt": SRC, f"documents/{lp}.docs": [f"news\t{d}" for d in DOCS]}
    files.update({f"references/{lp}.{r}.txt": [f"{r} {s}" for s in SRC] for r in refs})
    files.update({f"system-outputs/{lp}/{s}.txt": [f"{s} {k}" for k in SRC] for s in systems})
    for name, lines in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _row(annotator="a1", system="S1", line=1, kind="TGT", score=80, doc=None, t_end=10.0, src="eng", tgt="ces"):
    return f"{annotator},{system},{line},{kind},{src},{tgt},{score},{doc or DOCS[line]},False,[],1.0,{t_end}"


def _esa_folder(tmp_path: Path, rows) -> Path:
    folder = tmp_path / "wmt24"
    _texts(folder / "txt")
    (folder / "humeval").mkdir(parents=True)
    (folder / "humeval" / "esa_generalMT2024_wave2.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def test_esa_filters_averages_and_keeps_the_latest_rating(tmp_path):
    rows = [
        _row("a1", "S1", 1, score=80),
        _row("a2", "S1", 1, score=60),  # mean over annotators: 70
        _row("a1", "S1", 2, score=10, t_end=5.0),
        _row("a1", "S1", 2, score=30, t_end=9.0),  # latest: 30
        _row("a1", "S2", 1, kind="BAD", score=0, doc="d1#bad"),  # quality control
        _row("a1", "S2", 2, score=0, doc="d1#dup"),
        _row("a1", "S2", 3, score=0, doc="d2#incomplete"),
        _row("a1", "S2", 1, score=50),
        _row("a1", "S3", 1, score=40),
        _row("a1", "S3", 2, score=90),
        "a1,ende-tutorial1,1000001,TGT,eng,ces,0,ende-tutorial1,False,[],1,2",  # tutorial
        _row("a1", "S1", 1, score=5, src="eng", tgt="deu"),  # another pair
    ]
    seg = read_esa(
        _esa_folder(tmp_path, rows) / "humeval" / "esa_generalMT2024_wave2.csv", "en-cs", 5, set(SYSTEMS), DOCS
    )
    assert seg["S1"][:3].tolist() == [100.0, 70.0, 30.0]  # the CANARY line scores 100, as WMT's conversion writes
    assert seg["S2"][1] == 50.0 and np.isnan(seg["S2"][2]) and np.isnan(seg["S2"][3])
    data = load_wmt(tmp_path / "wmt24")
    assert data.systems == list(SYSTEMS) and data.items == 3  # lines 0-2: the rated ones
    assert data.refs[0] == ["refA CANARY GUID x", "refA one", "refA two"]
    assert data.human["system"].tolist() == [50.0, 50.0, 65.0]  # means over rated segments, CANARY left out


@pytest.mark.parametrize(
    "row, message",
    [
        ("a1,S1,1,TGT,eng,ces,80", "12 comma-separated fields"),
        (_row(line=9, doc="d2"), "line id '9' is not a segment line"),
        (_row(line=0, doc="canary"), "line id '0'"),
        (_row(score=120), "outside 0-100"),
        (_row(score="x"), "ESA score is not a number"),
        (_row(doc="d2"), "is not the document of line 1"),
        (_row(system="S9"), "system 'S9' has no output file"),
        (_row(kind="SRC"), "TGT or BAD"),
        (_row(src="xxx"), "unknown language code"),
    ],
)
def test_esa_refuses_malformed_rows_naming_file_and_line(tmp_path, row, message):
    folder = _esa_folder(tmp_path, [_row("a1", "S1", 1), row])
    with pytest.raises(DataError, match=message) as err:
        load_wmt(folder)
    assert "esa_generalMT2024_wave2.csv:2:" in str(err.value)


def test_mqm_tsv_weights_and_refusals(tmp_path):
    path = tmp_path / "mqm_generalMT2024_encs.tsv"
    rows = [
        "system\tdoc\tglobalSegId\trater\tseverity\tcategory",
        "S1\td1\t1\tr1\tmajor\tAccuracy/Mistranslation",
        "S1\td1\t1\tr1\tminor\tFluency/Punctuation",
        "S1\td1\t1\tr2\tcritical\tAccuracy/Omission",
        "S1\td1\t2\tr1\tminor\tNon-translation!",
        "S1\td1\t3\tr1\tminor\tStyle/Awkward",
        "S2\td1\t1\tr1\tNo-error\tNo-error",
        "S2\td1\t2\tr1\tmajor\tSource issue",
        "S3\td1\t1\tr1\tneutral\tOther",
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    seg = read_mqm_tsv(path, 5, set(SYSTEMS))
    assert seg["S1"][1:4].tolist() == [(-5.1 + -5) / 2, -25.0, -1.0] and math.isnan(seg["S1"][0])
    assert seg["S2"][1:3].tolist() == [0.0, 0.0] and seg["S3"][1] == 0.0
    for bad, message in (
        ("S1\td1\t7\tr1\tminor\tStyle", "globalSegId '7'"),
        ("S1\td1\t1\tr1\tsevere\tStyle", "unknown MQM severity"),
        ("S9\td1\t1\tr1\tminor\tStyle", "system 'S9'"),
        ("S1\td1\t1", "3 tab-separated fields"),
    ):
        path.write_text("\n".join(rows[:2] + [bad]) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=message) as err:
            read_mqm_tsv(path, 5, set(SYSTEMS))
        assert f"{path}:3:" in str(err.value)
    path.write_text("system\tdoc\trater\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"mqm_generalMT2024_encs.tsv:1: the header lacks"):
        read_mqm_tsv(path, 5, set(SYSTEMS))


def test_mqm_pair_of_wmt_folder_uses_the_mqm_file(tmp_path):
    folder = tmp_path / "wmt24"
    _texts(folder / "txt", "en-de", refs=("refA", "refB"))
    (folder / "humeval").mkdir()
    rows = ["system\tdoc\tglobalSegId\trater\tseverity\tcategory"] + [
        f"{s}\td1\t{k}\tr1\t{sev}\tAccuracy" for s, sev in zip(SYSTEMS, ("minor", "major", "No-error")) for k in (1, 2)
    ]
    (folder / "humeval" / "mqm_generalMT2024_ende.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = load_wmt(folder)
    assert standard("wmt24", "en-de") == ("mqm", "refB") and data.reference == "B"  # the standard en-de reference
    assert data.human["segment"][:, 1].tolist() == [-1.0, -5.0, 0.0] and data.items == 2


def _mtme_tree(tmp_path: Path, test_set: str, lp: str, gold=None, rows=None) -> Path:
    root = tmp_path / "mtme"
    _texts(root / test_set, lp, refs=("refA", "posteditA"))
    if gold is not None:
        (root / test_set / "human-scores").mkdir()
        lines = rows or [f"{s}\t{v}" for s in SYSTEMS for v in ("100.0", "None", 80 - SYSTEMS.index(s), "None", 50)]
        (root / test_set / "human-scores" / f"{lp}.{gold}.seg.score").write_text("\n".join(lines) + "\n")
    return root


def test_mtme_layout_locale_pairs_none_and_standard_gold(tmp_path):
    root = _mtme_tree(tmp_path, "wmt25", "en-cs_CZ", "esa-human1")
    data = load_wmt(root, test_set="wmt25")
    assert data.name == "wmt25-en-cs_CZ" and data.items == 3 and data.reference == "A"
    assert data.human["segment"][0].tolist() == [100.0, 80.0, 50.0]
    assert load_wmt(root / "wmt25", test_set="wmt25").items == 3  # the test-set folder itself
    with pytest.raises(DataError, match="no 'esa' human scores for en-cs_CZ"):
        load_wmt(root, test_set="wmt25", gold="esa")


def test_wmt24pp_has_no_gold(tmp_path):
    root = _mtme_tree(tmp_path, "wmt24pp", "en-cs_CZ")
    assert standard("wmt24pp", "en-cs_CZ") == (None, "posteditA")
    with pytest.raises(DataError, match="WMT24\\+\\+ is post-edits only"):
        load_wmt(root, test_set="wmt24pp")


@pytest.mark.parametrize(
    "bad, message",
    [
        ("S1\tmany", "not a number or None"),
        ("S1\tnan", "NaN or infinite"),
        ("S1 100", "expected <system><TAB><score or None>"),
    ],
)
def test_mtme_human_scores_refused_naming_file_and_line(tmp_path, bad, message):
    path = tmp_path / "en-cs.esa.seg.score"
    path.write_text(f"S1\t100.0\n{bad}\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as err:
        read_human_scores(path, 2)
    assert f"{path}:2:" in str(err.value)
    path.write_text("S1\t1\nS1\t2\nS1\t3\n", encoding="utf-8")
    with pytest.raises(DataError, match=f"{path}:3: system 'S1' has more than 2"):
        read_human_scores(path, 2)


def test_text_layout_refuses_misaligned_files(tmp_path):
    root = _mtme_tree(tmp_path, "wmt24", "en-cs", "esa")
    (root / "wmt24" / "system-outputs" / "en-cs" / "S2.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"S2.txt:3: system output file has 2 lines, the sources 5"):
        load_wmt(root)
    (root / "wmt24" / "system-outputs" / "en-cs" / "S2.txt").write_text("\n".join(SRC) + "\n", encoding="utf-8")
    (root / "wmt24" / "documents" / "en-cs.docs").write_text("news d1\n" * 5, encoding="utf-8")
    with pytest.raises(DataError, match=r"en-cs.docs:1: expected <domain><TAB><document>"):
        load_wmt(root)


def _paragraphs(tmp_path: Path, records) -> Path:
    path = tmp_path / "wmt25-genmt-humeval.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def _record(doc="en-cs_CZ_#_news_#_d1", k=0, scores=None):
    return {
        "doc_id": doc,
        "src_text": f"src {k}",
        "tgt_text": {"refA": f"ref {k}", **{s: f"{s} {k}" for s in SYSTEMS}},
        "scores": scores
        if scores is not None
        else {s: {"human1": 90 - 10 * i + k, "errors1": []} for i, s in enumerate(SYSTEMS)},
    }


def test_wmt25_paragraphs(tmp_path):
    records = [
        _record(k=0),
        _record(k=1, scores={"S1": {"human1": 50, "human2": 70, "errors1": []}, "S2": {}}),
        _record("en-ja_JP_#_news_#_d9", 0),
    ]
    texts, seg, _ = read_paragraphs(_paragraphs(tmp_path, records), "en-cs_CZ")
    assert texts.src == ["src 0", "src 1"] and seg["S1"].tolist() == [90.0, 60.0] and math.isnan(seg["S2"][1])
    data = load_wmt(tmp_path / "wmt25-genmt-humeval.jsonl", "en-cs_CZ", test_set="wmt25")
    assert data.systems == list(SYSTEMS) and data.items == 2
    with pytest.raises(ArgumentError, match="holds pairs"):
        load_wmt(tmp_path / "wmt25-genmt-humeval.jsonl", test_set="wmt25")


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "not JSON"),
        ({"doc_id": "x"}, "has the fields"),
        (_record(scores={"S9": {"human1": 1}}), "system 'S9' is rated"),
        (_record(scores={"S1": {"human1": "good"}}), "not a finite number"),
        (_record("d1"), r"doc_id 'd1' does not start with a language pair and '_#_': it must look like '<src>-<tgt>"),
        (_record("news_#_d1"), "doc_id 'news_#_d1' does not start with a language pair"),
        (_record("_#_news_#_d1"), "doc_id '_#_news_#_d1' does not start"),
        (_record(17), "doc_id 17 does not start"),
    ],
)
def test_wmt25_paragraphs_refused_naming_file_and_line(tmp_path, bad, message):
    path = _paragraphs(tmp_path, [_record(k=0), bad])
    with pytest.raises(DataError, match=message) as err:
        read_paragraphs(path, "en-cs_CZ")
    assert f"{path}:2:" in str(err.value)


def test_wmt25_doc_id_without_pair_is_refused_not_made_a_pair(tmp_path, capsys):
    """An id without ``<pair>_#_`` used to become a language pair of its own, averaged into avg-corr."""
    from nlgscore.meta.data.wmt_sets import pairs_in

    path = _paragraphs(tmp_path, [_record(k=0), _record("en-ja_JP_#_news_#_d9"), _record("d7", k=1)])
    with pytest.raises(DataError, match=r":3: doc_id 'd7' does not start with a language pair") as err:
        pairs_in(path, "wmt25")
    assert str(path) in str(err.value) and "e.g. 'en-cs_CZ_#_news_#_doc1'" in str(err.value)
    with pytest.raises(DataError, match=":3: doc_id 'd7'"):
        load_wmt(path, "en-ja_JP", test_set="wmt25")
    from nlgscore.cli import main

    assert main(["meta", "wmt25", "--data", str(path), "--metric", "chrf", "--no-cache", "--quiet"]) == 2
    assert f"{path}:3: doc_id 'd7'" in capsys.readouterr().err


def test_esa_waves_are_pooled_before_the_mean(tmp_path):
    """convert_to_metrics.py concatenates the waves: a segment's mean is over every rating of every wave
    (here (80 + 60 + 10) / 3, not the mean of the waves' means)."""
    folder = _esa_folder(
        tmp_path,
        [
            _row("a1", "S1", 1, score=80),
            _row("a2", "S1", 1, score=60),
            _row("a1", "S2", 1, score=50),
            _row("a1", "S3", 1, score=40),
        ],
    )
    (folder / "humeval" / "esa_generalMT2024_wave3.csv").write_text(
        "\n".join([_row("a1", "S1", 1, score=10), _row("a9", "S1", 1, score=99, src="eng", tgt="deu")]) + "\n",
        encoding="utf-8",
    )
    data = load_wmt(folder)
    assert data.human["segment"][0].tolist() == [100.0, 50.0]
    assert "esa_generalMT2024_wave2.csv, esa_generalMT2024_wave3.csv" in data.notes[0]
