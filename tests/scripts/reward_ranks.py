"""Call an nlgscore TRL reward on two processes, each with its own completions, as TRL does.

Launched by tests/test_trl_rewards.py as
``torchrun --standalone --nproc_per_node 2 tests/scripts/reward_ranks.py OUT_DIR`` (CPU, gloo).
Each rank writes ``OUT_DIR/rank<k>.json``: its completions, references and the rewards returned,
and, as a control, what a scorer asked to shard (``shard=True``) does with them: every rank's
inputs differ, so that is an error on every rank, never another rank's scores.
"""

import json
import sys
from pathlib import Path

import torch.distributed as dist
from accelerate import PartialState

SPEC = "bertscore:minilm:L2"
COMPLETIONS = [
    ["It is cold today.", "The sun is out.", "Rain fell all day.", "Snow is white."],
    ["Stocks fell sharply.", "A cat sat on the mat.", "Dogs bark at night.", "The end."],
]
REFERENCES = [["The weather is cold."] * 4, ["Markets dropped."] * 4]


def main(out_dir: str) -> None:
    rank = PartialState(cpu=True).process_index  # the process group a CPU Trainer (use_cpu=True) sets up
    from nlgscore.integrations.trl import reward_function
    from nlgscore.registry import load

    reward = reward_function(SPEC)
    rewards = reward(prompts=["q"] * 4, completions=COMPLETIONS[rank], reference=REFERENCES[rank])
    plain = load(SPEC).compute(COMPLETIONS[rank], references=REFERENCES[rank]).scores
    try:
        load(SPEC).compute(COMPLETIONS[rank], references=REFERENCES[rank], shard=True)
        sharded = None
    except Exception as err:
        sharded = f"{type(err).__name__}: {err}"
    report = {"rank": rank, "world": dist.get_world_size(), "rewards": rewards, "plain": plain, "sharded": sharded}
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(report))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
