"""``NLGSCORE_ONEDNN`` takes 1/true/yes/on (oneDNN) or 0/false/no/off (MKL); any other value is
an error naming the variable and the values it takes (nlgscore.envs), never silently ignored."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nlgscore.backend.gemm import ENV_SWITCH, choose_kernel
from nlgscore.errors import ArgumentError


def test_an_unknown_value_is_an_error_naming_the_accepted_ones(monkeypatch):
    monkeypatch.setenv(ENV_SWITCH, "fast")
    with pytest.raises(
        ArgumentError,
        match=r"NLGSCORE_ONEDNN='fast' is not a value it takes: 1, true, yes, on \(on\) or 0, false, no, off \(off\)",
    ):
        choose_kernel([(4, 4)])
    assert choose_kernel([(4, 4)], kernel="mkl") == "mkl"  # a scorer's own kernel= does not read it


@pytest.mark.parametrize("value", ["1", "off", " Yes ", ""])
def test_accepted_values_do_not_warn(value):
    # in a fresh process: a forced choice is process-wide, and this one's scorers keep theirs
    code = "from nlgscore.backend.gemm import choose_kernel\nchoose_kernel([(4, 4)])"
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        env=dict(os.environ, **{ENV_SWITCH: value}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
