"""Today's encoders as BERTScore backbones: ModernBERT and a decoder-based embedder (Qwen3).

Tiny random models are built here from transformers' configs and saved to a folder, which is
then loaded as any user's folder would be. ModernBERT gets the MiniLM tokenizer (a WordPiece
[CLS] ... [SEP] tokenizer, as ModernBERT's own); Qwen3 gets a word-level tokenizer that closes
each text with <|endoftext|>, as Qwen3-Embedding's does.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nlgscore.bertscore import BERTScorer

WORDS = "the a cat dog sat on mat was is red blue fire house old new river bank money".split()


@pytest.fixture(scope="module")
def modernbert(tmp_path_factory):
    from transformers import AutoTokenizer, ModernBertConfig, ModernBertModel

    from nlgscore.backend.models import resolve

    folder = tmp_path_factory.mktemp("modernbert")
    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    tokenizer.model_max_length = 8192
    torch.manual_seed(0)
    config = ModernBertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        cls_token_id=tokenizer.cls_token_id,
        sep_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        global_attn_every_n_layers=2,
        local_attention=16,
    )
    ModernBertModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def qwen3(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3Model

    folder = tmp_path_factory.mktemp("qwen3")
    vocab = {"<unk>": 0, "<|endoftext|>": 1, **{w: i + 2 for i, w in enumerate(WORDS)}}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>", special_tokens=[("<|endoftext|>", 1)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        pad_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        model_max_length=64,
    )
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=64,
        pad_token_id=1,
        eos_token_id=1,
        bos_token_id=1,
    )
    Qwen3Model(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def _sentence(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, size=n))


def _full_model_rows(folder: str, auto_class: str, ids):
    """The model's own last hidden state (all layers, its final norm), L2-normalised."""
    import transformers

    model = getattr(transformers, auto_class).from_pretrained(folder).eval()
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long))[0][0]
    return out / out.norm(dim=-1, keepdim=True)


def test_modernbert_folder_scores_with_its_8192_positions(modernbert):
    scorer = BERTScorer(model_type=modernbert, num_layers=3)
    assert scorer.encoder.max_length == 8192 and not scorer.encoder.causal
    assert scorer.encoder.zero_weight_ids == sorted(
        {scorer.encoder.tokenizer.cls_token_id, scorer.encoder.tokenizer.sep_token_id}
    )
    text = "the cat sat on the mat near the old river bank"
    ids = scorer.encoder.tokenize([text])[0][0]
    # the truncated stack at its last layer is the model's own output (final norm included)
    assert torch.allclose(scorer._embed_text(ids), _full_model_rows(modernbert, "ModernBertModel", ids), atol=1e-5)
    long_text = " ".join(["the cat sat on the mat near the old river bank"] * 60)  # ~660 tokens: one window here
    result = scorer.compute([long_text, "a dog"], [long_text + " and the dog", "a dog"])
    assert result.windows == [1, 1] and result.f1[1] == pytest.approx(1.0, abs=1e-5)
    assert scorer.signature["max_length"] == "8192"


def test_modernbert_windows_beyond_its_window(modernbert):
    short_window = BERTScorer(model_type=modernbert, num_layers=2, max_length=64)
    head = _sentence(90, 0)
    a, b = f"{head} red fire house", f"{head} blue river bank"
    result = short_window.compute(["red fire house", "red fire house"], [a, b])
    assert min(result.windows) > 1 and result.precision[0] != result.precision[1]
    grid = short_window.matrix([a, b], [a, b])
    np.testing.assert_allclose(np.diag(grid), 1.0, atol=1e-5)


def test_qwen3_embedder_last_layer_and_no_weight_on_its_end_token(qwen3):
    scorer = BERTScorer(model_type=qwen3)  # no tuned layer: a decoder-based embedder uses its last layer
    assert scorer.num_layers == 3 and scorer.encoder.causal
    assert scorer.encoder.prefix == [] and scorer.encoder.suffix == [1] and scorer.encoder.zero_weight_ids == [1]
    ids = scorer.encoder.tokenize(["the cat sat on the mat"])[0][0]
    assert ids[-1] == 1
    assert torch.allclose(scorer._embed_text(ids), _full_model_rows(qwen3, "Qwen3Model", ids), atol=1e-5)
    # causal attention: a token's embedding does not depend on what follows it (right padding is harmless)
    short, longer = scorer.encoder.embed([[2, 4, 6], [2, 4, 6, 7, 8]])
    assert torch.allclose(short[:3], longer[:3], atol=1e-5)
    result = scorer.compute(["the cat sat", "red fire"], ["the cat sat", "blue house"])
    assert result.f1[0] == pytest.approx(1.0, abs=1e-5) and result.f1[1] < 0.99


def test_qwen3_long_inputs_take_the_window_with_most_left_context(qwen3):
    scorer = BERTScorer(model_type=qwen3, num_layers=2)
    cut = BERTScorer(model_type=qwen3, num_layers=2, long_inputs="truncate")
    head = _sentence(100, 1)
    refs = [f"{head} red fire house", f"{head} blue river bank"]
    windowed = scorer.compute(["red fire house"] * 2, refs)
    with pytest.warns(UserWarning, match="truncated"):
        truncated = cut.compute(["red fire house"] * 2, refs)
    assert windowed.precision[0] != windowed.precision[1] and truncated.precision[0] == truncated.precision[1]
    ids = scorer.encoder.tokenize([refs[0]], truncate=False)[0][0]
    plan = scorer._window_plan(ids)
    # the last content token comes from the last window; a token in the middle from a window where
    # at least half a window precedes it
    assert plan.rows[-2] > sum(len(w) for w in plan.windows[:-1])
    middle = len(ids) // 2
    window = np.searchsorted(np.cumsum([len(w) for w in plan.windows]), plan.rows[middle], side="right")
    assert middle - plan.spans[window][0] >= scorer.window_stride - 1
