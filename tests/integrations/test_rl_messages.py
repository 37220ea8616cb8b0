"""The RL adapters read chat messages as the frameworks build them: content parts joined, no text refused.

Message shapes, each from the framework's own code:

* verifiers 0.4: ``verifiers/v1/types.py`` (pydantic ``UserMessage``, ``AssistantMessage``,
  ``TextContentPart``, ``ImageUrlContentPart``; an assistant's ``content`` may be None). The
  module is loaded from the installed package by file: the package's ``__init__`` needs the whole
  verifiers stack (``openai<3``, ``mcp``, ``prime-*``), which the test extra does not install;
  ``pip install --no-deps verifiers`` gives the types, which need only pydantic. Skipped without it.
* verifiers 0.1 and TRL: OpenAI's chat TypedDicts (``openai/types/chat/``), dicts at run time.
* SkyRL: ``skyrl_gym/envs/base_text_env.py`` (``ConversationType = List[Dict[str, str]]``).
* NeMo-RL: ``nemo_rl/data/interfaces.py`` (``LLMMessageLogType``: a list of dicts with ``role``
  and ``content``), content parts as its multimodal message logs carry them.

A message whose text is split into parts must score exactly as the same text given as a string.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from nlgscore.errors import ArgumentError, ArgumentTypeError

SPEC = "bertscore:minilm:L2"
TEXT, PARTS = "The cat sat on the mat.", ["The cat ", "sat on the mat."]


def _verifiers_types():
    spec = importlib.util.find_spec("verifiers")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("verifiers is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "v1" / "types.py"
    if not path.exists():
        pytest.skip("this verifiers has no v1/types.py")
    module_spec = importlib.util.spec_from_file_location("verifiers_v1_types", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def alone():
    import nlgscore

    return float(nlgscore.load(SPEC).compute([TEXT], [TEXT]).scores[0])


def test_verifiers_pydantic_messages_and_openai_typeddicts(alone):
    from nlgscore.integrations.verifiers import reward_function

    vf = _verifiers_types()
    reward = reward_function(spec=SPEC)
    completion = [vf.AssistantMessage(content=TEXT)]
    assert asyncio.run(reward(completion=completion, answer=TEXT)) == alone
    prompt = [
        vf.UserMessage(
            content=[
                vf.TextContentPart(text="Where "),
                vf.ImageUrlContentPart(image_url=vf.ImageUrlSource(url="x")),
                vf.TextContentPart(text="is the cat?"),
            ]
        )
    ]
    assert asyncio.run(reward(prompt=prompt, completion=completion, answer=TEXT)) == alone
    with pytest.raises(
        ArgumentTypeError, match=r"completion\[0\]\.content must be a string or a list of text parts, got NoneType"
    ):
        asyncio.run(reward(completion=[vf.AssistantMessage(content=None)], answer=TEXT))

    from openai.types.chat import ChatCompletionAssistantMessageParam, ChatCompletionContentPartTextParam

    parts = [ChatCompletionContentPartTextParam(type="text", text=p) for p in PARTS]
    assert (
        asyncio.run(
            reward(completion=[ChatCompletionAssistantMessageParam(role="assistant", content=parts)], answer=TEXT)
        )
        == alone
    )
    with pytest.raises(
        ArgumentError, match=r"completion\[0\]\.content has no text part \(part types: \['image_url'\]\)"
    ):
        asyncio.run(
            reward(
                completion=[{"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
                answer=TEXT,
            )
        )


def test_skyrl_prompt_and_action_messages(alone):
    pytest.importorskip("skyrl_gym.envs.base_text_env")
    from nlgscore.integrations.skyrl import NlgscoreTextEnv

    env = NlgscoreTextEnv({"spec": SPEC}, {"reward_spec": {"ground_truth": TEXT}})
    env.init([{"role": "user", "content": [{"type": "text", "text": "Where is the cat?"}]}])
    assert env.step(TEXT)["reward"] == alone
    with pytest.raises(
        ArgumentTypeError, match=r"prompt\[0\]\.content must be a string or a list of text parts, got int"
    ):
        env.init([{"role": "user", "content": 5}])


def test_nemo_rl_message_log_parts(alone):
    from nlgscore.integrations.nemo_rl import NlgscoreEnvironment

    env = NlgscoreEnvironment({"spec": SPEC})
    log = [
        {"role": "user", "content": "Where is the cat?"},
        {"role": "assistant", "content": [{"type": "text", "text": p} for p in PARTS]},
    ]
    assert float(env.step([log], [{"ground_truth": TEXT}]).rewards[0]) == alone
    with pytest.raises(
        ArgumentTypeError,
        match=r"message_log_batch\[1\]\[1\]\.content must be a string or a list of text parts, got NoneType",
    ):
        env.step(
            [log, [{"role": "user", "content": "?"}, {"role": "assistant", "content": None}]],
            [{"ground_truth": TEXT}] * 2,
        )
    with pytest.raises(ArgumentError, match=r"message_log_batch\[0\] has no 'assistant' message"):
        env.step([[{"role": "user", "content": "?"}]], [{"ground_truth": TEXT}])


def test_trl_completion_parts_without_text_are_refused():
    from nlgscore.integrations.trl import completion_texts

    assert completion_texts([[{"role": "assistant", "content": [{"type": "text", "text": p} for p in PARTS]}]]) == [
        TEXT
    ]
    with pytest.raises(ArgumentError, match=r"completions\[0\]\[0\]\.content has no text part"):
        completion_texts([[{"role": "assistant", "content": [{"type": "image", "image": None}]}]])
