"""A scorer that calls ``nlgscore serve``: what ``nlgscore.load("http://HOST:PORT")`` returns.

:class:`RemoteScorer` has a local scorer's surface: ``compute`` → a Result with the same
``scores``, ``columns()``, ``signature`` (and metric attributes such as ``.f1``), ``matrix``
(the server's ``/v1/matrix``), ``acompute`` (a coroutine: truly concurrent requests, which the
server batches together), ``name``, ``needs`` and ``signature``. So MBR decoding, TRL rewards
and the other adapters run against a server unchanged.

* Connection errors, 429 and 503 answers (an overloaded server: a full queue or too many
  requests at once; a model still loading or a server draining) and a proxy's 500/502 (not the
  app's JSON error: Ray Serve's proxy when a replica dies) are retried with exponential backoff
  (``retries``, ``backoff`` seconds, doubled each time; a ``Retry-After`` is honoured in both
  RFC 9110 forms, each wait at most 30 s: :mod:`nlgscore.backend.retry_after`), so a trainer's
  reward backs off under overload; any other refusal raises at once: 400 as
  :class:`~nlgscore.errors.ArgumentError` with the server's message naming the field, 504 and
  ``timeout`` as :class:`TimeoutError`.
* ``api_key`` (or the environment variable ``NLGSCORE_API_KEY``) is sent as a bearer token.
* One pooled HTTP client for blocking calls and one per event loop for ``acompute``
  (:mod:`nlgscore.remote.pool`), closed with the scorer: ``close()``, ``await aclose()``,
  ``with``/``async with``, or at interpreter exit; an ``asyncio.run`` closes its loop's client.
* Picklable (the HTTP clients are made again in each process), so it travels to workers.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from nlgscore import envs
from nlgscore.backend.batching import unique
from nlgscore.backend.extras import require
from nlgscore.backend.retry_after import wait_seconds
from nlgscore.core.inputs import check_references, check_text, check_texts
from nlgscore.core.result import NonFiniteScoreError, Result, check_finite
from nlgscore.core.signature import Signature
from nlgscore.errors import ArgumentError, ArgumentTypeError, NlgscoreError
from nlgscore.remote import wire
from nlgscore.remote.pool import ClientPool

URL_SCHEMES = ("http://", "https://")
API_KEY_VARIABLE = envs.API_KEY.name
RUNTIME_OPTIONS = (
    "batch_size",
    "max_tokens",
    "progress",
)  # the server's settings decide these; they never change a score


class ServerError(NlgscoreError, RuntimeError):
    """The server failed a request (a 5xx answer after the retries)."""


class RemoteResult(Result):
    """A Result read back from the server; columns are also attributes (``.f1``, ``.segment``).

    Built by `RemoteScorer` from the server's answer, with a local Result's arguments.

    Args:
        signature: the server's signature of the settings behind the numbers.
        values: per-item columns by name, as the server sent them.
        primary: the column ``scores`` and ``score`` report.
        layer: the row of 2-D columns that ``scores``/``score`` report.
        windows: per item, the windows or chunks its longest input was scored in; None: 1 each.

    Raises:
        ValueError: ``primary`` is not a column, or ``windows`` is not one count >= 1 per item.
    """

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (columns: {', '.join(values)})")


class RemoteScorer:
    """A scorer served by ``nlgscore serve`` at ``url`` (see the module docstring): it implements
    :class:`~nlgscore.core.scorer_like.ScorerLike` (``name``, ``needs``, ``signature``,
    ``compute``, ``acompute``, ``matrix``). An answer of the wrong length or shape is a
    :class:`ServerError` naming the mismatch; a non-finite score is refused as a local ``compute``
    refuses it (:class:`~nlgscore.core.result.NonFiniteScoreError`)."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        retries: int = 5,
        backoff: float = 0.25,
        api_key: Optional[str] = None,
        wait: float = 120.0,
    ) -> None:
        """Connect to ``url`` and read its ``/health``.

        Args:
            url: The server, ``http://HOST:PORT`` or ``https://...``.
            timeout: Seconds one request may take, > 0 (an answer later is a ``TimeoutError``).
            retries: How many times a request is sent again after a retryable failure, >= 0.
            backoff: Seconds before the first retry (doubled each time), >= 0.
            api_key: The bearer token (default: ``NLGSCORE_API_KEY``).
            wait: Seconds to wait for a server that is still loading its model (or starting), >= 0.

        Raises:
            ArgumentError: An argument out of range (named), or a URL of another scheme.
            ArgumentTypeError: An argument of the wrong type (named).
        """
        if not isinstance(url, str) or not url.startswith(URL_SCHEMES):
            raise ArgumentError(f"url must start with http:// or https://, got {url!r}")
        # A zero timeout is not "no timeout" to httpx: every connect fails at once ("Operation now
        # in progress") and the health poll retries that for the whole ``wait``, so it is refused here.
        self.timeout = _seconds("timeout", timeout, "> 0", allow_zero=False)
        self.backoff = _seconds("backoff", backoff, ">= 0", allow_zero=True)
        wait = _seconds("wait", wait, ">= 0", allow_zero=True)
        if isinstance(retries, (bool, np.bool_)) or not isinstance(retries, (int, np.integer)) or retries < 0:
            raise ArgumentError(f"retries must be an integer >= 0, got {retries!r}")
        if api_key is not None and not isinstance(api_key, str):
            raise ArgumentTypeError(f"api_key must be a str (the bearer token) or None, got {type(api_key).__name__}")
        self.url = url.rstrip("/")
        self.retries = int(retries)
        self.api_key = api_key if api_key is not None else envs.API_KEY.get()
        self._open_pool()
        health = self._health(wait)
        self.name = health["metric"]
        self.needs = tuple(health.get("needs", ("references",)))
        self.multiref = Signature.parse(health["signature"]).get("multiref", "max")
        self.offers_matrix = bool(health.get("matrix", False))
        self._signature = health["signature"]

    def _health(self, wait: float) -> Dict[str, Any]:
        """``GET /health``, polled for up to ``wait`` seconds while the server loads (503) or does
        not answer yet (a server just started)."""
        deadline = time.monotonic() + wait
        while True:
            try:
                return self._request("GET", "/health", None, retries=0)
            except ServerError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(min(self.backoff or 0.05, 1.0))

    @property
    def signature(self) -> Signature:
        """The server's scorer signature."""
        return Signature.parse(self._signature)

    # -- scoring -------------------------------------------------------------------------------
    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **call_options: Any,
    ) -> Result:
        """Score on the server: one request, the same Result as a local ``compute``.

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several (``[[str]]``), for a metric that
                needs them.
            sources: one source per prediction, for a metric that needs them.
            **call_options: the metric's per-request options (``prompt=`` for BARTScore), sent with the
                request; the server refuses one its scorer does not take, naming it. Run-time options
                (``batch_size``, ``max_tokens``, ``progress``) are the server's settings and ignored.

        Returns:
            The server's Result (a `RemoteResult`), one score per prediction in input order.

        Raises:
            ArgumentError: an input is missing or of another length, checked here or refused by the
                server (400, its message naming the field).
            TimeoutError: no answer within the scorer's ``timeout`` (or a 504).
            ServerError: the server failed after the retries, or answered the wrong number of scores.
            NonFiniteScoreError: a score is not finite, as a local ``compute`` refuses it.
        """
        body = self._body(predictions, references, sources, call_options)
        return self._result(self._request("POST", "/v1/score", body), len(body["predictions"]))

    async def acompute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **call_options: Any,
    ) -> Result:
        """`compute` as a coroutine: an async HTTP request; the server merges concurrent ones.

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several, for a metric that needs them.
            sources: one source per prediction, for a metric that needs them.
            **call_options: the metric's per-request options, as `compute` sends them.

        Returns:
            The server's Result, as `compute`.

        Raises:
            ArgumentError: as `compute`.
            TimeoutError: as `compute`.
            ServerError: as `compute`.
        """
        body = self._body(predictions, references, sources, call_options)
        return self._result(await self._arequest("POST", "/v1/score", body), len(body["predictions"]))

    def matrix(
        self,
        predictions: Sequence[str],
        references: Sequence[str],
        *,
        source: Optional[str] = None,
        column: Optional[str] = None,
        **call_options: Any,
    ) -> np.ndarray:
        """Every prediction against every reference, on the server's ``/v1/matrix``.

        A server without ``/v1/matrix`` (an older one) is asked for every distinct pair through
        ``/v1/score`` instead; the numbers are the same.

        Args:
            predictions: the texts of the rows.
            references: the texts of the columns.
            source: the one source every pair is scored under, for a metric that scores with
                references and sources (as a local ``matrix``).
            column: the result column the matrix holds (None: the primary one).
            **call_options: the metric's per-request options, as `compute` sends them.

        Returns:
            A ``(predictions, references)`` float64 array (empty inputs: a zero-sized one, no request).

        Raises:
            ArgumentTypeError: ``column`` is not a str, or a text is not one.
            ServerError: the answer is not a numeric matrix of that shape, or the server failed.
            NonFiniteScoreError: a cell is not finite.
        """
        self._check_options(call_options)
        preds, refs = check_texts("predictions", predictions), check_texts("references", references)
        if column is not None and not isinstance(column, str):
            raise ArgumentTypeError(f"column must be a column name (str) or None, got {type(column).__name__}")
        source = None if source is None else check_text("source", source)
        if not preds or not refs:
            return np.zeros((len(preds), len(refs)))
        if not self.offers_matrix:  # an older server: every distinct pair through /v1/score
            return self._matrix_by_pairs(preds, refs, source, column)
        body = wire.to_body(wire.MatrixRequest(predictions=preds, references=refs, column=column, source=source))
        answer = self._request("POST", "/v1/matrix", body)
        try:
            grid = np.asarray(answer["matrix"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as err:
            raise ServerError(f"{self.url}/v1/matrix answered no numeric matrix: {err}") from None
        if grid.shape != (len(preds), len(refs)):
            raise ServerError(
                f"{self.url}/v1/matrix answered a matrix of shape {grid.shape} for {len(preds)} predictions x {len(refs)} references"
            )
        if not np.isfinite(grid).all():
            raise NonFiniteScoreError(
                f"{self.name}: the matrix from {self.url} is not finite (the server's settings or inputs make the score undefined)"
            )
        return grid

    def _matrix_by_pairs(
        self, preds: List[str], refs: List[str], source: Optional[str], column: Optional[str]
    ) -> np.ndarray:
        up, pred_of = unique(preds)
        ur, ref_of = unique(refs)
        sources = None if source is None else [source] * (len(up) * len(ur))
        result = self.compute([p for p in up for _ in ur], [r for _ in up for r in ur], sources)
        columns = result.columns()
        name = column if column is not None else result.primary
        if name not in columns:
            raise ArgumentError(f"column must be one of {', '.join(columns)} for this {self.name} call, got {column!r}")
        return np.asarray(columns[name], dtype=np.float64).reshape(len(up), len(ur))[np.ix_(pred_of, ref_of)]

    def _body(self, predictions: Any, references: Any, sources: Any, call_options: Dict[str, Any]) -> Dict[str, Any]:
        context = {
            name: call_options.pop(name) for name in ("context", "doc_ids") if call_options.get(name) is not None
        }
        doc_ids = context.get("doc_ids")
        if doc_ids is not None and not isinstance(doc_ids, (str, bytes, dict, set, frozenset, np.ndarray)):
            context["doc_ids"] = list(doc_ids)  # a pandas Series or a range travels as its items
        # The metric's per-request options (BARTScore's prompt...) travel in the body, where the
        # server's scorer checks them; the run-time ones are the server's (it batches). Each is
        # made sendable here so that a value JSON cannot carry is refused naming its field.
        per_request = {
            name: value for name, value in call_options.items() if name not in RUNTIME_OPTIONS and value is not None
        }
        context = {name: sendable(name, value) for name, value in context.items()}
        per_request = {name: sendable(name, value) for name, value in per_request.items()}
        preds = check_texts("predictions", predictions)
        request = wire.ScoreRequest(
            predictions=preds,
            references=None if references is None else check_references("references", references, len(preds)),
            sources=None if sources is None else check_texts("sources", sources),
            context=context.get("context"),
            doc_ids=context.get("doc_ids"),
        )
        return {**wire.to_body(request), **per_request}  # checked by the server's call

    def _check_options(self, call_options: Dict[str, Any]) -> None:
        other = sorted(set(call_options) - set(RUNTIME_OPTIONS))
        if other:
            raise ArgumentError(
                f"a remote scorer takes no call options {other}: they are set when the server starts (nlgscore serve SPEC ...)"
            )

    def _result(self, answer: Dict[str, Any], n: int) -> Result:
        """The answer as a Result of ``n`` predictions: its form, lengths and finiteness checked.

        Raises:
            ServerError: The answer is malformed (a field missing, ``null`` or of the wrong type) or
                holds another number of scores than ``n``.
            NonFiniteScoreError: A score is NaN or infinite, as a local ``compute`` refuses it.
        """
        where = f"{self.url}/v1/score"
        try:
            columns, scores, text = answer["columns"], answer["scores"], answer["signature"]
            if not isinstance(columns, dict):
                raise TypeError(f"columns is {_kind(columns)}, not an object of number arrays")
            if not columns:
                raise ValueError("columns is an empty object")
            if not isinstance(scores, list):
                raise TypeError(f"scores is {_kind(scores)}, not an array of numbers")
            if not isinstance(text, str):
                raise TypeError(f"signature is {_kind(text)}, not a string")
            layer = answer.get("layer")
            if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int)):
                raise TypeError(f"layer is {_kind(layer)}, not an integer or null")
            arrays = {name: _numbers(name, values) for name, values in columns.items()}
            primary = answer.get("primary") or next(name for name, values in columns.items() if values == scores)
            result = RemoteResult(self._parsed_signature(text), arrays, primary, layer)
        except (KeyError, TypeError, ValueError, AttributeError, StopIteration) as err:
            raise ServerError(f"{where} answered a malformed result: {type(err).__name__}: {err}") from None
        if len(scores) != n or any(values.shape[-1:] != (n,) for values in arrays.values()):
            sizes = {name: values.shape[-1:] for name, values in arrays.items()}
            raise ServerError(f"{where} answered {len(scores)} scores (columns {sizes}) for {n} predictions")
        return check_finite(result, self.name)

    def _parsed_signature(self, text: str) -> Signature:
        """``Signature.parse(text)``, parsed once for the server's usual answer (a Signature is immutable)."""
        last = self.__dict__.get("_last_signature")
        if last is None or last[0] != text:
            last = self._last_signature = (text, Signature.parse(text))
        return last[1]

    # -- HTTP ----------------------------------------------------------------------------------
    def _headers(self) -> Dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _open_pool(self) -> None:
        """The scorer's connections (:class:`~nlgscore.remote.pool.ClientPool`), closed with
        it: by :meth:`close`, when it is collected, or at interpreter exit."""
        self._pool = ClientPool(self.url, self.timeout, self._headers())
        self._finalizer = weakref.finalize(self, self._pool.close)

    def _request(
        self, method: str, path: str, body: Optional[Dict[str, Any]], retries: Optional[int] = None
    ) -> Dict[str, Any]:
        httpx = require("httpx", "serve", "a remote scorer")
        client = self._pool.sync_client()
        attempts = (self.retries if retries is None else retries) + 1
        for attempt in range(attempts):
            try:
                response = client.request(method, path, json=body)
            except httpx.TimeoutException as err:
                raise TimeoutError(f"{self.url}{path}: no answer within {self.timeout:g} s (timeout=)") from err
            except httpx.TransportError as err:
                if attempt + 1 == attempts:
                    raise ServerError(f"cannot reach {self.url}{path} after {attempts} attempts: {err}") from err
                time.sleep(self._delay(attempt, None))
                continue
            if retryable(response) and attempt + 1 < attempts:
                time.sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            return _answer(response, self.url + path)
        raise AssertionError("unreachable")

    async def _arequest(self, method: str, path: str, body: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        httpx = require("httpx", "serve", "a remote scorer")
        attempts = self.retries + 1
        client = await self._pool.async_client()  # this event loop's pooled client
        for attempt in range(attempts):
            try:
                response = await client.request(method, path, json=body)
            except httpx.TimeoutException as err:
                raise TimeoutError(f"{self.url}{path}: no answer within {self.timeout:g} s (timeout=)") from err
            except httpx.TransportError as err:
                if attempt + 1 == attempts:
                    raise ServerError(f"cannot reach {self.url}{path} after {attempts} attempts: {err}") from err
                await asyncio.sleep(self._delay(attempt, None))
                continue
            if retryable(response) and attempt + 1 < attempts:
                await asyncio.sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            return _answer(response, self.url + path)
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, retry_after: Optional[str]) -> float:
        return wait_seconds(attempt, self.backoff, retry_after)

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        del state["_pool"], state["_finalizer"]  # open connections do not travel; the copy opens its own
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._open_pool()

    def close(self) -> None:
        """Close the connections: the blocking client's and every event loop's (a later call opens new ones)."""
        self._pool.close()

    async def aclose(self) -> None:
        """:meth:`close`, awaiting this event loop's client."""
        await self._pool.aclose()

    def __enter__(self) -> "RemoteScorer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "RemoteScorer":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"RemoteScorer({self.url!r}, {self._signature})"


def retryable(response: Any) -> bool:
    """Whether to send the request again: a 429 (overloaded) or 503 (loading, draining), or a 500/502 that is not
    the app's own JSON error, i.e. from a proxy in front of it (Ray Serve's proxy answers 500 for
    the requests of a replica that died; a load balancer 502). Scoring is idempotent."""
    if response.status_code in (429, 503):
        return True
    if response.status_code not in (500, 502):
        return False
    try:
        body = response.json()
    except ValueError:
        return True
    return not (isinstance(body, dict) and "error" in body)


def _answer(response: Any, where: str) -> Dict[str, Any]:
    """The JSON of a 200 answer; any other status as the error the server named."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    message = body.get("error") if isinstance(body, dict) else None
    status = response.status_code
    if status == 200 and isinstance(body, dict):
        return body
    text = f"{where}: {status} {message or response.text[:200]}"
    if status in (400, 413):
        raise ArgumentError(text)
    if status == 401:
        raise ArgumentError(f"{text} (pass api_key= or set {API_KEY_VARIABLE})")
    if status == 422:
        raise NonFiniteScoreError(text)
    if status == 504:
        raise TimeoutError(text)
    raise ServerError(text)


def _seconds(name: str, value: Any, bound: str, *, allow_zero: bool) -> float:
    """``value`` as seconds: a finite real number, > 0 or >= 0; else an ArgumentError naming ``name``."""
    number = not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))
    if not number or not (0 <= value < math.inf) or (value == 0 and not allow_zero):  # NaN fails 0 <= value
        raise ArgumentError(f"{name} must be a finite number of seconds {bound}, got {value!r}")
    return float(value)


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


def _numbers(name: str, values: Any) -> np.ndarray:
    """A column of the answer as numbers; a ``null``, a string or a ragged array is a TypeError naming it.

    Converting with ``dtype=float`` alone would read a ``null`` column as one NaN and a ``null``
    value as NaN, refused later as a non-finite *score* rather than as the malformed answer it is.
    """
    if not isinstance(values, list):
        raise TypeError(f"column {name!r} is {_kind(values)}, not an array of numbers")
    try:
        array = np.asarray(values)
    except ValueError:  # ragged nested arrays
        raise TypeError(f"column {name!r} is not a rectangular array of numbers") from None
    if array.dtype.kind not in "iuf" or array.ndim == 0:
        raise TypeError(f"column {name!r} holds values that are not numbers (e.g. {values[:3]!r})")
    return array


def sendable(name: str, value: Any) -> Any:
    """``value`` as JSON carries it (numpy scalars and arrays as their Python values).

    A request body is encoded by the HTTP client, whose error for a value JSON cannot carry
    (``Object of type int64 is not JSON serializable``) names neither the field nor the value.

    Args:
        name: The field, for the error (``doc_ids``, ``prompt``).
        value: A str, int, float, bool or None, or a list, tuple, dict (str keys) or numpy array of them.

    Returns:
        ``value`` with numpy scalars as Python ones and arrays, tuples as lists.

    Raises:
        ArgumentTypeError: A value JSON cannot carry, naming it (``doc_ids[3]``).
        ArgumentError: A NaN or infinite float (JSON has none), naming it.

    >>> sendable("doc_ids", np.array([3, 3, 4]))
    [3, 3, 4]
    >>> sendable("context", np.int64(2)), sendable("doc_ids", ["a", np.int32(1)])
    (2, ['a', 1])
    >>> sendable("doc_ids", [b"d1"])
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentTypeError: doc_ids[0] cannot be sent to the server: a bytes is not a str, number, bool, list or object (b'd1')
    """
    kind = type(value)
    if kind is str or kind is int or value is None or kind is bool:
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        return sendable(name, value.tolist())  # Python scalars (an object array keeps its items)
    if isinstance(value, (list, tuple)):
        plain = (str, int)  # the usual document ids, passed through without a call each
        return [v if type(v) in plain else sendable(f"{name}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: sendable(f"{name}[{k!r}]", v) for k, v in value.items()}
    if isinstance(value, (str, int)):  # subclasses (an IntEnum, a str subclass) as the base value
        return str(value) if isinstance(value, str) else int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ArgumentError(f"{name} cannot be sent to the server: JSON has no {value!r}")
        return float(value)
    raise ArgumentTypeError(
        f"{name} cannot be sent to the server: a {kind.__name__} is not a str, number, bool, list or object ({value!r})"
    )


def is_url(spec: Any) -> bool:
    """Whether a metric spec names a server rather than a metric.

    >>> is_url("http://127.0.0.1:8000"), is_url("bertscore:minilm")
    (True, False)
    """
    return isinstance(spec, str) and spec.startswith(URL_SCHEMES)
