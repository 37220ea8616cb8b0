"""Exactness on the device: the golden files in fp32 with TF32 off, and batch invariance.

* ``golden``: tests/golden/ on ``config.device`` in full fp32 (TF32 off): max |Δ| of BERTScore
  P/R/F against bert_score 0.3.13's values (every run of bertscore_minilm.json), of Prism's
  segment scores and of BARTScore's fields against the seq2seq goldens, each with a pass flag
  at the house tolerance 1e-5. (The bf16 and TF32 bounds on WMT19 kk-en come from the
  throughput sections, which score the same pairs in all three precisions.)
* ``batch_invariance``: per precision, with the default forward and with the token forward, the
  first items of the slice scored alone, then within a batch of all of them, within the batch
  reversed and under a 256-token budget: how many items' F1 bits differ, and the largest
  difference; ``batch_invariance_seq2seq`` the same for BARTScore and Prism-ref.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from benchmarks.gpu.inputs import pairs
from benchmarks.gpu.plan import CheckConfig, env_switch, precision
from nlgscore.bertscore.token_forward import ENV_SWITCH as TOKEN_FORWARD

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
TOL = 1e-5


def _max_abs(got: Sequence[float], want: Sequence[float]) -> float:
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - np.asarray(want, dtype=np.float64))))


def bertscore_golden(device: str, names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Every run of bertscore_minilm.json: max |Δ| over P, R and F."""
    import json

    from benchmarks.gpu.slim import uncovered
    from nlgscore.backend.models import resolve
    from nlgscore.bertscore import BERTScorer

    golden = json.loads((GOLDEN / "bertscore_minilm.json").read_text(encoding="utf-8"))
    texts = golden["cands"] + golden["refs"] + [t for refs in golden["multi_refs"] for t in refs]
    missing = uncovered(resolve("minilm").path, texts)
    if missing:
        raise RuntimeError(
            f"the slim MiniLM wheel does not cover {len(missing)} golden text(s): rebuild it with benchmarks/gpu/wheels.sh"
        )
    out: Dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        for run in golden["runs"]:
            if names is not None and run["name"] not in names:
                continue
            args = dict(run["args"])
            args.pop("batch_size", None)  # the reference's batch size; nlgscore batches by tokens
            cands, refs = golden["cands"], golden["refs"]
            if args.pop("refs", None) == "multi_refs":
                refs = golden["multi_refs"]
            if args.pop("pairs", None) == "first 10":
                cands, refs = cands[:10], refs[:10]
            if args.pop("baseline", None):
                args["baseline_path"] = os.path.join(folder, "baseline.tsv")
                Path(args["baseline_path"]).write_text(golden["baseline_file_text"], encoding="utf-8")
            scorer = BERTScorer(model_type="minilm", long_inputs="truncate", device=device, dtype="float32", **args)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pair 49 is over 512 tokens: truncated, as bert_score does
                result = scorer.score(cands, refs)
            delta = max(
                _max_abs(getattr(result, name), run[key])
                for name, key in (("precision", "P"), ("recall", "R"), ("f1", "F"))
            )
            out[run["name"]] = {"max_abs_diff": delta, "pass": delta <= TOL}
    return out


def prism_golden(device: str, temperatures: Sequence[float] = (1.0, 0.95)) -> Dict[str, Any]:
    """golden_prism.json at both temperatures: max |Δ| of the segment scores (ref and src modes)."""
    import json

    from nlgscore.seq2seq.prism import PrismScorer

    data = json.loads((GOLDEN / "golden_prism.json").read_text(encoding="utf-8"))
    cases = data["cases"]
    out: Dict[str, Any] = {}
    for temperature in temperatures:
        scorer = PrismScorer(
            str(GOLDEN / "tiny-prism"), lang="en", temperature=temperature, device=device, dtype="float32"
        )
        key = f"temperature_{temperature}"
        ref = scorer.score([c["cand"] for c in cases], refs=[c["ref"] for c in cases])
        src = scorer.compute([c["cand"] for c in cases], sources=[c["src"] for c in cases])
        delta = max(
            _max_abs(ref.segment, [c["scores"][key]["prism_ref"] for c in cases]),
            _max_abs(src.segment, [c["scores"][key]["prism_src"] for c in cases]),
        )
        out[key] = {"max_abs_diff": delta, "pass": delta <= TOL}
    return out


def bart_golden(device: str) -> Dict[str, Any]:
    """golden_bartscore.json (both of the reference's batch sizes): max |Δ| of P, R, F and src→hyp."""
    import json

    from nlgscore.seq2seq.bartscore import BARTScorer

    data = json.loads((GOLDEN / "golden_bartscore.json").read_text(encoding="utf-8"))
    cases = data["cases"]
    scorer = BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device=device, dtype="float32", long_inputs="truncate")
    hyps, refs, srcs = ([c[k] for c in cases] for k in ("hyp", "ref", "src"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 1,500-word case is truncated, as in the reference
        f = scorer.compute(hyps, refs, direction="f")
        s = scorer.compute(hyps, sources=srcs, direction="src")
    got = {
        "precision_ref_to_hyp": f.precision,
        "recall_hyp_to_ref": f.recall,
        "f_mean_p_r": f.scores,
        "faithfulness_src_to_hyp": s.scores,
    }
    delta = max(
        _max_abs(values, [c["scores"][bs][field] for c in cases])
        for field, values in got.items()
        for bs in ("batch_size_4", "batch_size_1")
    )
    return {"tiny-bart": {"max_abs_diff": delta, "pass": delta <= TOL}}


def invariance_row(scorer: Any, score: Any, cands: List[str], refs: List[str]) -> Dict[str, Any]:
    """One scorer's items alone, in a batch of all, the batch reversed and under a 256-token
    budget: per comparison, how many items' bits differ and by how much. ``score(cands, refs,
    max_tokens)`` gives the primary scores (``max_tokens`` None: the scorer's budget)."""
    alone = np.concatenate([score([c], [r], None) for c, r in zip(cands, refs)])
    batch = score(cands, refs, None)
    backwards = score(cands[::-1], refs[::-1], None)[::-1]
    budget = score(cands, refs, 256)
    row: Dict[str, Any] = {"items": len(cands), "signature": str(scorer.signature)}
    for name, base, other in (
        ("alone_vs_batch", alone, batch),
        ("batch_vs_reversed", batch, backwards),
        ("batch_vs_max_tokens_256", batch, budget),
    ):
        row[name] = {
            "items_with_other_bits": int((base != other).sum()),
            "max_abs_diff": float(np.max(np.abs(base - other))),
        }
    return row


def batch_invariance(config: CheckConfig, modes: Sequence[str] = ("fp32", "bf16")) -> Dict[str, Any]:
    """Per precision, with the default forward and with the token forward (``<mode>-tokens``):
    BERTScore's F1 (MiniLM, layer 4) by :func:`invariance_row`, as float32."""
    from nlgscore.bertscore import BERTScorer

    cands, refs = pairs(config, config.invariance_items)
    out: Dict[str, Any] = {}
    for mode in modes:
        for tokens in (False, True):
            with env_switch(TOKEN_FORWARD, tokens), precision(mode) as dtype:
                scorer = BERTScorer(model_type="minilm", num_layers=4, device=config.device, dtype=dtype)

                def score(c: List[str], r: List[str], budget: Optional[int], scorer: Any = scorer) -> np.ndarray:
                    values = scorer.compute(c, r, max_tokens=budget).scores if budget else scorer.score(c, r).f1
                    return np.asarray(values, dtype=np.float32)

                out[f"{mode}-tokens" if tokens else mode] = invariance_row(scorer, score, cands, refs)
    return out


def seq2seq_invariance(config: CheckConfig, modes: Sequence[str] = ("fp32", "bf16")) -> Dict[str, Any]:
    """:func:`invariance_row` of BARTScore (F, tiny-bart) and Prism-ref (tiny-prism) per
    precision, with the default forward and the token forward (``<metric>-<mode>[-tokens]``),
    as float64. The tiny golden checkpoints: what is measured is whether an item's numbers
    depend on its batch, which every model of the family shares."""
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    cands, refs = pairs(config, config.invariance_items)
    out: Dict[str, Any] = {}
    for mode in modes:
        for tokens in (False, True):
            suffix = f"{mode}-tokens" if tokens else mode
            with env_switch(TOKEN_FORWARD, tokens), precision(mode) as dtype:
                bart = BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device=config.device, dtype=dtype)
                prism = PrismScorer(str(GOLDEN / "tiny-prism"), lang="en", device=config.device, dtype=dtype)
                for name, scorer in (("bartscore", bart), ("prism", prism)):

                    def score(c: List[str], r: List[str], budget: Optional[int], scorer: Any = scorer) -> np.ndarray:
                        extra = {"max_tokens": budget} if budget else {}
                        return np.asarray(scorer.compute(c, r, **extra).scores, dtype=np.float64)

                    out[f"{name}-{suffix}"] = invariance_row(scorer, score, cands, refs)
    return out


def exactness_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    with precision("fp32"):
        recorder.put("golden_bertscore", bertscore_golden(config.device, config.golden_runs))
        recorder.put("golden_prism", prism_golden(config.device, config.prism_temperatures))
        recorder.put("golden_bartscore", bart_golden(config.device))
    results: List[bool] = [
        row["pass"]
        for key in ("golden_bertscore", "golden_prism", "golden_bartscore")
        for row in recorder.results[key].values()
    ]
    recorder.put("golden_all_pass", all(results))
    recorder.put("batch_invariance", batch_invariance(config, config.modes))
    recorder.put("batch_invariance_seq2seq", seq2seq_invariance(config, config.modes))
