"""Document-level Prism (context=k) against a transcription of doc-mt-metrics' recipe.

doc-mt-metrics' Doc-Prism (``Prism/prism.py``) is an mBART-50 scorer: it cannot load a Prism
(M2M100/fairseq-layout) checkpoint, and nlgscore's Prism cannot load mBART-50, so the two codes
share no model to compare numbers on. What is compared is what their recipe feeds a model:
``Prism/add_context.py`` line 23 joins the previous reference sentences and the sentence with
``" </s> "`` on both sides (the candidate after the *reference's* context), a SentencePiece
tokenizer turning that into each sentence's pieces with ``</s>`` between them; ``Prism/prism.py``
lines 59-82 score only the target's last sentence (its start found from the token length of the
text after the last separator), both directions averaged. Here the model is run by hand on those
ids (no nlgscore scoring code), counting the sentence's tokens and its ``</s>`` as Prism does at
sentence level, and nlgscore's ``context=k`` must give the same H to 1e-6.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from nlgscore.errors import ArgumentError
from nlgscore.seq2seq.prism_loading import load_prism

# The same float32 model on the same ids; nlgscore batches and pads, the transcription runs one
# pair unpadded: the sums differ by float32 rounding of ~20 log-probabilities (seen below 1e-6).
TOL = 1e-6


@pytest.fixture(scope="module")
def loaded(golden_dir):
    return load_prism(str(golden_dir / "tiny-prism"), device="cpu")


@pytest.fixture(scope="module")
def doc_texts(golden_dir):
    golden = json.load(open(golden_dir / "bertscore_minilm.json", encoding="utf-8"))
    docs = json.load(open(golden_dir / "doc_context.json", encoding="utf-8"))["doc_ids"]
    return golden["cands"][:24], golden["refs"][:24], docs[:24]


def _transcribed_h(loaded, source_context, source, target_context, target):
    """H(target | source) of their recipe's ids, by one forward pass of the model."""
    tok, model = loaded.tokenizer, loaded.model
    enc = lambda text: tok.encode([text])[0]  # noqa: E731
    joined = lambda ctx: [t for sentence in ctx for t in (*enc(sentence), tok.eos_id)]  # noqa: E731
    source_ids = joined(source_context) + enc(source) + [tok.eos_id]
    before = joined(target_context)
    target_ids = [tok.lang_id("en")] + before + enc(target) + [tok.eos_id]
    decoder_input = [tok.eos_id] + target_ids[:-1]  # fairseq starts decoding from </s>
    with torch.inference_mode():
        logits = (
            model(input_ids=torch.tensor([source_ids]), decoder_input_ids=torch.tensor([decoder_input]))
            .logits[0]
            .float()
        )
    logprobs = torch.log_softmax(logits, dim=-1)[torch.arange(len(target_ids)), torch.tensor(target_ids)]
    return float(logprobs[1 + len(before) :].double().mean())  # the sentence's tokens and its </s>


def test_matches_transcription_of_their_recipe(prism, loaded, doc_texts):
    cands, refs, docs = doc_texts
    k = 2
    result = prism.compute(cands, refs, context=k, doc_ids=docs)
    for i in range(len(cands)):
        start = i
        while start > 0 and i - start < k and docs[start - 1] == docs[i]:
            start -= 1
        ctx = refs[start:i]
        h_cand = _transcribed_h(loaded, ctx, refs[i], ctx, cands[i])
        h_ref = _transcribed_h(loaded, ctx, cands[i], ctx, refs[i])
        assert abs(result.H_cand_given_ref[i] - h_cand) <= TOL, i
        assert abs(result.H_ref_given_cand[i] - h_ref) <= TOL, i
        assert abs(result.scores[i] - (0.5 * h_cand + 0.5 * h_ref)) <= TOL, i


def test_first_lines_score_as_sentences_and_items_alone_as_in_batch(prism, doc_texts):
    cands, refs, docs = doc_texts
    plain = prism.compute(cands, refs).scores
    doc = prism.compute(cands, refs, context=2, doc_ids=docs, batch_size=3).scores
    firsts = [i for i in range(len(docs)) if i == 0 or docs[i] != docs[i - 1]]
    assert [doc[i] for i in firsts] == [plain[i] for i in firsts]
    assert all(doc[i] != plain[i] for i in range(len(docs)) if i not in firsts)
    start = docs.index(docs[9])
    alone = prism.compute(cands[start:10], refs[start:10], context=2, doc_ids=docs[start:10]).scores
    assert np.array_equal(alone, prism.compute(cands, refs, context=2, doc_ids=docs).scores[start:10])
    assert "|ctx:2|" in str(prism.compute(cands[:2], refs[:2], context=2, doc_ids=docs[:2]).signature)


def test_context_that_does_not_fit_is_dropped_oldest_first(golden_dir):
    from nlgscore.seq2seq.prism import PrismScorer

    scorer = PrismScorer(str(golden_dir / "tiny-prism"), lang="en")
    limit = scorer.tokenizer.max_positions
    long_ref = " ".join(["The committee met again."] * (limit // 4))  # over the limit alone
    cands, refs = ["Intro.", "Short one.", "They agreed."], [long_ref, "A short one.", "They agreed on it."]
    with_long = scorer.compute(cands, refs, context=2, doc_ids=[0, 0, 0]).scores
    without = scorer.compute(cands[1:], refs[1:], context=1, doc_ids=[0, 0]).scores
    assert with_long[2] == without[1]  # the over-long oldest sentence did not fit: only the other is read


def test_prism_score_takes_context(prism, doc_texts):
    cands, refs, docs = doc_texts
    assert (
        prism.score(cands[:5], refs=refs[:5], context=1, doc_ids=docs[:5]).scores
        == prism.compute(cands[:5], refs[:5], context=1, doc_ids=docs[:5]).scores
    )
    with pytest.raises(ArgumentError, match="doc_ids has 2 items but there are 5 predictions"):
        prism.score(cands[:5], refs=refs[:5], context=1, doc_ids=docs[:2])
