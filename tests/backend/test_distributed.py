"""Scoring split across two real processes (torchrun, gloo on CPU) gives the single process's bits
(``==``: an item's score does not depend on the number of processes).

tests/scripts/shard_scores.py runs BERTScore (MiniLM), Prism and BARTScore (tiny checkpoints)
and a Trainer ``compute_metrics`` on every rank; the scorers split the pairs between the ranks
(nlgscore.backend.distributed.shard) and gather them back. Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "scripts"))
from shard_scores import CANDS, GOLDEN, LONG, REFS, rows_seen  # noqa: E402


@pytest.fixture(scope="module")
def one_kernel():
    """The ranks and this process on one kernel: NLGSCORE_ONEDNN as the run set it, else pinned to
    the CPU's rule (what the session's models were loaded with). Unpinned, this process follows its
    last model load, which another test's forced load may have left on the other kernel (~1e-7)."""
    from nlgscore.backend import gemm

    saved = os.environ.get(gemm.ENV_SWITCH)
    os.environ[gemm.ENV_SWITCH] = saved or ("1" if gemm.kernel_rule("float32")[0] == "onednn" else "0")
    gemm.onednn_available.cache_clear()
    yield
    if saved is None:
        del os.environ[gemm.ENV_SWITCH]
    gemm.onednn_available.cache_clear()


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, one_kernel):
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    out = tmp_path_factory.mktemp("shard") / "ranks.json"
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    cmd = [torchrun, "--standalone", "--nproc_per_node", "2", str(HERE / "scripts" / "shard_scores.py"), str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    reports = json.loads(out.read_text())
    assert [r["world"] for r in reports] == [2, 2]
    return reports


def test_bertscore_two_processes_equal_one(ranks, minilm_scorer):
    seen, handle = rows_seen(minilm_scorer.encoder.model.embeddings)
    try:
        single = minilm_scorer.score(CANDS, REFS)
    finally:
        handle.remove()
    single_rows = sum(seen)
    for report in ranks:  # every rank returns every score, in input order
        assert list(report["bertscore"]["f1"]) == list(single.f1)
        assert list(report["bertscore"]["precision"]) == list(single.precision)
        assert len(report["bertscore"]["f1"]) == len(CANDS)
    rows = [report["bertscore"]["rows"] for report in ranks]
    # Each rank encoded only its own share: together exactly the single process's work.
    assert all(0 < r < single_rows for r in rows) and sum(rows) == single_rows


def test_long_inputs_windows_across_two_processes(ranks, minilm_scorer):
    single = minilm_scorer.score(CANDS[:3] + [LONG[0]], REFS[:3] + [LONG[1]])
    assert single.windows[-1] > 1
    for report in ranks:
        assert list(report["bertscore_long"]["f1"]) == list(single.f1)
        assert report["bertscore_long"]["windows"] == single.windows


def test_rank_with_empty_share_and_trainer_dicts_agree(ranks, minilm_scorer):
    one = minilm_scorer.score(CANDS[:1], REFS[:1]).f1
    assert [r["bertscore_one"] for r in ranks] == [list(one)] * 2
    assert ranks[0]["trainer"] == ranks[1]["trainer"]
    assert ranks[0]["trainer_one"] == ranks[1]["trainer_one"]
    assert ranks[0]["trainer_one"]["bertscore_f1"] == float(one[0])


def test_prism_and_bartscore_two_processes_equal_one(ranks):
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    prism = PrismScorer(checkpoint=str(GOLDEN / "tiny-prism"), lang="en", mode="ref")
    bart = BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"))
    prism_single = prism.compute(CANDS, references=REFS).columns()["segment"]
    bart_single = bart.compute(CANDS, references=REFS).columns()["scores"]
    for report in ranks:
        assert list(report["prism"]["segment"]) == list(prism_single)
        assert list(report["bartscore"]["scores"]) == list(bart_single)
    for name in ("prism", "bartscore"):
        rows = [report[name]["rows"] for report in ranks]
        assert all(r > 0 for r in rows), (name, rows)  # both ranks did part of the work


def test_long_inputs_two_processes_equal_one(ranks, tmp_path):
    """Chunked pairs split across ranks give the single-process scores, and every rank reports
    every item's windows (a rank plans the items it did not score)."""
    from test_long_seq2seq import LONG, SHORT, TAIL_A, TARGET, short_prism

    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    bart = BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), max_length=48).compute(
        [TARGET, LONG, SHORT, TAIL_A], references=[TAIL_A, SHORT, [LONG, SHORT], TAIL_A]
    )
    prism = PrismScorer(str(short_prism(tmp_path / "p")), mode="src").compute(
        [TARGET, LONG, SHORT, TAIL_A], sources=[TAIL_A, SHORT, LONG, TAIL_A]
    )
    assert min(bart.windows) > 1 and min(prism.windows) > 1
    for report in ranks:
        assert list(report["bartscore_long"]["scores"]) == list(bart.scores)
        assert list(report["prism_long"]["segment"]) == list(prism.scores)
        assert report["bartscore_long"]["windows"] == bart.windows and report["prism_long"]["windows"] == prism.windows
