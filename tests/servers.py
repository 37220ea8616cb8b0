"""``nlgscore serve`` as a real subprocess on a loopback port, for the serving tests.

``ServeProcess(spec, *flags)`` runs ``python -m nlgscore serve SPEC --port P FLAGS`` with a free
port; with ``gated=True`` the metric is BERTScore behind a loading gate: its constructor waits
until ``open_gate()`` is called, so a test sees the server listening while the model "loads";
with ``sleep=S`` the spec may be ``sleepychrf``, chrF whose every run takes S seconds.
The process is killed on exit if it is still running, so no test leaves a server behind.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, List, Optional

REPO = Path(__file__).resolve().parent.parent

# BERTScore whose constructor waits for a file to exist: a load that lasts as long as the test wants.
GATED = """
import os, sys, time
from nlgscore import registry
from nlgscore.bertscore.scorer import BERTScorer

class GatedBERTScorer(BERTScorer):
    def __init__(self, **options):
        while not os.path.exists(os.environ["NLGSCORE_TEST_GATE"]):
            time.sleep(0.05)
        super().__init__(**options)

registry.register("gatedbert", GatedBERTScorer, registry.metric("bertscore").parse_spec, replace=True)
from nlgscore.cli import main
sys.exit(main(sys.argv[1:]))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# A metric whose every run takes SLEEPY_S seconds (chrF's numbers): a request of a known length.
SLEEPY = """
import sys, time
from nlgscore import registry
from nlgscore.strings.scorers import ChrFScorer

class SleepyChrF(ChrFScorer):
    def _score_items(self, items, state):
        time.sleep(float(__import__("os").environ["NLGSCORE_TEST_SLEEP"]))
        return super()._score_items(items, state)

registry.register("sleepychrf", SleepyChrF, replace=True)
from nlgscore.cli import main
sys.exit(main(sys.argv[1:]))
"""


class ServeProcess:
    def __init__(self, spec: str, *flags: str, gated: bool = False, sleep: Optional[float] = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._folder = tempfile.TemporaryDirectory(prefix="nlgscore-serve-test-")
        self.gate = Path(self._folder.name) / "gate"
        env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", NLGSCORE_TEST_GATE=str(self.gate))
        args: List[str] = ["serve", spec, "--port", str(self.port), "--no-progress", *flags]
        command = [sys.executable, "-c", GATED, *args] if gated else [sys.executable, "-m", "nlgscore", *args]
        if sleep is not None:  # the metric sleepychrf: each run takes `sleep` seconds
            env["NLGSCORE_TEST_SLEEP"] = str(sleep)
            command = [sys.executable, "-c", SLEEPY, *args]
        self.log = open(Path(self._folder.name) / "log", "w+")
        self.proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def open_gate(self) -> None:
        self.gate.touch()

    def get(self, path: str, **kwargs: Any) -> Any:
        import httpx

        return httpx.get(self.url + path, timeout=30, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Any:
        import httpx

        return httpx.post(self.url + path, timeout=30, **kwargs)

    def wait_listening(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}: {self.output()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"the server did not listen within {seconds} s: {self.output()}")

    def wait_ready(self, seconds: float = 120) -> Any:
        self.wait_listening(seconds)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            response = self.get("/health")
            if response.status_code == 200:
                return response.json()
            time.sleep(0.1)
        raise RuntimeError(f"the server was not ready within {seconds} s: {self.output()}")

    def terminate(self, timeout: float = 60) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self._folder.cleanup()

    def __enter__(self) -> "ServeProcess":
        return self

    def __exit__(self, *exc: Optional[Any]) -> None:
        self.close()


def serving(spec: str, *flags: str) -> Iterator[ServeProcess]:
    """A ready server for a module fixture (``yield from serving("chrf")``), checked to exit cleanly."""
    with ServeProcess(spec, *flags) as proc:
        proc.wait_ready()
        yield proc
        assert proc.terminate() == 0, proc.output()
