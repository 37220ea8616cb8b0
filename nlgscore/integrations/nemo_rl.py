"""A NeMo-RL environment whose reward is a nlgscore metric: :class:`NlgscoreEnvironment`.

NeMo-RL calls ``env.step.remote(message_log_batch, metadata)`` on a Ray actor for a whole batch
of rollouts (``nemo_rl/environments/interfaces.py``, ``EnvironmentInterface``; the math
environment, ``nemo_rl/environments/math_environment.py``, is the model followed): each message
log is a list of ``{"role", "content"}``; the prediction is the log's assistant texts joined
(a content string, or its text parts: :mod:`nlgscore.core.messages`),
the reference is ``metadata[i][reference_key]`` (``"ground_truth"``, as the math environment
reads), a source-based metric reads the last user message. The batch is one scoring call: to a
``nlgscore serve`` (``url``, which merges it with other actors' batches) or a local scorer
(``spec``, through its micro-batcher). :func:`environment_actor` is the class as a Ray actor::

    env = environment_actor().options(num_cpus=1).remote({"url": "http://127.0.0.1:8000"})
    result = ray.get(env.step.remote(message_logs, [{"ground_truth": "..."}, ...]))

>>> env = NlgscoreEnvironment({"spec": "bertscore:minilm:L2"})
>>> out = env.step(
...     [[{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "It is cold."}]],
...     [{"ground_truth": "It is cold."}],
... )
>>> [round(float(r), 4) for r in out.rewards], out.terminateds.tolist()
([1.0], [1.0])
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from nlgscore.core.messages import joined_text, last_text
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.rewards import reward_scorer, rewards

DEFAULT_REFERENCE_KEY = "ground_truth"


class EnvironmentReturn(NamedTuple):
    """NeMo-RL's ``EnvironmentReturn``, field for field.

    Attributes:
        observations: one environment message per episode (``{"role": "environment", "content":
            "Environment: reward 0.9731"}``).
        metadata: the batch's metadata, as it came.
        next_stop_strings: one None per episode (nothing more is generated).
        rewards: the rewards, a ``float32`` tensor with one value per episode.
        terminateds: ones: every episode ends with its one answer.
        answers: None (the environment extracts no answer).
    """

    observations: List[Dict[str, str]]
    metadata: List[Any]
    next_stop_strings: List[Optional[List[str]]]
    rewards: Any
    terminateds: Any
    answers: Optional[List[Optional[str]]]


class NlgscoreEnvironment:
    """NeMo-RL's ``EnvironmentInterface`` scored by a nlgscore metric (see the module docstring).

    Args:
        cfg: the environment's configuration: ``url`` (a ``nlgscore serve``) or ``spec`` (a local
            metric, with ``options``), ``reference_key`` (the metadata key of the reference,
            ``"ground_truth"`` by default) and ``column`` (a score column other than the primary one).

    Raises:
        ArgumentTypeError: ``cfg`` is not a dict.
        ArgumentError: both or neither of ``url`` and ``spec`` (as `reward_scorer`).
    """

    def __init__(self, cfg: Dict[str, Any]) -> None:
        if not isinstance(cfg, dict):
            raise ArgumentTypeError(f"cfg must be a dict, got {type(cfg).__name__}")
        self.cfg = cfg
        self.reference_key = cfg.get("reference_key", DEFAULT_REFERENCE_KEY)
        self.scorer = reward_scorer(cfg.get("url"), cfg.get("spec"), cfg.get("options"))

    def inputs(self, message_log_batch: List[Any], metadata: List[Any]) -> Tuple[List[str], List[Any], List[str]]:
        """Predictions, references and sources of a batch.

        Args:
            message_log_batch: one message log per episode, each a list of ``{"role", "content"}``:
                its assistant texts joined are the prediction, its last user message the source.
            metadata: one dict per episode, holding the reference under ``reference_key``.

        Returns:
            ``(predictions, references, sources)``, one entry per episode each.

        Raises:
            ArgumentError: ``metadata`` has another length, or an entry has no ``reference_key``.
        """
        if len(message_log_batch) != len(metadata):
            raise ArgumentError(f"metadata has {len(metadata)} items for {len(message_log_batch)} message logs")
        predictions = [
            joined_text(log, "assistant", f"message_log_batch[{i}]") for i, log in enumerate(message_log_batch)
        ]
        references = []
        for i, meta in enumerate(metadata):
            if not isinstance(meta, dict) or self.reference_key not in meta:
                raise ArgumentError(
                    f"metadata[{i}] has no {self.reference_key!r} (the reference; reference_key={self.reference_key!r})"
                )
            references.append(meta[self.reference_key])
        return (
            predictions,
            references,
            [last_text(log, "user", f"message_log_batch[{i}]") for i, log in enumerate(message_log_batch)],
        )

    def step(self, message_log_batch: List[Any], metadata: List[Any]) -> EnvironmentReturn:
        """One scoring call for the batch; every episode ends here (single-turn).

        Args:
            message_log_batch: one message log per episode (as `inputs` reads it).
            metadata: one dict per episode, holding the reference under ``reference_key``.

        Returns:
            The rewards and the episodes' ends, as NeMo-RL reads them.

        Raises:
            ArgumentError: as `inputs`, or an input the metric refuses.
        """
        import torch

        predictions, references, sources = self.inputs(message_log_batch, metadata)
        scores = rewards(self.scorer, predictions, references, sources, self.cfg.get("column")) if predictions else []
        values = torch.tensor(scores, dtype=torch.float32)
        observations = [{"role": "environment", "content": f"Environment: reward {s:.4f}"} for s in scores]
        return EnvironmentReturn(observations, metadata, [None] * len(scores), values, torch.ones_like(values), None)

    def global_post_process_and_metrics(self, batch: Any) -> Tuple[Any, Dict[str, float]]:
        """Nothing to post-process; no extra metrics.

        Args:
            batch: the rollout batch, returned as it is.

        Returns:
            ``(batch, {})``.
        """
        return batch, {}

    def shutdown(self) -> None:
        """Nothing to release (a server, or the process's cached scorer)."""


def environment_actor() -> Any:
    """:class:`NlgscoreEnvironment` as a Ray actor class (``ray.remote``), as NeMo-RL creates environments."""
    import ray

    return ray.remote(NlgscoreEnvironment)
