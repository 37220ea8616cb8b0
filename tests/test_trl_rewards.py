"""nlgscore.integrations.trl: TRL reward functions, tested in a real GRPOTrainer run.

The GRPO test trains a tiny random Llama (built here, with the tiny-bart tokenizer and a chat
template) for 2 steps on CPU with two nlgscore rewards, one synchronous and one async, wrapped
only to record what TRL passed in and what the reward returned. Nothing is mocked.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.trl import async_reward_function, completion_texts, reward_function

GOLDEN = Path(__file__).parent / "golden"
SPEC = "bertscore:minilm:L2"  # a low layer: cheap, and a real model
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


@pytest.fixture(scope="module")
def reward():
    return reward_function(SPEC)


def test_rewards_equal_compute_for_strings_and_several_references(reward):
    completions = ["It is cold today.", "Stocks fell.", "It rains a lot."]
    references = ["The weather is cold today.", ["Markets dropped.", "Stocks fell sharply."], ["Rain.", "It rains."]]
    rewards = reward(
        prompts=["q"] * 3, completions=completions, completion_ids=None, reference=references, trainer_state=None
    )
    expected = reward.scorer.compute(completions, references=references).scores
    assert rewards == pytest.approx(expected, abs=1e-6)
    assert all(isinstance(r, float) for r in rewards)


def test_column_and_name(reward):
    precision = reward_function(SPEC, column="precision", name="bs_p")
    assert precision.__name__ == "bs_p" and reward.__name__ == "bertscore_f1"
    out = precision(prompts=["q"], completions=["a cat"], reference=["the cat"])
    assert out == pytest.approx(reward.scorer.compute(["a cat"], ["the cat"]).precision.tolist(), abs=1e-6)
    with pytest.raises(ArgumentError, match="column must be one of precision, recall, f1"):
        reward_function(SPEC, column="bleu")


def test_reference_embeddings_are_cached_and_nothing_is_sharded(reward):
    scorer = reward.scorer
    assert scorer.cache_references, "BERTScore declares caches_embeddings: rewards keep reference embeddings"
    reward(prompts=["q"], completions=["some new completion"], reference=["a reference kept across steps"])
    assert "a reference kept across steps" in scorer._ref_cache
    assert "some new completion" not in scorer._ref_cache  # completions change every step
    encoder, encoded = scorer.encoder, []
    embed = encoder.embed
    encoder.embed = lambda id_lists: encoded.extend(id_lists) or embed(id_lists)  # counts, then encodes for real
    try:
        reward(
            prompts=["q", "q"],
            completions=["a later step", "its other completion"],
            reference=["a reference kept across steps"] * 2,
        )
    finally:
        del encoder.embed
    assert len(encoded) == 2, "a later step encodes its completions only; the reference comes from the cache"
    # every rank scores its own completions: the scorer never splits a call across ranks
    assert not scorer.shards
    with pytest.raises(ArgumentError, match="accelerator"):
        reward_function(SPEC, accelerator=object())
    with pytest.raises(ArgumentError, match="shard"):
        reward_function(SPEC, shard=True)


def test_errors_name_the_column_and_the_completion(reward):
    with pytest.raises(ArgumentError, match=r"no column 'reference' \(reference_column='reference'\).*\['answer'\]"):
        reward(prompts=["q"], completions=["a"], answer=["b"], trainer_state=None, log_metric=print)
    with pytest.raises(ArgumentError, match="completions\\[1\\] has no 'assistant' message"):
        reward(prompts=["q", "q"], completions=["a", [{"role": "user", "content": "b"}]], reference=["x", "y"])
    with pytest.raises(ArgumentTypeError, match="completions must be a list"):
        reward(prompts=["q"], completions="abc", reference=["x"])
    with pytest.raises(TypeError, match=r"answer\[0\] must be a str"):  # the column's name, not "references"
        reward_function(SPEC, reference_column="answer")(prompts=["q"], completions=["a"], answer=[3])
    assert completion_texts(
        [
            [
                {"role": "assistant", "content": "a"},
                {"role": "tool", "content": "t"},
                {"role": "assistant", "content": "b"},
            ]
        ]
    ) == ["b"]


def test_pickled_reward_gives_the_same_rewards(reward):
    copy = pickle.loads(pickle.dumps(reward))
    args = dict(prompts=["q"], completions=["It is cold."], reference=["It is freezing."])
    assert copy.__name__ == reward.__name__ and copy(**args) == reward(**args)


def test_source_based_metric_reads_the_source_column_or_the_prompt():
    spec = f"prism:src:{GOLDEN / 'tiny-prism'}"
    with pytest.raises(ArgumentError, match="source_column="):
        reward_function(spec, lang="en")
    by_column = reward_function(spec, source_column="source", lang="en")
    assert by_column.__name__ == "prism_segment"
    completions, sources = ["the cat sat", "a dog ran"], ["le chat", "un chien"]
    expected = by_column.scorer.compute(completions, sources=sources).scores
    assert by_column(prompts=["p", "p"], completions=completions, source=sources) == pytest.approx(expected, abs=1e-6)
    by_prompt = reward_function(spec, source_column="prompt", lang="en")
    chats = [[{"role": "system", "content": "translate"}, {"role": "user", "content": s}] for s in sources]
    assert by_prompt(prompts=chats, completions=completions) == pytest.approx(expected, abs=1e-6)


def test_async_reward_is_a_coroutine_function_for_trl(reward):
    import asyncio

    from trl.trainer.utils import get_callable_name, is_async_callable

    fn = async_reward_function(SPEC)
    assert is_async_callable(fn) and not is_async_callable(reward)
    assert get_callable_name(fn) == "bertscore_f1"
    args = dict(prompts=["q"], completions=["It is cold."], reference=["It is freezing."])
    assert asyncio.run(fn(**args)) == reward(**args)


def _tiny_policy():
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(str(GOLDEN / "tiny-bart"))
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    return LlamaForCausalLM(config), tokenizer


@pytest.mark.filterwarnings(
    "ignore:.*gradient_checkpointing:FutureWarning"
)  # TRL 1.16 calls the old transformers names
def test_grpo_trainer_logs_the_nlgscore_rewards(tmp_path, reward):
    """2 GRPO steps with a sync (F1) and an async (precision) reward on conversational prompts;
    each reward equals compute on the completions TRL passed, and TRL logs their mean and std."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = _tiny_policy()
    dataset = Dataset.from_dict({
        "prompt": [[{"role": "user", "content": f"Describe the weather, please ({i})."}] for i in range(4)],
        "reference": [["It is cold today."], ["The sun is out."], ["Rain all day.", "It rains."], ["Snow fell overnight."]],
    })  # fmt: skip
    precision = async_reward_function(SPEC, column="precision")
    calls = {"bertscore_f1": [], "bertscore_precision": []}

    def f1(prompts, completions, **kwargs):
        out = reward(prompts=prompts, completions=completions, **kwargs)
        calls["bertscore_f1"].append((completions, kwargs["reference"], out))
        return out

    async def precision_recorded(prompts, completions, **kwargs):
        out = await precision(prompts=prompts, completions=completions, **kwargs)
        calls["bertscore_precision"].append((completions, kwargs["reference"], out))
        return out

    f1.__name__, precision_recorded.__name__ = reward.__name__, precision.__name__
    args = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=8, max_steps=2, logging_steps=1, report_to="none", save_strategy="no", seed=0,
        disable_tqdm=True,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=model, reward_funcs=[f1, precision_recorded], args=args, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.train()

    logged = [entry for entry in trainer.state.log_history if "rewards/bertscore_f1/mean" in entry]
    assert len(logged) == 2 and all(len(calls[name]) == 2 for name in calls)
    scorer = reward.scorer
    for name, column in (("bertscore_f1", "f1"), ("bertscore_precision", "precision")):
        for (completions, references, out), entry in zip(calls[name], logged):
            assert all(isinstance(c, list) and c[-1]["role"] == "assistant" for c in completions)
            texts = [c[-1]["content"] for c in completions]
            expected = getattr(scorer.compute(texts, references=references), column).tolist()
            assert out == pytest.approx(expected, abs=1e-6)
            assert entry[f"rewards/{name}/mean"] == pytest.approx(np.mean(out), abs=1e-6)
            assert entry[f"rewards/{name}/std"] == pytest.approx(np.std(out, ddof=1), abs=1e-5)
    for entry, (_, _, f1_out), (_, _, p_out) in zip(logged, calls["bertscore_f1"], calls["bertscore_precision"]):
        assert entry["reward"] == pytest.approx(np.mean(np.add(f1_out, p_out)), abs=1e-5)  # weights 1 + 1
    every_reference = {r for _, refs, _ in calls["bertscore_f1"] for row in refs for r in row}
    assert all(text in scorer._ref_cache for text in every_reference)  # kept across steps


def test_each_process_scores_its_own_completions(tmp_path, reward):
    """Two real processes (torchrun, gloo): each rank's rewards are its own completions' scores,
    as a plain scorer's are; the control, a scorer asked to shard the ranks' different batches,
    is a named error on every rank, never another rank's scores."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    scripts = Path(__file__).parent / "scripts"
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    cmd = [torchrun, "--standalone", "--nproc_per_node", "2", str(scripts / "reward_ranks.py"), str(tmp_path)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    sys.path.insert(0, str(scripts))
    try:
        from reward_ranks import COMPLETIONS, REFERENCES
    finally:
        sys.path.remove(str(scripts))
    for rank in (0, 1):
        report = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert report["world"] == 2
        own = reward.scorer.compute(COMPLETIONS[rank], references=REFERENCES[rank]).scores
        assert report["rewards"] == report["plain"]  # one process, one kernel: the same bits
        # this process may sit on the other CPU kernel than the launched ones (float rounding, ~1e-7)
        assert report["rewards"] == pytest.approx(own, abs=1e-6)
        assert report["sharded"].startswith("ShardError: a sharded call needs the same inputs on every rank")
