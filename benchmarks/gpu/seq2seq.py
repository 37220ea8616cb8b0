"""Prism- and BART-large-shaped scoring on the device: pairs/s and tokens/s.

BART-large-shaped (random weights, byte-level BPE trained on the slice,
:mod:`benchmarks.harness.synthetic`): ``log p(candidate | reference)`` per pair, nlgscore's
BARTScorer in fp32 and bf16 against the authors' loop (:class:`~benchmarks.harness.sides.ReferenceBartLoop`:
fp32, 4 pairs per batch, input order). Prism-shaped (m39v1's network, random weights, a
SentencePiece model trained on the slice): Prism-ref (both directions), nlgscore in fp32 and bf16.
Both also in bf16 through the token forward (``nlgscore-bf16-tokens``: ``NLGSCORE_TOKEN_FORWARD=1``,
replayed from CUDA graphs on a GPU) and through it without graphs (``nlgscore-bf16-tokens-eager``).
A side that fails records its error and the others are still measured.
tokens/s counts the source and target tokens of every pair the model reads (special tokens
included), as given by the model's own tokenizer. The CPU dry run uses the tiny golden
checkpoints instead.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List

from benchmarks.gpu.exactness import GOLDEN
from benchmarks.gpu.inputs import corpus, pairs
from benchmarks.gpu.plan import CheckConfig, env_switch, precision
from nlgscore.backend.graph_buckets import ENV_SWITCH as GRAPHS
from nlgscore.backend.packed_attention import ENV_SWITCH as TOKEN_FORWARD

# nlgscore's sides: the padded engine in fp32 and bf16, the token forward in bf16 (on CUDA replayed
# from its graphs) and the same without graphs (NLGSCORE_CUDA_GRAPHS=0: the before/after of graphs).
NLGSCORE_SIDES = (
    ("nlgscore-fp32", "fp32"),
    ("nlgscore-bf16", "bf16"),
    ("nlgscore-bf16-tokens", "bf16"),
    ("nlgscore-bf16-tokens-eager", "bf16"),
)


@contextmanager
def switches(label: str) -> Iterator[None]:
    """The token forward on for ``*-tokens*`` sides (read when a model loads), graphs off for ``*-eager``."""
    with env_switch(TOKEN_FORWARD, "-tokens" in label), env_switch(GRAPHS, label.endswith("-eager"), "0"):
        yield


@contextmanager
def side_errors(out: Dict[str, Any], label: str) -> Iterator[None]:
    """A side that fails is recorded as its error, and the section goes on with the next side."""
    try:
        yield
    except Exception as err:  # the other sides' figures are worth keeping
        out["sides"][label] = {"error": f"{type(err).__name__}: {err}"}


def _timed(config: CheckConfig, run: Callable[[], Any], repeats: int) -> List[float]:
    import torch

    seconds = []
    for _ in range(repeats):
        if config.device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        run()
        if config.device.startswith("cuda"):
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return seconds


def _row(seconds: List[float], n: int, tokens: int, mode: str) -> Dict[str, Any]:
    median = statistics.median(seconds)
    return {
        "precision": mode,
        "seconds": seconds,
        "median_seconds": median,
        "pairs_per_s": n / median,
        "tokens_per_s": tokens / median,
    }


def bart(config: CheckConfig, recorder: Any, folder: str) -> None:
    from transformers import AutoTokenizer

    from benchmarks.harness.sides import NlgscoreBart, ReferenceBartLoop

    cands, refs = pairs(config, config.seq2seq_pairs)
    if config.tiny:
        model, described = str(GOLDEN / "tiny-bart"), "tiny-bart (tests/golden)"
    else:
        from benchmarks.harness.synthetic import build_random_model

        model, described = (
            build_random_model("bart-large", os.path.join(folder, "bart-large"), corpus(config), device=config.device),
            "bart-large-shaped, random weights",
        )
    tokenizer = AutoTokenizer.from_pretrained(model)
    tokens = sum(len(ids) for ids in tokenizer(refs + cands, truncation=True, max_length=1024)["input_ids"])
    out: Dict[str, Any] = {"model": described, "pairs": len(cands), "tokens": tokens, "sides": {}}
    sides = [("reference-bart-fp32", ReferenceBartLoop, "fp32")] + [
        (label, NlgscoreBart, mode) for label, mode in NLGSCORE_SIDES
    ]
    for label, cls, mode in sides:
        with precision(mode) as dtype, switches(label), side_errors(out, label):
            side = cls({"model": model, "device": config.device, "dtype": dtype, "batch_size": 4})
            side.score(refs[:8], cands[:8])
            out["sides"][label] = _row(
                _timed(config, lambda side=side: side.score(refs, cands), config.seq2seq_repeats),
                len(cands),
                tokens,
                mode,
            )
            del side
        recorder.put("bart_large_shaped", out)
    reference = out["sides"]["reference-bart-fp32"].get("median_seconds")
    for label, _ in NLGSCORE_SIDES:
        seconds = out["sides"][label].get("median_seconds")
        if reference and seconds:
            out["sides"][label]["speedup_vs_reference_fp32"] = reference / seconds
    recorder.put("bart_large_shaped", out)


def prism(config: CheckConfig, recorder: Any, folder: str) -> None:
    from nlgscore.seq2seq.prism import PrismScorer
    from nlgscore.seq2seq.prism_tokenizer import PrismTokenizer

    cands, refs = pairs(config, config.seq2seq_pairs)
    if config.tiny:
        model, described = str(GOLDEN / "tiny-prism"), "tiny-prism (tests/golden)"
    else:
        from benchmarks.harness.synthetic import build_prism_shaped

        model, described = (
            build_prism_shaped(os.path.join(folder, "prism"), corpus(config), device=config.device),
            "Prism-m39v1-shaped, random weights",
        )
    pieces = [len(ids) for ids in PrismTokenizer.from_folder(model).encode(cands + refs)]
    # Prism-ref reads each pair twice (cand|ref and ref|cand); source gets </s>, target <lang> and </s>.
    tokens = 2 * (sum(pieces) + 3 * len(cands))
    out: Dict[str, Any] = {"model": described, "pairs": len(cands), "tokens": tokens, "sides": {}}
    for label, mode in NLGSCORE_SIDES:
        with precision(mode) as dtype, switches(label), side_errors(out, label):
            scorer = PrismScorer(model, lang="en", device=config.device, dtype=dtype)
            scorer.score(cands[:8], refs=refs[:8])
            out["sides"][label] = _row(
                _timed(config, lambda scorer=scorer: scorer.score(cands, refs=refs), config.seq2seq_repeats),
                len(cands),
                tokens,
                mode,
            )
            del scorer
        recorder.put("prism_shaped", out)


def seq2seq_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    with tempfile.TemporaryDirectory(prefix="gpu-check-", dir=config.workdir) as folder:
        bart(config, recorder, folder)
        prism(config, recorder, folder)
