"""Caches shared by the scorers, with one keying scheme: by content, never by ``repr()``.

``TextCache`` keeps per-text values (embeddings) in LRU order, keyed by the text itself, within a
count and a byte budget (a long-lived process, a trainer's reward or a server, sees new texts at
every call: memory must plateau, :data:`DEFAULT_CACHE_BYTES` by default);
``ScorerCache`` keeps built scorers (thread-safe, each key built once: ``registry.cached`` and the
one-shot ``nlgscore.bertscore``); ``content_key`` turns scorer options into a digest of their content (a pandas Series or a
numpy array of 10,000 sentences is keyed by every sentence, not by an elided ``repr``).

>>> cache = TextCache(2)
>>> cache.put("a", 1); cache.put("b", 2); cache.put("c", 3)
>>> "a" in cache, cache.get("c")
(False, 3)
>>> content_key({"idf_sents": ["x", "y"], "idf": True}) == content_key({"idf": True, "idf_sents": ("x", "y")})
True
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, Hashable, List, Optional

from nlgscore.backend.batching import check_positive

# Bytes of values (tensors, arrays) a TextCache holds by default: 512 MiB.
DEFAULT_CACHE_BYTES = 512 * 2**20


def value_bytes(value: Any) -> int:
    """Bytes held by a cached value: a torch tensor or numpy array (``nbytes``), else 0.

    >>> import numpy as np
    >>> value_bytes(np.zeros((3, 4), dtype=np.float32)), value_bytes("text")
    (48, 0)
    """
    if hasattr(value, "element_size") and hasattr(value, "nelement"):
        return int(value.element_size() * value.nelement())
    return int(getattr(value, "nbytes", 0))


class TextCache:
    """An LRU map ``text -> value`` holding at most ``size`` texts and ``max_bytes`` bytes of values
    (:func:`value_bytes`); the least recently used go first. A value larger than the whole budget
    is not kept.

    >>> import numpy as np
    >>> cache = TextCache(100, max_bytes=100)
    >>> for text in "abc":
    ...     cache.put(text, np.zeros(10, dtype=np.float32))  # 40 bytes each
    >>> len(cache), cache.bytes, "a" in cache
    (2, 80, False)
    """

    def __init__(
        self, size: int, name: str = "cache_size", max_bytes: int = DEFAULT_CACHE_BYTES, bytes_name: str = "cache_bytes"
    ) -> None:
        self.size = check_positive(name, size, allow_none=False)
        self.max_bytes = check_positive(bytes_name, max_bytes, allow_none=False)
        self.bytes = 0  # bytes of the values held now
        self.hits = self.misses = 0  # get() calls that found their text / did not (a server's telemetry)
        self._items: "OrderedDict[str, Any]" = OrderedDict()

    def __contains__(self, text: object) -> bool:
        return text in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get(self, text: str) -> Any:
        """The value of ``text`` (marked as recently used), or None; counted in ``hits``/``misses``."""
        if text not in self._items:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(text)
        return self._items[text]

    def put(self, text: str, value: Any) -> None:
        size = value_bytes(value)
        if text in self._items:
            self.bytes -= value_bytes(self._items.pop(text))
        if size > self.max_bytes:
            return
        self._items[text] = value
        self.bytes += size
        while len(self._items) > self.size or self.bytes > self.max_bytes:
            self.bytes -= value_bytes(self._items.popitem(last=False)[1])

    def values(self) -> List[Any]:
        """The values, least recently used first."""
        return list(self._items.values())

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0


class ScorerCache(TextCache):
    """Built scorers by content key, at most ``size`` (least recently used evicted); thread-safe:
    concurrent requests for one key build it once.

    >>> cache = ScorerCache(2)
    >>> first = cache.get_or_build("k", object)
    >>> cache.get_or_build("k", object) is first, cache.get_or_build(None, object) is first  # None: no stable key, not kept
    (True, False)
    """

    def __init__(self, size: int, name: str = "cache_size") -> None:
        super().__init__(size, name)
        self._lock = threading.Lock()

    def get_or_build(self, key: Optional[Hashable], build: Callable[[], Any]) -> Any:
        if key is None:
            return build()
        with self._lock:  # a model load is serialised anyway (nlgscore.backend.loading)
            value = self.get(key)  # type: ignore[arg-type]
            if value is None:
                value = build()
                self.put(key, value)  # type: ignore[arg-type]
            return value

    def clear(self) -> None:
        with self._lock:
            super().clear()


def _canonical(value: Any) -> Any:
    """A JSON-able, order-preserving form of an option value; TypeError if it has none."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__name__ in ("dtype", "device"):  # torch.dtype / torch.device print stably
        return f"{type(value).__name__}:{value}"
    if isinstance(value, (dict, set, frozenset)) or not hasattr(value, "__iter__") or isinstance(value, bytes):
        raise TypeError(type(value).__name__)
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    return [_canonical(item) for item in items]


def content_key(options: Dict[str, Any]) -> Optional[str]:
    """A digest of ``options`` by content; None when a value has no stable content (no reuse).

    >>> content_key({}) == content_key(dict()) != content_key({"mode": "qe"})
    True
    """
    if not options:  # most calls have no options: their digest is one constant
        return _NO_OPTIONS
    try:
        canonical = {key: _canonical(value) for key, value in options.items()}
    except TypeError:
        return None
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=True, allow_nan=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


_NO_OPTIONS = hashlib.sha256(b"{}").hexdigest()  # content_key({}): json.dumps({}) is "{}"
