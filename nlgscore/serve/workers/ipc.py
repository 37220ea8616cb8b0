"""The messages between ``nlgscore serve --workers N``'s HTTP workers and its model process.

One ZeroMQ ``ipc://`` socket pair per worker (the model process's ROUTER, a worker's DEALER),
each message one msgpack frame (msgspec): as vLLM's API servers talk to its engine. A request is
a list ``[kind, id, ...]``; its answer ``[id, status, payload]``, ``status`` 200 with the payload
or an HTTP status with ``[message, headers]``. Kinds:

* ``score`` ``[predictions, references, sources, options, tokens]`` → a Result as
  ``{"c": columns, "p": primary, "l": layer, "s": signature}`` (``options``: the call's document
  context; ``tokens``: the content token ids of its texts, from the worker's copy of the scorer's
  tokenizer, or None);
* ``front`` → the scorer's :meth:`~nlgscore.extend.Scorer.front_tokenizer` (asked once per worker);
* ``matrix`` ``[predictions, references, column, source]`` → the matrix's rows;
* ``cancel`` (no answer): the client left, or the worker stopped waiting;
* ``info`` → ``{"status", "metric", "signature", "needs", "queue", "tasks"}`` (``/health``);
* ``hold`` ``[predictions, references, sources]`` → a ROLL task's id; ``poll`` ``[id]`` → ``[state, answer]``;
* ``metrics`` ``[observations]`` → the Prometheus text (the workers' request observations
  ``[endpoint, status, seconds]`` are added first, so one exposition counts every process);
  ``counts`` ``[observations]`` (no answer): a worker's periodic send of the same.

Messages posted during one pass of a process's event loop travel as one frame per peer
(:class:`Outbox`): ``["many", [message, ...]]``, read back with :func:`messages`. A frame's receive
and send cost about as much as a one-pair call's checks, and under load a worker posts tens of
requests a pass and the model process answers a run's calls at once.

One message, one fate: each message is encoded when it is posted, on its own, and the frame is
made of the encoded messages (msgpack's ``Raw``), so a message that cannot be encoded is
:class:`Unsendable` to its poster alone (its request is answered, naming the field), and the
others of its frame go on; the receiving side decodes each message of a frame on its own too.

Floats travel as float64, so the scores a worker returns are the model process's bits.

>>> decode(encode(["score", 7, ["It is cold."], ["It is."], None, {}, {"It is.": [2009, 2003, 1012]}]))
['score', 7, ['It is cold.'], ['It is.'], None, {}, {'It is.': [2009, 2003, 1012]}]
>>> result_from(result_payload(_toy())).scores
[0.25, 0.5]
>>> messages(encode([MANY, [["info", 1], ["info", 2]]])), messages(encode(["info", 3]))
([['info', 1], ['info', 2]], [['info', 3]])
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from nlgscore.backend.extras import require

__all__ = [
    "encode",
    "decode",
    "messages",
    "Outbox",
    "MANY",
    "Unsendable",
    "result_payload",
    "result_from",
    "address",
]

MANY = "many"  # the kind of a frame that holds several messages
# What the fields of a message are called in the request it carries, by kind (Unsendable names them).
FIELDS = {
    "score": (None, None, "predictions", "references", "sources", "options", "tokens"),
    "matrix": (None, None, "predictions", "references", "column", "source"),
    "hold": (None, None, "predictions", "references", "sources"),
}

_msgspec = require("msgspec", "serve", "nlgscore serve --workers")
_encoder = _msgspec.msgpack.Encoder()
_decoder = _msgspec.msgpack.Decoder()
_raw_list = _msgspec.msgpack.Decoder(List[_msgspec.Raw])  # type: ignore[name-defined]  # each message still encoded
logger = logging.getLogger(__name__)


class Unsendable(ValueError):
    """A message that cannot be encoded (an integer beyond 64 bits, a string that is not Unicode),
    with the field that holds the value in its message."""


def encode(message: Any) -> bytes:
    """One message as a msgpack frame; :class:`Unsendable` naming the field that cannot be encoded.

    >>> encode(["score", 1, ["a"], None, None, {"context": 2**64}, None])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.serve.workers.ipc.Unsendable: options.context cannot be sent between the server's processes: ...
    """
    try:
        return _encoder.encode(message)
    except (_msgspec.EncodeError, OverflowError, TypeError, ValueError) as err:
        raise Unsendable(f"{_unsendable_field(message)} cannot be sent between the server's processes: {err}") from None


def _unsendable_field(message: Any) -> str:
    """The path of the first value of ``message`` that does not encode (fields named by :data:`FIELDS`)."""
    names = FIELDS.get(message[0], ()) if isinstance(message, list) and message else ()
    stack: List[Any] = [(message, "")]
    while stack:
        value, path = stack.pop(0)
        children: List[Any] = []
        if isinstance(value, list):
            for i, child in enumerate(value):
                named = names[i] if not path and i < len(names) and names[i] else None
                children.append((child, named or f"{path}[{i}]"))
        elif isinstance(value, dict):
            children = [(child, f"{path}.{key}" if path else str(key)) for key, child in value.items()]
        for child, child_path in children:
            try:
                _encoder.encode(child)
            except (_msgspec.EncodeError, OverflowError, TypeError, ValueError):
                stack = [(child, child_path)]
                break
        else:
            return path or "the message"
    return "the message"


def decode(frame: bytes) -> Any:
    """A msgpack frame back as lists, dicts, strings and numbers."""
    return _decoder.decode(frame)


def messages(frame: bytes) -> List[Any]:
    """The messages of one frame (one, or a :data:`MANY` frame's, in the order they were posted),
    each decoded on its own: one that cannot be read is left out (logged), the others are kept."""
    parts = _raw_list.decode(frame)
    if len(parts) != 2 or decode(parts[0]) != MANY:
        return [decode(frame)]
    out = []
    for raw in _raw_list.decode(parts[1]):
        try:
            out.append(decode(raw))
        except (_msgspec.DecodeError, ValueError):
            logger.exception("nlgscore serve: a message of a frame could not be read; the others are answered")
    return out


class Outbox:
    """Messages posted during one pass of the running event loop, sent at the start of the next
    pass as one frame per peer (``send(frames)``: the socket's; ``peer``: a ROUTER's peer, None on
    a DEALER). Order is kept per peer. What waits here is bounded by what the server admits.

    >>> async def main():
    ...     sent = []
    ...     outbox = Outbox(sent.append)
    ...     outbox.post(["info", 1]); outbox.post(["cancel", 0])
    ...     await asyncio.sleep(0)
    ...     return [messages(frames[0]) for frames in sent]
    >>> asyncio.run(main())
    [[['info', 1], ['cancel', 0]]]
    """

    def __init__(self, send: Callable[[List[bytes]], None]) -> None:
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.posted: Dict[Optional[bytes], List[Any]] = {}

    def post(self, message: Any, peer: Optional[bytes] = None) -> None:
        """Queue ``message`` for ``peer``'s next frame, encoded now: :class:`Unsendable` here, to
        this poster alone, where it cannot be encoded."""
        frame = encode(message)
        if not self.posted:
            self.loop.call_soon(self.flush)
        self.posted.setdefault(peer, []).append(frame)

    def flush(self) -> None:
        posted, self.posted = self.posted, {}
        for peer, batch in posted.items():
            frame = batch[0] if len(batch) == 1 else _encoder.encode([MANY, [_msgspec.Raw(part) for part in batch]])
            self.send([frame] if peer is None else [peer, frame])


def address(folder: str) -> str:
    """The model process's socket in ``folder`` (a private temporary folder of the server)."""
    return f"ipc://{folder}/model"


def result_payload(result: Any) -> Dict[str, Any]:
    """What a worker needs of a Result to answer any endpoint: columns, primary, layer, signature."""
    return {"c": result.columns(), "p": result.primary, "l": result.layer, "s": str(result.signature)}


class SignatureText(str):
    """A signature as its text (what every endpoint sends)."""


def result_from(payload: Dict[str, Any]) -> Any:
    """The Result of a :func:`result_payload` (the same float64 values)."""
    from nlgscore.core.result import Result

    signature: Any = SignatureText(payload["s"])
    return Result(signature=signature, values=payload["c"], primary=payload["p"], layer=payload["l"])


def matrix_from(rows: List[List[float]]) -> np.ndarray:
    """A matrix's rows as the float array the endpoint answers."""
    return np.asarray(rows, dtype=np.float64)


def _toy() -> Any:
    from nlgscore.core.result import Result
    from nlgscore.core.signature import Signature

    return Result(signature=Signature("toy", _versions=False), values={"s": [0.25, 0.5]}, primary="s")
