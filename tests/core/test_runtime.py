"""The run-time policy (nlgscore.core.runtime): one Runtime per scorer, per-call overrides, devices,
half precision on CPU for all three metrics, and serialised, quiet model loading.

Half-precision bounds (CPU, AMD EPYC Zen 4 with avx512_bf16; see BENCHMARKS.md "CPU bfloat16"):

* BERTScore MiniLM L4, first 1,000 WMT19 kk-en daRR pairs (2,000 candidates): bfloat16 vs float32
  max |dF| <= 0.01 (measured 0.0011) and daRR tau within 0.002 (measured 0.356 both);
* Prism and BARTScore on the tiny golden checkpoints, the first 40 golden sentence pairs (the
  short ones), per-item mean token log-probability: bfloat16 max |d| <= 0.03 (measured 0.0041
  Prism, 0.0086 BARTScore, 0.0092 BARTScore direction src, on scores around -8), float16 max
  |d| <= 0.005 (measured 0.0006 and 0.0010).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import GOLDEN, REPO, require_data

from nlgscore.core.runtime import Runtime, dtype_name, resolve_runtime
from nlgscore.errors import ArgumentError, ArgumentTypeError

BF16_SEQ2SEQ_BOUND = 0.03
FP16_SEQ2SEQ_BOUND = 0.005
BF16_BERTSCORE_BOUND = 0.01
BF16_TAU_BOUND = 0.002


def _golden_pairs(dtype: str = "bfloat16"):
    """The golden sentence pairs (the last ones are long or empty); 10 for float16, which CPUs
    without native fp16 arithmetic run ~5x slower than float32."""
    with open(GOLDEN / "bertscore_minilm.json", encoding="utf-8") as handle:
        golden = json.load(handle)
    n = 10 if dtype == "float16" else 40
    return golden["cands"][:n], golden["refs"][:n]


def test_resolve_and_replace_name_the_argument():
    rt = resolve_runtime("encoder", device="cpu")
    assert (rt.device.type, rt.dtype, rt.batch_size, rt.max_tokens, rt.progress) == (
        "cpu",
        "float32",
        None,
        2048,
        False,
    )
    assert resolve_runtime("seq2seq", device="cpu").max_tokens == 4096
    call = rt.replace(batch_size=4, max_tokens=None, progress=True)
    assert (call.batch_size, call.max_tokens, call.progress) == (4, 2048, True) and rt.batch_size is None  # frozen
    with pytest.raises(ArgumentError, match="^batch_size"):
        rt.replace(batch_size=0)
    with pytest.raises(ArgumentTypeError, match="^max_tokens"):
        rt.replace(max_tokens="many")
    with pytest.raises(ArgumentTypeError, match="^progress"):
        resolve_runtime("encoder", device="cpu", progress="yes")
    with pytest.raises(ArgumentTypeError, match="unknown run-time option.*budget"):
        rt.replace(budget=3)
    with pytest.raises(ArgumentError, match="^dtype cannot change"):
        rt.replace(dtype="bfloat16")
    with pytest.raises(ArgumentError, match="^dtype must be one of float32, bfloat16, float16, auto"):
        dtype_name("float8")
    with pytest.raises(ArgumentError, match="^family"):
        resolve_runtime("decoder")
    assert [dtype_name(d) for d in (None, "fp32", "bf16", "half", "torch.bfloat16", "AUTO")] == [
        "float32",
        "float32",
        "bfloat16",
        "float16",
        "bfloat16",
        "auto",
    ]


@pytest.mark.parametrize("device", ["cuda:7", "mps", "tpu", 7])
def test_unavailable_device_is_an_argument_error_for_every_scorer(device):
    """Raised by the one device policy before any model loads (not torch's AssertionError)."""
    import torch

    from nlgscore.bertscore import BERTScorer
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    if (
        device in ("cuda:7", 7)
        and torch.cuda.device_count() > 7
        or device == "mps"
        and torch.backends.mps.is_available()
    ):
        pytest.skip(f"this machine has {device}")
    builds = (
        lambda: BERTScorer(model_type="minilm", num_layers=4, device=device),
        lambda: PrismScorer(str(GOLDEN / "tiny-prism"), device=device),
        lambda: BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device=device),
    )
    for build in builds:
        with pytest.raises(ArgumentError, match=f"^device '?{device}'?"):
            build()


def test_auto_is_float32_on_a_cpu_without_native_bf16(monkeypatch):
    # A CPU without bf16 arithmetic cannot be had here: the detection is patched (only that).
    from nlgscore.backend import gemm

    monkeypatch.setattr(gemm, "cpu_native_bf16", lambda: False)
    assert resolve_runtime("encoder", device="cpu", dtype="auto").dtype == "float32"


def test_scorer_reads_its_runtime(minilm_scorer):
    rt = minilm_scorer.runtime
    assert isinstance(rt, Runtime) and rt.family == "encoder"
    assert (minilm_scorer.batch_size, minilm_scorer.max_tokens, minilm_scorer.progress) == (
        rt.batch_size,
        rt.max_tokens,
        rt.progress,
    )
    assert minilm_scorer.device == rt.device and str(minilm_scorer.dtype) == "torch.float32"


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "auto"])
def test_bertscore_half_precision_on_cpu(minilm_scorer, dtype):
    from nlgscore.backend import gemm
    from nlgscore.bertscore import BERTScorer
    from nlgscore.core import runtime

    cands, refs = _golden_pairs(dtype)
    scorer = BERTScorer(model_type="minilm", num_layers=4, device="cpu", dtype=dtype)
    assert scorer.encoder.packed is not None  # the packed (unpadded) forward runs in half precision too
    settled = scorer.runtime.dtype
    assert settled in (("float32", "bfloat16") if dtype == "auto" else (dtype,))
    result = scorer.compute(cands, refs)
    assert f"|dtype:{settled}|" in str(result.signature)
    expected = np.array(minilm_scorer.compute(cands, refs).f1)
    assert np.abs(np.array(result.f1) - expected).max() <= BF16_BERTSCORE_BOUND
    if dtype == "auto" and gemm.cpu_native_bf16():
        assert runtime.AUTO_CHOICE["dtype"] == settled and runtime.AUTO_CHOICE["bfloat16_ms"] > 0
    if settled == "bfloat16":  # the bf16 load chose its own kernel, measured in bf16
        reason = gemm.kernel_choice("bfloat16")["reason"]
        forced = os.environ.get(gemm.ENV_SWITCH)  # make test under NLGSCORE_ONEDNN=0/1: the switch decides
        assert reason in ("rule: native bf16", "oneDNN linear unavailable") or (
            forced and reason == f"forced by {gemm.ENV_SWITCH}={forced}"
        )


def test_bertscore_bfloat16_is_faithful_on_wmt19_kk_en(minilm_scorer):
    from nlgscore.bertscore import BERTScorer
    from nlgscore.meta.stats.wmt import darr_kendall_tau

    path = require_data("wmt-kk-en.jsonl")
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line, _ in zip(handle, range(1000), strict=False)]  # the first 1000 lines
    cands = [r["better"]["text"] for r in rows] + [r["worse"]["text"] for r in rows]
    refs = [r["ref"] for r in rows] * 2
    full = np.array(minilm_scorer.compute(cands, refs).f1)
    half = np.array(
        BERTScorer(model_type="minilm", num_layers=4, device="cpu", dtype="bfloat16").compute(cands, refs).f1
    )
    assert np.abs(half - full).max() <= BF16_BERTSCORE_BOUND
    n = len(rows)
    assert abs(darr_kendall_tau(half[:n], half[n:]) - darr_kendall_tau(full[:n], full[n:])) <= BF16_TAU_BOUND


@pytest.mark.parametrize("dtype, bound", [("bfloat16", BF16_SEQ2SEQ_BOUND), ("float16", FP16_SEQ2SEQ_BOUND)])
def test_prism_and_bartscore_half_precision_on_cpu(prism, bart, dtype, bound):
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    cands, refs = _golden_pairs(dtype)
    for full, half in (
        (prism, PrismScorer(str(GOLDEN / "tiny-prism"), lang="en", device="cpu", dtype=dtype)),
        (bart, BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", dtype=dtype)),
    ):
        model = half.model if isinstance(half, BARTScorer) else half._loaded.model
        assert next(model.parameters()).dtype == half.dtype
        result = half.compute(cands, refs)
        assert f"|dtype:{dtype}|" in str(result.signature)
        diff = np.abs(np.array(result.scores) - np.array(full.compute(cands, refs).scores))
        assert 0 < diff.max() <= bound, (type(half).__name__, diff.max())  # > 0: the half model really ran


def test_prism_and_bartscore_auto_dtype_on_cpu():
    """ "auto" is settled on the loaded model (measured where the CPU has native bf16); the
    model, the runtime and the signature agree on what it resolved to."""
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    cands, refs = _golden_pairs()
    for scorer in (
        PrismScorer(str(GOLDEN / "tiny-prism"), lang="en", device="cpu", dtype="auto"),
        BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", dtype="auto"),
    ):
        model = scorer.model if isinstance(scorer, BARTScorer) else scorer._loaded.model
        settled = scorer.runtime.dtype
        assert settled in ("float32", "bfloat16") and str(next(model.parameters()).dtype) == f"torch.{settled}"
        assert f"|dtype:{settled}|" in str(scorer.compute(cands[:5], refs[:5]).signature)


_THREADS = textwrap.dedent("""
    import json, sys
    from concurrent.futures import ThreadPoolExecutor
    from nlgscore.bertscore import BERTScorer
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    golden = sys.argv[1]
    builds = {"bert": lambda: BERTScorer(model_type="minilm", num_layers=4, device="cpu"),
              "prism": lambda: PrismScorer(golden + "/tiny-prism", device="cpu"),
              "bart": lambda: BARTScorer(checkpoint=golden + "/tiny-bart", device="cpu")}
    kinds = ["bert"] * 4 + ["prism", "bart"]
    with ThreadPoolExecutor(len(kinds)) as pool:
        scorers = list(pool.map(lambda kind: builds[kind](), kinds))
    later = [builds["prism"](), builds["bart"]()]  # loads after the concurrent ones
    print(json.dumps([s.compute(["a cat sat on the mat"], ["the cat sat"]).scores[0] for s in scorers + later]))
""")


def test_scorers_can_be_built_from_threads():
    """Concurrent loads in a cold process (transformers' lazy imports and meta-device loading are
    not thread-safe): without the loading lock threads failed and later loads raised 'Cannot copy
    out of meta tensor'."""
    out = subprocess.run(
        [sys.executable, "-c", _THREADS, str(GOLDEN)], capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    scores = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(scores) == 8 and len(set(scores[:4])) == 1 and scores[4] == scores[6] and scores[5] == scores[7]


def test_loading_bar_only_with_progress(capfd, monkeypatch):
    import io

    from transformers.utils import logging as hf_logging

    from nlgscore.seq2seq.bartscore import BARTScorer

    class Terminal(io.StringIO):  # bars are drawn only to a terminal (nlgscore.backend.progress)
        def isatty(self) -> bool:
            return True

    hf_logging.enable_progress_bar()  # as in a fresh process: transformers draws it by default
    BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", progress=True)
    assert "Loading weights" not in capfd.readouterr().err  # not a terminal: no bar, even with progress
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu")
    assert "Loading weights" not in terminal.getvalue()
    assert hf_logging.is_progress_bar_enabled()  # the caller's setting is restored
    BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", progress=True)
    assert "Loading weights" in terminal.getvalue()


def test_cpu_kernel_choice_is_per_dtype(monkeypatch):
    """A bfloat16 load chooses its own linear kernel; it never changes the float32 models' choice,
    and float16 always takes F.linear."""
    import torch
    import torch.nn.functional as F

    from nlgscore.backend import gemm

    monkeypatch.delenv(gemm.ENV_SWITCH, raising=False)
    monkeypatch.setitem(gemm._CHOICE, "kernel", "mkl")
    monkeypatch.setitem(gemm._CHOICES["bfloat16"], "kernel", "onednn")
    x, w = torch.randn(37, 64), torch.randn(16, 64)
    with torch.inference_mode():
        assert gemm.bucketed_rows(37, x, w) == 37  # float32: MKL, no row bucket
        assert gemm.bucketed_rows(37, x.half(), w.half()) == 37
        if gemm.onednn_available("bfloat16"):
            assert gemm.bucketed_rows(37, x.bfloat16(), w.bfloat16()) == 48  # oneDNN: a multiple of MIN_ROWS
        out, expected = gemm.linear(x.bfloat16(), w.bfloat16(), activation="gelu").float(), F.gelu(F.linear(x, w))
        assert out.shape == (37, 16) and (out - expected).abs().max() <= 0.02 * (1 + expected.abs().max())
    # A CPU without native bf16 cannot be had here: the detection is patched (only that).
    monkeypatch.setattr(gemm, "cpu_native_bf16", lambda: False)
    gemm.onednn_available.cache_clear()
    try:
        assert not gemm.onednn_available("bfloat16")
        with torch.inference_mode():  # F.linear, whatever an earlier load chose
            assert gemm.bucketed_rows(37, x.bfloat16(), w.bfloat16()) == 37
    finally:
        gemm.onednn_available.cache_clear()
