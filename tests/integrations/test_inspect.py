"""inspect-ai: a real ``inspect_ai.eval`` run offline on a tiny task, with inspect's own mock model
(``mockllm/model`` with fixed outputs; it stands in for an LLM, which cannot run here) and the
nlgscore scorer under test, real. Per-sample scores equal ``compute``; the task's metrics are the
mean and the standard error of the mean; the samples' calls were merged by the micro-batcher.
"""

from __future__ import annotations

import math
import re
import socket
import threading
from pathlib import Path

import pytest
from scipy import stats

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect-ai is the 'inspect' extra: pip install 'nlgscore[inspect]'"
)
httpx = pytest.importorskip("httpx", reason="the client is the 'serve' extra")

from inspect_ai import Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from nlgscore.errors import ArgumentError, ArgumentTypeError  # noqa: E402
from nlgscore.integrations.inspect import scorer  # noqa: E402
from nlgscore.registry import load  # noqa: E402

GOLDEN = Path(__file__).parents[1] / "golden"
QUESTIONS = [
    f"question {k}: where did the {w} sit?"
    for k, w in enumerate(["cat", "dog", "cow", "fox", "owl", "bee", "elk", "ant", "yak", "emu"])
]
ANSWERS = [f"the {q.split()[-2]} sat on mat {k % 3}" for k, q in enumerate(QUESTIONS)]
TARGETS = [
    [f"a {q.split()[-2]} was sitting on the mat"] if k % 3 else [f"on mat {k}", f"the {q.split()[-2]} sat on a mat"]
    for k, q in enumerate(QUESTIONS)
]


def _mock_model():
    """inspect's mock LLM answering each question with its fixed answer (whatever the order);
    token usage is set so that mockllm does not download a tiktoken vocabulary to count it."""
    answers = {QUESTIONS[k]: ANSWERS[k] for k in range(len(QUESTIONS))}

    def output(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content=answers[messages[-1].text])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=output)


def _run(score, tmp_path):
    task = Task(
        dataset=[Sample(input=QUESTIONS[k], target=TARGETS[k], id=k) for k in range(len(QUESTIONS))],
        solver=generate(),
        scorer=score,
    )
    log = inspect_eval(task, model=_mock_model(), log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    return log


def _sample_values(log, name):
    by_id = {sample.id: sample.scores[name] for sample in log.samples}
    assert sorted(by_id) == list(range(len(QUESTIONS)))  # every sample scored exactly once
    return [by_id[k] for k in range(len(QUESTIONS))]


def test_eval_scores_equal_compute_with_mean_and_stderr_and_batched_calls(tmp_path):
    score = scorer("bertscore:minilm:L2", max_wait_ms=300)
    log = _run(score, tmp_path)
    expected = load("bertscore:minilm:L2").compute(ANSWERS, references=TARGETS)
    got = _sample_values(log, "bertscore")
    assert [s.answer for s in got] == ANSWERS
    for k, s in enumerate(got):
        assert s.value == pytest.approx(expected.scores[k], abs=1e-6)
        assert s.metadata["columns"]["precision"] == pytest.approx(expected.precision[k], abs=1e-6)
        assert s.metadata["signature"] == str(expected.signature)
    metrics = log.results.scores[0].metrics
    values = [s.value for s in got]
    assert metrics["mean"].value == pytest.approx(math.fsum(values) / len(values), abs=1e-9)
    assert metrics["stderr"].value == pytest.approx(stats.sem(values), abs=1e-9)
    batcher = score.nlgscore.batcher
    assert batcher.batches < len(QUESTIONS), batcher.batches  # several samples per compute: batched across samples


def test_source_based_metric_reads_the_sample_input_and_a_column_is_picked(tmp_path):
    options = {"checkpoint": str(GOLDEN / "tiny-prism"), "lang": "en"}
    log = _run(scorer("prism:src", name="prism_src", **options), tmp_path)
    expected = load("prism:src", **options).compute(ANSWERS, sources=QUESTIONS)
    assert [s.value for s in _sample_values(log, "prism_src")] == pytest.approx(expected.scores, abs=1e-5)
    log = _run(scorer("bertscore:minilm:L2", column="recall", name="bertscore_recall"), tmp_path)
    expected = load("bertscore:minilm:L2").compute(ANSWERS, references=TARGETS)
    assert [s.value for s in _sample_values(log, "bertscore_recall")] == pytest.approx(expected.recall, abs=1e-6)


def test_a_server_url_scores_each_sample_on_the_server(tmp_path):
    """``scorer("http://...")``: the samples' async requests go to a real ``nlgscore serve`` app
    (uvicorn in a thread on a loopback port), which merges them."""
    uvicorn = pytest.importorskip("uvicorn", reason="the server is the 'serve' extra")
    from nlgscore.serve.http.app import create_app

    app = create_app(load("bertscore:minilm:L2"), max_wait_ms=100)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        url = "http://127.0.0.1:%d" % sock.getsockname()[1]
        log = _run(scorer(url, name="remote_bertscore"), tmp_path)
        expected = load("bertscore:minilm:L2").compute(ANSWERS, references=TARGETS)
        assert [s.value for s in _sample_values(log, "remote_bertscore")] == pytest.approx(expected.scores, abs=1e-6)
        with pytest.raises(ArgumentError, match="max_batch"):
            scorer(url, max_batch=8)
        text = httpx.get(
            f"{url}/metrics"
        ).text  # the server's own counters: every sample scored once, several per batch
        assert float(re.search(r"^nlgscore_predictions_total (\S+)$", text, re.M).group(1)) == len(QUESTIONS)
        assert float(re.search(r"^nlgscore_batch_calls_count (\S+)$", text, re.M).group(1)) < len(QUESTIONS)
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_bad_arguments_are_named():
    with pytest.raises(ArgumentTypeError, match="spec"):
        scorer(["bertscore"])
    with pytest.raises(ArgumentError, match="column"):
        scorer("bertscore:minilm:L2", column="nope")
    with pytest.raises(ArgumentError, match="max_wait_ms"):
        scorer("bertscore:minilm:L2", max_wait_ms=-1)


def test_the_readmes_offline_command_line_task_runs_as_written(tmp_path, minilm_scorer):
    """``inspect eval task.py`` on the task file of docs/guides/rl-rewards.md, offline: inspect's mock
    model would download tiktoken's vocabulary unless the answers carry their usage."""
    import os
    import shutil
    import subprocess
    import sys

    from inspect_ai.log import read_eval_log

    text = (Path(__file__).parents[2] / "docs" / "guides" / "rl-rewards.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- inspect-offline:.*?-->\n```python\n(.*?)```", text, re.S)
    assert block, "docs/guides/rl-rewards.md lost its inspect-offline block"
    (tmp_path / "task.py").write_text(block.group(1), encoding="utf-8")
    inspect_cli = shutil.which("inspect", path=str(Path(sys.executable).parent)) or shutil.which("inspect")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "INSPECT_LOG_DIR": str(tmp_path / "logs"),
    }
    done = subprocess.run(
        [inspect_cli, "eval", "task.py", "--display", "none"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [log_file] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success", log.error
    expected = minilm_scorer.compute(["The cat sat on the mat."], references=["A cat was sitting on the mat."]).f1[0]
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(expected, abs=1e-6)
