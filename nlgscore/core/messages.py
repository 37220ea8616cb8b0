"""Chat messages as text: the one reading of a message's content by every adapter and endpoint.

A message is a mapping (``{"role", "content"}``, OpenAI's TypedDicts) or an object with ``role``
and ``content`` attributes (verifiers' pydantic ``UserMessage``/``AssistantMessage``). Its content
is a string, or a list of parts whose text parts are joined in order: a part is a mapping or an
object with ``type`` and ``text``, of type ``text`` (OpenAI chat, verifiers' ``TextContentPart``,
TRL), ``input_text`` or ``output_text`` (OpenAI Responses). Content with no text (None, a
number, images only) is refused with an error naming the field: an empty text would score as a
real, wrong answer.

>>> parts = [{"type": "text", "text": "The cat "}, {"type": "image_url", "image_url": {"url": "x"}}]
>>> content_text(parts + [{"type": "text", "text": "sat."}], "content")
'The cat sat.'
>>> last_text([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}], "assistant", "completion")
'Hello'
>>> content_text(None, "completion[1].content")
Traceback (most recent call last):
...
nlgscore.errors.ArgumentTypeError: completion[1].content must be a string or a list of text parts, got NoneType
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, List, Sequence

from nlgscore.errors import ArgumentError, ArgumentTypeError

TEXT_PARTS = ("text", "input_text", "output_text")


def field(item: Any, name: str) -> Any:
    """``item[name]`` of a mapping, ``item.name`` of an object (a pydantic model), else None."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def content_text(content: Any, where: str) -> str:
    """The text of one message's ``content`` (see the module docstring); ``where`` names it in errors."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        kinds: List[str] = []
        texts = []
        for i, part in enumerate(content):
            kind = field(part, "type")
            kinds.append(str(kind))
            if kind in TEXT_PARTS:
                text = field(part, "text")
                if not isinstance(text, str):
                    raise ArgumentTypeError(f"{where}[{i}].text must be a string, got {type(text).__name__}")
                texts.append(text)
        if texts:
            return "".join(texts)
        raise ArgumentError(f"{where} has no text part (part types: {kinds}); a reward needs text")
    raise ArgumentTypeError(f"{where} must be a string or a list of text parts, got {type(content).__name__}")


def _messages(messages: Any, where: str) -> List[Any]:
    if isinstance(messages, (Mapping, bytes)) or not isinstance(messages, Sequence):
        raise ArgumentTypeError(f"{where} must be a string or a list of chat messages, got {type(messages).__name__}")
    return list(messages)


def last_text(messages: Any, role: str, where: str) -> str:
    """The text of the last ``role`` message of a conversation (a string is the text itself)."""
    if isinstance(messages, str):
        return messages
    items = _messages(messages, where)
    for i in range(len(items) - 1, -1, -1):
        if field(items[i], "role") == role:
            return content_text(field(items[i], "content"), f"{where}[{i}].content")
    raise ArgumentError(f"{where} has no {role!r} message (roles: {[field(m, 'role') for m in items]})")


def joined_text(messages: Any, role: str, where: str) -> str:
    """The texts of every ``role`` message of a conversation, joined in order (a multi-turn answer).

    >>> log = [{"role": "assistant", "content": "A"}, {"role": "user", "content": "?"}, {"role": "assistant", "content": "B"}]
    >>> joined_text(log, "assistant", "log")
    'AB'
    """
    items = _messages(messages, where)
    texts = [
        content_text(field(m, "content"), f"{where}[{i}].content")
        for i, m in enumerate(items)
        if field(m, "role") == role
    ]
    if not texts:
        raise ArgumentError(f"{where} has no {role!r} message (roles: {[field(m, 'role') for m in items]})")
    return "".join(texts)
