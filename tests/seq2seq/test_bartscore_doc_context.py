"""Document-level BARTScore (context=k): the ids of the doc-mt-metrics recipe, by hand.

doc-mt-metrics has no BARTScore; its recipe (``add_context.py``: the reference's previous
sentences joined before both sides with the model's separator, only the current sentence
scored) is applied to BART's layout: ``<s> ctx1 </s> ctx2 </s> sentence </s>``, the score the
mean log-probability of the sentence's tokens and its ``</s>``, with the separator before the
sentence counted where the sentence alone counts its ``<s>`` (so a line without context scores
as at sentence level). The model is run here by hand on those ids (no nlgscore scoring code).
"""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

# The same float32 model on the same ids; nlgscore batches and pads, this runs one pair unpadded.
TOL = 1e-6


@pytest.fixture(scope="module")
def tiny(golden_dir):
    path = str(golden_dir / "tiny-bart")
    return AutoTokenizer.from_pretrained(path), AutoModelForSeq2SeqLM.from_pretrained(path).eval()


def _by_hand(tiny, source_context, source, target_context, target):
    tok, model = tiny
    content = lambda text: tok(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    joined = lambda ctx: [t for s in ctx for t in (*content(s), tok.sep_token_id)]  # noqa: E731
    bos, eos = tok.bos_token_id, tok.eos_token_id
    source_ids = [bos] + joined(source_context) + content(source) + [eos]
    before = joined(target_context)
    target_ids = [bos] + before + content(target) + [eos]
    decoder_input = [model.config.decoder_start_token_id] + target_ids[:-1]
    with torch.inference_mode():
        logits = (
            model(input_ids=torch.tensor([source_ids]), decoder_input_ids=torch.tensor([decoder_input]))
            .logits[0]
            .float()
        )
    logprobs = torch.log_softmax(logits, dim=-1)[torch.arange(len(target_ids)), torch.tensor(target_ids)]
    start = len(before)  # the separator before the sentence (or <s> without context)
    return float(logprobs[start:].double().sum() / (len(target_ids) - start))


def test_matches_the_recipe_by_hand(bart, tiny, golden_dir):
    golden = json.load(open(golden_dir / "bertscore_minilm.json", encoding="utf-8"))
    docs = json.load(open(golden_dir / "doc_context.json", encoding="utf-8"))["doc_ids"][:14]
    cands, refs = golden["cands"][:14], golden["refs"][:14]
    result = bart.compute(cands, refs, direction="f", context=2, doc_ids=docs)
    for i in range(len(cands)):
        start = i
        while start > 0 and i - start < 2 and docs[start - 1] == docs[i]:
            start -= 1
        ctx = refs[start:i]
        precision = _by_hand(tiny, ctx, refs[i], ctx, cands[i])
        recall = _by_hand(tiny, ctx, cands[i], ctx, refs[i])
        assert abs(result.precision[i] - precision) <= TOL and abs(result.recall[i] - recall) <= TOL, i
    plain = bart.compute(cands, refs, direction="f").scores
    firsts = [i for i in range(len(docs)) if i == 0 or docs[i] != docs[i - 1]]
    assert [result.scores[i] for i in firsts] == [plain[i] for i in firsts]
    assert "|ctx:2|" in str(result.signature)


def test_item_alone_as_in_batch_and_source_context(bart):
    cands = ["A cat sat.", "It was glad.", "Then it slept."]
    srcs = ["Le chat était assis.", "Il était content.", "Puis il dormit."]
    whole = bart.compute(cands, sources=srcs, context=2, doc_ids=["d"] * 3, batch_size=1).scores
    alone = bart.compute(cands, sources=srcs, context=2, doc_ids=["d"] * 3).scores
    assert whole == alone
    assert whole[0] == bart.compute(cands[:1], sources=srcs[:1]).scores[0]
