"""A verifiers / prime-rl reward function scored by a nlgscore metric: :func:`reward_function`.

verifiers' ``Rubric(funcs=[...], weights=[...])`` calls each reward function with the keywords
its signature asks for among ``prompt``, ``completion``, ``answer``, ``state``, ``task``,
``info`` (verifiers' docs, ``docs/source/rubrics.md``), awaiting a coroutine function:
the completion (a string, or chat messages: the last assistant message's text, read by
:mod:`nlgscore.core.messages`: dicts or verifiers' own pydantic messages) is the prediction, the
answer its reference, a source-based metric reads the prompt. prime-rl trains on verifiers
environments, so the same function serves both::

    rubric = vf.Rubric(funcs=[reward_function(url="http://127.0.0.1:8000")], weights=[1.0])

>>> import asyncio
>>> reward = reward_function(spec="bertscore:minilm:L2")
>>> round(asyncio.run(reward(completion=[{"role": "assistant", "content": "It is cold."}], answer="It is cold.")), 4)
1.0
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from nlgscore.core.messages import last_text
from nlgscore.integrations.rewards import arewards, reward_scorer


def reward_function(
    url: Optional[str] = None,
    spec: Optional[str] = None,
    options: Optional[Mapping[str, Any]] = None,
    column: Optional[str] = None,
    name: Optional[str] = None,
) -> Callable[..., Any]:
    """An async reward function for a verifiers ``Rubric``.

    It is called as ``reward(completion, answer, prompt=None, **kwargs)`` and gives a float: the
    completion's last assistant message scored against the answer (and the prompt's last user
    message, for a source-based metric).

    Args:
        url: a ``nlgscore serve`` address; give it or ``spec``, not both.
        spec: a local metric's spec (``"bertscore:minilm"``).
        options: the local scorer's options.
        column: the score column the reward is (None: the primary one).
        name: the function's ``__name__``, the reward's name in verifiers' logs (None: the metric's).

    Returns:
        The coroutine function.

    Raises:
        ArgumentError: as `reward_scorer`.
        ArgumentTypeError: as `reward_scorer`.
    """
    scorer = reward_scorer(url, spec, options)

    async def reward(completion: Any, answer: Any, prompt: Any = None, **kwargs: Any) -> float:
        source = last_text(prompt, "user", "prompt") if prompt is not None else ""
        return (await arewards(scorer, [last_text(completion, "assistant", "completion")], [answer], [source], column))[
            0
        ]

    reward.__name__ = reward.__qualname__ = name or scorer.name.replace(":", "_")
    return reward
