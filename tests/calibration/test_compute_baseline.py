"""Rescale baseline computation (nlgscore.calibration.baseline, scripts/compute_baseline.py) and
the shipped all-MiniLM-L6-v2 baseline. Real MiniLM model, tiny hand-made corpora."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from nlgscore.calibration.baseline import (
    all_layers_scorer,
    compute_baseline,
    load_corpora,
    read_baseline,
    sample_pair_groups,
    write_baseline_text,
)

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "baselines" / "en" / "all-MiniLM-L6-v2.tsv"

CORPUS = [
    "The committee approved the budget on Tuesday.",
    "Heavy rain flooded several streets in the old town.",
    "She plays the violin in a small orchestra.",
    "Prices for train tickets will rise next year.",
    "The museum opens a new exhibition about glass.",
    "Our neighbours adopted two cats from the shelter.",
    "The striker scored twice in the second half.",
    "Scientists found water ice near the moon's south pole.",
]

# Unrelated sentences for the shipped baseline: rescaled F of random pairs should be near 0.
UNRELATED = CORPUS + [
    "He forgot his umbrella at the bakery.",
    "The bridge will be closed for repairs until May.",
    "Farmers expect a good harvest of apples this autumn.",
    "The software update fixes a security problem.",
    "A young fox was seen crossing the motorway.",
    "The minister resigned after the scandal.",
    "Children learn to swim at the public pool.",
    "The company moved its headquarters to Lisbon.",
]


@pytest.fixture(scope="module")
def every_layer():
    """One all-layers MiniLM scorer for the module (loading it is the slow part)."""
    return all_layers_scorer("minilm")


def _load_script():
    spec = importlib.util.spec_from_file_location("compute_baseline_script", REPO / "scripts" / "compute_baseline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_writes_means_of_bertscore_on_the_sampled_pairs(tmp_path, every_layer, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    # A duplicate and blank lines: dropped, so no pair is a sentence with itself.
    corpus.write_text("\n".join(CORPUS + ["", CORPUS[0], "  "]) + "\n", encoding="utf-8")
    out = tmp_path / "en" / "model.tsv"
    script = _load_script()
    monkeypatch.setattr(script, "all_layers_scorer", lambda model, **options: every_layer)
    assert (
        script.main(["--model", "minilm", "--corpus", str(corpus), "--pairs", "30", "--seed", "7", "--out", str(out)])
        == 0
    )

    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "LAYER,P,R,F"
    assert [line.split(",")[0] for line in lines[1:]] == [str(i) for i in range(7)]  # MiniLM: 6 layers + embeddings
    table = read_baseline(out)

    # Independently: the same pairs scored by a plain BERTScorer call, averaged per layer.
    pairs = np.concatenate(sample_pair_groups(len(CORPUS), 30, seed=7))
    assert len(pairs) == 30 and np.all(pairs[:, 0] != pairs[:, 1])
    result = every_layer.score([CORPUS[i] for i in pairs[:, 0]], [CORPUS[j] for j in pairs[:, 1]])
    expected = np.stack([result.precision.mean(axis=1), result.recall.mean(axis=1), result.f1.mean(axis=1)], axis=1)
    np.testing.assert_allclose(table, expected, rtol=1e-6)  # the file keeps float32 digits


def test_same_seed_same_pairs_other_seed_other_pairs():
    a = np.concatenate(sample_pair_groups(50, 500, seed=3))
    b = np.concatenate(sample_pair_groups(50, 500, seed=3))
    c = np.concatenate(sample_pair_groups(50, 500, seed=4))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.shape == (500, 2) and np.all(a[:, 0] != a[:, 1])
    # Both directions occur (P and R are not symmetric), and every sentence is drawn.
    assert np.any(a[:, 0] < a[:, 1]) and np.any(a[:, 0] > a[:, 1])
    assert set(a.ravel().tolist()) == set(range(50))


def test_compute_baseline_is_deterministic(every_layer):
    first = compute_baseline(CORPUS, 12, seed=1, scorer=every_layer, group_size=4)
    second = compute_baseline(CORPUS, 12, seed=1, scorer=every_layer, group_size=4)
    np.testing.assert_array_equal(first.mean, second.mean)
    assert first.n_pairs == 12 and first.n_groups == 2 and first.mean.shape == (7, 3)
    assert np.all(first.group_sem >= 0) and np.all(first.pair_sem > 0)


def test_rejects_a_scorer_that_rescales_or_uses_one_layer(minilm_scorer):
    with pytest.raises(ValueError, match="all_layers"):
        compute_baseline(CORPUS, 4, seed=0, scorer=minilm_scorer)


def test_corpus_from_text_and_darr_jsonl(tmp_path):
    text = tmp_path / "refs.txt"
    text.write_text("a b c\n\nd e f\na b c\n", encoding="utf-8")
    darr = tmp_path / "wmt-xx-en.jsonl"
    record = {
        "id": 0,
        "lp": "xx-en",
        "src": "s",
        "ref": "g h i",
        "better": {"system": "A", "text": "x"},
        "worse": {"system": "B", "text": "y"},
    }
    darr.write_text("\n".join(json.dumps(dict(record, id=i)) for i in range(3)) + "\n", encoding="utf-8")
    # daRR files repeat the reference for every pair; only the references are sentences here.
    assert load_corpora([text, darr]) == ["a b c", "d e f", "g h i"]
    with pytest.raises(ValueError, match="at least 2"):
        load_corpora([darr])


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_sentences"):
        sample_pair_groups(1, 5, seed=0)
    with pytest.raises(ValueError, match="group_size"):
        sample_pair_groups(5, 5, seed=0, group_size=1)
    with pytest.raises(ValueError, match="shape"):
        write_baseline_text(np.zeros((3, 2)))
    # a negative seed is refused before a model loads: the model name would fail otherwise
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0 \(seed=\), got -1"):
        compute_baseline(["a b", "c d", "e f"], 4, -1, model="no-such-model")


def test_shipped_minilm_baseline_rescales_unrelated_pairs_to_about_zero():
    from nlgscore.bertscore import BERTScorer

    table = read_baseline(SHIPPED)
    assert table.shape == (7, 3) and np.all((table > 0) & (table < 1))
    scorer = BERTScorer(model_type="minilm", lang="en", rescale_with_baseline=True)
    assert "package:en/all-MiniLM-L6-v2.tsv" in str(scorer.signature)  # found among the shipped files
    pairs = np.concatenate(sample_pair_groups(len(UNRELATED), 60, seed=11))
    result = scorer.score([UNRELATED[i] for i in pairs[:, 0]], [UNRELATED[j] for j in pairs[:, 1]])
    assert abs(float(np.mean(result.f1))) < 0.15
    # Unrescaled scores of the same pairs sit well above 0: the baseline did the work.
    raw = BERTScorer(model_type="minilm").score(
        [UNRELATED[i] for i in pairs[:, 0]], [UNRELATED[j] for j in pairs[:, 1]]
    )
    assert float(np.mean(raw.f1)) > 0.2


def test_the_readmes_baseline_command_on_a_slice(tmp_path, every_layer):
    """The BERTScore page's command that reproduces the shipped MiniLM baseline, run as written
    on its first 240 pairs: the documented 3,974 sentences, and the first 2 of the full run's 200
    groups (the full run, by hand: every value within 3e-8 of the shipped file)."""
    import os
    import re
    import subprocess
    import sys

    from conftest import require_data

    data = require_data("wmt21-de-en").parent
    text = (REPO / "docs" / "metrics" / "bertscore.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- baseline-recipe:.*?-->\n```bash notest\n(.*?)```", text, re.S)
    assert block, "docs/metrics/bertscore.md lost its baseline-recipe block"
    command = block.group(1)
    for old, new in (
        ("D=data", f"D={data}"),
        ("python scripts/", f"{sys.executable} scripts/"),
        ("--pairs 24000", "--pairs 240"),
        ("--out baselines/en/all-MiniLM-L6-v2.tsv", f"--out {tmp_path}/b.tsv"),
    ):
        assert old in command
        command = command.replace(old, new)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "240 pairs in 2 groups from 3974 distinct sentences, seed 1" in done.stdout
    files = re.findall(r"--corpus (\S+)", command)
    sentences = load_corpora([Path(f.replace("$D", str(data))) for f in files])
    groups = sample_pair_groups(len(sentences), 240, seed=1)
    full = sample_pair_groups(len(sentences), 24000, seed=1)
    assert len(full) == 200 and all(np.array_equal(a, b) for a, b in zip(groups, full[:2], strict=False))
    pairs = np.concatenate(groups)  # independently: one plain BERTScorer call over the slice's pairs
    result = every_layer.score([sentences[i] for i in pairs[:, 0]], [sentences[j] for j in pairs[:, 1]])
    expected = np.stack([result.precision.mean(axis=1), result.recall.mean(axis=1), result.f1.mean(axis=1)], axis=1)
    np.testing.assert_allclose(read_baseline(tmp_path / "b.tsv"), expected, rtol=1e-6)  # the file keeps float32 digits
