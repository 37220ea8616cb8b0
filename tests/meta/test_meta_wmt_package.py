"""WMT16-18 on WMT's metrics-task package (``nlgscore meta wmt18``), on packages written in the
official formats by ``tests/meta/wmt_package.py``: every reader against what was written, malformed
files refused naming the file and line, and every row against its reference definition (the
WMT18 report's Kendall's tau-like, scipy's Pearson, hybrids as Graham and Liu define them,
sacreBLEU's chrF beta 3 and BLEU intl)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

sacrebleu = pytest.importorskip("sacrebleu")

from wmt_package import SYSTEMS, write_package  # noqa: E402

from nlgscore.cli import main  # noqa: E402
from nlgscore.errors import ArgumentError, DataError  # noqa: E402
from nlgscore.meta.data.wmt_package import (  # noqa: E402
    find_package,
    metric_files,
    read_da_seg,
    read_da_sys,
    read_metric_scores,
    read_rr,
)
from nlgscore.meta.stats.wmt import hybrid_systems  # noqa: E402
from nlgscore.meta.tasks.wmt16_18 import HYBRID_SEED, wmt18, wmt_package  # noqa: E402


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    return write_package(tmp_path_factory.mktemp("wmt18") / "wmt18-metrics-task-package")


def _values(table):
    return {(r.dataset, r.metric, r.level, r.measure): r.value for r in table.rows}


def test_every_reader_gives_what_was_written(package):
    manual = package.root / "manual-evaluation"
    rr = read_rr(manual / "RR-seglevel.csv")
    assert {lp: [(p.sid, p.better, p.worse) for p in pairs] for lp, pairs in rr.items()} == package.rr
    assert read_da_seg(manual / "DA-seglevel.csv") == package.da_seg  # uedin+KIT gives both
    assert read_da_sys(manual / "DA-syslevel.csv") == package.da_sys
    files = metric_files(find_package(package.root, package.test_set))
    assert [(p.name, level) for p, level in files] == [("mine.seg.score.gz", "segment"), ("mine.sys.score", "system")]
    seg = read_metric_scores(files[0][0], "segment")
    assert {lp: seg["mine", lp] for _, lp in seg} == package.metric
    system = read_metric_scores(files[1][0], "system")
    assert {lp: {s: v for (s, _), v in system["mine", lp].items()} for _, lp in system} == package.metric_sys
    found = find_package(package.root, package.test_set)
    assert found.pairs() == ["cs-en", "de-en"] and sorted(found.outputs("de-en")) == sorted(SYSTEMS)


@pytest.mark.parametrize(
    "name, text, message",
    [
        (
            "RR-seglevel.csv",
            "DATA SID BETTER WORSE\nde-en newstest2018 3 A\n",
            r"RR-seglevel.csv:2: 4 fields, expected 5",
        ),
        (
            "RR-seglevel.csv",
            "DATA SID BETTER WORSE\nde-en newstest2018 x A B\n",
            r"RR-seglevel.csv:2: SID \(column 3\)",
        ),
        (
            "DA-seglevel.csv",
            "LP DATA SYSTEM SID HUMAN\nde-en n A 1 high\n",
            r"DA-seglevel.csv:2: HUMAN \(column 5\) is not",
        ),
        (
            "DA-seglevel.csv",
            "LP DATA SYSTEM SID HUMAN\nde-en n A 1 0.5\nde-en n A+B 1 0.2\n",
            r":3: de-en system A segment 1 has a second",
        ),
        ("DA-syslevel.csv", "LP HUMAN SYSTEM\nde-en nan A\n", r"DA-syslevel.csv:2: HUMAN \(column 2\) is 'nan'"),
        ("DA-syslevel.csv", "", r"DA-syslevel.csv: empty"),
    ],
)
def test_malformed_manual_files_are_refused_naming_file_and_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    reader = {"RR-seglevel.csv": read_rr, "DA-seglevel.csv": read_da_seg, "DA-syslevel.csv": read_da_sys}[name]
    with pytest.raises(DataError, match=message):
        reader(path)


def test_malformed_metric_scores_and_package_folders(tmp_path, package):
    path = tmp_path / "x.seg.score"
    path.write_text("m\tde-en\tnewstest2018\tA\t1\t0.5\nm\tde-en\tnewstest2018\tA\t2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"x.seg.score:2: 5 fields, expected at least 6"):
        read_metric_scores(path, "segment")
    path.write_text("m\tde-en\tnewstest2018\tA\t0.5\nm\tde-en\tnewstest2018\tA\t0.7\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"x.seg.score:2: m de-en A is scored twice"):
        read_metric_scores(path, "system")
    with pytest.raises(DataError, match="no manual-evaluation/ folder"):
        find_package(tmp_path, "newstest2018")
    (tmp_path / "manual-evaluation").mkdir()
    with pytest.raises(DataError, match="no txt/ folder"):
        find_package(tmp_path, "newstest2018")
    # a daRR pair naming a system without an output file is refused with its line
    broken = write_package(tmp_path / "broken")
    rr = broken.root / "manual-evaluation" / "RR-seglevel.csv"
    rr.write_text(rr.read_text() + "de-en newstest2018 2 ghost uedin\n", encoding="utf-8")
    lines = len(rr.read_text().splitlines())
    with pytest.raises(DataError, match=rf"RR-seglevel.csv:{lines}: system 'ghost' has no output file"):
        wmt18(broken.root, ["chrf"], pairs=["de-en"], bootstrap=0, hybrids=10)


def test_rows_equal_their_reference_definitions(package):
    table = wmt18(
        package.root,
        scores={"mine": str(package.root / "final-metric-scores/submissions-processed/mine.seg.score.gz")},
        bootstrap=0,
        hybrids=300,
    )
    values = _values(table)
    for lp in ("cs-en", "de-en"):
        metric, da_seg, da_sys = package.metric[lp], package.da_seg[lp], package.da_sys[lp]
        # daRR Kendall's tau-like, WMT18 Eq. 1: metric ties discordant
        concordant = sum(metric[b_, sid] > metric[w, sid] for sid, b_, w in ((s, b, w) for s, b, w in package.rr[lp]))
        total = len(package.rr[lp])
        assert values[f"wmt18-{lp}", "mine", "segment", "tau"] == (concordant - (total - concordant)) / total
        keys = sorted(da_seg)
        expected = scipy_stats.pearsonr([da_seg[k] for k in keys], [metric[k] for k in keys]).statistic
        assert values[f"wmt18-{lp}", "mine", "segment", "pearson"] == pytest.approx(expected, abs=1e-12)
        rated = sorted(da_sys)  # the system score is the mean of the segments without a .sys.score
        mean = [np.mean([metric[s, i] for i in range(1, 9)]) for s in rated]
        expected = scipy_stats.pearsonr([da_sys[s] for s in rated], mean).statistic
        assert values[f"wmt18-{lp}", "mine", "system", "pearson"] == pytest.approx(expected, abs=1e-12)
        # hybrids of the systems with DA-syslevel scores (all of them have DA segments here)
        human = np.array([[da_seg.get((s, i), np.nan) for i in range(1, 9)] for s in sorted(SYSTEMS) if s in da_sys])
        scores = np.array([[metric[s, i] for i in range(1, 9)] for s in sorted(SYSTEMS) if s in da_sys])
        h, m = hybrid_systems(human, scores, 300, seed=HYBRID_SEED)
        expected = scipy_stats.pearsonr(h, m).statistic
        assert values[f"wmt18-{lp}", "mine", "hybrid", "pearson"] == pytest.approx(expected, abs=1e-12)
    assert any("wmt18-de-en: 8 segments, 5 systems (4 with DA-syslevel scores)" in n for n in table.notes)


def test_baselines_are_sacrebleus_with_the_reports_settings(package):
    table = wmt_package("wmt18", package.root, pairs=["de-en"], baselines=True, bootstrap=0, hybrids=50)
    values = _values(table)
    refs, hyps, rr = package.refs["de-en"], package.hyps["de-en"], package.rr["de-en"]
    chrf = {s: [sacrebleu.sentence_chrf(h, [r], beta=3).score for h, r in zip(hyps[s], refs)] for s in SYSTEMS}
    concordant = sum(chrf[b][sid - 1] > chrf[w][sid - 1] for sid, b, w in rr)
    assert values["wmt18-de-en", "chrf:beta=3", "segment", "tau"] == (2 * concordant - len(rr)) / len(rr)
    rated = sorted(package.da_sys["de-en"])
    bleu = [sacrebleu.corpus_bleu(hyps[s], [refs], tokenize="intl").score for s in rated]
    expected = scipy_stats.pearsonr([package.da_sys["de-en"][s] for s in rated], bleu).statistic
    assert values["wmt18-de-en", "bleu:intl", "system", "pearson"] == pytest.approx(expected, abs=1e-12)
    ter = [sacrebleu.corpus_ter(hyps[s], [refs]).score for s in rated]  # an error rate: negated
    expected = scipy_stats.pearsonr([package.da_sys["de-en"][s] for s in rated], -np.array(ter)).statistic
    assert values["wmt18-de-en", "ter", "system", "pearson"] == pytest.approx(expected, abs=1e-12)
    assert {m for _, m, _, _ in values} == {"sentbleu", "bleu:intl", "chrf:beta=3", "chrf:beta=3:word_order=1", "ter"}


def test_the_command_nested_texts_top_k_and_select_model(tmp_path, capsys):
    written = write_package(tmp_path / "wmt17-metrics-task-package", year="wmt17", nested=True, seed=4)
    out = tmp_path / "out.json"
    seg = written.root / "final-metric-scores/submissions-processed/mine.seg.score.gz"
    sys_file = written.root / "final-metric-scores/submissions-processed/mine.sys.score"
    code = main(
        ["meta", "wmt17", "--data", str(written.root), "--scores", f"mine={seg},{sys_file}", "--metric", "chrf"]
        + ["--lp", "de-en", "--bootstrap", "20", "--hybrids", "100", "--top-k", "3", "--no-cache", "--quiet"]
        + ["--json-out", str(out)]
    )
    rows = json.loads(out.read_text())["results"]
    assert code == 0
    got = {(r["metric"], r["level"], r["measure"]): r["value"] for r in rows}
    da_sys = written.da_sys["de-en"]
    best = sorted(sorted(da_sys, key=lambda s: -da_sys[s])[:3])
    expected = scipy_stats.pearsonr([da_sys[s] for s in best], [written.metric_sys["de-en"][s] for s in best])
    assert got["mine", "system", "pearson-top3"] == pytest.approx(expected.statistic, abs=1e-12)
    # daRR tau over the pairs whose two systems are both among the top 3 (metric ties discordant)
    metric = written.metric["de-en"]
    kept = [(sid, b, w) for sid, b, w in written.rr["de-en"] if b in best and w in best]
    concordant = sum(metric[b, sid] > metric[w, sid] for sid, b, w in kept)
    assert kept and got["mine", "segment", "tau-top3"] == (2 * concordant - len(kept)) / len(kept)
    assert ("mine", "segment", "pearson-top3") not in got  # DA segment Pearson has no top-k row
    assert all(r["ci_low"] is not None for r in rows if r["measure"] == "tau")
    capsys.readouterr()  # the first run's table
    code = main(
        ["meta", "select-model", "wmt17", "--data", str(written.root), "--metric", "chrf", "--lp", "de-en"]
        + ["--hybrids", "100", "--sample-size", "10", "--repeats", "20", "--no-cache", "--quiet", "--json"]
    )
    result = json.loads(capsys.readouterr().out)["results"]
    assert code == 0 and [r["measure"] for r in result] == ["hits@1", "mrr", "diff"]
    assert all(0 <= r["value"] <= 1 for r in result if r["measure"] in ("hits@1", "mrr"))


def williams_reference(human, a, b):
    """The Williams test as the WMT18 report uses it (Graham and Baldwin 2014), transcribed:
    absolute correlations, df = n - 3, one-sided."""
    r12, r13 = scipy_stats.pearsonr(human, a).statistic, scipy_stats.pearsonr(human, b).statistic
    r23 = scipy_stats.pearsonr(a, b).statistic * np.sign(r12) * np.sign(r13)
    r12, r13, n = abs(r12), abs(r13), len(human)
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (
        (r12 - r13)
        * np.sqrt((n - 1) * (1 + r23))
        / np.sqrt(2 * k * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
    )
    return t, scipy_stats.t.sf(t, n - 3)


def test_williams_notes_on_hybrids_follow_the_reports_formula(package, tmp_path):
    da_seg = package.da_seg["de-en"]
    # "close": the DA scores themselves where judged (else 0) plus a little noise; "mine": the package's
    rng = np.random.default_rng(1)
    close = {(s, i): da_seg.get((s, i), 0.0) + float(rng.normal(scale=0.05)) for s in SYSTEMS for i in range(1, 9)}
    path = tmp_path / "close.seg.score"
    path.write_text("".join(f"close\tde-en\tnewstest2018\t{s}\t{i}\t{v!r}\n" for (s, i), v in close.items()))
    mine = package.root / "final-metric-scores/submissions-processed/mine.seg.score.gz"
    table = wmt18(
        package.root, scores={"close": str(path), "mine": str(mine)}, pairs=["de-en"], bootstrap=0, hybrids=400
    )
    rows = [s for s in sorted(SYSTEMS) if s in package.da_sys["de-en"]]
    human = np.array([[da_seg.get((s, i), np.nan) for i in range(1, 9)] for s in rows])
    hybrids = {
        name: hybrid_systems(
            human, np.array([[scores[s, i] for i in range(1, 9)] for s in rows]), 400, seed=HYBRID_SEED
        )
        for name, scores in (("close", close), ("mine", package.metric["de-en"]))
    }
    t, p = williams_reference(hybrids["close"][0], hybrids["close"][1], hybrids["mine"][1])
    assert p < 0.05  # the test data make the difference clear
    assert (
        f"  close significantly beats mine on wmt18-de-en hybrid level (Williams t={t:.3f}, p={p:.3f})" in table.notes
    )


def test_official_metrics_are_read_from_final_metric_scores(package):
    scores = package.root / "final-metric-scores" / "submissions-processed"
    given = f"{scores / 'mine.seg.score.gz'},{scores / 'mine.sys.score'}"
    by_path = _values(wmt18(package.root, scores={"mine": given}, bootstrap=0, hybrids=50))
    by_name = wmt18(package.root, official=["mine"], bootstrap=0, hybrids=50)
    assert _values(by_name) == by_path
    rated = sorted(package.da_sys["de-en"])  # the .sys.score's values, not the segment means
    expected = scipy_stats.pearsonr(
        [package.da_sys["de-en"][s] for s in rated], [package.metric_sys["de-en"][s] for s in rated]
    ).statistic
    assert by_path["wmt18-de-en", "mine", "system", "pearson"] == pytest.approx(expected, abs=1e-12)
    with pytest.raises(
        ArgumentError, match=r"--official BEER: no final-metric-scores .seg.score file holds it; it holds \['mine'\]"
    ):
        wmt18(package.root, official=["BEER"], bootstrap=0)
