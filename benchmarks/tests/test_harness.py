"""Smoke test of the benchmark harness (``python -m benchmarks harness``) on 20 pairs with tiny settings.

It checks that a run completes, that the JSON report has the expected keys and that the scores
agree; it never asserts a timing (the CI machine is shared and noisy).
"""

import json
from pathlib import Path

import pytest

from benchmarks.harness import BenchConfig, evaluate_targets, render_markdown, run_benchmark, write_markdown
from benchmarks.harness.data import load_pairs
from benchmarks.harness.flops import count_encoder_batches, layer_flops, useful_flops

GOLDEN_BART = str(Path(__file__).resolve().parents[2] / "tests" / "golden" / "tiny-bart")

_SENTENCES = [
    ("The cat sat on the mat.", "A cat was sitting on the mat.", "Cat mat sit."),
    ("It is raining in the city today.", "Today it rains in the city.", "City rain."),
    (
        "The government announced new measures on Monday.",
        "On Monday the government announced new measures.",
        "Government Monday.",
    ),
    ("He has lived in Astana for ten years.", "He lived in Astana for ten years.", "Ten years Astana he."),
    ("Prices rose sharply last month.", "Last month prices rose sharply.", "Prices month."),
]


@pytest.fixture(scope="module")
def darr_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "pairs.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i, (ref, better, worse) in enumerate(_SENTENCES * 2):
            row = {
                "id": i,
                "lp": "xx-en",
                "src": "",
                "ref": ref,
                "better": {"system": "a", "text": better},
                "worse": {"system": "b", "text": worse},
            }
            handle.write(json.dumps(row) + "\n")
        # A blank candidate: skipped, bert_score 0.3.13 gets only non-empty inputs.
        handle.write(
            json.dumps(
                {
                    "id": 99,
                    "lp": "xx-en",
                    "src": "",
                    "ref": "x",
                    "better": {"system": "a", "text": " "},
                    "worse": {"system": "b", "text": "y"},
                }
            )
            + "\n"
        )
    return str(path)


@pytest.fixture(scope="module")
def report(darr_file):
    config = BenchConfig(
        data=darr_file,
        n=20,
        repeats=1,
        memory_n=40,
        bart_n=12,
        bart_model=GOLDEN_BART,
        sections=("bertscore", "trainer", "memory", "bartscore"),
        command="pytest",
    )
    return run_benchmark(config)


def test_load_pairs_cycles_and_skips_blank(darr_file):
    pairs = load_pairs(darr_file, 25)
    assert len(pairs) == 25 and pairs.distinct_in_file == 10 and pairs.skipped == 1
    assert pairs.refs[10] == pairs.refs[0] and all(c.strip() for c in pairs.better)
    with pytest.raises(ValueError, match="n must be positive"):
        load_pairs(darr_file, 0)
    with pytest.raises(FileNotFoundError):
        load_pairs(darr_file + ".missing", 5)


def test_layer_flops_counts_the_real_layers():
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(
        hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=64, vocab_size=100
    )
    model = BertModel(config).eval()
    with count_encoder_batches(32, 64, layers=3) as count, torch.inference_mode():
        model(torch.ones(2, 7, dtype=torch.long))
    assert count.forwards == 1 and count.tokens == 14
    assert count.flops == 3 * layer_flops(2, 7, 32, 64)
    assert useful_flops([7, 7], 3, 32, 64) == count.flops  # no padding: useful == executed


def test_report_has_expected_keys(report):
    assert report["machine"]["cores"] >= 1 and "torch" in report["machine"]["versions"]
    bert = report["bertscore"]
    assert bert["pairs"] == 20 and bert["useful_flops"] > 0
    ours = bert["sides"]["nlgscore"]
    assert ours["pairs_per_s"] > 0 and ours["peak_rss_mb"] > 0 and ours["executed"]["flops"] > 0
    assert ours["mfu_useful"] > 0 and ours["mfu_executed"] >= ours["mfu_useful"] * 0.99
    assert report["trainer"]["sides"]["nlgscore"]["pairs_per_s"] > 0
    memory = report["memory"]["sides"]["nlgscore"]
    assert set(memory) == {"20", "40", "growth"} and memory["growth"] > 0
    bart = report["bartscore"]
    assert bart["max_abs_diff"] <= 1e-5 and bart["speedup"] > 0
    assert report["matmul"]["flops_per_s"] > 0
    for shape in report["matmul"]["float32"]["shapes"]:  # the denominator is the faster kernel
        assert shape["flops_per_s"] == max(shape["matmul_flops_per_s"], shape.get("onednn_flops_per_s", 0.0))
    assert ours["mfu_useful_vs_matmul"] >= ours["mfu_useful"] * 0.999
    names = {t["name"] for t in report["targets"]}
    assert {"bertscore_speedup", "bertscore_mfu", "trainer_speedup", "bartscore_speedup", "memory_growth"} <= names
    json.dumps(report)  # the whole report is JSON-serialisable


def test_bert_score_comparison(report):
    pytest.importorskip(
        "bert_score", reason="bert_score 0.3.13 is not installed (optional [bench] extra): comparison skipped"
    )
    bert = report["bertscore"]
    assert bert["max_abs_diff_f1"] <= 1e-5
    assert report["trainer"]["max_abs_diff_f1"] <= 1e-5
    assert bert["speedup"] > 0 and report["memory"]["sides"]["bert_score"]["growth"] > 0


def test_markdown_section_is_replaced_not_duplicated(report, tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\nHand-written analysis.\n", encoding="utf-8")
    write_markdown(report, str(path))
    write_markdown(report, str(path))
    text = path.read_text(encoding="utf-8")
    assert text.count("nlgscore bench: generated") == 1 and "Hand-written analysis." in text
    assert "pytest" in render_markdown(report) and "\\|ΔF\\|" in text


def test_targets_judge_values():
    report = {"config": {"device": "cpu"}, "bertscore": {"speedup": 3.0, "max_abs_diff_f1": 2e-5}}
    targets = {t["name"]: t for t in evaluate_targets(report)}
    assert targets["bertscore_speedup"]["met"] is True
    assert targets["bertscore_max_abs_diff_f1"]["met"] is False
    assert targets["trainer_speedup"]["met"] is None


def test_harness_command_runs_and_prints_measured_values(darr_file, capsys):
    """The harness's command line builds its config (the command line is recorded once, not twice)."""
    from benchmarks.harness.cli import main

    argv = [
        "--data",
        darr_file,
        "--n",
        "4",
        "--repeats",
        "1",
        "--sections",
        "bartscore",
        "--bart-n",
        "4",
        "--bart-model",
        GOLDEN_BART,
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "BARTScore" in captured.out and "[bench]" in captured.err  # progress on stderr
    assert main([*argv, "--quiet"]) == 0
    assert "[bench]" not in capsys.readouterr().err


def test_lab_entry_point_gives_one_line_errors():
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "harness", "--data", "no-such.jsonl", "--sections", "bartscore"],
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("python -m benchmarks harness: error:") and "no-such.jsonl" in done.stderr
    unknown = subprocess.run(
        [sys.executable, "-m", "benchmarks", "no_such_script"], capture_output=True, text=True, cwd=repo, timeout=60
    )
    assert (
        unknown.returncode == 2
        and "unknown command 'no_such_script'" in unknown.stderr
        and "bench_serve" in unknown.stderr
    )
