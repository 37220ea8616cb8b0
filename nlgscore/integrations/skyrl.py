"""A SkyRL text environment whose reward is a nlgscore metric: :class:`NlgscoreTextEnv`.

SkyRL builds an environment per sample as ``env_cls(env_config, extras)`` and calls
``init(prompt)`` then ``step(action)`` (``skyrl_gym/envs/base_text_env.py``; the GSM8K
environment, ``skyrl_gym/envs/gsm8k/env.py``, is the model followed): the reference is
``extras["reward_spec"]["ground_truth"]`` (a string or a list), the action is the prediction, a
source-based metric reads the prompt's last user message. ``env_config`` names the scorer:
``url`` (a ``nlgscore serve``: the per-sample calls of every worker are merged there) or
``spec`` (with ``options``), and ``column``. Register it with SkyRL's registry::

    skyrl_gym.register(id="nlgscore", entry_point="nlgscore.integrations.skyrl:NlgscoreTextEnv")

>>> env = NlgscoreTextEnv({"spec": "bertscore:minilm:L2"}, {"reward_spec": {"ground_truth": "It is cold."}})
>>> _ = env.init([{"role": "user", "content": "Weather?"}])
>>> out = env.step("It is cold.")
>>> round(out["reward"], 4), out["done"]
(1.0, True)
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Tuple

from nlgscore.backend.extras import require
from nlgscore.core.messages import last_text
from nlgscore.errors import ArgumentError
from nlgscore.integrations.rewards import reward_scorer, rewards

base_text_env = require("skyrl_gym.envs.base_text_env", "skyrl", "the SkyRL environment")
# SkyRL's class, known only once the module is imported (the extra may be absent when type-checking)
_BaseTextEnv: Any = base_text_env.BaseTextEnv


class NlgscoreTextEnv(_BaseTextEnv):
    """SkyRL's ``BaseTextEnv`` rewarding the action with a nlgscore metric (see the module docstring).

    Args:
        env_config: names the scorer: ``url`` (a ``nlgscore serve``) or ``spec`` (a local metric,
            with ``options``), and ``column`` (a score column other than the primary one).
        extras: the sample's extras: ``extras["reward_spec"]["ground_truth"]`` is the reference
            (a string, or a list of references).

    Raises:
        ArgumentError: no ``reward_spec`` with a ``ground_truth``, or both or neither of ``url``
            and ``spec``.
    """

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] = {}) -> None:
        super().__init__()
        config = dict(env_config or {})
        spec = extras.get("reward_spec") if isinstance(extras, Mapping) else None
        if not isinstance(spec, Mapping) or "ground_truth" not in spec:
            raise ArgumentError("extras['reward_spec']['ground_truth'] is required (the reference)")
        self.ground_truth = spec["ground_truth"]
        self.column = config.get("column")
        self.scorer = reward_scorer(config.get("url"), config.get("spec"), config.get("options"))
        self.source = ""

    def init(self, prompt: List[Dict[str, str]]) -> Tuple[List[Dict[str, str]], Dict[str, Any]]:
        """Keep the prompt (a source-based metric reads it); SkyRL's first observation unchanged.

        Args:
            prompt: the chat prompt, a list of ``{"role", "content"}``; its last user message is the
                source.

        Returns:
            ``(prompt, {})``: the observation and no metadata.
        """
        self.source = last_text(prompt, "user", "prompt")
        return prompt, {}

    def step(self, action: str) -> Any:
        """The reward of ``action``; the episode ends (single-turn).

        Args:
            action: the model's answer, a string or messages (their content parts joined).

        Returns:
            SkyRL's ``BaseTextEnvStepOutput``: the ``reward``, ``done=True``, no observation.
        """
        prediction = last_text(action, "assistant", "action")  # a string, or messages (content parts joined)
        reward = rewards(self.scorer, [prediction], [self.ground_truth], [self.source], self.column)[0]
        return base_text_env.BaseTextEnvStepOutput(
            observations=[], reward=reward, done=True, metadata={"nlgscore": self.scorer.name}
        )
