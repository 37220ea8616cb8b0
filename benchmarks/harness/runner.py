"""The benchmark harness: nlgscore against bert_score 0.3.13 and a BARTScore-style loop.

Sections (each optional, all in one run so the ratios share the machine's state):

* ``bertscore``: pairs/s of both sides, their ratio (median over repeats), max |ΔF|, peak RSS,
  and model FLOP utilisation against the matmul throughput measured in the same run;
* ``trainer``: the same references against three candidate sets in a row (better, worse, better),
  nlgscore with its reference cache on, bert_score's scorer called three times;
* ``memory``: peak RSS scoring ``n`` and ``memory_n`` pairs, each in a fresh process;
* ``bartscore``: nlgscore's BARTScorer against :class:`~benchmarks.harness.sides.ReferenceBartLoop`
  on a random-weight ``bart-base``-shaped model;
* ``budgets``: nlgscore's pairs/s for several token budgets per batch (to choose the default).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import asdict
from typing import Any, Callable, Dict, List, Optional, Tuple

from benchmarks.harness.config import (
    MINILM_LAYERS,
    BenchConfig,
    bert_score_available,
    machine_info,
    max_abs_diff,
    median,
)
from benchmarks.harness.data import Pairs, load_pairs
from benchmarks.harness.flops import encoder_dims, matmul_shapes, matmul_throughput, mfu, useful_flops
from benchmarks.harness.worker import Worker

logger = logging.getLogger(__name__)


class Benchmark:
    """One benchmark run; :meth:`run` returns the JSON-ready report."""

    def __init__(self, config: BenchConfig, progress: Optional[Callable[[str], None]] = None) -> None:
        self.config = config
        self.progress = progress or (lambda message: logger.info("%s", message))
        self.report: Dict[str, Any] = {"config": asdict(config)}
        self._workdir: Optional[str] = None
        self._matmul_samples: Dict[str, List[Dict[str, Any]]] = {}

    # -- set-up ---------------------------------------------------------------------------
    def _folder(self, name: str) -> str:
        if self._workdir is None:
            self._workdir = self.config.workdir or tempfile.mkdtemp(prefix="nlgscore-bench-")
        return os.path.join(self._workdir, name)

    def _bert_model(self, pairs: Pairs) -> Tuple[str, int, str]:
        """``(path, num_layers, description)`` of the BERTScore model."""
        cfg = self.config
        if cfg.model_shape == "minilm":
            from nlgscore.backend.models import resolve

            return resolve("minilm").path, cfg.num_layers or MINILM_LAYERS, "all-MiniLM-L6-v2 (embedded)"
        from benchmarks.harness.synthetic import BERTSCORE_LAYERS, build_random_model

        self.progress(f"building a random-weight {cfg.model_shape} model")
        folder = build_random_model(cfg.model_shape, self._folder(cfg.model_shape), _corpus(pairs))
        return (
            folder,
            cfg.num_layers or BERTSCORE_LAYERS.get(cfg.model_shape, 1),
            f"{cfg.model_shape}-shaped, random weights",
        )

    def _spec(self, side: str, model: str, num_layers: Optional[int] = None, **extra: Any) -> Dict[str, Any]:
        cfg = self.config
        spec = {
            "side": side,
            "model": model,
            "num_layers": num_layers,
            "device": cfg.device,
            "dtype": "float32",
            "threads": cfg.threads,
        }
        if side.startswith("nlgscore"):
            spec["max_tokens"] = cfg.max_tokens
            spec["dtype"] = cfg.dtype
        if side == "bert_score":
            spec["batch_size"] = cfg.bert_score_batch_size
        spec.update(extra)
        return spec

    # -- run ------------------------------------------------------------------------------
    def run(self) -> Dict[str, Any]:
        cfg = self.config
        self.report["machine"] = machine_info(cfg.device)
        need = max(cfg.n, cfg.bart_n if "bartscore" in cfg.sections else 1)
        pairs = load_pairs(cfg.data, need)
        self.report["data"] = {
            "path": cfg.data,
            "pairs_in_file": pairs.distinct_in_file,
            "skipped_blank": pairs.skipped,
        }
        try:
            if set(cfg.sections) & {"bertscore", "trainer", "memory", "budgets"}:
                model, layers, described = self._bert_model(pairs)
                from transformers import AutoConfig

                hidden, intermediate = encoder_dims(AutoConfig.from_pretrained(model))
                self.report["model"] = {
                    "bertscore": described,
                    "num_layers": layers,
                    "hidden": hidden,
                    "intermediate": intermediate,
                }
                self.progress("measuring matmul throughput")
                self._sample_matmul()
                head = pairs.head(cfg.n)
                if "bertscore" in cfg.sections or "trainer" in cfg.sections:
                    self._bertscore(head, model, layers, hidden, intermediate)
                if "budgets" in cfg.sections:
                    self._budgets(head, model, layers)
                if "memory" in cfg.sections:
                    self._memory(model, layers)
            if "bartscore" in cfg.sections:
                self._bartscore(pairs.head(cfg.bart_n))
            if self._matmul_samples:
                self.progress("measuring matmul throughput")
                self._sample_matmul()
                self.report["matmul"] = self._matmul_summary()
                self._fill_mfu()
        finally:
            if self._workdir is not None and not self.config.workdir:
                shutil.rmtree(self._workdir, ignore_errors=True)
        from benchmarks.harness.report import evaluate_targets

        self.report["targets"] = evaluate_targets(self.report)
        return self.report

    def _matmul_dtypes(self) -> List[str]:
        return ["float32"] + ([self.config.dtype] if self.config.dtype != "float32" else [])

    def _sample_matmul(self, worker: Optional[Worker] = None) -> None:
        """Add a matmul-throughput sample (here, or inside ``worker`` between its timed runs).

        The MFU denominator is the best of all samples of the run: on a shared machine load only
        ever slows a sample down, so the best one is closest to what the hardware can do.
        """
        hidden, intermediate = self.report["model"]["hidden"], self.report["model"]["intermediate"]
        # GPUs get larger token budgets than CPUs, hence larger representative products.
        shapes = matmul_shapes(hidden, intermediate, tokens=8192 if self.config.device.startswith("cuda") else 2048)
        for dtype in self._matmul_dtypes():
            if worker is None:
                sample = matmul_throughput(shapes, self.config.device, dtype)
            else:
                sample = worker.call("matmul", shapes=shapes, dtype=dtype)
            self._matmul_samples.setdefault(dtype, []).append(sample)

    def _matmul_summary(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for dtype, samples in self._matmul_samples.items():
            shapes = []
            for i, first in enumerate(samples[0]["shapes"]):
                # Per shape and kernel, the best sample of the run (noise only slows a sample down).
                row = {"shape": first["shape"]}
                for key in ("matmul_flops_per_s", "onednn_flops_per_s", "flops_per_s"):
                    values = [s["shapes"][i][key] for s in samples if key in s["shapes"][i]]
                    if values:
                        row[key] = max(values)
                shapes.append(row)
            out[dtype] = {
                "samples": len(samples),
                "shapes": shapes,
                "flops_per_s": sum(r["flops_per_s"] for r in shapes) / len(shapes),
                # torch.matmul alone (MKL on CPU): the denominator of the published reference numbers.
                "matmul_flops_per_s": sum(r["matmul_flops_per_s"] for r in shapes) / len(shapes),
            }
        out["flops_per_s"] = out[self.config.dtype]["flops_per_s"]
        return out

    def _bertscore(self, pairs: Pairs, model: str, layers: int, hidden: int, intermediate: int) -> None:
        cfg = self.config
        texts = {"refs": pairs.refs, "better": pairs.better, "worse": pairs.worse}
        specs = []
        if bert_score_available():
            specs.append(self._spec("bert_score", model, layers))
        else:
            self.report["bert_score_skipped"] = "bert_score is not installed (pip install 'nlgscore[bench]')"
        specs.append(self._spec("nlgscore", model, layers))
        if cfg.dtype != "float32":
            specs.append(self._spec("nlgscore", model, layers, dtype="float32", label="nlgscore-fp32"))
        labels = [s.get("label", s["side"]) for s in specs]
        section: Dict[str, Any] = {"pairs": len(pairs), "sides": {}}
        distinct = list(dict.fromkeys(pairs.refs + pairs.better))
        from benchmarks.harness.sides import token_lengths

        lengths = token_lengths(model, distinct)
        section["distinct_sentences"] = len(distinct)
        section["useful_tokens"] = sum(lengths)
        section["useful_flops"] = useful_flops(lengths, layers, hidden, intermediate)
        workers: List[Worker] = []
        try:
            for spec, label in zip(specs, labels):
                self.progress(f"bertscore: loading {label}")
                workers.append(Worker(spec, texts))
            for worker, label in zip(workers, labels):
                self.progress(f"bertscore: warm-up and FLOP count, {label}")
                worker.call("warmup", first="better", second="refs")
                counted = worker.call(
                    "count", first="better", second="refs", hidden=hidden, intermediate=intermediate, layers=layers
                )
                dtype = "float32" if label != "nlgscore" else cfg.dtype
                section["sides"][label] = {
                    "dtype": dtype,
                    "scores": counted["scores"],
                    "executed": counted["count"],
                    "seconds": [],
                }
            if "bertscore" in cfg.sections:
                for rep in range(cfg.repeats):
                    order = list(zip(workers, labels))
                    for worker, label in order if rep % 2 == 0 else reversed(order):
                        if label == "nlgscore":
                            self._sample_matmul(worker)
                        self.progress(f"bertscore: repeat {rep + 1}/{cfg.repeats}, {label}")
                        section["sides"][label]["seconds"].append(
                            worker.call("score", first="better", second="refs")["seconds"]
                        )
                for worker, label in zip(workers, labels):
                    section["sides"][label]["peak_rss_mb"] = worker.call("rss")["peak_rss_mb"]
            if "trainer" in cfg.sections:
                self._trainer(workers, labels, pairs)
        finally:
            for worker in workers:
                worker.close()
        self._summarise_bertscore(section, labels)
        self.report["bertscore"] = section

    def _summarise_bertscore(self, section: Dict[str, Any], labels: List[str]) -> None:
        n = section["pairs"]
        for label in labels:
            side = section["sides"][label]
            if side["seconds"]:
                side["median_seconds"] = median(side["seconds"])
                side["pairs_per_s"] = n / side["median_seconds"]
        ours = section["sides"]["nlgscore"]
        if "bert_score" in section["sides"]:
            ref = section["sides"]["bert_score"]
            section["max_abs_diff_f1"] = max_abs_diff(ours["scores"], ref["scores"])
            if ours["seconds"]:
                section["speedup"] = median([r / o for r, o in zip(ref["seconds"], ours["seconds"])])
        if "nlgscore-fp32" in section["sides"]:
            fp32 = section["sides"]["nlgscore-fp32"]
            section["max_abs_diff_f1_vs_fp32"] = max_abs_diff(ours["scores"], fp32["scores"])
            if "bert_score" in section["sides"]:
                section["max_abs_diff_f1_fp32_vs_bert_score"] = max_abs_diff(
                    fp32["scores"], section["sides"]["bert_score"]["scores"]
                )
        for side in section["sides"].values():
            side.pop("scores", None)  # thousands of floats: the differences above are what matters

    def _trainer(self, workers: List[Worker], labels: List[str], pairs: Pairs) -> None:
        cfg = self.config
        calls = [("better", "refs"), ("worse", "refs"), ("better", "refs")]
        section: Dict[str, Any] = {"pairs_per_call": len(pairs), "calls": len(calls), "sides": {}}
        scores: Dict[str, List[List[float]]] = {}
        for rep in range(cfg.repeats):
            order = list(zip(workers, labels))
            for worker, label in order if rep % 2 == 0 else reversed(order):
                self.progress(f"trainer: repeat {rep + 1}/{cfg.repeats}, {label}")
                out = worker.call(
                    "sequence", calls=calls, cache_references=label.startswith("nlgscore"), keep_scores=rep == 0
                )
                section["sides"].setdefault(label, {"seconds": []})["seconds"].append(out["seconds"])
                if rep == 0:
                    scores[label] = [f for call in out["scores"] for f in call]
        total = len(pairs) * len(calls)
        for side in section["sides"].values():
            side["median_seconds"] = median(side["seconds"])
            side["pairs_per_s"] = total / side["median_seconds"]
        if "bert_score" in section["sides"]:
            ref, ours = section["sides"]["bert_score"], section["sides"]["nlgscore"]
            section["speedup"] = median([r / o for r, o in zip(ref["seconds"], ours["seconds"])])
            section["max_abs_diff_f1"] = max_abs_diff(scores["nlgscore"], scores["bert_score"])
        self.report["trainer"] = section

    def _memory(self, model: str, layers: int) -> None:
        cfg = self.config
        sides = (["bert_score"] if bert_score_available() else []) + ["nlgscore"]
        section: Dict[str, Any] = {"sizes": [cfg.n, cfg.memory_n], "sides": {}}
        for size in (cfg.n, cfg.memory_n):
            pairs = load_pairs(cfg.data, size)
            texts = {"refs": pairs.refs, "better": pairs.better}
            section.setdefault("distinct_sentences", {})[str(size)] = len(set(pairs.refs) | set(pairs.better))
            for side in sides:
                self.progress(f"memory: {side}, {size} pairs")
                with Worker(self._spec(side, model, layers), texts) as worker:
                    loaded = worker.call("rss")["peak_rss_mb"]
                    seconds = worker.call("score", first="better", second="refs")["seconds"]
                    peak = worker.call("rss")["peak_rss_mb"]
                section["sides"].setdefault(side, {})[str(size)] = {
                    "loaded_rss_mb": loaded,
                    "peak_rss_mb": peak,
                    "seconds": seconds,
                }
        for side in section["sides"].values():
            side["growth"] = side[str(cfg.memory_n)]["peak_rss_mb"] / side[str(cfg.n)]["peak_rss_mb"]
        self.report["memory"] = section

    def _budgets(self, pairs: Pairs, model: str, layers: int) -> None:
        cfg = self.config
        texts = {"refs": pairs.refs, "better": pairs.better}
        section: Dict[str, Any] = {}
        workers = []
        try:
            for budget in cfg.budgets:
                workers.append(Worker(self._spec("nlgscore", model, layers, max_tokens=budget), texts))
                workers[-1].call("warmup", first="better", second="refs")
            seconds: Dict[int, List[float]] = {b: [] for b in cfg.budgets}
            for rep in range(cfg.repeats):
                for budget, worker in zip(cfg.budgets, workers):
                    self.progress(f"budgets: repeat {rep + 1}/{cfg.repeats}, max_tokens={budget}")
                    seconds[budget].append(worker.call("score", first="better", second="refs")["seconds"])
        finally:
            for worker in workers:
                worker.close()
        for budget, values in seconds.items():
            section[str(budget)] = {"seconds": values, "pairs_per_s": len(pairs) / median(values)}
        self.report["budgets"] = section

    def _bartscore(self, pairs: Pairs) -> None:
        cfg = self.config
        from benchmarks.harness.synthetic import build_random_model

        if cfg.bart_model:
            folder, described = cfg.bart_model, f"{os.path.basename(os.path.normpath(cfg.bart_model))}, fp32"
        else:
            self.progress(f"bartscore: building a random-weight {cfg.bart_shape} model")
            folder = build_random_model(cfg.bart_shape, self._folder(cfg.bart_shape), _corpus(pairs))
            described = f"{cfg.bart_shape}-shaped, random weights, fp32"
        texts = {"srcs": pairs.refs, "tgts": pairs.better}
        labels = ["reference-bart", "nlgscore-bart"]
        # fp32 on both sides (the reference's precision) and nlgscore's own token budget for
        # likelihoods: the BERTScore budget given on the command line is not meant for it.
        specs = [self._spec(label, folder, dtype="float32", max_tokens=None) for label in labels]
        section: Dict[str, Any] = {"pairs": len(pairs), "model": described, "sides": {}}
        workers: List[Worker] = []
        try:
            for spec in specs:
                self.progress(f"bartscore: loading {spec['side']}")
                workers.append(Worker(spec, texts))
                workers[-1].call("warmup", first="srcs", second="tgts", n=8)
            scores: Dict[str, List[float]] = {}
            for rep in range(cfg.repeats):
                order = list(zip(workers, labels))
                for worker, label in order if rep % 2 == 0 else reversed(order):
                    self.progress(f"bartscore: repeat {rep + 1}/{cfg.repeats}, {label}")
                    out = worker.call("score", first="srcs", second="tgts", keep_scores=rep == 0)
                    section["sides"].setdefault(label, {"seconds": []})["seconds"].append(out["seconds"])
                    if rep == 0:
                        scores[label] = out["scores"]
        finally:
            for worker in workers:
                worker.close()
        for side in section["sides"].values():
            side["median_seconds"] = median(side["seconds"])
            side["pairs_per_s"] = len(pairs) / side["median_seconds"]
        ref, ours = section["sides"]["reference-bart"], section["sides"]["nlgscore-bart"]
        section["speedup"] = median([r / o for r, o in zip(ref["seconds"], ours["seconds"])])
        section["max_abs_diff"] = max_abs_diff(scores["nlgscore-bart"], scores["reference-bart"])
        self.report["bartscore"] = section

    def _fill_mfu(self) -> None:
        section = self.report.get("bertscore")
        if not section:
            return
        matmul = self.report["matmul"]
        for side in section["sides"].values():
            # Each side against the matmul throughput of the precision it computes in.
            throughput = matmul.get(side.get("dtype", "float32"), matmul["float32"])
            if side.get("median_seconds"):
                side["mfu_useful"] = mfu(section["useful_flops"], side["median_seconds"], throughput["flops_per_s"])
                side["mfu_executed"] = mfu(side["executed"]["flops"], side["median_seconds"], throughput["flops_per_s"])
                side["mfu_useful_vs_matmul"] = mfu(
                    section["useful_flops"], side["median_seconds"], throughput.get("matmul_flops_per_s", 0.0)
                )


def _corpus(pairs: Pairs) -> List[str]:
    """Distinct sentences to train a synthetic model's tokenizer on."""
    return list(dict.fromkeys(pairs.refs + pairs.better + pairs.worse))


def run_benchmark(config: BenchConfig, progress: Optional[Callable[[str], None]] = None) -> Dict[str, Any]:
    """Run the sections of ``config`` and return the report (see :mod:`benchmarks.harness.report`)."""
    return Benchmark(config, progress).run()
