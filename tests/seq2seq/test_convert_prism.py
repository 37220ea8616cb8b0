"""scripts/convert_prism_fairseq.py on tiny synthetic fairseq checkpoints, pre-norm and post-norm.

The checkpoints are built here with the real fairseq transformer key names (random weights), the
SentencePiece model is trained here on a few lines, and the converted folder's scores are checked
against a direct, from-scratch computation of the fairseq transformer on the original tensors (no
transformers code involved). m39v1 itself is post-norm (fairseq's default ``transformer``).
"""

import argparse
import importlib.util
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from nlgscore.seq2seq.prism import PrismScorer

ROOT = Path(__file__).resolve().parents[2]
D, HEADS, FFN, ENC_LAYERS, DEC_LAYERS = 16, 2, 24, 2, 1
LINES = [
    "The cat sat on the mat.",
    "A cat was sitting on the mat.",
    "Prices rose sharply in the last quarter.",
    "The meeting starts at noon.",
    "Hello world, this is a small test.",
    "She went to the market to buy apples.",
]


def _converter():
    spec = importlib.util.spec_from_file_location(
        "convert_prism_fairseq", ROOT / "scripts" / "convert_prism_fairseq.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _attention(prefix, gen):
    out = {}
    for name in ("k", "v", "q", "out"):
        out[f"{prefix}.{name}_proj.weight"] = torch.randn(D, D, generator=gen) * 0.3
        out[f"{prefix}.{name}_proj.bias"] = torch.randn(D, generator=gen) * 0.1
    return out


def _norm(prefix, gen):
    return {
        f"{prefix}.weight": 1 + 0.1 * torch.randn(D, generator=gen),
        f"{prefix}.bias": 0.1 * torch.randn(D, generator=gen),
    }


def _fairseq_state(vocab_size, gen, pre_norm):
    embed = torch.randn(vocab_size, D, generator=gen) * D**-0.5
    state = {
        "encoder.version": torch.tensor([3.0]),
        "encoder.embed_tokens.weight": embed,
        "encoder.embed_positions._float_tensor": torch.zeros(1),
    }
    for side, layers in (("encoder", ENC_LAYERS), ("decoder", DEC_LAYERS)):
        for i in range(layers):
            p = f"{side}.layers.{i}"
            state.update(_attention(f"{p}.self_attn", gen))
            state.update(_norm(f"{p}.self_attn_layer_norm", gen))
            if side == "decoder":
                state.update(_attention(f"{p}.encoder_attn", gen))
                state.update(_norm(f"{p}.encoder_attn_layer_norm", gen))
            state[f"{p}.fc1.weight"] = torch.randn(FFN, D, generator=gen) * 0.3
            state[f"{p}.fc1.bias"] = torch.randn(FFN, generator=gen) * 0.1
            state[f"{p}.fc2.weight"] = torch.randn(D, FFN, generator=gen) * 0.3
            state[f"{p}.fc2.bias"] = torch.randn(D, generator=gen) * 0.1
            state.update(_norm(f"{p}.final_layer_norm", gen))
        if pre_norm:  # fairseq adds a final layer norm only with --*-normalize-before
            state.update(_norm(f"{side}.layer_norm", gen))
    state.update(
        {
            "decoder.version": torch.tensor([3.0]),
            "decoder.embed_tokens.weight": embed,
            "decoder.output_projection.weight": embed,
        }
    )
    state["decoder.embed_positions._float_tensor"] = torch.zeros(1)
    return state


@pytest.fixture(scope="module", params=["pre-norm", "post-norm"])
def fairseq_dir(request, tmp_path_factory):
    import sentencepiece

    pre_norm = request.param == "pre-norm"
    folder = tmp_path_factory.mktemp("m39tiny")
    (folder / "train.txt").write_text("\n".join(LINES * 3), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(folder / "train.txt"),
        model_prefix=str(folder / "spm"),
        vocab_size=40,
        model_type="unigram",
        hard_vocab_limit=False,
        character_coverage=1.0,
        normalization_rule_name="nmt_nfkc",
        minloglevel=2,
    )
    sp = sentencepiece.SentencePieceProcessor(model_file=str(folder / "spm.model"))
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_control(i) or sp.is_unknown(i))]
    symbols = ["<en>", "<fr>"] + pieces  # Prism's dictionary holds its language tags like pieces
    lines = "".join(f"{s} {100 - i}\n" for i, s in enumerate(symbols))
    for name in ("dict.src.txt", "dict.tgt.txt"):
        (folder / name).write_text(lines, encoding="utf-8")
    size = 8 * math.ceil((4 + len(symbols)) / 8)  # fairseq pads the dictionary to a multiple of 8
    args = argparse.Namespace(
        arch="transformer",
        encoder_attention_heads=HEADS,
        decoder_attention_heads=HEADS,
        encoder_normalize_before=pre_norm,
        decoder_normalize_before=pre_norm,
        share_all_embeddings=True,
        max_source_positions=1024,
        max_target_positions=1024,
        activation_fn="relu",
        dropout=0.1,
    )
    checkpoint = {
        "args": args,
        "model": _fairseq_state(size, torch.Generator().manual_seed(0), pre_norm),
        "optimizer_history": [
            {"criterion_name": "LabelSmoothedCrossEntropyCriterion", "optimizer_name": "FairseqAdam", "num_updates": 7}
        ],
        "extra_state": {"epoch": 1},
        "last_optimizer_state": None,
    }
    torch.save(checkpoint, folder / "checkpoint.pt")
    return folder


@pytest.fixture(scope="module")
def converted(fairseq_dir, tmp_path_factory):
    return Path(_converter().convert(str(fairseq_dir), str(tmp_path_factory.mktemp("hf") / "out")))


# --- direct computation of the fairseq transformer (sinusoidal positions, tied output) ---


def _sinusoids(n, pad=1):
    half = D // 2
    freqs = torch.exp(torch.arange(half, dtype=torch.float64) * -(math.log(10000) / (half - 1)))
    angles = torch.arange(pad + 1, pad + 1 + n, dtype=torch.float64)[:, None] * freqs[None]
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def _ln(x, s, p):
    return torch.nn.functional.layer_norm(x, (D,), s[f"{p}.weight"], s[f"{p}.bias"], eps=1e-5)


def _mha(q_in, kv_in, s, p, causal):
    def proj(x, name):
        return (
            (x @ s[f"{p}.{name}_proj.weight"].T + s[f"{p}.{name}_proj.bias"])
            .view(len(x), HEADS, D // HEADS)
            .transpose(0, 1)
        )

    q, k, v = proj(q_in, "q") * (D // HEADS) ** -0.5, proj(kv_in, "k"), proj(kv_in, "v")
    scores = q @ k.transpose(1, 2)
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores[0], dtype=torch.bool).triu(1), float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(0, 1).reshape(len(q_in), D)
    return out @ s[f"{p}.out_proj.weight"].T + s[f"{p}.out_proj.bias"]


def _ffn(x, s, p):
    return torch.relu(x @ s[f"{p}.fc1.weight"].T + s[f"{p}.fc1.bias"]) @ s[f"{p}.fc2.weight"].T + s[f"{p}.fc2.bias"]


def _residual(x, s, norm, sublayer, pre_norm):
    """fairseq's TransformerEncoderLayer/DecoderLayer: norm before the sublayer, or after the residual."""
    if pre_norm:
        return x + sublayer(_ln(x, s, norm))
    return _ln(x + sublayer(x), s, norm)


def fairseq_logprobs(state, source, target, eos=2):
    s = {k: v.double() for k, v in state.items()}
    pre_norm = "encoder.layer_norm.weight" in s
    embed = s["encoder.embed_tokens.weight"]
    x = math.sqrt(D) * embed[source] + _sinusoids(len(source))
    for i in range(ENC_LAYERS):
        p = f"encoder.layers.{i}"
        x = _residual(
            x, s, f"{p}.self_attn_layer_norm", lambda h, p=p: _mha(h, h, s, f"{p}.self_attn", causal=False), pre_norm
        )
        x = _residual(x, s, f"{p}.final_layer_norm", lambda h, p=p: _ffn(h, s, p), pre_norm)
    enc = _ln(x, s, "encoder.layer_norm") if pre_norm else x
    decoder_input = [eos] + list(target[:-1])
    y = math.sqrt(D) * embed[decoder_input] + _sinusoids(len(decoder_input))
    for i in range(DEC_LAYERS):
        p = f"decoder.layers.{i}"
        y = _residual(
            y, s, f"{p}.self_attn_layer_norm", lambda h, p=p: _mha(h, h, s, f"{p}.self_attn", causal=True), pre_norm
        )
        y = _residual(
            y,
            s,
            f"{p}.encoder_attn_layer_norm",
            lambda h, p=p: _mha(h, enc, s, f"{p}.encoder_attn", causal=False),
            pre_norm,
        )
        y = _residual(y, s, f"{p}.final_layer_norm", lambda h, p=p: _ffn(h, s, p), pre_norm)
    if pre_norm:
        y = _ln(y, s, "decoder.layer_norm")
    logits = y @ s["decoder.output_projection.weight"].T
    return logits.log_softmax(-1)[torch.arange(len(target)), torch.tensor(target)].numpy()


def test_converted_files_and_vocabulary(fairseq_dir, converted):
    assert {p.name for p in converted.iterdir()} >= {
        "config.json",
        "model.safetensors",
        "spm.model",
        "prism_vocab.json",
    }
    config = json.loads((converted / "config.json").read_text())
    assert config["model_type"] == "prism"
    assert (config["d_model"], config["encoder_layers"], config["decoder_layers"], config["encoder_ffn_dim"]) == (
        D,
        ENC_LAYERS,
        DEC_LAYERS,
        FFN,
    )
    assert (config["pad_token_id"], config["eos_token_id"], config["decoder_start_token_id"]) == (1, 2, 2)
    vocab = json.loads((converted / "prism_vocab.json").read_text(encoding="utf-8"))
    assert [k for k, _ in sorted(vocab.items(), key=lambda kv: kv[1])][:6] == [
        "<s>",
        "<pad>",
        "</s>",
        "<unk>",
        "<en>",
        "<fr>",
    ]
    assert len(vocab) == config["vocab_size"] and sorted(vocab.values()) == list(range(len(vocab)))


def _check_against_fairseq(folder, state, batch_size=None):
    scorer = PrismScorer(str(folder), lang="fr", batch_size=batch_size)
    tok = scorer.tokenizer
    assert tok.lang_id("fr") == 5  # "<fr>" as written in the fairseq dictionary
    cands = ["The cat sat on the mat.", "Hello world!", "", "She went to the market to buy apples and pears."]
    refs = ["A cat was sitting on the mat.", "Prices rose.", "Nothing.", "The meeting starts at noon."]
    result = scorer.score(cands, refs=refs)
    for i, (cand, ref) in enumerate(zip(cands, refs)):
        c, r = tok.encode([cand, ref])
        forward = fairseq_logprobs(state, tok.source(r)[0], tok.target(c, "fr")[0])
        backward = fairseq_logprobs(state, tok.source(c)[0], tok.target(r, "fr")[0])
        assert result.columns()["H_cand_given_ref"][i] == pytest.approx(np.mean(forward[1:]), abs=1e-5)
        assert result.columns()["G_ref_given_cand"][i] == pytest.approx(np.sum(backward[1:]), abs=1e-5)
        assert result.segment[i] == pytest.approx(0.5 * np.mean(forward[1:]) + 0.5 * np.mean(backward[1:]), abs=1e-5)
    return scorer


def test_converted_logprobs_equal_direct_fairseq_computation(fairseq_dir, converted):
    state, args = _converter().load_fairseq_checkpoint(str(fairseq_dir / "checkpoint.pt"))
    scorer = _check_against_fairseq(converted, state)
    pre_norm = args["encoder_normalize_before"]
    assert type(scorer._loaded.model).__name__ == ("M2M100ForConditionalGeneration" if pre_norm else "MarianMTModel")
    if not pre_norm:  # the Marian route also unpadded, one pair per batch
        _check_against_fairseq(converted, state, batch_size=1)


def test_port_layout_with_tied_copies_and_missing_weights(fairseq_dir, converted, tmp_path):
    """As PrismForConditionalGeneration may save it: tied copies and position tables stored too."""
    from safetensors.torch import load_file, save_file

    state, _ = _converter().load_fairseq_checkpoint(str(fairseq_dir / "checkpoint.pt"))
    folder = tmp_path / "port"
    shutil.copytree(converted, folder)
    weights = load_file(str(folder / "model.safetensors"))
    for key in ("lm_head.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"):
        weights[key] = weights["model.shared.weight"].clone()
    weights["model.encoder.embed_positions.weights"] = torch.zeros(1026, D)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    _check_against_fairseq(folder, state)
    if "model.encoder.layer_norm.weight" not in weights:  # post-norm: a base-model save without "model."
        bare = {k[len("model.") :] if k.startswith("model.") else k: v for k, v in weights.items()}
        save_file(bare, str(folder / "model.safetensors"), metadata={"format": "pt"})
        _check_against_fairseq(folder, state)
    del weights["model.decoder.layers.0.encoder_attn.v_proj.bias"]
    weights["model.decoder.adapter.weight"] = torch.zeros(2)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(
        ValueError,
        match=r"missing weights: model\.decoder\.layers\.0\.encoder_attn\.v_proj\.bias; "
        r"unexpected weights: model\.decoder\.adapter\.weight",
    ):
        PrismScorer(str(folder))


def test_refuses_what_it_cannot_represent(fairseq_dir):
    converter = _converter()
    state, args = converter.load_fairseq_checkpoint(str(fairseq_dir / "checkpoint.pt"))
    state["decoder.output_projection.weight"] = state["decoder.output_projection.weight"] + 1
    with pytest.raises(ValueError, match="output_projection.weight differs"):
        converter._check_architecture(state, args)
    with pytest.raises(ValueError, match="activation 'gelu'"):
        converter._check_architecture(state, {**args, "activation_fn": "gelu"})


def test_cli_reports_missing_directory(tmp_path, capsys):
    assert _converter().main([str(tmp_path / "nope"), str(tmp_path / "out")]) == 1
    assert "checkpoint.pt" in capsys.readouterr().err


def test_checkpoint_without_shared_embeddings_is_refused(fairseq_dir, tmp_path):
    """A clear ValueError (exit 1 from the script), not an uncaught KeyError."""
    broken = tmp_path / "broken"
    shutil.copytree(fairseq_dir, broken)
    checkpoint = torch.load(broken / "checkpoint.pt", weights_only=False)
    del checkpoint["model"]["encoder.embed_tokens.weight"]
    torch.save(checkpoint, broken / "checkpoint.pt")
    converter = _converter()
    with pytest.raises(ValueError, match="encoder.embed_tokens.weight"):
        converter.convert(str(broken), str(tmp_path / "out"))
    assert converter.main([str(broken), str(tmp_path / "out2")]) == 1
