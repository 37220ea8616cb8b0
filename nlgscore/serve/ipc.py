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

Floats travel as float64, so the scores a worker returns are the model process's bits.

>>> decode(encode(["score", 7, ["It is cold."], ["It is."], None, {}, {"It is.": [2009, 2003, 1012]}]))
['score', 7, ['It is cold.'], ['It is.'], None, {}, {'It is.': [2009, 2003, 1012]}]
>>> result_from(result_payload(_toy())).scores
[0.25, 0.5]
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from nlgscore.backend.extras import require

__all__ = ["encode", "decode", "result_payload", "result_from", "address"]

_msgspec = require("msgspec", "serve", "nlgscore serve --workers")
_encoder = _msgspec.msgpack.Encoder()
_decoder = _msgspec.msgpack.Decoder()


def encode(message: Any) -> bytes:
    """One message as a msgpack frame."""
    return _encoder.encode(message)


def decode(frame: bytes) -> Any:
    """A msgpack frame back as lists, dicts, strings and numbers."""
    return _decoder.decode(frame)


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
