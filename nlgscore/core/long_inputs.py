"""The ``long_inputs=`` option every scorer takes: what to do with a text longer than the model's window.

* ``"auto"`` (default): every token counts; each metric family says how (BERTScore: overlapping
  windows, :mod:`nlgscore.bertscore.windows`). Within the limit it is bit-identical to truncate.
* ``"truncate"``: the reference implementations' behaviour (cut at the limit, one warning).
* ``"error"``: an over-long input is a :class:`LongInputError` naming the item
  (``references[3]``), raised before any model runs.

>>> check_long_inputs("auto")
'auto'
>>> check_long_inputs("windows")
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: long_inputs must be one of 'auto', 'truncate', 'error', got 'windows'
>>> name_text("b", ["a", "b"], [["r"], ["s", "b"]])
'predictions[1]'
>>> name_text("s", ["a", "b"], [["r"], ["s", "t"]])
'references[1][0]'
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Tuple

from nlgscore.errors import ArgumentError

LONG_INPUTS = ("auto", "truncate", "error")
DEFAULT_LONG_INPUTS = "auto"
LONG_INPUTS_HELP = (
    "a text over the model's window: auto (every token scored, in windows or sentence chunks), "
    "truncate (the reference implementation's cut) or error"
)


# An item as the scorers name it: predictions[3], references[3] or references[3][1], sources[3].
_ITEM = re.compile(r"(\w+)\[(\d+)\](?:\[(\d+)\])?")


class LongInputError(ArgumentError):
    """``long_inputs="error"`` and an input longer than the model's window; the message names the item.

    ``where`` is the item (``references[3]``), ``detail`` the rest of the message; :attr:`item`
    reads ``where`` and :meth:`renamed` names the same item otherwise (a row of a whole corpus, a
    ``file:line``).

    >>> err = too_long("references[3][1]", 700, 512, "m")
    >>> err.item
    ('references', 3, 1)
    >>> print(err.renamed("refs2.txt:4"))  # doctest: +ELLIPSIS
    refs2.txt:4 has 700 tokens, more than the 512 that m takes ...
    """

    def __init__(self, message: str, where: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.where, self.detail = where, detail

    @property
    def item(self) -> Optional[Tuple[str, int, Optional[int]]]:
        """``(side, index, reference index or None)`` of the item named, or None."""
        match = _ITEM.fullmatch(self.where)
        if match is None:
            return None
        return match[1], int(match[2]), None if match[3] is None else int(match[3])

    def renamed(self, where: str) -> "LongInputError":
        """The same error naming its item ``where``."""
        return LongInputError(f"{where} {self.detail}", where, self.detail)

    def shifted(self, offset: int) -> "LongInputError":
        """The same error with the item's index ``offset`` further (a window's rows in a corpus)."""
        item = self.item
        if item is None or not offset:
            return self
        side, index, ref = item
        return self.renamed(f"{side}[{index + offset}]" + ("" if ref is None else f"[{ref}]"))


def check_long_inputs(value: Any, name: str = "long_inputs") -> str:
    """``value`` if it is one of :data:`LONG_INPUTS`, else an ArgumentError naming ``name``."""
    if not isinstance(value, str) or value not in LONG_INPUTS:
        raise ArgumentError(f"{name} must be one of {', '.join(map(repr, LONG_INPUTS))}, got {value!r}")
    return value


def name_text(
    text: str,
    predictions: Sequence[str],
    references: Optional[Sequence[Sequence[str]]] = None,
    sources: Optional[Sequence[str]] = None,
) -> str:
    """Where ``text`` first occurs among a call's checked inputs, as the user would index it:
    ``predictions[i]``, ``references[i]`` (one reference per item) or ``references[i][j]``, ``sources[i]``."""
    for i, prediction in enumerate(predictions):
        if prediction == text:
            return f"predictions[{i}]"
    if references is not None:
        single = all(len(refs) == 1 for refs in references)
        for i, refs in enumerate(references):
            for j, reference in enumerate(refs):
                if reference == text:
                    return f"references[{i}]" if single else f"references[{i}][{j}]"
    for i, source in enumerate(sources or ()):
        if source == text:
            return f"sources[{i}]"
    return "an input"


def too_long(where: str, tokens: int, limit: int, model: str) -> LongInputError:
    """The error of ``long_inputs="error"`` for the item ``where`` (``tokens`` over ``limit``).

    >>> str(too_long("references[3]", 700, 512, "all-MiniLM-L6-v2"))  # doctest: +ELLIPSIS
    "references[3] has 700 tokens, more than the 512 that all-MiniLM-L6-v2 takes (long_inputs='error'); ..."
    """
    detail = (
        f"has {tokens} tokens, more than the {limit} that {model} takes (long_inputs='error'); "
        "pass long_inputs='auto' to score it whole or 'truncate' to cut it"
    )
    return LongInputError(f"{where} {detail}", where, detail)


def windows_per_prediction(counts: List[int]) -> List[int]:
    """Per-item window counts as plain ints, at least 1 each (what :attr:`Result.windows` holds).

    >>> windows_per_prediction([1.0, 3.0])
    [1, 3]
    """
    return [max(1, int(round(c))) for c in counts]
