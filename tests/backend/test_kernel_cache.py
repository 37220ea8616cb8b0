"""The load-time kernel and dtype measurements are kept per machine and model, so that each
command does not pay them again (README truths: start-up). Real files in a temporary
cache folder; the measurement is the real one (a small weight shape keeps it short)."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from nlgscore.backend import gemm, kernel_cache

SHAPES = ((32, 64), (64, 32))  # sorted, as choose_kernel passes them


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGSCORE_CACHE", str(tmp_path))
    monkeypatch.delenv("NLGSCORE_KERNEL_CACHE", raising=False)
    monkeypatch.delenv(
        gemm.ENV_SWITCH, raising=False
    )  # the unforced rule is under test (the suite also runs with it forced)
    gemm._measure.cache_clear()  # the in-process memo: each call below goes to the disk cache
    yield tmp_path / "kernels"
    gemm._measure.cache_clear()


def stored(folder):
    files = sorted(folder.glob("*.json"))
    assert len(files) == 1, files
    return files[0]


def test_a_measurement_is_kept_and_reused(cache):
    first = gemm._measure(SHAPES)
    path = stored(cache)
    assert json.loads(path.read_text())["timings"]["float32"] == list(first["float32"])
    # what the next process reads is the file: a value no measurement gives proves it was not re-measured
    path.write_text(json.dumps({"timings": {"float32": [1000.0, 0.5]}}))
    gemm._measure.cache_clear()
    assert gemm._measure(SHAPES)["float32"] == (1000.0, 0.5)
    gemm._measure.cache_clear()
    # the kernel is never timed (a near-tie flipped it between loads): timings do not move it
    expected = gemm.kernel_rule("float32")[0] if gemm.onednn_available("float32") else "mkl"
    assert gemm.choose_kernel(SHAPES, "float32") == expected and "mkl_ms" not in gemm.kernel_choice()


def test_other_shapes_or_dtypes_are_other_keys(cache):
    gemm._measure(SHAPES)
    gemm._measure(((16, 16),))
    assert len(list(cache.glob("*.json"))) == 2


@pytest.mark.parametrize(
    "text", ["{not json", '{"timings": "fast"}', '{"timings": null}', '{"timings": [[1, 2]]}', "[1, 2]"]
)
def test_a_malformed_file_is_measured_again_and_replaced(cache, text):
    gemm._measure(SHAPES)
    path = stored(cache)
    path.write_text(text)  # a "timings" that is not a mapping raised AttributeError at every load
    gemm._measure.cache_clear()
    timings = gemm._measure(SHAPES)
    assert json.loads(path.read_text())["timings"]["float32"] == list(timings["float32"])


def test_the_cache_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv("NLGSCORE_KERNEL_CACHE", "0")
    gemm._measure(SHAPES)
    assert not cache.exists()


def _write_many(args):
    folder, worker = args
    import os

    os.environ["NLGSCORE_CACHE"] = folder
    for k in range(200):
        kernel_cache.store("k" * 64, {"float32": (float(worker), float(k))}, {"cpu": "x"})
    return True


def test_concurrent_writers_never_leave_a_torn_file(tmp_path):
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        assert all(pool.map(_write_many, [(str(tmp_path), w) for w in range(4)]))
    files = list((tmp_path / "kernels").iterdir())
    assert [f.name for f in files] == ["k" * 64 + ".json"]  # no temporary file left behind
    worker, k = json.loads(files[0].read_text())["timings"]["float32"]
    assert worker in (0.0, 1.0, 2.0, 3.0) and k == 199.0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_fresh_machine_picks_the_same_kernel_at_every_load_without_timing(monkeypatch, dtype):
    """No kernel cache, and any timing raises; two loads of one model in ``dtype``
    still agree, on the CPU's rule (a timed choice flipped on a 15.63 vs 15.52 ms near-tie)."""
    import torch

    monkeypatch.setenv("NLGSCORE_KERNEL_CACHE", "0")
    monkeypatch.delenv(gemm.ENV_SWITCH, raising=False)
    monkeypatch.setattr(gemm, "_measure_now", lambda *a: pytest.fail("the kernel choice timed the kernels"))
    gemm.onednn_available.cache_clear()
    gemm._measure.cache_clear()
    expected = gemm.kernel_rule(dtype)[0] if gemm.onednn_available(dtype) else "mkl"
    swapped = []
    for _ in range(2):
        model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Linear(32, 64)).to(getattr(torch, dtype))
        swapped.append(gemm.use_onednn_linears(model))
        assert gemm.kernel_choice(dtype)["kernel"] == expected
    assert swapped == [2 * (expected == "onednn")] * 2
