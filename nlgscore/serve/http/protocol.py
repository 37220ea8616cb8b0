"""The request and response bodies of ``nlgscore serve``: JSON in, checked, JSON out.

Every malformed request is a :class:`HTTPError` with its status and a message naming the field
(the argument checks of ``compute`` name ``predictions[3]`` and the like themselves).

* ``POST /v1/score``: ``{"predictions": [...], "references": [...], "sources": [...]}`` (a
  reference is a string or a list of strings per prediction), with the metric's per-request
  options (:func:`request_options`: BARTScore's ``prompt``, ``prompt_side``, ``direction``,
  ``agg``) and document context → ``{"scores", "columns", "signature"}``.
* ``POST /get_reward``: OpenRLHF's reward-model protocol: ``{"query": [...], "prompts": [...],
  "labels": [...]}`` → ``{"rewards", "scores", "extra_logs"}``; the response scored is each query
  after its prompt, the labels are its references, and a source-based metric reads the prompt.
* ``POST /v1/matrix``: ``{"predictions", "references", "column"?, "source"?}`` → ``{"matrix", "column", "signature"}``.

>>> score_inputs({"predictions": ["a"], "references": ["b"]}, max_items=10)
(['a'], ['b'], None)
>>> reward_inputs({"query": ["Q: hi A: hello"], "prompts": ["Q: hi A:"], "labels": ["hello"]}, max_items=10)
([' hello'], ['hello'], ['Q: hi A:'])
>>> score_inputs({"predictions": "a"}, max_items=10)
Traceback (most recent call last):
...
nlgscore.serve.http.protocol.HTTPError: predictions must be a JSON array of strings, got str
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, overload

from nlgscore.core.messages import last_text
from nlgscore.errors import NlgscoreError
from nlgscore.remote import wire
from nlgscore.serve.http.field_checks import FieldError, label, read_json

# The fields of nlgscore's own bodies: the schema the client shares (nlgscore.remote.wire).
SCORE_FIELDS = wire.ScoreRequest.fields()[:3]  # predictions, references, sources
CONTEXT_FIELDS = wire.ScoreRequest.fields()[3:]  # optional: document context (nlgscore.core.context)
REWARD_FIELDS = wire.RewardRequest.fields()
MATRIX_FIELDS = wire.MatrixRequest.fields()


class HTTPError(Exception):
    """A request the server refuses: ``status`` and a one-line message (sent as ``{"error": ...}``)."""

    def __init__(self, status: int, message: str, headers: Optional[Dict[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def parse_body(raw: bytes) -> Any:
    """The JSON object (or array: slime's group form) of a request body, read by the one JSON
    reading rule (:func:`~nlgscore.serve.http.field_checks.read_json`); anything else is a 400 saying
    what is wrong, naming the field."""
    try:
        body = read_json(raw)
    except FieldError as err:
        raise HTTPError(400, str(err)) from None
    if not isinstance(body, (dict, list)):
        raise HTTPError(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


def parse_object(raw: bytes) -> Dict[str, Any]:
    """:func:`parse_body`, which must be a JSON object."""
    body = parse_body(raw)
    if not isinstance(body, dict):
        raise HTTPError(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


def _fields(body: Dict[str, Any], allowed: Tuple[str, ...], required: Tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise HTTPError(400, f"unknown field(s) {', '.join(unknown)}; this endpoint takes {', '.join(allowed)}")
    for name in required:
        if name not in body:
            raise HTTPError(400, f"{name} is required")


@overload
def array(body: Dict[str, Any], name: str, max_items: int, required: Literal[True]) -> List[Any]: ...
@overload
def array(body: Dict[str, Any], name: str, max_items: int, required: bool = False) -> Optional[List[Any]]: ...
def array(body: Dict[str, Any], name: str, max_items: int, required: bool = False) -> Optional[List[Any]]:
    """``body[name]``, a JSON array of at most ``max_items`` (413 above); None when absent or null
    unless ``required`` (then a 400 naming the field)."""
    value = body.get(name)
    if value is None:
        if required:
            raise HTTPError(400, f"{name} must be a JSON array of strings, got null")
        return None
    if not isinstance(value, list):
        raise HTTPError(400, f"{name} must be a JSON array of strings, got {type(value).__name__}")
    if len(value) > max_items:
        raise HTTPError(
            413, f"{name} has {len(value)} items; this server takes at most {max_items} per request (--max-items)"
        )
    return value


def request_options(scorer_class: type) -> Dict[str, List[str]]:
    """Which options of a metric's option table (:mod:`nlgscore.core.options`) a ``/v1/score``
    body may give (``per_request``: the call options, e.g. BARTScore's ``prompt``) and which are
    the server's ``settings``, fixed when it starts (``--option``; the run-time ones too: the
    server batches).

    >>> from nlgscore.seq2seq.bartscore import BARTScorer
    >>> request_options(BARTScorer)["per_request"]
    ['direction', 'prompt', 'prompt_side', 'agg']
    """
    from nlgscore.core.options import metric_rows, option_rows

    rows = [row for row in option_rows(scorer_class) if row.name not in CONTEXT_FIELDS]
    per_request = [row.name for row in rows if row.call and not row.runtime]
    return {
        "per_request": per_request,
        "settings": [row.name for row in rows if row.name not in per_request],
        # what the refusal of an option the metric does not take names (nlgscore.core.options)
        "scorer": [scorer_class.__name__, *(row.name for row in metric_rows(scorer_class))],
    }


def score_inputs(
    body: Dict[str, Any], max_items: int, options: Optional[Dict[str, List[str]]] = None
) -> Tuple[List[Any], Optional[List[Any]], Optional[List[Any]]]:
    """Predictions, references and sources of a ``/v1/score`` body (item checks come with scoring);
    ``options`` (:func:`request_options`) names the metric's per-request options it may also hold."""
    per_request = tuple(options["per_request"]) if options else ()
    settings = set(options["settings"]) if options else set()
    fixed = sorted(name for name in body if name in settings)
    if fixed:
        raise HTTPError(
            400,
            f"{', '.join(fixed)}: a setting of this server's scorer, not of a request; it is set when the "
            f"server starts (nlgscore serve SPEC --option {fixed[0]}=...)",
        )
    if options:
        unknown = sorted(set(body) - set(SCORE_FIELDS + CONTEXT_FIELDS + per_request))
        if unknown:  # an option of another metric (or none): refused as every door refuses it
            from nlgscore.core.options import unknown_message

            class_name, *own = options["scorer"]
            raise HTTPError(400, f"unknown field(s) {', '.join(unknown)}: {unknown_message(class_name, own, unknown)}")
    _fields(body, SCORE_FIELDS + CONTEXT_FIELDS + per_request, ("predictions",))
    predictions = array(body, "predictions", max_items, required=True)
    return predictions, array(body, "references", max_items), array(body, "sources", max_items)


def call_options(body: Dict[str, Any], options: Dict[str, List[str]]) -> Dict[str, Any]:
    """The per-request options of a ``/v1/score`` body (:func:`request_options`), as given (the
    metric checks their values with the call, errors naming the option); null is not given.

    >>> call_options({"predictions": [], "prompt": "Such as", "agg": None}, {"per_request": ["prompt", "agg"]})
    {'prompt': 'Such as'}
    """
    return {name: body[name] for name in options["per_request"] if body.get(name) is not None}


def context_options(body: Dict[str, Any], max_items: int) -> Dict[str, Any]:
    """The optional document context of a ``/v1/score`` body: ``{"context": k, "doc_ids": [...]}``
    as given (checked with the call, errors naming the field), empty without them."""
    options: Dict[str, Any] = {}
    if body.get("context") is not None:
        options["context"] = body["context"]
    if body.get("doc_ids") is not None:
        options["doc_ids"] = array(body, "doc_ids", max_items)
    return options


def reward_inputs(body: Dict[str, Any], max_items: int) -> Tuple[List[str], Optional[List[Any]], List[str]]:
    """Responses (each query after its prompt), references (the labels) and sources (the prompts)."""
    _fields(body, REWARD_FIELDS, ("query", "prompts"))
    queries, prompts = array(body, "query", max_items, required=True), array(body, "prompts", max_items, required=True)
    labels = array(body, "labels", max_items)
    if len(queries) != len(prompts):
        raise HTTPError(400, f"query has {len(queries)} items but prompts has {len(prompts)}")
    if labels is not None and len(labels) != len(queries):
        raise HTTPError(400, f"labels has {len(labels)} items but query has {len(queries)}")
    if labels is not None:
        labels = [reference(value, f"labels[{i}]") for i, value in enumerate(labels)]
    responses = []
    for i, (query, prompt) in enumerate(zip(queries, prompts)):
        if not isinstance(query, str) or not isinstance(prompt, str):
            bad, value = ("query", query) if not isinstance(query, str) else ("prompts", prompt)
            raise HTTPError(400, f"{bad}[{i}] must be a string, got {type(value).__name__}")
        if not query.startswith(prompt):
            raise HTTPError(
                400, f"query[{i}] does not start with prompts[{i}] (the query is the prompt followed by the response)"
            )
        responses.append(query[len(prompt) :])
    return responses, labels, prompts


def matrix_inputs(body: Dict[str, Any], max_cells: int) -> Tuple[List[Any], List[Any], Optional[str], Optional[str]]:
    """Predictions, references, the column and the source (every cell's, for a metric that scores
    with references and sources) of a ``/v1/matrix`` body."""
    _fields(body, MATRIX_FIELDS, ("predictions", "references"))
    predictions, references = (
        array(body, "predictions", max_cells, required=True),
        array(body, "references", max_cells, required=True),
    )
    if len(predictions) * len(references) > max_cells:
        raise HTTPError(
            413,
            f"{len(predictions)} x {len(references)} pairs; this server takes at most {max_cells} per matrix request",
        )
    column = body.get("column")
    if column is not None and not isinstance(column, str):
        raise HTTPError(400, f"column must be a string or null, got {type(column).__name__}")
    source = body.get("source")
    if source is not None and not isinstance(source, str):
        raise HTTPError(400, f"source must be a string or null, got {type(source).__name__}")
    return predictions, references, column, source


def score_response(result: Any) -> Dict[str, Any]:
    """The :class:`~nlgscore.remote.wire.ScoreResponse` of a Result (``layer`` for all layers)."""
    return wire.to_body(
        wire.ScoreResponse(
            scores=result.scores,
            columns=result.columns(),
            signature=str(result.signature),
            primary=result.primary,
            layer=getattr(result, "layer", None),  # all layers: the row that scores reports
        )
    )


def reward_response(result: Any, metric: str) -> Dict[str, Any]:
    """OpenRLHF's answer: the primary score as reward and score, every column in ``extra_logs``."""
    scores = result.scores
    return wire.to_body(
        wire.RewardResponse(
            rewards=scores,
            scores=scores,
            extra_logs={f"{metric}_{name}": values for name, values in result.columns().items()},
        )
    )


def message_text(value: Any, name: str) -> str:
    """A prompt as text: a string as is; chat messages (``[{"role", "content"}, ...]``, content a
    string or content parts ``[{"type": "input_text", "text"}, ...]``): the last user message's
    text (:mod:`nlgscore.core.messages`).

    >>> message_text(
    ...     [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
    ...     "prompt",
    ... )
    'Hi'
    """
    try:
        return last_text(value, "user", name)
    except NlgscoreError as err:
        raise HTTPError(400, str(err)) from None


def reference(value: Any, name: str) -> Any:
    """A reference from a label field: a string or a non-empty list of strings, none blank
    (:func:`nlgscore.serve.http.field_checks.label`)."""
    try:
        return label(value, name)
    except FieldError as err:
        raise HTTPError(400, str(err)) from None
