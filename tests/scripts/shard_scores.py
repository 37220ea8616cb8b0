"""Every multi-rank pattern of a launched script, on every process; rank 0 writes what each rank saw.

Launched by tests/backend/test_distributed.py as
``torchrun --nproc_per_node 2 tests/scripts/shard_scores.py OUT.json`` (CPU, gloo). The script
starts no process group itself: the sharded calls start it from the launcher's environment, and
the script ends it by exiting (a rank that hung or aborted would fail the launch).

Per rank it records:

* ``own``: each metric on this rank's own inputs (``OWN[rank]``), as a plain call: no collective;
* ``alone``: rank 0 scoring alone while rank 1 waits on nothing;
* ``shared``: ``shard=True`` calls on the same inputs everywhere, with how many texts/pairs this
  rank's model ran on (forward pre-hooks on the real models: no rank repeats another's work);
* ``mismatch``: a ``shard=True`` call on different inputs (the error every rank gets);
* ``failure``: a ``shard=True`` call whose share fails on rank 1 (the error each rank gets), and a
  sharded call after it (the ranks still work together);
* ``evaluate``: ``evaluate``'s own distributed mode (``num_process=2, process_id=rank``);
* ``trainer``: a Trainer ``compute_metrics`` dict (every rank passes the same gathered arrays).
"""

import json
import os
import sys
from pathlib import Path

import torch

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CANDS = ["it is freezing today", "the cat sat on the mat", "", "dogs bark at night", "hello world", "a b c", "the end"]
REFS = [
    "the weather is cold today",
    "a cat was sitting on the mat",
    "nothing here",
    "a dog barks",
    "hello world",
    "a b d",
    "it ends",
]
# Each rank's own validation shard (different lengths: nothing lines the ranks up).
OWN = [
    (["the cat sat on the mat", "hello world"], ["a cat was sitting on the mat", "hello world"]),
    (["stocks fell sharply", "good morning", "rain again"], ["markets dropped", "good morning to you", "it rains"]),
]
# over MiniLM's 512 tokens (long_inputs="auto": windows), scored on a rank of its own
LONG = (" ".join(f"sentence {i} of a long report on the weather." for i in range(90)), "the weather report")


def rows_seen(model):
    """Count input rows of every forward call of ``model`` (the real forward still runs).

    Returns the list of counts and the hook handle (``handle.remove()`` stops counting).
    """
    seen = []

    def hook(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        seen.append(int(ids.shape[0]) if ids is not None else 0)

    return seen, model.register_forward_pre_hook(hook, with_kwargs=True)


def scorers():
    """The scorers of every scenario: BERTScore (MiniLM), Prism-ref, BARTScore (tiny), chrF."""
    import nlgscore

    return {
        "bertscore": nlgscore.load("bertscore:minilm:L4"),
        "prism": nlgscore.load(f"prism:ref:{GOLDEN / 'tiny-prism'}:en"),
        "bartscore": nlgscore.load(f"bartscore:{GOLDEN / 'tiny-bart'}"),
        "chrf": nlgscore.load("chrf"),
    }


def encoders(loaded):
    """The module each model-based scorer runs once per text or pair (what ``rows_seen`` counts)."""
    return {
        "bertscore": loaded["bertscore"].encoder.model.embeddings,  # both the packed and the stock forward run them
        "prism": loaded["prism"]._loaded.model.get_encoder(),  # one row per distinct source text
        "bartscore": loaded["bartscore"].model.get_encoder(),
    }


def error_of(fn):
    """``(class name, message)`` of what ``fn()`` raised, or None."""
    try:
        fn()
    except Exception as err:
        return [type(err).__name__, str(err)]
    return None


def main(out_path: str) -> None:
    import torch.distributed as dist

    import nlgscore

    torch.manual_seed(0)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    loaded = scorers()
    report = {"world": world, "rank": rank}

    # Per-rank inputs, plain calls: each rank's own scores; no process group is needed for them.
    preds, refs = OWN[rank]
    report["own"] = {name: scorer.compute(preds, references=refs).scores for name, scorer in loaded.items()}
    report["group_after_own"] = dist.is_initialized()
    # Rank 0 alone (rank 1 goes straight on): it must not wait for rank 1.
    report["alone"] = loaded["chrf"].compute(CANDS, references=REFS).scores if rank == 0 else None

    # The same inputs everywhere, sharded: every rank gets every score; each ran its share.
    shared = {}
    for name, module in encoders(loaded).items():
        seen, handle = rows_seen(module)
        result = loaded[name].compute(CANDS, references=REFS, shard=True)
        handle.remove()
        shared[name] = {"scores": result.scores, "columns": result.columns(), "rows": sum(seen)}
    shared["chrf"] = {"scores": loaded["chrf"].compute(CANDS, references=REFS, shard=True).scores}
    # idf from every reference of the call (each rank prepares the whole call), a prompt ensemble
    shared["bertscore_idf"] = nlgscore.load("bertscore:minilm:L4", idf=True).compute(CANDS, REFS, shard=True).scores
    prompts = ["Such as", "In other words"]
    shared["bartscore_prompts"] = loaded["bartscore"].compute(CANDS, REFS, prompt=prompts, shard=True).scores
    one = loaded["bertscore"].compute(CANDS[:1], references=REFS[:1], shard=True)  # rank 1's share is empty
    shared["bertscore_one"] = one.scores
    windowed = loaded["bertscore"].compute(CANDS[:3] + [LONG[0]], references=REFS[:3] + [LONG[1]], shard=True)
    shared["bertscore_long"] = {"scores": windowed.scores, "windows": windowed.windows}
    report["shared"] = shared

    # Long inputs of the seq2seq metrics: chunked pairs are sharded like any other; windows whole.
    import tempfile

    sys.path.insert(0, str(GOLDEN.parent))  # tests/: long_texts.py, the long texts the seq2seq tests share
    import long_texts as texts

    long_preds = [texts.TARGET, texts.LONG, texts.SHORT, texts.TAIL_A]
    long_bart = nlgscore.load(f"bartscore:{GOLDEN / 'tiny-bart'}", max_length=48)
    done = long_bart.compute(
        long_preds, references=[texts.TAIL_A, texts.SHORT, [texts.LONG, texts.SHORT], texts.TAIL_A], shard=True
    )
    report["bartscore_long"] = {"scores": done.scores, "windows": done.windows}
    with tempfile.TemporaryDirectory() as tmp:
        long_prism = nlgscore.load(f"prism:src:{texts.short_prism(Path(tmp) / 'p')}")
        done = long_prism.compute(long_preds, sources=[texts.TAIL_A, texts.SHORT, texts.LONG, texts.TAIL_A], shard=True)
    report["prism_long"] = {"scores": done.scores, "windows": done.windows}

    # Different inputs under shard=True: the same named error on every rank, never mixed scores.
    report["mismatch"] = {
        name: error_of(lambda scorer=scorer: scorer.compute(preds, references=refs, shard=True))
        for name, scorer in loaded.items()
    }

    # A share that fails on rank 1 only: rank 1 raises its own error, rank 0 an error naming rank 1.
    def fail_on_rank_1(module, args, kwargs):
        raise RuntimeError("a fault on rank 1's share")

    module = encoders(loaded)["bertscore"]
    handle = module.register_forward_pre_hook(fail_on_rank_1, with_kwargs=True) if rank == 1 else None
    report["failure"] = error_of(
        lambda: loaded["bertscore"].compute(["a new text", "and another"], ["a", "b"], shard=True)
    )
    if handle is not None:
        handle.remove()
    report["after_failure"] = loaded["bertscore"].compute(CANDS, references=REFS, shard=True).scores

    # evaluate's distributed mode: every process adds its own shard, process 0 computes them all.
    import evaluate

    module = evaluate.load(
        nlgscore.evaluate_module("bertscore"),
        num_process=world,
        process_id=rank,
        experiment_id="shard-scores",
        cache_dir=os.environ["EVALUATE_CACHE"],
    )
    module.add_batch(predictions=preds, references=refs)
    outcome = module.compute(model_type="minilm", num_layers=4)
    report["evaluate"] = None if outcome is None else outcome["f1"]

    # A Trainer's compute_metrics: every rank passes the same gathered arrays.
    from transformers import AutoTokenizer

    from nlgscore.integrations.trainer import compute_metrics

    tok = AutoTokenizer.from_pretrained(GOLDEN / "tiny-bart")
    fn = compute_metrics(tok, metric=loaded["bertscore"])
    ids = tok(CANDS, padding=True, return_tensors="np")["input_ids"]
    labels = tok(REFS, padding=True, return_tensors="np")["input_ids"]
    labels[labels == tok.pad_token_id] = -100
    report["trainer"] = fn((ids, labels))
    report["trainer_one"] = fn((ids[:1], labels[:1]))

    everyone = [None] * world
    dist.all_gather_object(everyone, report)
    if rank == 0:
        Path(out_path).write_text(json.dumps(everyone))


if __name__ == "__main__":
    main(sys.argv[1])
