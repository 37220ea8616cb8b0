"""nlgscore.registry: the metric table read by nlgscore.load, the CLI and map_function.

A toy metric (exact match, on the core Scorer template) is added through the table alone and
then used from all three entry points; the built-in specs name local checkpoints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nlgscore
from nlgscore import registry
from nlgscore.cli import main
from nlgscore.core.base import Scorer
from nlgscore.core.result import Result

GOLDEN = Path(__file__).parent / "golden"
TINY_BART, TINY_PRISM = str(GOLDEN / "tiny-bart"), str(GOLDEN / "tiny-prism")
PREDS = ["the cat sat", "Prices rose.", "hello"]
REFS = ["the cat sat", "Prices increased.", "Hello"]


class ExactMatch(Scorer):
    """1.0 when the prediction equals its reference (after ``lowercase``), else 0.0."""

    name = "exact"
    multiref = "max"

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = lowercase

    def _norm(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _score_items(self, items, state):
        return {"match": np.array([float(self._norm(i.prediction) == self._norm(i.reference)) for i in items])}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "match")

    def _signature_fields(self, call):
        return {"case": "lc" if self.lowercase else "mixed"}


def _exact_spec(parts, options):
    if parts not in ([], ["lc"]):
        raise ValueError(f"exact takes no part or 'lc', got {parts}")
    return {"lowercase": True} if parts else {}


@pytest.fixture
def toy():
    registry.register("exact", ExactMatch, _exact_spec, help="exact match (test)")
    yield
    registry.unregister("exact")


def test_toy_metric_from_load(toy):
    assert "exact" in registry.metric_names()
    result = nlgscore.load("exact").compute(PREDS, references=REFS)
    assert result.scores == [1.0, 0.0, 0.0]
    assert nlgscore.load("exact:lc").compute(PREDS, references=REFS).scores == [1.0, 0.0, 1.0]
    assert "case:lc" in str(nlgscore.load("exact:lc").signature)
    with pytest.raises(ValueError, match="cannot read spec 'exact:xx'"):
        nlgscore.load("exact:xx")


def test_toy_metric_from_the_cli(toy, tmp_path, capsys):
    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text("\n".join(PREDS) + "\n", encoding="utf-8")
    refs.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    assert main(["score", "exact:lc", "-c", str(cands), "-r", str(refs), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["match"] == [1.0, 0.0, 1.0] and "nlgscore:exact" in out["signature"]
    assert main(["score", "exact", "-c", str(cands), "-r", str(refs), "--seg"]) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    assert lines[:3] == ["1.000000", "0.000000", "0.000000"] and lines[3] == "match: 0.333333"
    assert lines[4].startswith("nlgscore:exact") and len(lines) == 5  # the signature on its own line
    # run-time flags belong to every scorer (Scorer's runtime), even one whose constructor takes none
    assert main(["score", "exact", "-c", str(cands), "-r", str(refs), "--max-tokens", "10", "--batch-size", "2"]) == 0
    assert capsys.readouterr().out.strip().split("\n")[0] == "match: 0.333333"
    assert registry.build("exact", max_tokens=10, batch_size=2).runtime.max_tokens == 10
    # an option it does not take is an error naming it
    with pytest.raises(TypeError, match="lowercas"):
        registry.build("exact", lowercas=True)


def test_toy_metric_from_map_function(toy):
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict({"prediction": PREDS, "reference": REFS})
    out = table.map(nlgscore.map_function("exact:lc"), batched=True)
    assert out["exact_match"] == [1.0, 0.0, 1.0]


def test_unknown_metric_lists_the_known_ones():
    with pytest.raises(ValueError, match="known metrics: bertscore, prism, bartscore"):
        nlgscore.load("bleurt")
    with pytest.raises(ValueError, match="unknown metric 'bleurt'"):
        nlgscore.map_function("bleurt:base")
    with pytest.raises(TypeError, match="non-empty string"):
        registry.parse_spec("")


def test_register_validates_its_row():
    with pytest.raises(ValueError, match="already registered"):
        registry.register("bertscore", ExactMatch)
    with pytest.raises(TypeError, match="module:Class"):
        registry.register("toy2", "no_colon_path")
    with pytest.raises(ValueError, match="lowercase"):
        registry.register("Bad Name", ExactMatch)


def test_builtin_specs_name_local_checkpoints():
    assert registry.spec_options("bartscore:tests/golden/tiny-bart") == (
        "bartscore",
        {"checkpoint": "tests/golden/tiny-bart"},
    )
    assert registry.spec_options("bartscore:bart-large:precision")[1] == {
        "variant": "bart-large",
        "direction": "precision",
    }
    assert registry.spec_options("bartscore:tests/golden/tiny-bart:src")[1] == {
        "checkpoint": "tests/golden/tiny-bart",
        "direction": "src",
    }
    assert registry.spec_options("prism:src:tests/golden/tiny-prism")[1] == {
        "mode": "src",
        "checkpoint": "tests/golden/tiny-prism",
    }
    assert registry.spec_options("bertscore:minilm:L4")[1] == {"num_layers": 4, "model_type": "minilm"}
    assert registry.spec_options("bertscore")[1] == {"lang": "en"}
    assert registry.spec_options("bertscore", {"lang": "de"})[1] == {"lang": "de"}
    with pytest.raises(ValueError, match="sets checkpoint="):
        registry.spec_options("prism:ref:a", {"checkpoint": "b"})
    with pytest.raises(ValueError, match="prism:ref"):
        registry.spec_options("prism:hyp")


@pytest.mark.parametrize(
    "spec, options, given",
    [
        ("bartscore", {"checkpoint": TINY_BART}, "references"),
        (f"bartscore:{TINY_BART}", {}, "references"),
        ("prism:ref", {"checkpoint": TINY_PRISM}, "references"),
        (f"prism:src:{TINY_PRISM}", {}, "sources"),
        ("bertscore:minilm:L4", {}, "references"),
    ],
)
def test_builtin_metrics_load_offline(spec, options, given):
    result = nlgscore.load(spec, **options).compute(PREDS, **{given: REFS})
    assert len(result.scores) == len(PREDS) and all(isinstance(s, float) for s in result.scores)
    assert result.score == pytest.approx(float(np.mean(result.scores)), abs=1e-9)
    assert isinstance(result.system, dict) and str(result.signature)


def test_importing_the_registry_imports_no_metric():
    code = (
        "import sys, nlgscore.registry as r; r.metric_names(); "
        "assert not any(m in sys.modules for m in ('torch', 'transformers', 'nlgscore.bertscore.scorer')), sorted(sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_installed_plug_in_is_found_through_its_entry_point(tmp_path, monkeypatch):
    # A real (if minimal) installed distribution: a module and a dist-info with entry_points.txt.
    (tmp_path / "nlgscore_toy_plugin.py").write_text(
        "import numpy as np\n"
        "from nlgscore.core.base import Scorer\n"
        "from nlgscore.core.result import Result\n"
        "class Length(Scorer):\n"
        "    name = 'toylen'\n"
        "    def _score_items(self, items, state):\n"
        "        return {'ratio': np.array([len(i.prediction) / max(len(i.reference), 1) for i in items])}\n"
        "    def _finish(self, call, columns):\n"
        "        return Result(self.make_signature(call), columns, 'ratio')\n"
        "    def _signature_fields(self, call):\n"
        "        return {}\n",
        encoding="utf-8",
    )
    info = tmp_path / "nlgscore_toy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nlgscore-toy-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[nlgscore.metrics]\ntoylen = nlgscore_toy_plugin:Length\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_read", False)
    try:
        assert nlgscore.load("toylen").compute(["abcd"], references=["ab"]).scores == [2.0]
        assert "toylen" in registry.metric_names() and "nlgscore_toy_plugin" in sys.modules
        with pytest.raises(ValueError, match="takes no spec parts"):
            nlgscore.load("toylen:x")
    finally:
        registry.unregister("toylen")
