"""Prism token layout against the golden token ids (original fairseq layout, not M2M100Tokenizer's)."""

import json
from pathlib import Path

import pytest

from nlgscore.seq2seq.prism_tokenizer import PrismTokenizer, language_ids

GOLDEN = Path(__file__).parents[1] / "golden"
CASES = json.loads((GOLDEN / "golden_prism.json").read_text(encoding="utf-8"))["cases"]
MISMATCH = json.loads((GOLDEN / "golden_prism.json").read_text(encoding="utf-8"))["hf_tokenizer_mismatches"][0]


@pytest.fixture(scope="module")
def tok():
    return PrismTokenizer.from_folder(str(GOLDEN / "tiny-prism"))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_token_ids_match_golden(tok, case):
    ids = case["token_ids"]
    for name in ("src", "ref", "cand"):
        assert tok.pieces(case[name]) == ids["pieces"][name]
        encoded = tok.encode([case[name]])[0]
        assert tok.source(encoded) == (ids[f"{name}_as_source"], False)
        if name != "src":
            assert tok.target(encoded, "en") == (ids[f"{name}_as_target"], False)


def test_literal_special_token_text_is_ordinary_text(tok):
    # Decision (matches the original Prism): "</s>" or "<pad>" written in a text is split by
    # SentencePiece into characters, never mapped to the special ids, so it cannot end a sequence.
    encoded = tok.encode([MISMATCH["text"]])[0]
    assert tok.source(encoded)[0] == MISMATCH["reference_source"]
    assert tok.pieces(MISMATCH["text"]) == MISMATCH["reference_pieces"]
    for text in ("<pad> padded", "a </s> b <s> c <unk>"):
        ids = tok.encode([text])[0]
        assert not {tok.pad_id, tok.eos_id, 0} & set(ids), ids


def test_language_tag_ids(tok):
    assert tok.lang_id("en") == 819  # len(vocab.json)=801 + index 18 of "en" in M2M100's list
    assert (
        tok.lang_id("de") == 801 + 16
    )  # "de" is 17th in M2M100's list (af am ar ast az ba be bg bn br bs ca ceb cs cy da de)
    with pytest.raises(ValueError, match="lang 'xx'"):
        tok.lang_id("xx")


def test_both_tag_spellings_in_vocabulary():
    assert language_ids({"<pad>": 1, "<en>": 37, "<fr>": 71}) == {"en": 37, "fr": 71}
    assert language_ids({"<pad>": 1, "__en__": 5}) == {"en": 5}
    assert language_ids({"<pad>": 1}) == {}  # no tags and not an M2M100 folder


def test_truncation_keeps_eos_and_tag(tok):
    tok = PrismTokenizer(
        str(GOLDEN / "tiny-prism" / "sentencepiece.bpe.model"), tok.vocab, tok.lang_ids, max_positions=6
    )
    ids = list(range(10, 20))
    assert tok.source(ids) == (ids[:5] + [tok.eos_id], True)
    assert tok.target(ids, "en") == ([819] + ids[:4] + [tok.eos_id], True)
    assert tok.source(ids[:5]) == (ids[:5] + [tok.eos_id], False)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="SentencePiece model"):
        PrismTokenizer.from_folder(str(tmp_path))
