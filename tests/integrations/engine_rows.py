"""The rows every engine test scores, and the offline answers it must equal.

200 short rows of varied length (so that batches pad differently), with an empty prediction, a
non-ASCII one, and rows holding two or three references; a tiny Prism reads the same
predictions against sources. The expected values are one offline ``compute`` of all rows in this
process, which the engines' workers (other processes, other partitions, one thread) must give
back bit for bit.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Dict, List

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
BERTSCORE = "bertscore:minilm"
BERTSCORE_OPTIONS: Dict[str, Any] = {"num_layers": 2}
PRISM_SRC = f"prism:src:{GOLDEN / 'tiny-prism'}:en"
N = 200

WORDS = ["cat", "dog", "river", "école", "bank", "light", "storm", "garden"]


def _text(k: int, shift: int) -> str:
    words = [WORDS[(k * 3 + i + shift) % len(WORDS)] for i in range(1 + (k * 7) % 9)]
    return f"the {' '.join(words)} number {k % 13}"


PREDICTIONS: List[str] = [_text(k, 0) for k in range(N)]
PREDICTIONS[5] = ""  # an empty prediction is scored, as offline
PREDICTIONS[17] = "déjà vu, 東京 and a naïve café"
REFERENCES: List[Any] = [
    _text(k, 1) if k % 4 else [_text(k, 1), _text(k, 2), _text(k, 5)][: 2 + k % 8 // 4] for k in range(N)
]
SOURCES: List[str] = [_text(k, 3) for k in range(N)]


def rows() -> List[Dict[str, Any]]:
    """One dict per row: ``id``, ``prediction``, ``reference`` (always a list), ``source``."""
    return [
        {"id": k, "prediction": p, "reference": r if isinstance(r, list) else [r], "source": s}
        for k, (p, r, s) in enumerate(zip(PREDICTIONS, REFERENCES, SOURCES, strict=True))
    ]


@functools.lru_cache(maxsize=None)
def _expected_bertscore() -> Dict[str, List[float]]:
    from nlgscore import load

    result = load(BERTSCORE, **BERTSCORE_OPTIONS).compute(PREDICTIONS, references=REFERENCES)
    return {f"bertscore_{name}": list(values) for name, values in result.columns().items()}


def expected_bertscore() -> Dict[str, List[float]]:
    """BERTScore (MiniLM, layer 2) of every row, one offline call (made once per test process), as
    columns ``bertscore_<name>``."""
    return {name: list(values) for name, values in _expected_bertscore().items()}


@functools.lru_cache(maxsize=None)
def _expected_prism_src() -> Dict[str, List[float]]:
    from nlgscore import load

    result = load(PRISM_SRC).compute(PREDICTIONS, sources=SOURCES)
    return {f"prism_{name}": list(values) for name, values in result.columns().items()}


def expected_prism_src() -> Dict[str, List[float]]:
    """Prism-src (tiny checkpoint) of every row, one offline call (made once per test process), as
    columns ``prism_<name>``."""
    return {name: list(values) for name, values in _expected_prism_src().items()}


def offline_error(**kwargs: Any) -> BaseException:
    """The error an offline BERTScore ``compute`` raises for these inputs (its class and message
    are what an engine's failing row must carry)."""
    from nlgscore import load

    try:
        load(BERTSCORE, **BERTSCORE_OPTIONS).compute(**kwargs)
    except Exception as err:
        return err
    raise AssertionError(f"offline compute accepted {kwargs!r}")


def error_pattern(err: BaseException, qualified: bool = True) -> str:
    """A regex for ``err`` as an engine reports it: ``module.Class: message`` (``qualified``: an
    engine that carries the worker's error as text) or the message from its start (an engine that
    raises the error itself), any row index (an engine's batch counts its rows from its own first
    row); the batch's location follows it."""
    import re

    head = f"{type(err).__module__}.{type(err).__name__}: " if qualified else ""
    escaped = re.escape(head + str(err))
    return ("" if qualified else "^") + re.sub(r"\\\[\d+\\\]", lambda _: r"\[\d+\]", escaped)
