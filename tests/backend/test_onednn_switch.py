"""``NLGSCORE_ONEDNN`` takes 1/true/yes/on (oneDNN) or 0/false/no/off (MKL); any other value is
ignored with a warning that names the accepted values, never silently."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nlgscore.backend.gemm import ENV_SWITCH, choose_kernel, kernel_rule


def test_an_unknown_value_warns_with_the_accepted_ones(monkeypatch):
    monkeypatch.setenv(ENV_SWITCH, "fast")
    with pytest.warns(
        UserWarning,
        match=r"NLGSCORE_ONEDNN='fast' is not a value it accepts \(1, true, yes, on: oneDNN; 0, false, no, off: MKL",
    ):
        kernel = choose_kernel([(4, 4)])
    assert kernel == kernel_rule()[0]  # chosen as if unset


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
