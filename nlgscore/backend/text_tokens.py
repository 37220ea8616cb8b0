"""A text's content token ids (no special tokens), computed the same way wherever it is computed:
in the scorer's process, or in a server's HTTP worker that holds only the tokenizer.

An encoder's fast tokenizer is a Rust ``tokenizers.Tokenizer``; its JSON (``to_str()``) builds the
same tokenizer in another process (``Tokenizer.from_str``) without transformers, torch or model
files. :class:`FrontTokenizer` is that copy: a worker tokenizes its request's texts and sends the
ids, and the scorer uses them in place of its own tokenizer's (the same ids: the same tokenizer,
the same text preparation, :func:`prepared_text`).

>>> from tokenizers import Tokenizer, models, pre_tokenizers
>>> rust = Tokenizer(models.WordLevel({"it": 0, "is": 1, "cold": 2, "[UNK]": 3}, unk_token="[UNK]"))
>>> rust.pre_tokenizer = pre_tokenizers.Whitespace()
>>> front = FrontTokenizer.from_description(describe(rust, prefix_space=False))
>>> front.content_ids(["it is cold ", "it is"])
{'it is cold ': [0, 1, 2], 'it is': [0, 1]}
>>> content_ids(rust, [prepared_text(" it is cold ", False)]) == [front.content_ids(["it is cold"])["it is cold"]]
True
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional

__all__ = ["prepared_text", "content_ids", "rust_tokenizer", "describe", "FrontTokenizer"]


def prepared_text(text: str, prefix_space: bool) -> str:
    """What the tokenizer reads of ``text``: stripped, with a leading space for the tokenizers
    that need one (bert_score's ``add_prefix_space=True``); the empty text stays empty."""
    text = text.strip()
    return " " + text if prefix_space and text else text


def rust_tokenizer(tokenizer: Any) -> Optional[Any]:
    """The Rust backend of a fast tokenizer when calling it directly gives the tokenizer's ids
    (no truncation or padding set on it); None otherwise."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and backend.truncation is None and backend.padding is None:
        return backend
    return None


def content_ids(tokenizer: Any, texts: List[str]) -> List[List[int]]:
    """Token ids of prepared ``texts`` without special tokens.

    A fast tokenizer's Rust backend is called directly when it has no truncation or padding set:
    that is what ``tokenizer(texts, add_special_tokens=False)`` runs too, but transformers 5 then
    spends ~0.2 ms per text in Python building its output dict (~10x the tokenisation itself).
    A bare ``tokenizers.Tokenizer`` (a :class:`FrontTokenizer`'s) is called the same way.
    """
    backend = tokenizer if hasattr(tokenizer, "encode_batch") else rust_tokenizer(tokenizer)
    if backend is not None:
        return [encoding.ids for encoding in backend.encode_batch(texts, add_special_tokens=False)]
    return tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]


def describe(backend: Any, prefix_space: bool) -> Dict[str, Any]:
    """What a process needs to tokenize as ``backend`` does: its JSON and the text preparation."""
    return {"tokenizer": backend.to_str(), "prefix_space": bool(prefix_space)}


class FrontTokenizer:
    """A copy of a scorer's tokenizer in another process (see :func:`describe`)."""

    def __init__(self, backend: Any, prefix_space: bool) -> None:
        self.backend, self.prefix_space = backend, prefix_space

    @classmethod
    def from_description(cls, description: Dict[str, Any]) -> "FrontTokenizer":
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_str(description["tokenizer"]), bool(description["prefix_space"]))

    def content_ids(self, texts: Iterable[str]) -> Dict[str, List[int]]:
        """Each distinct text's content ids, keyed by the text as given."""
        distinct = list(dict.fromkeys(texts))
        ids = content_ids(self.backend, [prepared_text(text, self.prefix_space) for text in distinct])
        return dict(zip(distinct, ids, strict=True))
