"""Argument checking shared by every scorer: errors name the argument that is wrong."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

Texts = Sequence[str]
References = Union[Sequence[str], Sequence[Sequence[str]]]


def check_texts(name: str, texts: Any) -> List[str]:
    """Return ``texts`` as a list of str, or raise a TypeError naming ``name`` and the bad item.

    >>> check_texts("predictions", ("a", "b"))
    ['a', 'b']
    """
    if isinstance(texts, (str, bytes)) or texts is None or not hasattr(texts, "__len__"):
        raise TypeError(f"{name} must be a list of strings, got {type(texts).__name__}")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(text).__name__}: {text!r}")
    return out


def check_same_length(**named: Sequence[Any]) -> int:
    """Raise a ValueError if the named sequences differ in length; return the common length."""
    lengths = {name: len(values) for name, values in named.items() if values is not None}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ValueError(f"inputs must have the same number of items, got {detail}")
    return next(iter(lengths.values()), 0)


def check_references(name: str, references: Any, n: Optional[int] = None) -> List[List[str]]:
    """Normalise single references (``[str]``) or multiple, possibly ragged, ones (``[[str]]``).

    Every item gets at least one reference.

    >>> check_references("references", ["a", ["b", "c"]])
    [['a'], ['b', 'c']]
    """
    if isinstance(references, (str, bytes)) or references is None or not hasattr(references, "__len__"):
        raise TypeError(f"{name} must be a list of strings or a list of lists of strings, got {type(references).__name__}")
    out: List[List[str]] = []
    for i, item in enumerate(references):
        if isinstance(item, str):
            out.append([item])
            continue
        if item is None or isinstance(item, bytes) or not hasattr(item, "__len__"):
            raise TypeError(f"{name}[{i}] must be a str or a list of str, got {type(item).__name__}: {item!r}")
        refs = list(item)
        if not refs:
            raise ValueError(f"{name}[{i}] is an empty list: every item needs at least one reference")
        for j, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise TypeError(f"{name}[{i}][{j}] must be a str, got {type(ref).__name__}: {ref!r}")
        out.append(refs)
    if n is not None and len(out) != n:
        raise ValueError(f"{name} has {len(out)} items but there are {n} predictions")
    return out


def flatten_references(references: List[List[str]]) -> tuple:
    """Flatten ragged references; return (flat texts, owner index of each flat text)."""
    flat: List[str] = []
    owner: List[int] = []
    for i, refs in enumerate(references):
        flat.extend(refs)
        owner.extend([i] * len(refs))
    return flat, owner
