"""The bodies of ``nlgscore serve``'s own endpoints, one schema for the client and the server.

Each request and response is a msgspec ``Struct``: the server's protocol
(:mod:`nlgscore.serve.http.protocol`) takes its field names from here, the client
(:mod:`nlgscore.remote.client`) builds its requests and reads the answers by them, and the HTTP
reference's tables of bodies are made from them (:func:`reference_markdown`), so none of the
three can spell a field another way. A ``/v1/score`` request may also hold the metric's
per-request options (BARTScore's ``prompt``...), which depend on the metric: the server says which
(:func:`nlgscore.serve.http.protocol.request_options`), so they are not fields of the struct.

>>> ScoreRequest.fields()
('predictions', 'references', 'sources', 'context', 'doc_ids')
>>> to_body(ScoreRequest(predictions=["a"], references=["b"]))
{'predictions': ['a'], 'references': ['b']}
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, Union

try:
    import msgspec
except ImportError:  # the serve extra: its one-line error, naming it
    from nlgscore.backend.extras import require

    require("msgspec", "serve", "nlgscore serve and its client")
    raise

__all__ = [
    "ScoreRequest",
    "ScoreResponse",
    "MatrixRequest",
    "MatrixResponse",
    "RewardRequest",
    "RewardResponse",
    "Health",
    "ErrorBody",
    "BODIES",
    "to_body",
    "reference_markdown",
]

Reference = Union[str, List[str]]  # one reference, or several for one prediction


class Body(msgspec.Struct, omit_defaults=True):
    """A body of the schema: ``fields()`` names its fields, in order."""

    @classmethod
    def fields(cls) -> Tuple[str, ...]:
        return tuple(cls.__struct_fields__)


class ScoreRequest(Body):
    """``POST /v1/score``: each prediction scored with its references and/or source."""

    predictions: List[str]
    references: Optional[Sequence[Reference]] = None
    sources: Optional[List[str]] = None
    context: Optional[int] = None  # the previous sentences of its document each is read after
    doc_ids: Optional[List[Union[str, int]]] = None  # one document id per prediction, with context


class ScoreResponse(Body):
    """The answer of ``/v1/score``: the primary scores, every column, the signature."""

    scores: List[float]
    columns: Dict[str, Any]
    signature: str
    primary: str
    layer: Optional[int] = None  # with all layers: the row the scores report


class MatrixRequest(Body):
    """``POST /v1/matrix``: every prediction against every reference."""

    predictions: List[str]
    references: List[str]
    column: Optional[str] = None
    source: Optional[str] = None  # every cell's, for a metric that scores with references and sources


class MatrixResponse(Body):
    """The answer of ``/v1/matrix``: one row per prediction."""

    matrix: List[List[float]]
    column: Optional[str]
    signature: str


class RewardRequest(Body):
    """``POST /get_reward`` (OpenRLHF): each query is its prompt followed by the response scored."""

    query: List[str]
    prompts: List[str]
    labels: Optional[List[Reference]] = None


class RewardResponse(Body):
    """The answer of ``/get_reward``."""

    rewards: List[float]
    scores: List[float]
    extra_logs: Dict[str, List[float]]


class Health(Body):
    """``GET /health`` once the model is loaded (else 503 with ``status`` and ``error``)."""

    status: str
    metric: str
    signature: str
    queue: int
    needs: List[str]
    matrix: bool


class ErrorBody(Body):
    """Every refusal: the cause, naming the field."""

    error: str


# (method, path, request, response) of every endpoint of nlgscore's own protocol
BODIES: Tuple[Tuple[str, str, Optional[Type[Body]], Type[Body]], ...] = (
    ("POST", "/v1/score", ScoreRequest, ScoreResponse),
    ("POST", "/v1/matrix", MatrixRequest, MatrixResponse),
    ("POST", "/get_reward", RewardRequest, RewardResponse),
    ("GET", "/health", None, Health),
)


def to_body(value: Body) -> Dict[str, Any]:
    """A body as the JSON object sent (fields left at their defaults are left out)."""
    return msgspec.to_builtins(value)


def _type_name(annotation: Any) -> str:
    """A field's type as the reference writes it (a table cell: no bare pipe)."""
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")
    return text.replace("NoneType", "None")


def reference_markdown() -> str:
    """The tables of the HTTP reference: every endpoint's request and response fields.

    >>> print(reference_markdown().splitlines()[0])
    ### `POST /v1/score`
    """
    import typing

    lines: List[str] = []
    for method, path, request, response in BODIES:
        lines += [f"### `{method} {path}`", ""]
        for kind, struct in (("request", request), ("response", response)):
            if struct is None:
                continue
            hints = typing.get_type_hints(struct)
            defaults = dict(
                zip(struct.__struct_fields__[-len(struct.__struct_defaults__) :], struct.__struct_defaults__)
            )
            title = (struct.__doc__ or struct.__name__).splitlines()[0].replace("``", "`")
            lines += [title, "", f"| {kind} field | type | required |", "|---|---|---|"]
            for name in struct.__struct_fields__:
                lines.append(f"| `{name}` | `{_type_name(hints[name])}` | {'no' if name in defaults else 'yes'} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
