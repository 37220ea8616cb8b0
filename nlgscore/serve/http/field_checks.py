"""The checks every endpoint applies to request fields, in one place: the one JSON reading rule,
and labels with no text. Each failure is a :class:`FieldError` naming the field, which
:mod:`nlgscore.serve.http.protocol` answers with 400.

* :func:`read_json`: a body is JSON text (RFC 8259) whose every value a server can carry: no
  ``NaN`` or ``Infinity`` (in any spelling), no number that overflows a float (``1e999``), no lone
  UTF-16 surrogate (escaped ``"\\ud800"`` or as raw bytes), no integer beyond msgpack's 64 bits.
  Python's parser takes all of them, and each breaks something further in: an endpoint that
  echoes the request (NeMo Gym's ``/verify``), the frames between ``--workers``' processes, a
  tokenizer. Every body of every endpoint is read by this one rule, in both server modes.
* :func:`label`: a reference from an RL framework's label field (slime's ``label``, NeMo Gym's
  ``expected_answer``, ROLL's ``reward_info.ground_truth``, OpenRLHF's ``labels[i]``): a string
  or a non-empty list of strings, none of them blank. A blank label would score a real answer
  against nothing and hand the trainer a reward of 0 as if it were meant.

>>> read_json(b'{"rows": [1.5, {"x": NaN}]}')
Traceback (most recent call last):
...
nlgscore.serve.http.field_checks.FieldError: rows[1].x is NaN, which is not JSON (RFC 8259): send a number, a string or null
>>> read_json(b'{"context": 18446744073709551616}')
Traceback (most recent call last):
...
nlgscore.serve.http.field_checks.FieldError: context is an integer beyond 64 bits (18446744073709551616): no field takes one
>>> label(["a", " "], "label")
Traceback (most recent call last):
...
nlgscore.serve.http.field_checks.FieldError: label[1] is blank: a label must hold the reference text
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, List

SURROGATE = re.compile("[\ud800-\udfff]")
INTEGERS = (-(2**63), 2**64 - 1)  # what msgpack carries between a server's processes


class FieldError(ValueError):
    """A field a request may not hold, named (the server answers it with 400)."""


class NotJSON:
    """A value Python's parser takes but JSON has not: ``NaN``, ``Infinity``, a float overflow."""

    def __init__(self, text: str) -> None:
        self.text = text


def _float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else NotJSON(f"{text}, which overflows a float")


try:  # the fast reading: msgspec refuses every value refused here (an integer past 64 bits aside)
    import msgspec

    _fast_decode: Any = msgspec.json.decode
    _fast_check: Any = msgspec.msgpack.Encoder().encode  # refuses an integer beyond 64 bits
    _FAST_ERRORS: tuple = (msgspec.DecodeError, msgspec.ValidationError, msgspec.EncodeError, OverflowError)
except ImportError:  # no serve extra: the stdlib reading below does all of it
    _fast_decode = None


def read_json(raw: bytes) -> Any:
    """The JSON value of a request body; a body that is not JSON text, or holds a value refused
    here (see the module docstring), is a :class:`FieldError` naming the field.

    The common body is read once in C (msgspec) and checked by encoding it as msgpack; a body that
    fails is read again with Python's parser, to name the field.

    >>> read_json(b'{"predictions": ["a"]}')
    {'predictions': ['a']}
    >>> read_json(b'{"a": "\\xed\\xa0\\x80"}'.decode("unicode_escape").encode("latin-1"))
    Traceback (most recent call last):
    ...
    nlgscore.serve.http.field_checks.FieldError: a holds a lone UTF-16 surrogate, which is not Unicode text
    """
    if _fast_decode is not None:
        try:
            value = _fast_decode(raw)
            _fast_check(value)
            return value
        except _FAST_ERRORS:
            pass  # named below
        except RecursionError:
            raise FieldError("malformed JSON body: nested too deeply") from None
    try:
        text = raw.decode("utf-8", "surrogatepass")  # raw surrogates read, to be named by the walk
    except UnicodeDecodeError as err:
        raise FieldError(f"malformed JSON body: not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        value = json.loads(text, parse_constant=NotJSON, parse_float=_float)
    except ValueError as err:
        raise FieldError(f"malformed JSON body: {err}") from None
    except RecursionError:  # arrays or objects nested thousands deep: no field of any endpoint is
        raise FieldError("malformed JSON body: nested too deeply") from None
    check_json_values(value)
    return value


def check_json_values(value: Any, where: str = "") -> None:
    """Refuse a value a server cannot carry anywhere in a parsed body, naming its path: a
    non-finite number, a :class:`NotJSON` one, a lone surrogate, an integer beyond 64 bits."""
    stack: List[Any] = [(value, where)]
    while stack:
        item, path = stack.pop()
        name = path or "the body"
        if isinstance(item, NotJSON):
            raise FieldError(f"{name} is {item.text}, which is not JSON (RFC 8259): send a number, a string or null")
        if isinstance(item, float) and not math.isfinite(item):
            word = "NaN" if math.isnan(item) else ("-Infinity" if item < 0 else "Infinity")
            raise FieldError(f"{name} is {word}, which is not JSON (RFC 8259): send a number, a string or null")
        if isinstance(item, int) and not isinstance(item, bool) and not INTEGERS[0] <= item <= INTEGERS[1]:
            raise FieldError(f"{name} is an integer beyond 64 bits ({item}): no field takes one")
        if isinstance(item, str) and SURROGATE.search(item):
            raise FieldError(f"{name} holds a lone UTF-16 surrogate, which is not Unicode text")
        if isinstance(item, dict):
            for key, child in item.items():
                if SURROGATE.search(key):
                    raise FieldError(f"a key of {name} holds a lone UTF-16 surrogate, which is not Unicode text")
                stack.append((child, f"{path}.{key}" if path else key))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))


def label(value: Any, name: str) -> Any:
    """A reference from a label field: a string or a non-empty list of strings, none blank."""
    if isinstance(value, str):
        if not value.strip():
            raise FieldError(f"{name} is blank: a label must hold the reference text")
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        for i, text in enumerate(value):
            if not text.strip():
                raise FieldError(f"{name}[{i}] is blank: a label must hold the reference text")
        return value
    raise FieldError(f"{name} must be a string or a non-empty list of strings, got {type(value).__name__}")
