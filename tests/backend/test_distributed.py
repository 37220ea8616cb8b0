"""Two real processes (torchrun, gloo on CPU) in every multi-rank pattern give one process's bits.

tests/scripts/shard_scores.py runs BERTScore (MiniLM), Prism and BARTScore (tiny checkpoints) and
chrF on every rank: per-rank inputs, rank 0 alone, identical inputs split with ``shard=True``,
different inputs under ``shard=True``, a share that fails on one rank, evaluate's distributed
mode and a Trainer ``compute_metrics``. The launch itself must exit 0 on every rank. Nothing is
mocked; a hang fails the subprocess timeout.
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
from shard_scores import CANDS, GOLDEN, LONG, OWN, REFS  # noqa: E402

TORCHRUN = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
ENV_EXTRA = dict(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")


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
    folder = tmp_path_factory.mktemp("shard")
    out = folder / "ranks.json"
    env = dict(os.environ, **ENV_EXTRA, EVALUATE_CACHE=str(folder / "evaluate"))  # with one_kernel's switch
    cmd = [TORCHRUN, "--standalone", "--nproc_per_node", "2", str(HERE / "scripts" / "shard_scores.py"), str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    # Every rank exits 0: the process group the sharded calls started is ended at exit.
    assert done.returncode == 0, done.stderr[-4000:]
    assert "terminate called" not in done.stderr
    reports = json.loads(out.read_text())
    assert [(r["rank"], r["world"]) for r in reports] == [(0, 2), (1, 2)]
    return reports


@pytest.fixture(scope="module")
def single():
    """The scorers of the script, loaded in this one process."""
    from shard_scores import scorers

    return scorers()


def test_per_rank_inputs_get_their_own_single_process_bits(ranks, single):
    for rank, report in enumerate(ranks):
        preds, refs = OWN[rank]
        for name, scorer in single.items():
            assert report["own"][name] == scorer.compute(preds, references=refs).scores, (rank, name)
    # a plain call runs no collective: no process group is even started for it
    assert [report["group_after_own"] for report in ranks] == [False, False]


def test_rank_zero_alone_finishes_with_the_single_process_bits(ranks, single):
    assert ranks[0]["alone"] == single["chrf"].compute(CANDS, references=REFS).scores
    assert ranks[1]["alone"] is None


def test_identical_inputs_sharded_equal_one_process_and_split_the_work(ranks, single):
    from shard_scores import encoders, rows_seen

    for name, module in encoders(single).items():
        seen, handle = rows_seen(module)
        try:
            want = single[name].compute(CANDS, references=REFS)
        finally:
            handle.remove()
        for report in ranks:  # every rank returns every score, in input order
            assert report["shared"][name]["scores"] == want.scores, name
            assert report["shared"][name]["columns"] == want.columns(), name
        rows = [report["shared"][name]["rows"] for report in ranks]
        # Each rank ran its own share only: together exactly the single process's work.
        assert all(0 < r < sum(seen) for r in rows) and sum(rows) == sum(seen), (name, rows, sum(seen))
    chrf = single["chrf"].compute(CANDS, references=REFS).scores
    assert [report["shared"]["chrf"]["scores"] for report in ranks] == [chrf, chrf]


def test_sharded_idf_and_prompt_ensembles_equal_one_process(ranks, single):
    """idf comes from every reference of the call on every rank, not from a rank's share; a
    BARTScore prompt ensemble averages the same prompts whichever rank scores an item."""
    import nlgscore

    idf = nlgscore.load("bertscore:minilm:L4", idf=True).compute(CANDS, REFS).scores
    share_idf = nlgscore.load("bertscore:minilm:L4", idf=True).compute(CANDS[:4], REFS[:4]).scores
    assert share_idf != idf[:4]  # the control: idf from a share would move the scores
    prompts = single["bartscore"].compute(CANDS, REFS, prompt=["Such as", "In other words"]).scores
    for report in ranks:
        assert report["shared"]["bertscore_idf"] == idf
        assert report["shared"]["bartscore_prompts"] == prompts


def test_empty_share_and_long_inputs_sharded(ranks, single):
    one = single["bertscore"].compute(CANDS[:1], references=REFS[:1]).scores
    assert [report["shared"]["bertscore_one"] for report in ranks] == [one, one]
    windowed = single["bertscore"].compute(CANDS[:3] + [LONG[0]], references=REFS[:3] + [LONG[1]])
    assert windowed.windows[-1] > 1
    for report in ranks:
        assert report["shared"]["bertscore_long"] == {"scores": windowed.scores, "windows": windowed.windows}


def test_long_seq2seq_inputs_sharded_equal_one_process(ranks, tmp_path):
    """Chunked pairs split across ranks give the single-process scores, and every rank reports
    every item's windows (a rank plans the items it did not score)."""
    from long_texts import LONG as LONG_TEXT
    from long_texts import SHORT, TAIL_A, TARGET, short_prism

    import nlgscore

    preds = [TARGET, LONG_TEXT, SHORT, TAIL_A]
    bart = nlgscore.load(f"bartscore:{GOLDEN / 'tiny-bart'}", max_length=48).compute(
        preds, references=[TAIL_A, SHORT, [LONG_TEXT, SHORT], TAIL_A]
    )
    prism = nlgscore.load(f"prism:src:{short_prism(tmp_path / 'p')}").compute(
        preds, sources=[TAIL_A, SHORT, LONG_TEXT, TAIL_A]
    )
    assert min(bart.windows) > 1 and min(prism.windows) > 1
    for report in ranks:
        assert report["bartscore_long"] == {"scores": bart.scores, "windows": bart.windows}
        assert report["prism_long"] == {"scores": prism.scores, "windows": prism.windows}


def test_different_inputs_under_shard_are_a_named_error_on_every_rank(ranks):
    for name in ("bertscore", "prism", "bartscore", "chrf"):
        errors = [report["mismatch"][name] for report in ranks]
        assert errors[0] == errors[1], name  # the same message on every rank
        kind, message = errors[0]
        assert kind == "ShardError"
        assert "rank 0 (2 distinct items)" in message and "rank 1 (3 distinct items)" in message, message


def test_a_failing_share_reaches_every_rank(ranks, single):
    assert ranks[1]["failure"] == ["RuntimeError", "a fault on rank 1's share"]
    kind, message = ranks[0]["failure"]
    assert kind == "ShardError" and "rank 1 failed" in message and "a fault on rank 1's share" in message
    # the ranks still work together after it
    want = single["bertscore"].compute(CANDS, references=REFS).scores
    assert [report["after_failure"] for report in ranks] == [want, want]


def test_evaluate_distributed_mode_gives_process_zero_every_score(ranks, single):
    preds = OWN[0][0] + OWN[1][0]
    refs = OWN[0][1] + OWN[1][1]
    assert ranks[0]["evaluate"] == single["bertscore"].compute(preds, references=refs).columns()["f1"]
    assert ranks[1]["evaluate"] is None  # evaluate answers on process 0 only


def test_trainer_compute_metrics_agree_on_every_rank(ranks, single):
    assert ranks[0]["trainer"] == ranks[1]["trainer"]
    assert ranks[0]["trainer_one"] == ranks[1]["trainer_one"]
    one = single["bertscore"].compute(CANDS[:1], references=REFS[:1]).scores
    assert ranks[0]["trainer_one"]["bertscore_f1"] == one[0]


RANK_RAISES = """
import os, nlgscore
scorer = nlgscore.load("chrf")
if os.environ["RANK"] == "1":
    raise SystemExit("rank 1 stops before its sharded call")
scorer.compute(["a"], ["b"], shard=True)  # rank 0 waits for rank 1, which is gone
"""


def test_a_rank_that_exits_ends_the_launch_within_bounded_time(tmp_path):
    """A rank that stops before a sharded call: the launcher ends the others (no rank hangs)."""
    script = tmp_path / "rank_raises.py"
    script.write_text(RANK_RAISES, encoding="utf-8")
    # torchrun's agent notices the failed rank and stops rank 0 within its monitor interval; a
    # rank 0 left waiting would run into the timeout (two interpreter start-ups take ~10 s here).
    done = subprocess.run(
        [TORCHRUN, "--standalone", "--nproc_per_node", "2", str(script)],
        env=dict(os.environ, **ENV_EXTRA),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "rank 1 stops before its sharded call" in done.stderr
