"""Signatures: every setting that changes a number, as a sacreBLEU-style string.

Two scores are comparable only when their signatures are equal. The versions of nlgscore,
transformers and torch are part of every signature because tokenizers and kernels change
numbers between releases (bert_score issues #164, #81).

>>> sig = Signature("bertscore", model="all-MiniLM-L6-v2", L=4, idf=False)
>>> str(sig).startswith("nlgscore:bertscore|model:all-MiniLM-L6-v2|L:4|idf:no|")
True
>>> Signature.parse(str(sig))["L"]
'4'
"""

from __future__ import annotations

import functools
import sys
from importlib import metadata
from typing import Any, Dict, Iterator, Mapping

from nlgscore.errors import ArgumentError

FIELD_SEP = "|"
KEY_SEP = ":"
# One spelling per setting across metrics: model, revision, max_length, multiref, dtype, tok.
# Keys of earlier releases still read (sig["rev"]) but are never written; transitional.
OLD_KEYS = {"rev": "revision", "maxlen": "max_length", "mref": "multiref", "agg": "multiref", "checkpoint": "model"}


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    # The separators must stay unambiguous when a path or repo id is recorded.
    return text.replace(FIELD_SEP, "/").replace(" ", "_")


def library_versions() -> Dict[str, str]:
    """Versions of the libraries whose code changes scores (read from the installed
    distributions, so that a model-free metric's signature does not import torch)."""
    from nlgscore.version import __version__

    return {
        "version": __version__,
        "transformers": _installed("transformers"),
        "torch": _installed("torch").split("+")[0],
    }


def _installed(name: str) -> str:
    """``name``'s version: the imported module's where it is loaded, else its distribution's."""
    module = sys.modules.get(name)
    if module is not None and isinstance(getattr(module, "__version__", None), str):
        return str(module.__version__)
    return _distribution_version(name)


@functools.lru_cache(maxsize=None)
def _distribution_version(name: str) -> str:
    """``name``'s installed distribution version, read once per process: reading a distribution's
    metadata parses its METADATA file (milliseconds), and a model-free metric signs every call."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"


class Signature(Mapping[str, str]):
    """An ordered, immutable record of the settings behind a score.

    A mapping of field name to its text, ``str()`` as ``nlgscore:METRIC|KEY:VALUE|...``. Fields
    keep their order; the versions of the libraries whose code changes scores are appended. A
    field of an earlier release's spelling still reads (``sig["rev"]`` is ``sig["revision"]``).

    Args:
        metric: the metric's name, the first field (``nlgscore:bertscore``).
        **fields: the settings that change a number, in the order they are written: booleans
            as ``yes``/``no``, None as ``none``, floats in ``%g``; ``|`` and spaces in a value are
            replaced so that the string reads back.

    Example:
        >>> sig = Signature("toy", _versions=False, model="m", idf=False)
        >>> str(sig), sig["idf"], sig.metric
        ('nlgscore:toy|model:m|idf:no', 'no', 'toy')
    """

    def __init__(self, metric: str, _versions: bool = True, **fields: Any) -> None:
        items = {"nlgscore": metric}
        items.update({key: _format(value) for key, value in fields.items()})
        if _versions:
            items.update(library_versions())
        self._items: Dict[str, str] = items

    @property
    def metric(self) -> str:
        """The metric's name (the ``nlgscore:`` field)."""
        return self._items["nlgscore"]

    def __getitem__(self, key: str) -> str:
        if key not in self._items and key in OLD_KEYS:
            return self._items[OLD_KEYS[key]]
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __str__(self) -> str:
        return FIELD_SEP.join(f"{key}{KEY_SEP}{value}" for key, value in self._items.items())

    def __repr__(self) -> str:
        return f"Signature({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Signature):
            return self._items == other._items
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def to_dict(self) -> Dict[str, str]:
        """Every field and its text, in order (JSON-ready)."""
        return dict(self._items)

    @classmethod
    def parse(cls, text: str) -> "Signature":
        """Inverse of ``str()``: read a signature string back (a results file's, a server's).

        Args:
            text: a signature string, ``nlgscore:METRIC|KEY:VALUE|...``.

        Returns:
            The signature, equal to the one that was written.

        Raises:
            ArgumentError: ``text`` is not a signature string.

        Example:
            >>> Signature.parse("nlgscore:toy|L:4")["L"]
            '4'
        """
        pairs = [field.split(KEY_SEP, 1) for field in text.split(FIELD_SEP)]
        if not pairs or any(len(pair) != 2 for pair in pairs) or pairs[0][0] != "nlgscore":
            raise ArgumentError(f"not an nlgscore signature: {text!r}")
        sig = cls.__new__(cls)
        sig._items = {key: value for key, value in pairs}
        return sig
