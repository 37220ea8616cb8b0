"""End-to-end CLI runs with chrF on tiny hand-made files (nlgscore compare / nlgscore meta)."""

import json

import pytest

pytest.importorskip("sacrebleu")

from nlgscore.cli import main

REFS = [
    "the cat sat on the mat",
    "a dog barked loudly",
    "it is raining today",
    "we went home early",
    "the sun is bright",
    "she reads a book",
]
GOOD = REFS
BAD = ["cats", "noise", "weather", "house", "star", "paper"]


def _files(tmp_path):
    paths = {}
    for name, lines in (("refs", REFS), ("good", GOOD), ("bad", BAD)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def test_compare_bootstrap_json(tmp_path, capsys):
    p = _files(tmp_path)
    rc = main(
        [
            "compare",
            "-r",
            str(p["refs"]),
            "-c",
            str(p["bad"]),
            "-c",
            str(p["good"]),
            "-c",
            str(p["bad"]),
            "--metric",
            "chrf",
            "--paired-bs",
            "--n-samples",
            "200",
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    bad, good, same = out["systems"]
    assert bad["baseline"] and bad["p_value"] is None
    assert good["score"] == 100.0 and good["p_value"] == pytest.approx(1 / 201)
    assert same["p_value"] == pytest.approx(1 / 201) and same["score"] == bad["score"]  # sacreBLEU's count
    # chrF is sacreBLEU's corpus statistic, tested by sacreBLEU's own paired test
    assert "bs:200|seed:12345" in out["signature"] and out["signature"].startswith("chrF2|")
    assert out["signature"].endswith("system:corpus")


def test_compare_ar_table(tmp_path, capsys):
    p = _files(tmp_path)
    rc = main(
        [
            "compare",
            "-r",
            str(p["refs"]),
            "-c",
            str(p["bad"]),
            "-c",
            str(p["good"]),
            "--metric",
            "sentbleu",
            "--paired-ar",
            "--n-samples",
            "500",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "(baseline)" in out and "test:ar|n:500" in out and "system:mean-of-segments" in out
    # 6 segments all favouring one system: only 2 of 64 sign patterns are as extreme
    p_value = float(out.splitlines()[2].split()[-2])
    assert p_value == pytest.approx(2 / 64, abs=0.02)


def test_compare_errors(tmp_path, capsys):
    p = _files(tmp_path)
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert main(["compare", "-r", str(p["refs"]), "-c", str(p["bad"]), "-c", str(short)]) == 2
    assert "has 1 lines but" in capsys.readouterr().err
    assert main(["compare", "-r", str(p["refs"]), "-c", str(p["bad"]), "-c", str(tmp_path / "nope")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["compare", "-r", str(p["refs"]), "-c", str(p["bad"])]) == 2


@pytest.mark.parametrize("metric", ["chrf", "bleu", "sentbleu"])
def test_compare_empty_files_are_a_clear_error(tmp_path, capsys, metric):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert main(["compare", "-r", str(empty), "-c", str(empty), "-c", str(empty), "--metric", metric]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"nlgscore compare: error: {empty} is empty: a paired test needs at least one segment"


def _tiny_wmt19(tmp_path, worse):
    """wmt-xx-en.jsonl: one daRR pair per reference, the reference itself better than ``worse``."""
    pairs = [
        {
            "id": i,
            "lp": "xx-en",
            "src": "s",
            "ref": ref,
            "better": {"system": "A", "text": ref},
            "worse": {"system": "B", "text": bad},
        }
        for i, (ref, bad) in enumerate(zip(REFS, worse))
    ]
    (tmp_path / "wmt-xx-en.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")


def test_meta_wmt19_end_to_end(tmp_path, capsys):
    _tiny_wmt19(tmp_path, BAD)
    out_json, out_csv = tmp_path / "out.json", tmp_path / "out.csv"
    rc = main(
        [
            "meta",
            "wmt19",
            "--data",
            str(tmp_path),
            "--metric",
            "chrf",
            "--metric",
            "sentbleu",
            "--bootstrap",
            "100",
            "--json-out",
            str(out_json),
            "--csv",
            str(out_csv),
            "--quiet",
        ]
    )
    assert rc == 0
    results = json.loads(out_json.read_text())["results"]
    assert [(r["dataset"], r["metric"], r["level"], r["measure"], r["value"]) for r in results] == [
        ("xx-en", "chrf", "segment", "tau", 1.0),
        ("xx-en", "chrf", "segment", "metric-ties", 0.0),
        ("xx-en", "sentbleu", "segment", "tau", 1.0),
        ("xx-en", "sentbleu", "segment", "metric-ties", 0.0),
    ]
    assert set(results[0]) == {"dataset", "metric", "level", "measure", "value", "ci_low", "ci_high", "signature"}
    assert results[0]["ci_low"] == results[0]["ci_high"] == 1.0
    assert out_csv.read_text().splitlines()[0] == "dataset,metric,level,measure,value,ci_low,ci_high,signature"
    captured = capsys.readouterr()
    assert "xx-en (6 daRR pairs)" in captured.out and captured.err == ""  # --quiet: no progress bar


def test_meta_plot(tmp_path):
    pytest.importorskip("matplotlib")
    _tiny_wmt19(tmp_path, BAD[::-1])
    plot = tmp_path / "plot.png"
    assert (
        main(["meta", "wmt19", "--data", str(tmp_path), "--metric", "chrf", "--bootstrap", "50", "--plot", str(plot)])
        == 0
    )
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_meta_wmt21_end_to_end(tmp_path, capsys):
    _tiny_wmt21(tmp_path)
    out_json = tmp_path / "out.json"
    assert (
        main(
            [
                "meta",
                "wmt21",
                "--data",
                str(tmp_path),
                "--metric",
                "chrf",
                "--bootstrap",
                "50",
                "--json-out",
                str(out_json),
            ]
        )
        == 0
    )
    rows = {(r["level"], r["measure"]): r["value"] for r in json.loads(out_json.read_text())["results"]}
    assert rows[("segment", "tau")] == 1.0  # 4 segments x 3 pairs, all concordant
    assert rows[("system", "pearson-z")] > 0.9
    assert "12 daRR pairs" in capsys.readouterr().out


def _sacrebleu_reference(metric, systems, refs, test, n, seed=12345):
    """sacreBLEU's own paired-test API, as its CLI calls it (SACREBLEU_SEED, n_jobs=1)."""
    import os

    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        named = [(f"s{i}", lines) for i, lines in enumerate(systems)]
        m = CHRF() if metric == "chrf" else BLEU()
        _, scores = PairedTest(named, {metric: m}, references=[refs], test_type=test, n_samples=n)()
    finally:
        del os.environ["SACREBLEU_SEED"]
    return next(v for k, v in scores.items() if k != "System")


@pytest.mark.parametrize(
    "metric,test,n", [("chrf", "bs", 1000), ("bleu", "bs", 300), ("chrf", "ar", 500), ("bleu", "ar", 500)]
)
def test_compare_equals_sacrebleu_paired_test_on_wmt21_systems(tmp_path, capsys, metric, test, n):
    from pathlib import Path

    folder = Path(__file__).resolve().parents[3] / "shared" / "data" / "wmt21-de-en"
    if not folder.is_dir():
        pytest.skip(f"WMT21 de-en not found at {folder} (../shared/data)")
    names = ["ref.A.en", "hyp.UF.en", "hyp.Online-W.en", "hyp.SMU.en", "hyp.happypoet.en"]
    texts = {}
    for name in names:  # 200 segments keep the test quick; the statistic is the same on all 1000
        texts[name] = (folder / name).read_text(encoding="utf-8").split("\n")[:200]
        (tmp_path / name).write_text("\n".join(texts[name]) + "\n", encoding="utf-8")
    cands = [a for name in names[1:] for a in ("-c", str(tmp_path / name))]
    assert (
        main(
            [
                "compare",
                "-r",
                str(tmp_path / names[0]),
                *cands,
                "--metric",
                metric,
                f"--paired-{test}",
                "--n-samples",
                str(n),
                "--json",
            ]
        )
        == 0
    )
    ours = json.loads(capsys.readouterr().out)["systems"]
    theirs = _sacrebleu_reference(metric, [texts[name] for name in names[1:]], texts[names[0]], test, n)
    for mine, result in zip(ours, theirs):
        assert mine["score"] == pytest.approx(result.score, abs=1e-9)
        assert mine["p_value"] == result.p_value  # identical, not just close
        if result.mean is not None:
            assert mine["mean"] == pytest.approx(result.mean, abs=1e-4)
            assert mine["ci_high"] - mine["mean"] == pytest.approx(result.ci, abs=1e-4)
    assert [r["p_value"] for r in ours[1:]] != [None] * 3


def _tiny_wmt21(tmp_path):
    """4 segments, 3 systems; DA puts UF > Online-W > Nemo on every segment (> 25 apart)."""
    refs = REFS[:4]
    outputs = {"UF": refs, "Online-W": [" ".join(r.split()[:-1]) for r in refs], "NVIDIA-NeMo": BAD[:4]}
    (tmp_path / "src.xx").write_text("q\n" * 4, encoding="utf-8")
    (tmp_path / "ref.A.en").write_text("\n".join(refs) + "\n", encoding="utf-8")
    for name, lines in outputs.items():
        (tmp_path / f"hyp.{name}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    da = {"UF.15": (95, 1.0), "Online-W.3": (60, 0.0), "Nemo.7": (20, -1.0)}
    seg = "".join(f"{s} {sid} {raw} {z} 1\n" for s, (raw, z) in da.items() for sid in range(1, 5))
    (tmp_path / "da-seg-scores.csv").write_text("SYS SID RAW.SCR Z.SCR N\n" + seg, encoding="utf-8")
    sys_rows = "".join(f"{raw} {z} 4 {s} 4\n" for s, (raw, z) in da.items())
    (tmp_path / "da-sys-scores.csv").write_text("RAW.SCR Z.SCR N SYS N.ALL\n" + sys_rows, encoding="utf-8")
    return outputs


def test_meta_wmt21_scores_mixed_with_metric_and_errors(tmp_path, capsys):
    outputs = _tiny_wmt21(tmp_path)
    good = {"UF": 3.0, "Online-W": 2.0, "NVIDIA-NeMo": 1.0}
    rows = [f"{s}\t{line}\t{good[s]}" for s in outputs for line in range(1, 5)]
    (tmp_path / "mine.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert (
        main(
            [
                "meta",
                "wmt21",
                "--data",
                str(tmp_path),
                "--metric",
                "chrf",
                "--scores",
                f"mine={tmp_path / 'mine.tsv'}",
                "--bootstrap",
                "0",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    values = {(r["metric"], r["level"], r["measure"]): r["value"] for r in out["results"]}
    assert values[("mine", "segment", "tau")] == 1.0 and values[("mine", "system", "pearson-z")] == pytest.approx(1.0)
    assert values[("chrf", "segment", "tau")] == 1.0 and {r["dataset"] for r in out["results"]} == {"wmt21-xx-en"}
    (tmp_path / "bad.tsv").write_text("\n".join(rows[:-1] + ["UF\t4\tnan"]) + "\n", encoding="utf-8")
    assert main(["meta", "wmt21", "--data", str(tmp_path), "--scores", f"bad={tmp_path / 'bad.tsv'}", "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith("bad.tsv:12: duplicate item ('UF', '4') (first at 4)")
    assert main(["meta", "wmt21", "--data", str(tmp_path), "--quiet"]) == 2
    assert "at least one --metric SPEC or --scores NAME=FILE" in capsys.readouterr().err


def test_meta_summeval_progress_significance_and_rouge(tmp_path, capsys):
    docs = []
    for d in range(4):
        systems = {
            f"M{k}": {
                "text": " ".join(REFS[d].split()[: 6 - k]) or "x",
                "scores": {"coherence": 5 - k + 0.1 * d, "fluency": 1 + (k + d) % 3},
            }
            for k in range(4)
        }
        docs.append({"id": f"d{d}", "src": "src", "refs": [REFS[d], REFS[d + 1]], "systems": systems})
    (tmp_path / "sum-summeval.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    assert (
        main(
            [
                "meta",
                "summeval",
                "--data",
                str(tmp_path),
                "--metric",
                "rouge1",
                "--metric",
                "chrf",
                "--bootstrap",
                "100",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "\x1b" not in captured.err and "%|" not in captured.err  # a stderr that is not a terminal gets no bars
    assert "summeval-coherence Spearman" in captured.out and "paired bootstrap" in captured.out
    assert main(["meta", "summeval", "--data", str(tmp_path), "--metric", "chrf", "--quiet", "--bootstrap", "0"]) == 0
    assert capsys.readouterr().err == ""
