"""Ray Data on a local Ray instance: ``map_batches(ScoreBatches)`` equals ``compute`` in input
order, and an actor whose process dies mid-run (``os._exit`` on its first batch, a real process
death) is restarted by Ray with nothing lost or duplicated. Nothing is mocked.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray Data is the 'ray' extra: pip install 'nlgscore[ray]'")

from nlgscore.integrations.ray import ScoreBatches, score_dataset  # noqa: E402

SPEC = "bertscore:minilm:L2"
PREDS = [f"the {w} sat on the mat number {k}" for k, w in enumerate(["cat", "dog", "cow", "fox"] * 6)]
REFS = [f"a {w} was sitting on a mat, item {k % 7}" for k, w in enumerate(["cat", "dog", "bird", "fox"] * 6)]


class DiesOnce(ScoreBatches):
    """Kills its own process on its first batch unless ``marker`` exists (it creates it first)."""

    def __init__(self, marker: str, **kwargs):
        super().__init__(**kwargs)
        self.marker = marker

    def __call__(self, batch):
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return super().__call__(batch)
        os._exit(1)  # a process death, not an exception: Ray must restart the actor and re-run the batch


@pytest.fixture(scope="module")
def local_ray():
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=100 * 1024 * 1024,
        runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}},
    )
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def expected(minilm_scorer):
    from nlgscore import load

    return load(SPEC).compute(PREDS, references=REFS).columns()


def _dataset():
    return ray.data.from_items(
        [{"prediction": p, "reference": r, "id": k} for k, (p, r) in enumerate(zip(PREDS, REFS, strict=True))]
    )


def test_map_batches_equals_compute_in_input_order_and_survives_a_killed_actor(local_ray, expected, tmp_path):
    """Two actors, batches of 5; the first batch an actor gets kills its process (once in the run).
    Ray restarts the actor and re-runs the batch: every row comes back once, in input order."""
    marker = tmp_path / "died"
    rows = score_dataset(
        _dataset(), SPEC, concurrency=2, num_cpus=0.5, batch_size=5, scorer_class=DiesOnce, marker=str(marker)
    ).take_all()
    assert marker.exists()  # an actor's process did die
    assert [row["id"] for row in rows] == list(range(len(PREDS)))  # each row exactly once, in input order
    for name in ("precision", "recall", "f1"):
        np.testing.assert_allclose([row[f"bertscore_{name}"] for row in rows], expected[name], atol=1e-6)


@pytest.mark.parametrize("bad, error", [(0, "got 0"), (2.5, "got float: 2.5"), (True, "got bool: True")])
def test_a_bad_actor_count_is_refused_naming_concurrency(bad, error):
    from nlgscore.errors import NlgscoreError

    with pytest.raises(NlgscoreError, match=f"^concurrency must be a positive integer, {error}$"):
        score_dataset(None, SPEC, concurrency=bad)  # refused before the dataset is touched


def test_an_actor_pool_holding_every_cpu_is_refused_with_the_numbers(local_ray):
    """On the 2-CPU cluster, 2 actors of 1 CPU leave the read task none: refused, rather than left to hang."""
    from nlgscore.errors import NlgscoreError

    with pytest.raises(
        NlgscoreError,
        match=r"concurrency=2 actors x num_cpus=1 CPU each need 2 CPUs, but the Ray cluster has 2: "
        r"Ray Data's read and write tasks need 1 CPU left.*use concurrency=1 or num_cpus=0.5",
    ):
        score_dataset(_dataset(), SPEC, concurrency=2, num_cpus=1)
    with pytest.warns(UserWarning, match="each of the 2 scoring actors asks for 0.5 CPU so that 1 CPU stays free"):
        score_dataset(_dataset(), SPEC, concurrency=2)  # adapted: lazy, nothing runs here


@pytest.mark.parametrize("bad", [0, -3, 2.5])
def test_a_bad_batch_size_is_refused_naming_batch_size(bad):
    """Our error, not Ray's (refused before the dataset is touched)."""
    from nlgscore.errors import NlgscoreError

    with pytest.raises(NlgscoreError, match=r"^batch_size must be a positive integer"):
        score_dataset(None, SPEC, batch_size=bad)


def test_nemo_rl_environment_as_a_ray_actor(local_ray, expected):
    """NeMo-RL creates its environment as a Ray actor and calls ``env.step.remote(message_log_batch,
    metadata)`` (nemo_rl/environments/interfaces.py, math_environment.py): the batch's rewards equal compute."""
    from nlgscore.integrations.nemo_rl import environment_actor

    env = environment_actor().options(num_cpus=0.5).remote({"spec": SPEC})
    logs = [[{"role": "user", "content": "Say it."}, {"role": "assistant", "content": p}] for p in PREDS]
    out = ray.get(env.step.remote(logs, [{"ground_truth": r} for r in REFS]))
    np.testing.assert_allclose(
        out.rewards.numpy(), expected["f1"], rtol=0, atol=1e-6
    )  # tolerance: as the map_batches test
    assert out.terminateds.tolist() == [1.0] * len(PREDS)
    ray.kill(env)
