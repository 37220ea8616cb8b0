"""The GPU check's inputs: pairs and sentences of the WMT19 kk-en DARR slice in ``config.data``.

>>> from benchmarks.gpu.plan import CheckConfig
>>> slice_path(CheckConfig(data="/nonexistent", out="o"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
FileNotFoundError: data: /nonexistent/wmt-kk-en.jsonl does not exist; write it with benchmarks/gpu/slice.sh ...
"""

from __future__ import annotations

import os
from typing import List, Tuple

from benchmarks.gpu.plan import DATA_FILE, CheckConfig


def slice_path(config: CheckConfig) -> str:
    path = os.path.join(config.data, DATA_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"data: {path} does not exist; write it with benchmarks/gpu/slice.sh (the WMT19 kk-en DARR slice)"
        )
    return path


def pairs(config: CheckConfig, n: int) -> Tuple[List[str], List[str]]:
    """``n`` (candidate, reference) pairs: the better texts of the slice's rows, then the worse ones."""
    from benchmarks.harness.data import load_pairs

    rows = load_pairs(slice_path(config), (n + 1) // 2)
    return (rows.better + rows.worse)[:n], (rows.refs + rows.refs)[:n]


def corpus(config: CheckConfig) -> List[str]:
    """The slice's distinct English sentences (to train a random-weight model's tokenizer on)."""
    from benchmarks.harness.data import load_pairs

    rows = load_pairs(slice_path(config), 4000 if not config.tiny else 40)
    return list(dict.fromkeys(rows.refs + rows.better + rows.worse))
