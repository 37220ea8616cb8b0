"""nlgscore.backend.cuda_kernels: SDPA on CUDA leaves cuDNN attention out, and puts the flags back.

SDPA's backend flags are process-global and readable without a GPU, so the switch is tested on CPU:
the block only reads ``device.type``.
"""

import threading

import pytest
import torch

from nlgscore.backend.cuda_kernels import ENV_SWITCH, cuda_backends, forward_attention


def _flags():
    cuda = torch.backends.cuda
    return (
        cuda.cudnn_sdp_enabled(),
        cuda.flash_sdp_enabled(),
        cuda.mem_efficient_sdp_enabled(),
        cuda.math_sdp_enabled(),
    )


@pytest.fixture(autouse=True)
def _default_flags(monkeypatch):
    monkeypatch.delenv(ENV_SWITCH, raising=False)
    before = _flags()
    assert before == (True, True, True, True), "another test left SDPA's flags changed"
    yield
    assert _flags() == before


def test_cuda_forward_leaves_cudnn_out_and_restores():
    with forward_attention(torch.device("cuda")):
        assert _flags() == (False, True, True, True)
        with forward_attention("cuda"):  # nested: still restricted
            assert _flags() == (False, True, True, True)
        assert _flags() == (False, True, True, True)
    assert _flags() == (True, True, True, True)


def test_cpu_and_switch_change_nothing(monkeypatch):
    with forward_attention(torch.device("cpu")):
        assert _flags() == (True, True, True, True)
    monkeypatch.setenv(ENV_SWITCH, "1")
    with forward_attention(torch.device("cuda")):
        assert _flags() == (True, True, True, True)
    assert cuda_backends(True)[0] == "CUDNN_ATTENTION" and "CUDNN_ATTENTION" not in cuda_backends(False)


def test_overlapping_threads_restore_once():
    # A enters, B enters, A leaves while B is still inside: B must stay restricted (a plain
    # sdpa_kernel per thread would have A restore "all enabled" under B), and the last out restores.
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with forward_attention("cuda"):
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with forward_attention("cuda"):
            b_in.set()
            a_out.wait(5)
            seen["b_after_a_left"] = _flags()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen["b_after_a_left"] == (False, True, True, True)
    assert _flags() == (True, True, True, True)


def test_signature_label_names_what_moves_cuda_scores(monkeypatch):
    from nlgscore.backend.kernel_label import kernel_field

    assert kernel_field(torch.device("cuda"), torch.float32) == {"kernel": "cuda"}
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")  # TF32 products
    try:
        assert kernel_field(torch.device("cuda"), torch.float32) == {"kernel": "cuda-tf32"}
        assert kernel_field(torch.device("cuda"), torch.bfloat16) == {"kernel": "cuda"}  # TF32 is a float32 matter
    finally:
        torch.set_float32_matmul_precision(before)
    monkeypatch.setenv(ENV_SWITCH, "1")
    assert kernel_field(torch.device("cuda:0"), torch.bfloat16) == {"kernel": "cuda-cudnnattn"}
