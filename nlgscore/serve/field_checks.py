"""The checks every endpoint applies to request fields, in one place: JSON values that cannot be
echoed, and labels with no text. Each failure is a :class:`FieldError` naming the field, which
:mod:`nlgscore.serve.protocol` answers with 400.

* :func:`check_json_values`: Python's JSON parser takes ``NaN``, ``Infinity`` and lone UTF-16
  surrogates (``"\\ud800"``), none of which is JSON (RFC 8259) or encodes back as UTF-8: an
  endpoint that echoes the request (NeMo Gym's ``/verify``) would fail after scoring. Every body
  is checked once, when it is read.
* :func:`label`: a reference from an RL framework's label field (slime's ``label``, NeMo Gym's
  ``expected_answer``, ROLL's ``reward_info.ground_truth``, OpenRLHF's ``labels[i]``): a string
  or a non-empty list of strings, none of them blank. A blank label would score a real answer
  against nothing and hand the trainer a reward of 0 as if it were meant.

>>> check_json_values({"rows": [1.5, {"x": float("nan")}]})
Traceback (most recent call last):
...
nlgscore.serve.field_checks.FieldError: rows[1].x is NaN, which is not JSON (RFC 8259): send a number, a string or null
>>> label(["a", " "], "label")
Traceback (most recent call last):
...
nlgscore.serve.field_checks.FieldError: label[1] is blank: a label must hold the reference text
"""

from __future__ import annotations

import math
import re
from typing import Any, List

SURROGATE = re.compile("[\ud800-\udfff]")
SUSPECT = re.compile(rb"NaN|Infinity|\\u[dD][89a-fA-F]")  # what a body must contain to hold a value refused here


class FieldError(ValueError):
    """A field a request may not hold, named (the server answers it with 400)."""


def suspect(raw: bytes) -> bool:
    """Whether a raw body may hold a value :func:`check_json_values` refuses (a cheap scan first)."""
    return SUSPECT.search(raw) is not None


def check_json_values(value: Any, where: str = "") -> None:
    """Refuse a non-finite number or a lone surrogate anywhere in a parsed body, naming its path."""
    stack: List[Any] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            word = "NaN" if math.isnan(item) else ("-Infinity" if item < 0 else "Infinity")
            raise FieldError(
                f"{path or 'the body'} is {word}, which is not JSON (RFC 8259): send a number, a string or null"
            )
        if isinstance(item, str) and SURROGATE.search(item):
            raise FieldError(f"{path or 'the body'} holds a lone UTF-16 surrogate, which is not Unicode text")
        if isinstance(item, dict):
            for key, child in item.items():
                if SURROGATE.search(key):
                    raise FieldError(
                        f"a key of {path or 'the body'} holds a lone UTF-16 surrogate, which is not Unicode text"
                    )
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
