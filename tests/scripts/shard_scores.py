"""Score the same inputs on every process of a multi-process launch; rank 0 writes what each rank saw.

Launched by tests/backend/test_distributed.py as
``torchrun --nproc_per_node 2 tests/scripts/shard_scores.py OUT.json`` (CPU, gloo). On a GPU
node the same script runs with ``accelerate launch --multi_gpu --num_processes N``. The script
creates no process group itself: the scorers shard from the launcher's environment.

For each metric it records, per rank: the scores returned (every rank must get all of them, in
input order), how many texts/pairs that rank's model actually ran on (forward pre-hooks on the
real models: no rank may repeat another's work), and the Trainer ``compute_metrics`` dict.
"""

import json
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


def main(out_path: str) -> None:
    from accelerate import PartialState
    from accelerate.utils import gather_object

    torch.manual_seed(0)
    from nlgscore.bertscore import BERTScorer

    bert = BERTScorer(model_type="minilm", num_layers=4, cache_references=True)
    seen, _ = rows_seen(bert.encoder.model.embeddings)  # embeddings: both the packed and the stock forward run them
    # No set-up above: the first scoring call initialises the gloo process group from torchrun's
    # environment (nlgscore.backend.distributed.init_from_launcher).
    result = bert.score(CANDS, REFS)
    state = PartialState()
    report = {"world": state.num_processes}
    report["bertscore"] = {"f1": result.columns()["f1"], "precision": result.columns()["precision"], "rows": sum(seen)}
    one = bert.score(CANDS[:1], REFS[:1])  # a single pair: rank 1's share is empty
    report["bertscore_one"] = one.columns()["f1"]
    windowed = bert.score(CANDS[:3] + [LONG[0]], REFS[:3] + [LONG[1]])
    report["bertscore_long"] = {"f1": windowed.columns()["f1"], "windows": windowed.windows}

    from transformers import AutoTokenizer

    from nlgscore.integrations.trainer import compute_metrics

    tok = AutoTokenizer.from_pretrained(GOLDEN / "tiny-bart")
    fn = compute_metrics(tok, metric=bert)
    ids = tok(CANDS, padding=True, return_tensors="np")["input_ids"]
    labels = tok(REFS, padding=True, return_tensors="np")["input_ids"]
    labels[labels == tok.pad_token_id] = -100
    report["trainer"] = fn((ids, labels))
    report["trainer_one"] = fn((ids[:1], labels[:1]))

    from nlgscore.seq2seq.prism import PrismScorer

    prism = PrismScorer(checkpoint=str(GOLDEN / "tiny-prism"), lang="en", mode="ref")
    prism_seen, _ = rows_seen(prism._loaded.model.get_encoder())  # one row per distinct source text
    report["prism"] = {"segment": prism.compute(CANDS, references=REFS).columns()["segment"], "rows": sum(prism_seen)}

    from nlgscore.seq2seq.bartscore import BARTScorer

    bart = BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"))
    bart_seen, _ = rows_seen(bart.model.get_encoder())
    report["bartscore"] = {"scores": bart.compute(CANDS, references=REFS).columns()["scores"], "rows": sum(bart_seen)}

    # Long inputs: chunked pairs are sharded like any other; result.windows is whole on every rank.
    import tempfile

    sys.path.insert(0, str(GOLDEN.parent))  # tests/: the long texts of test_long_seq2seq
    import test_long_seq2seq as texts

    preds = [texts.TARGET, texts.LONG, texts.SHORT, texts.TAIL_A]
    long_bart = BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), max_length=48)
    done = long_bart.compute(preds, references=[texts.TAIL_A, texts.SHORT, [texts.LONG, texts.SHORT], texts.TAIL_A])
    report["bartscore_long"] = {"scores": done.columns()["scores"], "windows": done.windows}
    with tempfile.TemporaryDirectory() as tmp:
        long_prism = PrismScorer(str(texts.short_prism(Path(tmp) / "p")), mode="src")
        done = long_prism.compute(preds, sources=[texts.TAIL_A, texts.SHORT, texts.LONG, texts.TAIL_A])
    report["prism_long"] = {"segment": done.columns()["segment"], "windows": done.windows}

    everyone = gather_object([report])
    if state.is_main_process:
        Path(out_path).write_text(json.dumps(everyone))
    state.wait_for_everyone()


if __name__ == "__main__":
    main(sys.argv[1])
