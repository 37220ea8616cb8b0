"""Runs the GPU check's sections, each in its own time-boxed process, into one JSON and one log.

Each section is a forked child (the parent imports torch but never touches the GPU, so the child
can start CUDA): it records its results into a JSON file as it goes, and when its time box ends it
is killed, so a slow section costs its own budget and nothing else, and what it measured before
that is kept (``"status": "timed out"``). The parent writes ``gpu_check.json`` after every
section, so a run cut short still leaves a report.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Dict

from benchmarks.gpu.machine import environment
from benchmarks.gpu.plan import CheckConfig

logger = logging.getLogger("benchmarks.gpu")
REPORT = "gpu_check.json"
LOG = "gpu_check.log"


class Recorder:
    """A section's results, rewritten to ``path`` on every :meth:`put` (survives a kill)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.results: Dict[str, Any] = {}

    def put(self, key: str, value: Any) -> Any:
        self.results[key] = value
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self.results, handle, indent=1, default=str)
        os.replace(tmp, self.path)
        logger.info("  %s recorded", key)
        return value


def _child(
    section: Callable[..., None], config: CheckConfig, context: Dict[str, Any], path: str, log_path: str
) -> None:
    handler = logging.FileHandler(log_path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    logging.getLogger().handlers[:] = [handler, logging.StreamHandler(sys.stderr)]
    logging.getLogger().setLevel(logging.INFO)
    recorder = Recorder(path)
    try:
        section(config, context, recorder)
        recorder.put("status", "ok")
    except BaseException as err:  # the report says what failed; the next section runs
        logger.error("section failed:\n%s", traceback.format_exc())
        recorder.put("error", f"{type(err).__name__}: {err}")
        recorder.put("status", "failed")


def run_section(
    name: str, section: Callable[..., None], config: CheckConfig, context: Dict[str, Any]
) -> Dict[str, Any]:
    """``section(config, context, recorder)`` in a forked child, killed after its budget."""
    import torch

    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA was started in the GPU check's parent process: its forked sections could not use it")
    budget = config.budget(name)
    with tempfile.TemporaryDirectory(prefix=f"gpu-check-{name}-") as folder:
        path = os.path.join(folder, "result.json")
        ctx = multiprocessing.get_context("fork")
        start = time.monotonic()
        child = ctx.Process(
            target=_child,
            args=(section, config, context, path, os.path.join(config.out, LOG)),
            name=f"gpu-check-{name}",
        )
        child.start()
        child.join(budget)
        status = None
        if child.is_alive():
            child.kill()
            child.join()
            status = "timed out"
        results: Dict[str, Any] = {}
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                results = json.load(handle)
        results["status"] = status or results.get("status") or f"died (exit code {child.exitcode})"
        results["seconds"] = round(time.monotonic() - start, 1)
        results["budget_s"] = budget
        return results


def run_check(config: CheckConfig) -> Dict[str, Any]:
    """Run every section of ``config``; return the report written to ``config.out``/gpu_check.json."""
    from benchmarks.gpu.sections import SECTION_FUNCTIONS

    os.makedirs(config.out, exist_ok=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
        handlers=[logging.FileHandler(os.path.join(config.out, LOG)), logging.StreamHandler(sys.stderr)],
    )
    report: Dict[str, Any] = {"settings": config.as_dict(), "environment": environment(), "sections": {}}
    context: Dict[str, Any] = {}
    started = time.monotonic()
    for name in config.sections:
        logger.info("section %s (at most %.0f s)", name, config.budget(name))
        result = run_section(name, SECTION_FUNCTIONS[name], config, context)
        logger.info("section %s: %s in %.1f s", name, result["status"], result["seconds"])
        report["sections"][name] = result
        if name == "env":
            context["peak"] = result.get("matmul", {})
            report["environment"].update(result.get("gpu", {}))
        report["total_seconds"] = round(time.monotonic() - started, 1)
        report["environment"]["loadavg_end"] = list(os.getloadavg())
        with open(os.path.join(config.out, REPORT), "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1, default=str)
    return report
