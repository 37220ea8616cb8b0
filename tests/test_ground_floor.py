"""The ground floor: the contract gets its Call queue from a factory the scheduler registers (it
never imports the scheduler), and a URL spec is a registered row of the metric table."""

import ast
import asyncio
from pathlib import Path

import pytest

from nlgscore import registry
from nlgscore.core import batcher_hook
from nlgscore.serve import MicroBatcher

CORE = Path(__file__).resolve().parent.parent / "nlgscore" / "core"
PREDS, REFS = ["The cat sat.", "It rains.", "Hello there."], ["A cat sat.", "It is raining.", "Hello there."]


@pytest.fixture
def factory():
    """Restores the registered factory after the test."""
    previous = batcher_hook.register_batcher_factory(None)
    batcher_hook.register_batcher_factory(previous)
    yield previous
    batcher_hook.register_batcher_factory(previous)


async def _gathered(scorer):
    return await asyncio.gather(*(scorer.acompute([p], [r]) for p, r in zip(PREDS, REFS)))


def test_acompute_uses_the_registered_factory(factory):
    made = []

    def recording(scorer):
        made.append(scorer)
        return MicroBatcher(scorer, max_wait_ms=1)

    batcher_hook.register_batcher_factory(recording)
    scorer = registry.build("chrf")
    results = asyncio.run(_gathered(scorer))
    assert made == [scorer]  # one batcher for every call of the scorer
    assert [r.scores[0] for r in results] == scorer.compute(PREDS, REFS).scores  # chrF is per item: same bits
    scorer.batcher().close()


def test_the_default_factory_is_the_schedulers(factory):
    scorer = registry.build("chrf")
    assert isinstance(scorer.batcher(), MicroBatcher) and scorer.batcher() is scorer.batcher()
    scorer.batcher().close()


def test_no_registered_factory_is_a_clear_error(factory):
    batcher_hook.register_batcher_factory(None)
    with pytest.raises(RuntimeError, match="nlgscore.scheduler"):
        asyncio.run(registry.build("chrf").acompute(PREDS[:1], REFS[:1]))


def test_the_contract_never_imports_the_scheduler():
    found = []
    for path in CORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [f"{path.name}: {n}" for n in names if n.startswith(("nlgscore.scheduler", "nlgscore.runs"))]
    assert not found


class Echo:
    """A client class of a toy server row: what it was built with."""

    def __init__(self, url, *, timeout=1.0):
        self.url, self.timeout = url, timeout


def test_a_url_is_a_registered_row(monkeypatch):
    row = registry.server_row("http://127.0.0.1:8000")
    assert row.client == "nlgscore.remote.client:RemoteScorer" and row.client_class().__name__ == "RemoteScorer"
    assert registry.server_row("bertscore:minilm") is None and registry.server_row(None) is None
    monkeypatch.setattr(registry, "_SERVERS", list(registry._SERVERS))  # the toy row leaves with the test
    registry.register_server(("echo://",), Echo)
    built = registry.build("echo://here", timeout=3.0, device=None)  # an unset run-time option is no request
    assert (type(built), built.url, built.timeout) == (Echo, "echo://here", 3.0)
    assert registry.cached("echo://here") is registry.cached("echo://here")
    with pytest.raises(
        ValueError, match=r"options \['device', 'retries'\] cannot be given for the server at echo://here"
    ):
        registry.build("echo://here", retries=2, device="cpu")
