"""One MBR/reranking input: candidates, optional pseudo-references, optional source.

An :class:`MBRItem` is checked when it is built, so a bad item fails before any model runs, with
an error naming the item and the field (``items[3].candidates[1] must be a str``).

>>> item = MBRItem(["a cat", "the cat", "a dog"], id="s1")
>>> item.n, item.samples, item.excludes_self
(3, ['a cat', 'the cat', 'a dog'], True)
>>> MBRItem(["a cat"], pseudo_references=["the cat", "a cat"]).excludes_self
False
>>> MBRItem(["only one"])  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: item 0: candidates needs at least 2 texts when pseudo_references are not given
(each candidate is excluded from its own expectation), got 1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

from nlgscore.core.inputs import check_text, check_texts
from nlgscore.errors import ArgumentError, ArgumentTypeError

ItemId = Union[str, int]


@dataclass(frozen=True)
class MBRItem:
    """One MBR item: the candidates to choose from and the samples their utility is expected over.

    Args:
        candidates: the N texts to choose from.
        pseudo_references: the M samples the expectation runs over; None: the candidates
            themselves, each candidate left out of its own expectation (then at least 2 are needed).
        source: the item's source, for a source-based (QE) metric or one that scores with both.
        id: names the item in outputs and errors (a str or an int); None: its position.

    Raises:
        ArgumentError: an empty list of texts, or a single candidate without pseudo-references.
        ArgumentTypeError: texts that are not strings, or an id that is neither str nor int.

    Example:
        >>> MBRItem(["a cat", "the cat", "a dog"]).samples
        ['a cat', 'the cat', 'a dog']
    """

    candidates: List[str]
    pseudo_references: Optional[List[str]] = None
    source: Optional[str] = None
    id: Optional[ItemId] = None

    def __post_init__(self) -> None:
        where = f"item {self.id if self.id is not None else 0}"
        if self.id is not None and (isinstance(self.id, bool) or not isinstance(self.id, (str, int))):
            raise ArgumentTypeError(f"{where}: id must be a str or an int, got {type(self.id).__name__}")
        object.__setattr__(self, "candidates", _texts(where, "candidates", self.candidates))
        if self.pseudo_references is not None:
            object.__setattr__(self, "pseudo_references", _texts(where, "pseudo_references", self.pseudo_references))
        elif len(self.candidates) < 2:
            raise ArgumentError(
                f"{where}: candidates needs at least 2 texts when pseudo_references are not given "
                f"(each candidate is excluded from its own expectation), got {len(self.candidates)}"
            )
        if self.source is not None:
            _wrap(where, lambda: check_text("source", self.source))

    @property
    def n(self) -> int:
        """Number of candidates."""
        return len(self.candidates)

    @property
    def samples(self) -> List[str]:
        """The texts the expectation runs over: the pseudo-references, else the candidates."""
        return self.candidates if self.pseudo_references is None else self.pseudo_references

    @property
    def excludes_self(self) -> bool:
        """True when the candidates are their own samples (the diagonal is left out)."""
        return self.pseudo_references is None


def _texts(where: str, name: str, value: Any) -> List[str]:
    texts = _wrap(where, lambda: check_texts(name, value))
    if not texts:
        raise ArgumentError(f"{where}: {name} must hold at least one text, got an empty list")
    return texts


def _wrap(where: str, check: Any) -> Any:
    """Run an argument check of :mod:`nlgscore.core.inputs`, its message prefixed with the item."""
    try:
        return check()
    except TypeError as err:
        raise ArgumentTypeError(f"{where}: {err}") from None
    except ValueError as err:
        raise ArgumentError(f"{where}: {err}") from None


def as_items(items: Sequence[Any]) -> List[MBRItem]:
    """``items`` as :class:`MBRItem` objects; ids default to the position.

    Args:
        items: each an MBRItem, a dict with the MBRItem's field names, or a plain list of
            candidate texts.

    Returns:
        One MBRItem per item, in order.

    Raises:
        ArgumentError: a dict with unknown fields or without ``candidates``, or an id that
            occurs twice (ids name the matrices and output rows).
        ArgumentTypeError: ``items`` is not a list, or an item is none of the three.

    Example:
        >>> [i.id for i in as_items([["a", "b"], {"candidates": ["c", "d"], "id": "x"}])]
        [0, 'x']
    """
    if isinstance(items, (str, bytes, dict)) or not hasattr(items, "__len__"):
        raise ArgumentTypeError(f"items must be a list of items, got {type(items).__name__}")
    out: List[MBRItem] = []
    for index, item in enumerate(items):
        if isinstance(item, MBRItem):
            out.append(
                item if item.id is not None else MBRItem(item.candidates, item.pseudo_references, item.source, index)
            )
        elif isinstance(item, dict):
            unknown = sorted(set(item) - {"candidates", "pseudo_references", "source", "id"})
            if unknown:
                raise ArgumentError(f"item {index}: unknown field(s) {', '.join(map(repr, unknown))}")
            if "candidates" not in item:
                raise ArgumentError(f"item {index}: 'candidates' is required")
            out.append(
                MBRItem(
                    item["candidates"],
                    item.get("pseudo_references"),
                    item.get("source"),
                    item["id"] if item.get("id") is not None else index,
                )
            )
        elif isinstance(item, (list, tuple)):
            out.append(MBRItem(list(item), id=index))
        else:
            raise ArgumentTypeError(
                f"items[{index}] must be an MBRItem, a dict or a list of candidates, got {type(item).__name__}"
            )
    seen = set()
    for item in out:
        if str(item.id) in seen:
            raise ArgumentError(f"item id {item.id!r} occurs more than once (ids name the matrices and output rows)")
        seen.add(str(item.id))
    return out
