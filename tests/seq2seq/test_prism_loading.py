"""Loading the dariast/prism layout (model_type "prism", prism_vocab.json + spm.model).

The real converted m39v1 weights are 3 GB and on the Hub, so the same layout is rebuilt here from
the tiny-prism weights: it must give exactly the scores of the stock M2M100 folder.
"""

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from nlgscore.backend.tables import table
from nlgscore.seq2seq.prism import PrismScorer

TINY = Path(__file__).parents[1] / "golden" / "tiny-prism"
CANDS = ["The cat sat on the mat.", "Prices rose sharply.", ""]
REFS = ["A cat was sitting on the mat.", "In the last quarter prices rose.", "Nothing."]


def prism_layout(folder: Path, spelling: str = "<{}>") -> Path:
    """tiny-prism rewritten the way dariast/prism stores m39v1 (see transformers PR #35281)."""
    from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

    folder.mkdir(parents=True)
    config = json.loads((TINY / "config.json").read_text())
    config.update(model_type="prism", architectures=["PrismForConditionalGeneration"])
    (folder / "config.json").write_text(json.dumps(config))
    shutil.copyfile(TINY / "model.safetensors", folder / "model.safetensors")
    shutil.copyfile(TINY / "sentencepiece.bpe.model", folder / "spm.model")
    vocab = json.loads((TINY / "vocab.json").read_text(encoding="utf-8"))
    size, codes = len(vocab), FAIRSEQ_LANGUAGE_CODES["m2m100"]
    # Tags inside the vocabulary, at the ids the stock folder gives them, so scores must agree.
    vocab.update(
        {spelling.format(code): size + codes.index(code) for code in table("prism")["languages"] if code in codes}
    )
    (folder / "prism_vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PrismTokenizer", "language_codes": "prism"})
    )
    return folder


@pytest.fixture(scope="module")
def stock():
    return PrismScorer(str(TINY)).score(CANDS, refs=REFS)


@pytest.mark.parametrize("spelling", ["<{}>", "__{}__"])
def test_prism_layout_scores_like_the_stock_folder(tmp_path, stock, spelling):
    scorer = PrismScorer(str(prism_layout(tmp_path / "prism", spelling)))
    assert scorer.tokenizer.lang_id("en") == 819
    assert type(scorer._loaded.model).__name__ == "M2M100ForConditionalGeneration"
    result = scorer.score(CANDS, refs=REFS)
    assert result.columns() == stock.columns()  # same weights, same ids: bit-identical


def test_language_outside_the_vocabulary_is_refused(tmp_path):
    scorer = PrismScorer(str(prism_layout(tmp_path / "prism")))
    with pytest.raises(ValueError, match="lang 'af' is not supported"):
        scorer.tokenizer.lang_id("af")  # not an m39v1 language, so no <af> tag was written
    with pytest.raises(ValueError, match="lang 'af'"):
        PrismScorer(str(tmp_path / "prism"), lang="af")


def _rewrite_weights(folder: Path, edit) -> None:
    weights = load_file(str(folder / "model.safetensors"))
    edit(weights)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})


def test_missing_weight_is_named(tmp_path):
    folder = prism_layout(tmp_path / "prism")
    _rewrite_weights(folder, lambda w: w.pop("model.encoder.layers.1.fc2.weight"))
    with pytest.raises(ValueError, match=r"missing weights: model\.encoder\.layers\.1\.fc2\.weight"):
        PrismScorer(str(folder))


def test_unexpected_weight_is_named_but_tied_and_position_tables_are_fine(tmp_path):
    folder = prism_layout(tmp_path / "prism")

    def add_harmless(weights):
        weights["lm_head.weight"] = weights["model.shared.weight"].clone()
        weights["model.encoder.embed_positions.weights"] = torch.zeros(4, 32)

    _rewrite_weights(folder, add_harmless)
    PrismScorer(str(folder))  # loads
    _rewrite_weights(folder, lambda w: w.__setitem__("model.encoder.adapter.weight", torch.zeros(2)))
    with pytest.raises(ValueError, match=r"unexpected weights: model\.encoder\.adapter\.weight"):
        PrismScorer(str(folder))


def test_folder_without_config(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no config.json"):
        PrismScorer(str(tmp_path / "empty"))
