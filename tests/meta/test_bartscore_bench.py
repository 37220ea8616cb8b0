"""``nlgscore meta bartscore-bench`` against the BARTScore authors' own definitions.

The fixtures are written here in the authors' layout (``data.pkl`` per data set, with pickle, as
their ``SUM/README.md``, ``D2T/README.md`` and ``WMT/README.md`` describe it; scored copies hold
the metrics' keys in each ``scores`` dict, as their ``final_p.pkl`` files do). The references are
transcriptions of neulab/BARTScore ``analysis.py``: ``SUMStat.evaluate_summary``,
``SUMStat.get_fact_acc``, ``SUMStat.get_fact_pearson``, ``D2TStat.evaluate_text``,
``WMTStat.kendall`` and ``SUMStat.sig_test_two`` / ``fact_acc_sig_test_two``, written over the
same dicts with scipy and Python's ``random`` as that code is.
"""

from __future__ import annotations

import json
import os
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from nlgscore.cli import main
from nlgscore.errors import DataError
from nlgscore.meta.stats.subsets import authors_subsets
from nlgscore.meta.tasks import bartscore_bench
from nlgscore.meta.tasks.bartscore_bench import task_of

SHARED = Path(os.environ.get("NLGSCORE_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
TOLERANCE = 1e-9  # the same statistic in another summation order: rounding only (~1e-15)
METRICS = ("m_good", "m_noise")


# --- fixtures in the authors' layout ---------------------------------------------------------------


def _metric_scores(rng: np.random.Generator, human: float) -> dict:
    # m_good follows the human score, m_noise does not; both rounded so that some scores tie
    return {"m_good": round(human + rng.normal(0, 0.5), 1), "m_noise": round(float(rng.normal()), 1)}


def _summary_set(rng, documents=12, systems=5, aspects=("coherence", "consistency", "fluency", "relevance"), refs=2):
    data = {}
    for d in range(documents):
        sys_summs = {}
        for s in range(systems):
            human = {a: float(rng.integers(1, 6)) for a in aspects}
            if d == 0:  # a document whose human scores are constant: skipped by the authors' code
                human = {a: 3.0 for a in aspects}
            sys_summs[f"M{s}"] = {"sys_summ": f"summary {d} {s} " * (s + 1), "scores": human}
        data[f"doc-{d}"] = {
            "src": f"article {d}",
            "ref_summ": f"reference {d}",
            "ref_summs": [f"reference {d} {k}" for k in range(refs)],
            "sys_summs": sys_summs,
        }
    return data


def _factuality_set(documents, sys_summs):
    """Documents whose reference is the source (the authors' factuality sets), systems from ``sys_summs(d)``."""
    return {d: {"src": f"article {d}", "ref_summ": f"article {d}", "sys_summs": sys_summs(d)} for d in range(documents)}


def _rank19_set(rng, documents=20):
    return _factuality_set(
        documents,
        lambda d: {
            "correct": {"sys_summ": f"correct {d}", "scores": {"fact": 1.0}},
            "incorrect": {"sys_summ": f"wrong {d}", "scores": {"fact": 0.0}},
        },
    )


def _qags_set(rng, documents=25):
    return _factuality_set(
        documents, lambda d: {0: {"sys_summ": f"summary {d}", "scores": {"fact": float(rng.integers(0, 4)) / 3}}}
    )


def _d2t_set(rng, samples=30):
    return {
        i: {
            "src": f"inform(name={i})",
            "sys_summ": f"text {i}",
            "ref_summs": [f"ref {i} a", f"ref {i} b"],
            "scores": {a: float(rng.integers(1, 7)) for a in ("informativeness", "naturalness", "quality")},
        }
        for i in range(samples)
    }


def _darr_set(rng, pairs=40):
    return {
        i: {
            "src": f"source {i}",
            "ref": f"reference {i}",
            "better": {"sys_name": "A", "sys": f"better {i}", "scores": {}},
            "worse": {"sys_name": "B", "sys": f"worse {i}", "scores": {}},
        }
        for i in range(pairs)
    }


def _scored(data: dict, rng: np.random.Generator) -> dict:
    """A copy with the two metrics' keys added to every ``scores`` (the authors' ``final_p.pkl`` form)."""
    out = pickle.loads(pickle.dumps(data))
    for record in out.values():
        if "sys_summs" in record:
            entries = list(record["sys_summs"].values())
            humans = [next(iter(e["scores"].values())) for e in entries]
        elif "better" in record:
            entries, humans = [record["better"], record["worse"]], [1.0, 0.0]
        else:
            entries, humans = [record], [record["scores"]["informativeness"]]
        for entry, human in zip(entries, humans):
            entry["scores"].update(_metric_scores(rng, human))
    return out


SETS = {
    "SUM/SummEval": _summary_set,
    "SUM/Rank19": _rank19_set,
    "SUM/QAGS_CNN": _qags_set,
    "D2T/BAGEL": _d2t_set,
    "WMT/kk-en": _darr_set,
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The authors' tree: ``<folder>/<set>/data.pkl`` and its scored copy ``scored.pkl``."""
    root = tmp_path_factory.mktemp("bartscore")
    rng = np.random.default_rng(7)
    for where, make in SETS.items():
        folder = root / where
        folder.mkdir(parents=True)
        data = make(rng)
        (folder / "data.pkl").write_bytes(pickle.dumps(data))
        (folder / "scored.pkl").write_bytes(pickle.dumps(_scored(data, rng)))
    return root


def _load(path: Path) -> dict:
    return pickle.loads(path.read_bytes())  # the test's own file


def _run(tree: Path, task: str, bootstrap: int = 0, **options):
    folder = next(str(p.parent) for p in tree.glob(f"*/{task_of(task).name}/scored.pkl"))
    scores = {m: f"{folder}/scored.pkl" for m in METRICS}
    return bartscore_bench(tree, scores=scores, tasks=[task], bootstrap=bootstrap, **options)


def _values(table, measure: str) -> dict:
    return {(r.dataset, r.metric): r.value for r in table.rows if r.measure == measure}


# --- the authors' statistics, transcribed (neulab/BARTScore analysis.py) ----------------------------


def authors_evaluate_summary(data: dict, human_metric: str, metric: str):
    correlations = []
    for doc_id in data:
        target_scores, prediction_scores = [], []
        sys_summs = data[doc_id]["sys_summs"]
        for sys_name in sys_summs:
            prediction_scores.append(sys_summs[sys_name]["scores"][metric])
            target_scores.append(sys_summs[sys_name]["scores"][human_metric])
        if len(set(prediction_scores)) == 1 or len(set(target_scores)) == 1:
            continue
        correlations.append(
            [spearmanr(target_scores, prediction_scores)[0], kendalltau(target_scores, prediction_scores)[0]]
        )
    corr_mat = np.array(correlations)
    return np.mean(corr_mat[:, 0]), np.mean(corr_mat[:, 1])


def authors_fact_acc(data: dict, metric: str) -> float:
    correct = 0
    for doc_id in data:
        if (
            data[doc_id]["sys_summs"]["correct"]["scores"][metric]
            > data[doc_id]["sys_summs"]["incorrect"]["scores"][metric]
        ):
            correct += 1
    return correct / len(data)


def authors_fact_pearson(data: dict, metric: str) -> float:
    human_scores, metric_scores = [], []
    for doc_id in data:
        human_scores.append(data[doc_id]["sys_summs"][0]["scores"]["fact"])
        metric_scores.append(data[doc_id]["sys_summs"][0]["scores"][metric])
    return pearsonr(human_scores, metric_scores)[0]


def authors_evaluate_text(data: dict, human_metric: str, metric: str):
    human_scores = [data[i]["scores"][human_metric] for i in data]
    metric_scores = [data[i]["scores"][metric] for i in data]
    return spearmanr(human_scores, metric_scores)[0], kendalltau(human_scores, metric_scores)[0]


def authors_kendall(data: dict, metric: str) -> float:
    conc, disc = 0, 0
    for i in data:
        if float(data[i]["better"]["scores"][metric]) > float(data[i]["worse"]["scores"][metric]):
            conc += 1
        else:
            disc += 1
    return (conc - disc) / (conc + disc)


def their_subsets(data: dict):
    """The loop head every ``sig_test_two`` of theirs shares: seed 666, one list reshuffled, 80 % kept."""
    random.seed(666)
    doc_ids = list(data.keys())
    for _ in range(1000):
        random.shuffle(doc_ids)
        yield doc_ids[: int(0.8 * len(doc_ids))]


def authors_sig_test_two(data: dict, m1: str, m2: str, human_metric: str) -> int:
    """``SUMStat.sig_test_two``: how many of the 1,000 subsets m1 wins (their ``better``)."""
    memo: dict = {}

    def rho(key, target, pred):  # scipy's spearmanr of a document, once (their code redoes it per subset)
        if key not in memo:
            memo[key] = spearmanr(target, pred)[0]
        return memo[key]

    better = 0
    for sub_ids in their_subsets(data):
        corr1, corr2 = [], []
        for doc_id in sub_ids:
            target, pred1, pred2 = [], [], []
            sys_summs = data[doc_id]["sys_summs"]
            for sys_name in sys_summs:
                pred1.append(sys_summs[sys_name]["scores"][m1])
                pred2.append(sys_summs[sys_name]["scores"][m2])
                target.append(sys_summs[sys_name]["scores"][human_metric])
            if len(set(pred1)) == 1 or len(set(pred2)) == 1 or len(set(target)) == 1:
                continue
            corr1.append(rho((doc_id, m1), target, pred1))
            corr2.append(rho((doc_id, m2), target, pred2))
        if np.mean(corr1) > np.mean(corr2):
            better += 1
    return better


def authors_fact_acc_sig_test_two(data: dict, m1: str, m2: str) -> int:
    better = 0
    for sub_ids in their_subsets(data):
        m1_correct = m2_correct = 0
        for doc_id in sub_ids:
            s = data[doc_id]["sys_summs"]
            m1_correct += s["correct"]["scores"][m1] > s["incorrect"]["scores"][m1]
            m2_correct += s["correct"]["scores"][m2] > s["incorrect"]["scores"][m2]
        better += m1_correct > m2_correct
    return better


# --- the statistics --------------------------------------------------------------------------------


def test_summary_level_equals_the_authors(tree):
    data = _load(tree / "SUM/SummEval/scored.pkl")
    table = _run(tree, "SummEval")
    spearman, kendall = _values(table, "spearman"), _values(table, "kendall")
    for aspect in ("coherence", "relevance"):
        for metric in METRICS:
            want = authors_evaluate_summary(data, aspect, metric)
            assert spearman[(f"SummEval-{aspect}", metric)] == pytest.approx(want[0], abs=TOLERANCE)
            assert kendall[(f"SummEval-{aspect}", metric)] == pytest.approx(want[1], abs=TOLERANCE)


def test_factuality_and_d2t_and_darr_equal_the_authors(tree):
    rank19, qags = _load(tree / "SUM/Rank19/scored.pkl"), _load(tree / "SUM/QAGS_CNN/scored.pkl")
    bagel, darr = _load(tree / "D2T/BAGEL/scored.pkl"), _load(tree / "WMT/kk-en/scored.pkl")
    for metric in METRICS:
        assert _values(_run(tree, "Rank19"), "accuracy")[("Rank19", metric)] == authors_fact_acc(rank19, metric)
        got = _values(_run(tree, "QAGS-CNN"), "pearson")[("QAGS_CNN", metric)]
        assert got == pytest.approx(authors_fact_pearson(qags, metric), abs=TOLERANCE)
        table = _run(tree, "BAGEL")
        for aspect in ("informativeness", "naturalness", "quality"):
            want = authors_evaluate_text(bagel, aspect, metric)
            assert _values(table, "spearman")[(f"BAGEL-{aspect}", metric)] == pytest.approx(want[0], abs=TOLERANCE)
            assert _values(table, "kendall")[(f"BAGEL-{aspect}", metric)] == pytest.approx(want[1], abs=TOLERANCE)
        assert _values(_run(tree, "kk-en"), "tau")[("kk-en", metric)] == authors_kendall(darr, metric)


def test_the_subsets_are_the_authors():
    keys = [f"doc-{i}" for i in range(17)]
    random.seed(666)  # the authors' draws: one list shuffled again for every subset
    theirs = []
    for _ in range(5):
        random.shuffle(keys)
        theirs.append([int(k[4:]) for k in keys[: int(0.8 * len(keys))]])
    assert [s.tolist() for s in authors_subsets(17, iterations=5)] == theirs


def test_significance_counts_the_authors_wins(tree):
    summ = _load(tree / "SUM/SummEval/scored.pkl")
    rank19 = _load(tree / "SUM/Rank19/scored.pkl")
    table = _run(tree, "SummEval", bootstrap=1000)
    tests = {t["dataset"]: t for t in table.significance}
    # relevance: m_good follows coherence, not relevance, so the count is neither 0 nor 1000
    wins = authors_sig_test_two(summ, "m_good", "m_noise", "relevance")
    assert (tests["SummEval-relevance"]["a"], tests["SummEval-relevance"]["wins"]) == ("m_good", wins)
    assert tests["SummEval-relevance"]["verdict"] == (1 if wins > 950 else -1 if wins < 50 else 0)
    table = _run(tree, "Rank19", bootstrap=1000)
    wins = authors_fact_acc_sig_test_two(rank19, "m_good", "m_noise")
    assert (table.significance[0]["wins"], table.significance[0]["verdict"]) == (wins, 1)  # m_good, by construction
    assert table.beats_all[("Rank19", "m_good")]
    assert next(line for line in str(table).splitlines() if line.startswith("m_good")).endswith("†")  # Table 5


# --- refusals ---------------------------------------------------------------------------------------


def test_malformed_files_are_refused_naming_file_and_key(tmp_path):
    bad = _summary_set(np.random.default_rng(0), documents=2)
    del bad["doc-1"]["sys_summs"]["M2"]["scores"]
    folder = tmp_path / "SummEval"
    folder.mkdir()
    (folder / "data.pkl").write_bytes(pickle.dumps(bad))
    with pytest.raises(DataError, match=r"SummEval/data.pkl: record 'doc-1' system 'M2': missing key 'scores'"):
        bartscore_bench(folder, ["chrf"], bootstrap=0)
    (folder / "data.pkl").write_bytes(pickle.dumps({0: {"src": "s", "ref": "r", "better": {"sys": "x"}}}))
    with pytest.raises(DataError, match=r"record '0': missing key 'worse'"):
        bartscore_bench(folder, ["chrf"], bootstrap=0)


def test_a_pickle_that_refers_to_code_is_refused_not_run(tmp_path):
    folder = tmp_path / "BAGEL"
    folder.mkdir()
    (folder / "data.pkl").write_bytes(pickle.dumps({0: {"src": os.getcwd}}))  # a reference to a function
    with pytest.raises(DataError, match=r"data.pkl: not a data pickle .*posix.getcwd"):
        bartscore_bench(folder, ["chrf"], bootstrap=0)


def test_a_scores_file_without_the_metric_key_is_refused(tree):
    scored = str(tree / "D2T/BAGEL/scored.pkl")
    with pytest.raises(DataError, match=r"scored.pkl: record '0' system '': missing score key 'other'"):
        bartscore_bench(tree, scores={"other": scored}, tasks=["BAGEL"], bootstrap=0)
    lines = tree / "bagel-scores.jsonl"
    lines.write_text("".join(json.dumps({"id": i, "score": 0.5}) + "\n" for i in range(29)))
    with pytest.raises(DataError, match=r"bagel-scores.jsonl: no score for record '29'"):
        bartscore_bench(tree, scores={"mine": str(lines)}, tasks=["BAGEL"], bootstrap=0)


# --- the command line -----------------------------------------------------------------------------------


def test_command_line_end_to_end(tree, tmp_path, capsys):
    out_json, out_csv = tmp_path / "bench.json", tmp_path / "bench.csv"
    _write_jsonl_scores(tree, tmp_path)
    rc = main(
        [
            *("meta", "bartscore-bench", "--data", str(tree), "--task", "Rank19", "--task", "BAGEL"),
            *("--metric", "chrf", "--scores", f"m_good={tmp_path}/{{task}}.jsonl"),
            *("--json-out", str(out_json), "--csv", str(out_csv), "--no-cache", "--quiet"),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "Table 5: factuality" in text and "Table 6: data-to-text" in text
    result = json.loads(out_json.read_text())["results"]
    assert {(r["dataset"], r["metric"]) for r in result if r["measure"] == "accuracy"} == {
        ("Rank19", "chrf"),
        ("Rank19", "m_good"),
    }
    rank19 = _load(tree / "SUM/Rank19/scored.pkl")
    got = next(r["value"] for r in result if r["dataset"] == "Rank19" and r["metric"] == "m_good")
    assert got == authors_fact_acc(rank19, "m_good")
    assert out_csv.read_text().splitlines()[0].startswith("dataset,metric,level,measure,value")


def _write_jsonl_scores(tree: Path, folder: Path) -> None:
    """m_good's scores of Rank19 and BAGEL as the JSONL files --scores takes."""
    rank19, bagel = _load(tree / "SUM/Rank19/scored.pkl"), _load(tree / "D2T/BAGEL/scored.pkl")
    rows = [
        {"id": d, "system": s, "score": entry["scores"]["m_good"]}
        for d, record in rank19.items()
        for s, entry in record["sys_summs"].items()
    ]
    (folder / "Rank19.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rows = [{"id": i, "score": record["scores"]["m_good"]} for i, record in bagel.items()]
    (folder / "BAGEL.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


# --- the shared data: BAGEL and SummEval as the authors evaluate them -------------------------------------


def _records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.skipif(not (SHARED / "d2t-bagel.jsonl").is_file(), reason="needs the shared d2t-bagel.jsonl")
def test_bagel_chrf_equals_the_authors_evaluate_text(tmp_path):
    from sacrebleu.metrics import CHRF

    chrf, seen = CHRF(), {}
    records = _records(SHARED / "d2t-bagel.jsonl")
    data = {}
    for r in records:  # the authors' D2T rule: the maximum over the references (D2T/score.py)
        scores = [seen.setdefault((r["text"], ref), chrf.sentence_score(r["text"], [ref]).score) for ref in r["refs"]]
        data[r["id"]] = {"scores": {**r["scores"], "chrf": max(scores)}}
    path = tmp_path / "bagel-chrf.jsonl"
    path.write_text("".join(json.dumps({"id": i, "score": d["scores"]["chrf"]}) + "\n" for i, d in data.items()))
    table = bartscore_bench(SHARED / "d2t-bagel.jsonl", ["chrf"], {"chrf-file": str(path)}, bootstrap=0)
    spearman = _values(table, "spearman")
    for aspect in ("informativeness", "naturalness", "quality"):
        want = authors_evaluate_text(data, aspect, "chrf")[0]
        assert spearman[(f"BAGEL-{aspect}", "chrf-file")] == pytest.approx(want, abs=TOLERANCE)
        assert spearman[(f"BAGEL-{aspect}", "chrf")] == pytest.approx(want, abs=TOLERANCE)  # the registry's chrF


@pytest.mark.skipif(not (SHARED / "sum-summeval.jsonl").is_file(), reason="needs the shared sum-summeval.jsonl")
def test_summeval_equals_the_authors_evaluate_summary(tmp_path):
    from nlgscore.meta.tasks import summeval

    records = _records(SHARED / "sum-summeval.jsonl")
    data, rows = {}, []
    for r in records:  # a cheap score: the share of the first reference's words in the summary
        ref = set(r["refs"][0].split())
        sys_summs = {}
        for name, entry in r["systems"].items():
            words = entry["text"].split()
            score = sum(w in ref for w in words) / max(len(words), 1)
            sys_summs[name] = {"scores": {**entry["scores"], "overlap": score}}
            rows.append({"id": r["id"], "system": name, "score": score})
        data[r["id"]] = {"sys_summs": sys_summs}
    path = tmp_path / "overlap.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    table = bartscore_bench(SHARED / "sum-summeval.jsonl", scores={"overlap": str(path)}, bootstrap=0)
    theirs = summeval(SHARED, scores={"overlap": str(path)}, bootstrap=0)
    ours = _values(table, "spearman")
    other = {(r.dataset, r.metric): r.value for r in theirs.rows if r.level == "summary" and r.measure == "spearman"}
    for aspect in ("coherence", "consistency", "fluency", "relevance"):
        spearman, kendall = authors_evaluate_summary(data, aspect, "overlap")
        assert ours[(f"SummEval-{aspect}", "overlap")] == pytest.approx(spearman, abs=TOLERANCE)
        assert _values(table, "kendall")[(f"SummEval-{aspect}", "overlap")] == pytest.approx(kendall, abs=TOLERANCE)
        assert other[(f"summeval-{aspect}", "overlap")] == pytest.approx(spearman, abs=TOLERANCE)


def test_lower_is_better_negates_before_every_statistic(tree):
    bagel = _load(tree / "D2T/BAGEL/scored.pkl")
    table = _run(tree, "BAGEL", lower_is_better=["m_good"])
    for record in bagel.values():  # an error rate is its negation
        record["scores"]["m_good"] = -record["scores"]["m_good"]
    want = authors_evaluate_text(bagel, "informativeness", "m_good")[0]
    assert _values(table, "spearman")[("BAGEL-informativeness", "m_good")] == pytest.approx(want, abs=TOLERANCE)
    assert want < 0  # m_good follows informativeness: negated, it correlates negatively
