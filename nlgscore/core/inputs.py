"""Argument checking shared by every scorer: errors name the argument (and item) that is wrong.

Texts must be sequences in a defined order: a ``dict`` (scored by its keys) or a ``set``
(paired in hash order, so results would change with ``PYTHONHASHSEED``) is an ArgumentTypeError (a
TypeError). Lone surrogates (``"\\ud800"``, e.g. from a bad decode) cannot be tokenised: an
ArgumentError (a ValueError) names the argument and the index instead of a tokenizer-internal
error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from itertools import chain, repeat
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from nlgscore.errors import ArgumentError, ArgumentTypeError

_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_container(name: str, value: Any, what: str) -> None:
    if isinstance(value, (Mapping, Set)):
        raise ArgumentTypeError(f"{name} must be {what} in a fixed order, got a {type(value).__name__} (pass a list)")
    if isinstance(value, (str, bytes)) or value is None or not hasattr(value, "__len__"):
        raise ArgumentTypeError(f"{name} must be {what}, got {type(value).__name__}")


def check_text(name: str, text: Any) -> str:
    """``text`` if it is a str encodable as UTF-8, else a TypeError/ValueError naming ``name``."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"{name} must be a str, got {type(text).__name__}: {text!r}")
    bad = _SURROGATE.search(text)
    if bad:
        raise ArgumentError(
            f"{name} contains a lone surrogate {bad.group()!r} at character {bad.start()} (not valid Unicode text; fix its decoding)"
        )
    return text


def check_texts(name: str, texts: Any) -> List[str]:
    """Return ``texts`` as a list of str, or raise a TypeError naming ``name`` and the bad item.

    >>> check_texts("predictions", ("a", "b"))
    ['a', 'b']
    >>> check_texts("predictions", {"a", "b"})
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentTypeError: predictions must be a list of strings in a fixed order, got a set (pass a list)
    """
    _check_container(name, texts, "a list of strings")
    out = list(texts)
    _check_each(name, out)
    return out


def _check_each(name: str, texts: List[Any]) -> None:
    """:func:`check_text` on every item; the common all-valid case is checked in bulk (a
    200,000-line file or an N x M matrix call should not pay a Python call per text)."""
    if set(map(type, texts)) <= {str} and not _SURROGATE.search("".join(texts)):
        return
    for i, text in enumerate(texts):
        check_text(f"{name}[{i}]", text)


def check_same_length(**named: Sequence[Any]) -> int:
    """Raise a ValueError if the named sequences differ in length; return the common length."""
    lengths = {name: len(values) for name, values in named.items() if values is not None}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ArgumentError(f"inputs must have the same number of items, got {detail}")
    return next(iter(lengths.values()), 0)


def check_references(name: str, references: Any, n: Optional[int] = None) -> List[List[str]]:
    """Normalise single references (``[str]``) or multiple, possibly ragged, ones (``[[str]]``).

    Every item gets at least one reference.

    >>> check_references("references", ["a", ["b", "c"]])
    [['a'], ['b', 'c']]
    """
    _check_container(name, references, "a list of strings or a list of lists of strings")
    out: List[List[str]] = []
    if set(map(type, references)) <= {str}:  # one reference per item: checked in bulk
        _check_each(name, list(references))
        out = [[ref] for ref in references]
        references = ()
    for i, item in enumerate(references):
        if isinstance(item, str):
            out.append([check_text(f"{name}[{i}]", item)])
            continue
        if isinstance(item, (Mapping, Set)) or item is None or isinstance(item, bytes) or not hasattr(item, "__len__"):
            raise ArgumentTypeError(f"{name}[{i}] must be a str or a list of str, got {type(item).__name__}: {item!r}")
        refs = list(item)
        if not refs:
            raise ArgumentError(f"{name}[{i}] is an empty list: every item needs at least one reference")
        _check_each(f"{name}[{i}]", refs)
        out.append(refs)
    if n is not None and len(out) != n:
        raise ArgumentError(
            f"{name} has {len(out)} items but there are {n} predictions (inputs must have the same number of items)"
        )
    return out


class Item(NamedTuple):
    """What a metric scores: a prediction with the inputs the metric uses.

    Frozen and hashable, so identical items are scored once.

    Attributes:
        prediction: the text scored.
        reference: one of its references (an item per reference); None where the metric uses none.
        source: its source; None where the metric uses none.
        context: the previous sentences of the item's document that each side is read after
            (:class:`nlgscore.core.context.Context`); None without document context.

    Example:
        >>> Item("a cat", reference="the cat")
        Item(prediction='a cat', reference='the cat', source=None, context=None)
    """

    prediction: str
    reference: Optional[str] = None
    source: Optional[str] = None
    context: Optional[Any] = None


def make_items(
    predictions: List[str],
    references: Optional[List[List[str]]] = None,
    sources: Optional[List[str]] = None,
    contexts: Optional[List[List[Any]]] = None,
) -> Tuple[List[Item], List[int]]:
    """One :class:`Item` per (prediction, reference) of checked inputs (ragged references
    flattened; one item per prediction without references), and the prediction each belongs to.
    ``contexts``: per prediction, the context of each of its items (see :mod:`nlgscore.core.context`).

    >>> items, owner = make_items(["p", "q"], [["r1", "r2"], ["r3"]], ["s", "t"])
    >>> [item[:3] for item in items], owner
    ([('p', 'r1', 's'), ('p', 'r2', 's'), ('q', 'r3', 't')], [0, 0, 1])
    >>> make_items(["p"], sources=["s"])
    ([Item(prediction='p', reference=None, source='s', context=None)], [0])
    """
    if references is None:
        owner = list(range(len(predictions)))
        flat: List[Optional[str]] = [None] * len(predictions)
    else:
        owner = [i for i, refs in enumerate(references) for _ in refs]
        flat = list(chain.from_iterable(references))
    hyps = predictions if len(owner) == len(predictions) else [predictions[i] for i in owner]
    srcs = repeat(None) if sources is None else sources if len(owner) == len(sources) else [sources[i] for i in owner]
    if contexts is None:
        return list(map(Item, hyps, flat, srcs)), owner
    return list(map(Item, hyps, flat, srcs, chain.from_iterable(contexts))), owner
