"""The same pairs scored through each data engine and in one offline process: rows/s, start-up, RSS.

    python -m benchmarks bench_engines --n 20000 --workers 2 --out out/engines.json
    python -m benchmarks bench_engines --n 200 --engines offline,dask   # a quick look

Each engine runs in a fresh process of its own (``--engine NAME``, started by the parent), with
``--workers`` single-threaded scorer workers: Spark ``local[W]`` (the iterator pandas UDF of
``nlgscore.integrations.spark``; ``spark_arrow`` is the same scoring written as ``mapInArrow``,
for the comparison), Daft's native runner (a pool of W instances in worker processes), a Dask
``LocalCluster`` of W worker processes, NeMo Curator's Ray Data executor (W actors), and one
offline process with W torch threads. Per engine: ``start_s`` (the engine up: SparkSession, cluster or
nothing), ``warm_s`` (a first job of ``--warm`` rows: workers start and build their scorers),
``job_s`` and ``rows_per_s`` (the job of all ``--n`` rows after it), ``peak_rss_mib`` of the
largest worker process and of the driver (sampled every 0.2 s over the process tree), and whether
the scores equal the offline ones bit for bit (``equal``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List

ENGINES = ["offline", "spark", "spark_arrow", "daft", "dask", "curator"]
WORDS = (
    "the a market storm river city council report said on monday that new rules would cut costs for "
    "small firms while critics warned of delays in rural areas where roads remain closed after floods"
).split()


def pairs(n: int) -> List[Dict[str, Any]]:
    """``n`` (prediction, reference) pairs of 8 to 33 words, deterministic, every text distinct (a
    scorer encodes each distinct text of a call once: repeated texts would favour the one call
    that sees the whole corpus over the engines' partitions)."""
    out = []
    for k in range(n):
        length = 8 + (k * 7) % 24
        pred = " ".join(WORDS[(k * 3 + i) % len(WORDS)] for i in range(length))
        ref = " ".join(WORDS[(k * 5 + i * 2) % len(WORDS)] for i in range(length + (k % 5) - 2))
        out.append({"id": k, "prediction": f"{pred} item {k}", "reference": f"{ref} item {k}"})
    return out


class RssSampler:
    """Peak RSS (MiB) of this process and of each descendant, sampled every 0.2 s."""

    def __init__(self) -> None:
        import psutil

        self.me = psutil.Process()
        self.peaks: Dict[int, float] = {}
        self.names: Dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for proc in [self.me, *self.me.children(recursive=True)]:
                try:
                    rss = proc.memory_info().rss / 2**20
                    name = self.names.get(proc.pid) or " ".join(proc.cmdline()[:3])[:80]
                    self.peaks[proc.pid] = max(self.peaks.get(proc.pid, 0.0), rss)
                    self.names[proc.pid] = name
                except Exception:
                    continue
            self._stop.wait(0.2)

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> Dict[str, float]:
        driver = self.peaks.get(self.me.pid, 0.0)
        # workers: the descendants that held a model (the JVM, Ray's and Dask's daemons hold none)
        workers = [
            rss for pid, rss in self.peaks.items() if pid != self.me.pid and "java" not in self.names.get(pid, "")
        ]
        return {"driver_peak_rss_mib": round(driver), "worker_peak_rss_mib": round(max(workers, default=0.0))}


def offline(rows: List[Dict[str, Any]], spec: str, options: Dict[str, Any], workers: int) -> Callable:
    import torch

    from nlgscore import load

    torch.set_num_threads(workers)

    def job(part: List[Dict[str, Any]]) -> List[float]:
        scorer = load(spec, **options)
        return list(scorer.compute([r["prediction"] for r in part], references=[r["reference"] for r in part]).f1)

    return job


def spark_engine(arrow: bool) -> Callable:
    def start(rows: List[Dict[str, Any]], spec: str, options: Dict[str, Any], workers: int) -> Callable:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master(f"local[{workers}]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.memory", "2g")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")

        def job(part: List[Dict[str, Any]]) -> List[float]:
            tuples = [(r["id"], r["prediction"], r["reference"]) for r in part]
            df = spark.createDataFrame(
                spark.sparkContext.parallelize(tuples, workers * 2), "id long, prediction string, reference string"
            )
            if arrow:
                return [row["bertscore_f1"] for row in _map_in_arrow(df, spec, options).collect()]
            from nlgscore.integrations.spark import with_scores

            return [row["bertscore_f1"] for row in with_scores(df, spec, **options).select("bertscore_f1").collect()]

        return job

    return start


def _map_in_arrow(df: Any, spec: str, options: Dict[str, Any]) -> Any:
    """The same scoring as ``with_scores`` written as ``mapInArrow`` (Arrow batches in and out, no pandas)."""
    from nlgscore.integrations.columns import ColumnScorer

    columns = ColumnScorer(spec, options=options, door="mapInArrow")
    names = columns.output_names()

    def score(batches: Any) -> Any:
        import pyarrow as pa

        for batch in batches:
            scores = columns.score({name: batch.column(name) for name in batch.schema.names})
            yield pa.RecordBatch.from_arrays(
                [batch.column("id"), *[pa.array(scores[n], pa.float64()) for n in names]], names=["id", *names]
            )

    schema = "id long, " + ", ".join(f"{n} double" for n in names)
    return df.mapInArrow(score, schema)


def daft_engine(rows: List[Dict[str, Any]], spec: str, options: Dict[str, Any], workers: int) -> Callable:
    import daft

    from nlgscore.integrations.daft import with_scores

    def job(part: List[Dict[str, Any]]) -> List[float]:
        df = daft.from_pylist(part).into_partitions(workers * 2)
        out = with_scores(df, spec, max_concurrency=workers, use_process=True, **options)
        return list(out.select("bertscore_f1").to_pydict()["bertscore_f1"])

    return job


def dask_engine(rows: List[Dict[str, Any]], spec: str, options: Dict[str, Any], workers: int) -> Callable:
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    from nlgscore.integrations.dask import with_scores

    client = Client(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None))

    def job(part: List[Dict[str, Any]]) -> List[float]:
        ddf = dd.from_pandas(pd.DataFrame(part), npartitions=workers * 2, sort=False)
        return with_scores(ddf, spec, **options)["bertscore_f1"].compute().tolist()

    job.client = client  # type: ignore[attr-defined]
    return job


def curator_engine(rows: List[Dict[str, Any]], spec: str, options: Dict[str, Any], workers: int) -> Callable:
    import pandas as pd
    from nemo_curator.backends.ray_data import RayDataExecutor
    from nemo_curator.pipeline import Pipeline
    from nemo_curator.tasks import DocumentBatch

    from nlgscore.integrations.curator import score_stage

    def job(part: List[Dict[str, Any]]) -> List[float]:
        size = -(-len(part) // (workers * 2))
        tasks = [
            DocumentBatch(dataset_name="bench", data=pd.DataFrame(part[i : i + size]))
            for i in range(0, len(part), size)
        ]
        # each actor takes half a CPU less than a whole one, so Ray Data's own tasks keep room
        stage = score_stage(spec, cpus=max(0.5, (workers - 0.5) / workers), **options)
        results = Pipeline(name="bench", stages=[stage]).run(executor=RayDataExecutor(), initial_tasks=tasks)
        frame = pd.concat([t.to_pandas() for t in results]).sort_values("id")
        return frame["bertscore_f1"].tolist()

    return job


STARTERS: Dict[str, Callable] = {
    "offline": offline,
    "spark": spark_engine(arrow=False),
    "spark_arrow": spark_engine(arrow=True),
    "daft": daft_engine,
    "dask": dask_engine,
    "curator": curator_engine,
}


def run_one(engine: str, n: int, warm: int, workers: int, spec: str, options: Dict[str, Any]) -> Dict[str, Any]:
    """One engine in this process: start, a warm-up job, the timed job, checked against offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    rows = pairs(n)
    with RssSampler() as sampler:
        t0 = time.perf_counter()
        job = STARTERS[engine](rows, spec, options, workers)
        start_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        job(rows[:warm])
        warm_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        scores = job(rows)
        job_s = time.perf_counter() - t0
    return {
        "engine": engine,
        "n": n,
        "workers": workers,
        "start_s": round(start_s, 1),
        "warm_s": round(warm_s, 1),
        "job_s": round(job_s, 1),
        "rows_per_s": round(n / job_s, 1),
        **sampler.summary(),
        "scores": scores,
    }


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--warm", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spec", default="bertscore:minilm")
    parser.add_argument("--num-layers", type=int, default=None, help="BERTScore's layer (default: the model's)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--engine", default=None, help=argparse.SUPPRESS)  # a child: one engine
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    options = {"num_layers": args.num_layers} if args.num_layers else {}
    if args.engine:
        print(json.dumps(run_one(args.engine, args.n, args.warm, args.workers, args.spec, options)))
        return 0
    results, reference = [], None
    for engine in args.engines.split(","):
        command = [sys.executable, os.path.abspath(__file__), "--engine", engine, "--n", str(args.n)]
        command += ["--warm", str(args.warm), "--workers", str(args.workers), "--spec", args.spec]
        command += ["--num-layers", str(args.num_layers)] if args.num_layers else []
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode or not lines:
            print(f"{engine}: failed\n{done.stderr[-3000:]}", file=sys.stderr)
            continue
        result = json.loads(lines[-1])
        scores = result.pop("scores")
        reference = scores if engine == "offline" else reference
        result["equal"] = None if reference is None else scores == reference
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump({"spec": args.spec, "options": options, "results": results}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
