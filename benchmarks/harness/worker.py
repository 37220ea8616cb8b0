"""One side of a comparison, in its own process, so that peak memory is that side's alone.

A :class:`Worker` spawns a fresh interpreter (``multiprocessing`` "spawn": nothing inherited from
the parent's heap), which loads one scorer and then answers commands over a pipe. Keeping both
sides' workers alive and alternating their repeats means slow and fast phases of a shared,
noisy machine hit both sides alike, so the per-repeat ratio is the robust number.

Peak memory is read from ``VmHWM`` in ``/proc/self/status`` (the high-water mark of this process's
own address space; unlike ``ru_maxrss`` it is not carried over from the parent across exec).
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from typing import Any, Dict, List, Sequence

_QUIET_ENV = {
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class Worker:
    """A child process holding one side (see :mod:`benchmarks.harness.sides`) and the texts it scores."""

    def __init__(self, spec: Dict[str, Any], texts: Dict[str, List[str]]) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self.name = spec["side"]
        self._process = ctx.Process(target=_serve, args=(child, spec, texts), name=f"bench-{self.name}", daemon=True)
        self._process.start()
        child.close()
        self.call("ready")

    def call(self, command: str, **kwargs: Any) -> Any:
        """Run ``command`` in the child; re-raise its error here with the child's traceback."""
        self._conn.send((command, kwargs))
        try:
            status, payload = self._conn.recv()
        except EOFError:
            self._process.join(5)
            raise RuntimeError(
                f"benchmark worker {self.name!r} died (exit code {self._process.exitcode}) during {command!r}"
            ) from None
        if status == "error":
            raise RuntimeError(f"benchmark worker {self.name!r} failed during {command!r}:\n{payload}")
        return payload

    def close(self) -> None:
        if self._process.is_alive():
            try:
                self._conn.send(("stop", {}))
            except (BrokenPipeError, OSError):
                pass
            self._process.join(30)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _serve(conn: Any, spec: Dict[str, Any], texts: Dict[str, List[str]]) -> None:
    os.environ.update(_QUIET_ENV)
    try:
        state = _State(spec, texts)
    except BaseException:
        conn.recv()
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        try:
            command, kwargs = conn.recv()
        except EOFError:
            return
        if command == "stop":
            return
        try:
            conn.send(("ok", getattr(state, f"do_{command}")(**kwargs)))
        except BaseException:
            conn.send(("error", traceback.format_exc()))


class _State:
    """The child's side and texts; ``do_<command>`` methods answer the parent."""

    def __init__(self, spec: Dict[str, Any], texts: Dict[str, List[str]]) -> None:
        import torch

        if spec.get("threads"):
            torch.set_num_threads(int(spec["threads"]))
        from benchmarks.harness.sides import build_side

        self.spec = spec
        self.texts = texts
        self.device = str(spec["device"])
        self.side = build_side(spec)

    def do_ready(self) -> Dict[str, Any]:
        return {"pid": os.getpid(), "rss_mb": peak_rss_mb()}

    def _sync(self) -> None:
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()

    def _timed(self, side: Any, first: str, second: str) -> Dict[str, Any]:
        self._sync()
        start = time.perf_counter()
        scores = side.score(self.texts[first], self.texts[second])
        self._sync()
        return {"seconds": time.perf_counter() - start, "scores": scores}

    def do_warmup(self, first: str, second: str, n: int = 64) -> None:
        """Score a few pairs: thread pools, allocator and kernels get their first-call costs out."""
        self.side.score(self.texts[first][:n], self.texts[second][:n])

    def do_count(self, first: str, second: str, hidden: int, intermediate: int, layers: int) -> Dict[str, Any]:
        """One untimed run with the encoder counter on (see :mod:`benchmarks.harness.flops`)."""
        from benchmarks.harness.flops import count_encoder_batches

        with count_encoder_batches(hidden, intermediate, layers) as count:
            scores = self.side.score(self.texts[first], self.texts[second])
        return {"count": count.as_dict(), "scores": scores}

    def do_score(self, first: str, second: str, keep_scores: bool = False) -> Dict[str, Any]:
        out = self._timed(self.side, first, second)
        if not keep_scores:
            out.pop("scores")
        return out

    def do_sequence(
        self, calls: Sequence[Sequence[str]], cache_references: bool, keep_scores: bool = False
    ) -> Dict[str, Any]:
        """Several calls in a row, caches emptied first (the training-loop case); timed together."""
        side = self.side.fresh(cache_references=cache_references)
        seconds = 0.0
        scores: List[List[float]] = []
        for first, second in calls:
            out = self._timed(side, first, second)
            seconds += out["seconds"]
            scores.append(out["scores"])
        self.side.fresh(cache_references=False)  # back to the plain scorer, cache freed
        return {"seconds": seconds, "scores": scores if keep_scores else None}

    def do_matmul(self, shapes: Sequence[Sequence[int]], dtype: str = "float32") -> Dict[str, Any]:
        """A short matmul-throughput sample in this process, between timed runs (see runner)."""
        from benchmarks.harness.flops import matmul_throughput

        return matmul_throughput([tuple(s) for s in shapes], self.device, dtype, repeats=3, min_seconds=0.1)

    def do_rss(self) -> Dict[str, float]:
        return {"peak_rss_mb": peak_rss_mb()}
