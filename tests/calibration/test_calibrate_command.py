"""`nlgscore calibrate`: layer by segment Pearson with human scores, baseline from random
pairs, one file that BERTScorer(calibration=) and `bertscore --calibration` load.

The validation folder is built here in the human-scores layout (MQM): three systems, each
segment's score falling with the number of words a system changed, so the scores carry signal.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import pearsonr

from nlgscore.bertscore import BERTScorer
from nlgscore.calibration.recipe import calibrate
from nlgscore.errors import ArgumentError, DataError

REFS = [
    "The committee approved the budget on Monday.",
    "Two cats were rescued from the roof.",
    "The river flooded the old town.",
    "Prices rose sharply in the spring.",
    "The orchestra played Mozart in the square.",
    "A new library opens next week.",
    "The mayor promised lower taxes.",
    "Farmers expect a good harvest this year.",
    "The train was delayed by snow.",
    "Scientists found water on the moon.",
    "The museum shows paintings from Spain.",
    "The team won the final match.",
]
SWAPS = {
    "committee": "board",
    "budget": "plan",
    "cats": "dogs",
    "roof": "tree",
    "river": "lake",
    "town": "city",
    "Prices": "Costs",
    "spring": "winter",
    "Mozart": "Bach",
    "square": "park",
    "library": "school",
    "mayor": "governor",
    "taxes": "rents",
    "harvest": "season",
    "train": "bus",
    "snow": "rain",
    "water": "ice",
    "moon": "mars",
    "museum": "gallery",
    "team": "club",
}


def _degrade(text: str, k: int) -> str:
    words = text.split()
    changed = 0
    for i, word in enumerate(words):
        key = word.strip(".")
        if changed < k and key in SWAPS:
            words[i] = word.replace(key, SWAPS[key])
            changed += 1
    return " ".join(words)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("mqm")
    (root / "src.de").write_text("\n".join(f"quelle {i}" for i in range(len(REFS))) + "\n", encoding="utf-8")
    (root / "ref.A.en").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    rows = []
    for system, k in (("good", 0), ("mid", 1), ("bad", 2)):
        hyps = [_degrade(ref, k + i % 2) for i, ref in enumerate(REFS)]
        (root / f"hyp.{system}.en").write_text("\n".join(hyps) + "\n", encoding="utf-8")
        rows += [f"{system}\t{i + 1}\t{-5.0 * (k + i % 2) - 0.1 * (i % 3)}" for i in range(len(REFS))]
    (root / "mqm-seg-scores.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def calibrated(folder, tmp_path_factory):
    path = tmp_path_factory.mktemp("cal") / "minilm.calibration.json"
    fields, validation = calibrate("minilm", folder, path, pairs=300, seed=3)
    return path, fields, validation


def test_the_layer_is_the_best_segment_pearson(calibrated):
    _, fields, validation = calibrated
    assert len(validation.human) == 3 * len(REFS) and np.isfinite(validation.human).all()
    layered = BERTScorer(model_type="minilm", num_layers=6, all_layers=True)
    f = np.asarray(layered.compute(validation.hyps, validation.refs).f1)  # (7 layers, items)
    expected = [pearsonr(validation.human, f[layer]).statistic for layer in range(7)]
    np.testing.assert_allclose(fields["correlations"], expected, atol=1e-5)
    # a best layer by these correlations, 1e-5 apart from the file's (a near-tie may go either way)
    assert expected[fields["layer"]] >= max(expected) - 2e-5
    assert fields["model"] == "all-MiniLM-L6-v2"
    assert (
        len(fields["baseline"]) == 7 and fields["baseline_pairs"] == 300 and fields["baseline_sentences"] == len(REFS)
    )
    assert max(expected) > 0.5  # the folder's scores carry signal


def test_the_baseline_is_below_related_pairs_and_rescales_the_scorer(calibrated):
    path, fields, validation = calibrated
    baseline = np.asarray(fields["baseline"])
    assert (baseline > 0).all() and (baseline < 1).all()
    plain = BERTScorer(model_type="minilm", calibration=str(path))
    assert plain.num_layers == fields["layer"]
    raw = plain.compute(validation.hyps[:5], validation.refs[:5])
    assert (baseline[fields["layer"], 2] < np.asarray(raw.f1)).all()  # unrelated pairs score below related ones
    rescaled = BERTScorer(model_type="minilm", calibration=str(path), rescale_with_baseline=True).compute(
        validation.hyps[:5], validation.refs[:5]
    )
    b = baseline[fields["layer"], 2]
    np.testing.assert_allclose(rescaled.f1, (np.asarray(raw.f1) - b) / (1 - b), atol=1e-6)
    assert rescaled.signature["rescale"].startswith("calibration:") and rescaled.signature["L"] == str(fields["layer"])


def test_a_calibration_file_is_checked(calibrated, tmp_path, folder):
    import shutil

    from nlgscore.backend.models import resolve

    path, fields, _ = calibrated
    other = tmp_path / "other-model"  # MiniLM's files under another name: the file is not for it
    shutil.copytree(resolve("minilm").path, other)
    with pytest.raises(ArgumentError, match="was made for model 'all-MiniLM-L6-v2', not 'other-model'"):
        BERTScorer(model_type=str(other), calibration=str(path))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**json.loads(path.read_text()), "layer": 99}), encoding="utf-8")
    with pytest.raises(DataError, match="layer must be an int between 0 and 6"):
        BERTScorer(model_type="minilm", calibration=str(broken))
    with pytest.raises(FileNotFoundError, match="nlgscore calibrate"):
        BERTScorer(model_type="minilm", calibration=str(tmp_path / "missing.json"))
    with pytest.raises(DataError, match="the baseline needs at least 2 distinct references, got 1"):
        calibrate("minilm", folder, limit=1, pairs=10)


def test_a_negative_seed_is_refused_before_the_model_loads(folder, capsys):
    """--seed -1 scored every layer, then failed in numpy. A model that does not
    exist shows the refusal comes first."""
    from nlgscore.cli import main

    with pytest.raises(ArgumentError, match=r"seed must be an integer >= 0 \(seed=\), got -1"):
        calibrate("no-such-model", folder, seed=-1)
    assert main(["calibrate", "no-such-model", "--data", str(folder), "--seed", "-1", "--no-progress"]) == 2
    assert "error: seed must be an integer >= 0 (--seed), got -1" in capsys.readouterr().err


def test_cli_calibrates_a_new_model_then_scores_with_it(folder, tmp_path):
    """A tiny random ModernBERT, unknown to every table, is usable after one command."""
    import torch
    from transformers import AutoTokenizer, ModernBertConfig, ModernBertModel

    from nlgscore.backend.models import resolve

    model = tmp_path / "tiny-modernbert"
    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    torch.manual_seed(0)
    config = ModernBertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        pad_token_id=tokenizer.pad_token_id,
        cls_token_id=tokenizer.cls_token_id,
        sep_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    ModernBertModel(config).eval().save_pretrained(model)
    tokenizer.save_pretrained(model)
    out = tmp_path / "tiny.calibration.json"
    code = (
        "import sys; from nlgscore.cli import main; "
        f"rc = main(['calibrate', {str(model)!r}, '--data', {str(folder)!r}, '-o', {str(out)!r}, '--pairs', '50', '--no-progress']); "
        f"rc = rc or main(['bertscore', '-m', {str(model)!r}, '--calibration', {str(out)!r}, '--rescale', "
        f"'-c', {str(folder / 'hyp.good.en')!r}, "
        f"'-r', {str(folder / 'ref.A.en')!r}, '--json', '--no-progress']); sys.exit(rc)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    fields = json.loads(out.read_text(encoding="utf-8"))
    assert fields["model"] == "tiny-modernbert" and 0 <= fields["layer"] <= 2 and len(fields["baseline"]) == 3
    assert "<- chosen" in run.stdout and f"|L:{fields['layer']}|" in run.stdout and "rescale:calibration:" in run.stdout


WMT21 = __import__("pathlib").Path(__file__).resolve().parents[3] / "shared" / "data" / "wmt21-de-en"


@pytest.mark.skipif(not WMT21.is_dir(), reason="needs ../shared/data/wmt21-de-en")
def test_wmt21_da_folder_slice(tmp_path):
    """The WMT21 DA path on the first 8 segments: DA z of the judged items, F Pearson per layer."""
    fields, validation = calibrate("minilm", WMT21, tmp_path / "cal.json", pairs=100, limit=8)
    judged = ~np.isnan(validation.human)
    assert 0 < judged.sum() <= len(validation.hyps) == 19 * 8
    layered = BERTScorer(model_type="minilm", num_layers=6, all_layers=True)
    f = np.asarray(layered.compute(validation.hyps, validation.refs).f1)[:, judged]
    expected = [pearsonr(validation.human[judged], f[layer]).statistic for layer in range(7)]
    np.testing.assert_allclose(fields["correlations"], expected, atol=1e-5)
    # a best layer by these correlations, 1e-5 apart from the file's (a near-tie may go either way)
    assert expected[fields["layer"]] >= max(expected) - 2e-5
    assert fields["criterion"] == "F segment Pearson with DA z"
    assert fields["baseline_sentences"] == len(set(r.strip() for r in validation.refs))
