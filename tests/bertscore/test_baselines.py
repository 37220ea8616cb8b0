"""Baseline files: parsing, validation, lookup order and rescaling."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from nlgscore.bertscore import rescale as baselines_module
from nlgscore.bertscore.rescale import find_baseline, parse_baseline, rescale, select_layers

GOOD = "LAYER,P,R,F\n0,0.30,0.31,0.305\n1,0.32,0.33,0.325\n"


def test_parse_and_select():
    table = parse_baseline(GOOD)
    assert table.shape == (2, 3)
    np.testing.assert_allclose(select_layers(table, 1, False, "x"), [0.32, 0.33, 0.325])
    assert select_layers(table, 1, True, "x").shape == (2, 3)
    assert rescale(0.32, 0.32) == 0 and rescale(1.0, 0.32) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "text, match",
    [
        ("L,P,R,F\n0,0.1,0.1,0.1\n", "header"),
        ("LAYER,P,R,F\n0,0.1,0.1\n", "columns"),
        ("LAYER,P,R,F\n0,0.1,abc,0.1\n", "non-numeric"),
        ("LAYER,P,R,F\n", "no layer rows"),
        ("LAYER,P,R,F\n1,0.1,0.1,0.1\n", "expected layer 0"),
        ("", "header"),
    ],
)
def test_malformed_files_name_the_argument(text, match):
    with pytest.raises(ValueError, match="baseline_path") as info:
        parse_baseline(text, "bad.tsv")
    assert match in str(info.value)


def test_too_few_rows_for_layer():
    with pytest.raises(ValueError, match="layer 4 needs at least 5"):
        select_layers(parse_baseline(GOOD), 4, False, "b.tsv")


def test_explicit_path_wins(tmp_path):
    path = tmp_path / "mine.tsv"
    path.write_text(GOOD, encoding="utf-8")
    table, source = find_baseline("en", "roberta-large", str(path))
    assert source == "file:mine.tsv" and table.shape == (2, 3)
    with pytest.raises(ValueError, match="is not a file"):
        find_baseline("en", "roberta-large", str(tmp_path / "missing.tsv"))


def test_shipped_copy_after_hub(monkeypatch):
    calls = []
    monkeypatch.setattr(
        "nlgscore.backend.hub.fetch_baseline", lambda lang, model: calls.append((lang, model))
    )  # the Hub is offline here
    table, source = find_baseline("en", "roberta-large")
    assert calls == [("en", "roberta-large")] and source == "package:en/roberta-large.tsv"
    np.testing.assert_allclose(table[17], [0.83150584, 0.8314941, 0.83122575])
    table, source = find_baseline("en", "microsoft/deberta-xlarge-mnli")
    np.testing.assert_allclose(table[40], [0.5169066, 0.5170288, 0.5150192])


def test_hub_result_is_used(monkeypatch, tmp_path):
    path = tmp_path / "hub.tsv"
    path.write_text(GOOD, encoding="utf-8")
    monkeypatch.setattr("nlgscore.backend.hub.fetch_baseline", lambda lang, model: (str(path), "hub:org/repo@main"))
    assert find_baseline("en", "roberta-large")[1] == "hub:org/repo@main"


def test_missing_baseline_lists_places(monkeypatch):
    monkeypatch.setattr("nlgscore.backend.hub.fetch_baseline", lambda lang, model: None)
    with pytest.raises(ValueError) as info:
        find_baseline("en", "no-such-model")
    text = str(info.value)
    assert "baseline_path" in text and "Hub" in text and "nlgscore.baselines/en/no-such-model.tsv" in text
    with pytest.raises(ValueError, match="lang"):
        find_baseline(None, "roberta-large")


def test_every_shipped_file_parses():
    root = resources.files(baselines_module.PACKAGE)
    files = [p for p in _walk(root) if p.name.endswith(".tsv")]
    assert len(files) > 50
    for path in files:
        assert parse_baseline(path.read_text(encoding="utf-8"), path.name).shape[1] == 3


def _walk(folder):
    for entry in folder.iterdir():
        if entry.is_dir():
            yield from _walk(entry)
        else:
            yield entry


def test_scorer_rescale_and_signature(monkeypatch, minilm_scorer, tmp_path):
    from nlgscore.bertscore import BERTScorer

    path = tmp_path / "b.tsv"
    path.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.5,0.6,0.55\n" for i in range(7)), encoding="utf-8")
    scorer = BERTScorer(model_type="minilm", num_layers=4, rescale_with_baseline=True, baseline_path=str(path))
    assert scorer.signature["rescale"] == "file:b.tsv"
    raw = minilm_scorer.score(["a cat"], ["the cat"])
    scaled = scorer.score(["a cat"], ["the cat"])
    assert float(scaled.f1[0]) == pytest.approx((float(raw.f1[0]) - 0.55) / 0.45, abs=1e-6)
    monkeypatch.setattr("nlgscore.backend.hub.fetch_baseline", lambda lang, model: None)
    with pytest.raises(ValueError, match="all-MiniLM-L6-v2"):
        BERTScorer(model_type="minilm", num_layers=4, lang="xx", rescale_with_baseline=True)


def test_signature_names_each_source_apart(monkeypatch):
    """The same file, shipped or passed as baseline_path, gives the same numbers under distinct
    ``rescale:`` fields; a Hub copy is ``hub:<repo>@<commit>`` (tests/backend/test_hub_baselines.py)."""
    from nlgscore.backend.hub import ENV_REPO
    from nlgscore.bertscore import BERTScorer

    monkeypatch.delenv(ENV_REPO, raising=False)
    shipped = BERTScorer(model_type="minilm", num_layers=4, lang="en", rescale_with_baseline=True)
    path = resources.files(baselines_module.PACKAGE).joinpath("en", "all-MiniLM-L6-v2.tsv")
    with resources.as_file(path) as local:
        custom = BERTScorer(model_type="minilm", num_layers=4, rescale_with_baseline=True, baseline_path=str(local))
    assert shipped.signature["rescale"] == "package:en/all-MiniLM-L6-v2.tsv"
    assert custom.signature["rescale"] == "file:all-MiniLM-L6-v2.tsv"
    np.testing.assert_array_equal(shipped.baseline, custom.baseline)
    assert str(shipped.signature) != str(custom.signature)
