"""The option table: every option a metric takes, where it applies, and how each door spells it.

One row per option (:class:`Option`): its name, its kind (how a string from the command line or a
spec becomes a value), whether it is a *constructor* option (a setting of the loaded scorer:
BERTScore's ``idf``, Prism's ``lang``) or a *call* option (a setting of one call: BARTScore's
``prompt``; per request in ``/v1/score``), and a one-line help. Each metric's scorer class holds
its rows in ``option_table``; :func:`option_rows` adds the document context every context-reading
metric takes and the run-time options every scorer takes. Every door reads this table:

* ``nlgscore.load(spec, **options)`` (and ``map_function``, ``compute_metrics``, the Trainer
  callback, the engines): constructor options go to the constructor, call options become the
  scorer's call defaults (:meth:`nlgscore.core.base.Scorer.set_call_defaults`);
* ``nlgscore score SPEC --option NAME=VALUE`` and ``nlgscore serve SPEC --option NAME=VALUE``:
  :func:`parse_assignment` turns the string into the value;
* the ``/v1/score`` body: call options as fields of the request;
* the evaluate modules list them as keywords of ``compute``.

An option a metric does not take is refused with one message (:func:`unknown_options`) whichever
door it came through.

>>> from nlgscore.seq2seq.bartscore import BARTScorer
>>> row = find_option(BARTScorer, "prompt")
>>> row.call, row.constructor, row.parse("Such as")
(True, False, 'Such as')
>>> parse_assignment(BARTScorer, "prompt_side=decoder")
('prompt_side', 'decoder')
>>> parse_assignment(BARTScorer, "idf=true")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nlgscore.errors.ArgumentTypeError: BARTScorer got an unknown option idf=; its options: checkpoint, ...
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from nlgscore.backend.gemm import KERNEL_CHOICES
from nlgscore.backend.packed_attention import FORWARDS
from nlgscore.core.runtime import RUNTIME_OPTIONS
from nlgscore.errors import ArgumentError, ArgumentTypeError

# How a string becomes a value: the kinds of the table.
KINDS = ("bool", "int", "float", "str", "choice", "texts", "prompt", "object")
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


@dataclass(frozen=True)
class Option:
    """One row of a metric's option table.

    Attributes:
        name: the keyword, the same at every door.
        kind: how a command-line string becomes the value (:data:`KINDS`): ``"texts"`` reads
            ``@FILE`` (one text a line) or a JSON list; ``"prompt"`` a string, a packaged set
            name or a JSON list; ``"object"`` cannot be given as a string (an ``Accelerator``).
        help: one line for the cards, ``--help`` and the reference.
        constructor: a setting of the loaded scorer (``load(spec, name=...)``, the constructor).
        call: a setting of one call (``compute(..., name=...)``, a ``/v1/score`` field); given
            to ``load`` it is the scorer's default for its calls.
        choices: the allowed values of a ``"choice"``.
        runtime: one of the run-time options every scorer takes (device, batch size, ...).
        default: the default as the cards state it, where no constructor parameter holds it (a
            call option, a run-time option); None: the constructor's.
    """

    name: str
    kind: str
    help: str
    constructor: bool = True
    call: bool = False
    choices: Tuple[str, ...] = ()
    runtime: bool = False
    default: Optional[str] = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    def parse(self, text: str) -> Any:
        """The value of ``text`` as the command line gives it (``--option NAME=TEXT``); errors name
        the option.

        >>> Option("idf", "bool", "").parse("yes"), Option("num_layers", "int", "").parse("4")
        (True, 4)
        >>> Option("idf_sents", "texts", "").parse('["a", "b"]')
        ['a', 'b']
        """
        kind, name = self.kind, self.name
        if kind == "bool":
            if text.strip().lower() in _TRUE + _FALSE:
                return text.strip().lower() in _TRUE
            raise ArgumentError(f"option {name} takes true or false, got {text!r}")
        if kind in ("int", "float"):
            try:
                return int(text) if kind == "int" else float(text)
            except ValueError:
                raise ArgumentError(
                    f"option {name} takes {'an integer' if kind == 'int' else 'a number'}, got {text!r}"
                ) from None
        if kind == "choice":
            if text not in self.choices:
                raise ArgumentError(f"option {name} must be one of {', '.join(self.choices)}, got {text!r}")
            return text
        if kind == "object":
            raise ArgumentError(f"option {name} takes a Python object and cannot be given as text")
        if kind in ("texts", "prompt") and text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as err:
                raise ArgumentError(f"option {name}: {text!r} is not a JSON list of strings ({err})") from None
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ArgumentError(f"option {name} takes a JSON list of strings, got {text!r}")
            return value
        if kind == "texts":
            if not text.startswith("@"):
                raise ArgumentError(
                    f"option {name} takes @FILE (one text a line) or a JSON list of strings, got {text!r}"
                )
            path = Path(text[1:])
            if not path.is_file():
                raise ArgumentError(f"option {name}: {path} is not a file")
            return path.read_text(encoding="utf-8").splitlines()
        return text


def check_value(row: Option, value: Any) -> Any:
    """``value`` if its type fits ``row`` (the metric checks the rest when a call uses it); else an
    error naming the option. None is "not set" for every row.

    >>> check_value(Option("prompt_side", "choice", "", choices=("encoder", "decoder")), "decoder")
    'decoder'
    """
    if value is None:
        return value
    name, kind = row.name, row.kind
    wanted = {"bool": (bool,), "int": (int,), "float": (int, float), "str": (str,), "choice": (str,)}.get(kind)
    if wanted is not None and (not isinstance(value, wanted) or (kind != "bool" and isinstance(value, bool))):
        raise ArgumentTypeError(
            f"{name} must be {'/'.join(t.__name__ for t in wanted)}, got {type(value).__name__}: {value!r}"
        )
    if kind == "choice" and value not in row.choices:
        raise ArgumentError(f"{name} must be one of {', '.join(row.choices)}, got {value!r}")
    if kind in ("texts", "prompt") and not isinstance(value, str):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ArgumentTypeError(f"{name} must be a string or a list of strings, got {type(value).__name__}")
    return value


# The document context every context-reading metric takes (nlgscore.core.context).
CONTEXT = Option(
    "context",
    "int",
    "read each sentence after the previous k sentences of its document (with doc_ids)",
    constructor=False,
    call=True,
    default="0",
)
# The switches of the model metrics that change their last bits, each a constructor option whose
# default, "auto", is its environment variable (nlgscore.envs), recorded in the signature:
# ``kernel:`` (the CPU linear kernel, nlgscore.backend.gemm) and ``forward:tokens`` (the token
# forward, nlgscore.backend.packed_attention).
KERNEL_OPTION = Option(
    "kernel",
    "choice",
    "the CPU linear kernel: onednn or mkl (F.linear); auto: NLGSCORE_ONEDNN, else the CPU's rule",
    choices=KERNEL_CHOICES,
)
FORWARD_OPTION = Option(
    "forward",
    "choice",
    "padded (batches of one padded length) or tokens (packed tokens, attention per sequence); "
    "auto: NLGSCORE_TOKEN_FORWARD",
    choices=FORWARDS,
)
# The run-time options every scorer takes (nlgscore.core.runtime.RUNTIME_OPTIONS, in its order).
RUNTIME_ROWS = (
    Option("device", "str", "cpu, cuda, cuda:N, mps or xpu", runtime=True, default="CUDA if available"),
    Option(
        "dtype",
        "choice",
        "float32, bfloat16, float16 or auto",
        choices=("float32", "bfloat16", "float16", "auto", "fp32", "bf16", "fp16"),
        runtime=True,
        default="float32",
    ),
    Option("batch_size", "int", "most items per batch", call=True, runtime=True, default="the token budget only"),
    Option("max_tokens", "int", "padded tokens per batch", call=True, runtime=True, default="the device's"),
    Option("progress", "bool", "draw a progress bar", call=True, runtime=True, default="False"),
    Option("accelerator", "object", "an accelerate.Accelerator to shard calls over", runtime=True, default="None"),
    Option(
        "shard",
        "bool",
        "split each call across the ranks of a launch (every rank the same inputs)",
        call=True,
        runtime=True,
        default="False",
    ),
)


def metric_options(cls: type) -> List[str]:
    """The options a scorer class's constructor lists itself (the run-time ones excluded).

    >>> metric_options(object)
    []
    """
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    params = inspect.signature(cls).parameters.values()  # the constructor's, without self
    return [p.name for p in params if p.kind in kinds and p.name not in ("self", "runtime", *RUNTIME_OPTIONS)]


def _own_rows(cls: type) -> Tuple[Option, ...]:
    """``cls``'s own rows: its ``option_table``, or (a plug-in without one) its constructor's
    parameters as constructor options that cannot be given as text."""
    declared = getattr(cls, "option_table", None)
    if declared is not None:
        return tuple(declared)
    return tuple(Option(name, "object", "") for name in metric_options(cls))


def option_rows(cls: type) -> Tuple[Option, ...]:
    """Every option of scorer class ``cls``: its own, the document context if it reads one, then
    the run-time options.

    >>> from nlgscore.strings.scorers import ChrFScorer
    >>> [row.name for row in option_rows(ChrFScorer)][:3]
    ['char_order', 'word_order', 'beta']
    """
    own = _own_rows(cls)
    context = (CONTEXT,) if getattr(cls, "takes_context", False) and all(r.name != "context" for r in own) else ()
    return own + context + RUNTIME_ROWS


def default_text(cls: type, row: Option) -> str:
    """The default of ``row`` as the cards and the API reference state it: the constructor
    parameter's, else the row's own statement (a literal in code type, a description as text).

    >>> from nlgscore.strings.scorers import RougeScorer
    >>> default_text(RougeScorer, find_option(RougeScorer, "rouge_type")), default_text(RougeScorer, RUNTIME_ROWS[0])
    ("`'rougeL'`", 'CUDA if available')
    """
    parameter = inspect.signature(cls).parameters.get(row.name)
    if row.default is not None:
        return row.default if " " in row.default else f"`{row.default}`"
    if parameter is None or parameter.default is inspect.Parameter.empty:
        return "required"
    return f"`{parameter.default!r}`"


def where_set(row: Option) -> str:
    """Where ``row`` may be given: ``scorer`` (when it is built), ``call`` (per call) or both.

    >>> where_set(CONTEXT), where_set(RUNTIME_ROWS[2])
    ('call', 'scorer or call')
    """
    return "scorer or call" if row.call and row.constructor else "call" if row.call else "scorer"


def metric_rows(cls: type) -> Tuple[Option, ...]:
    """``cls``'s rows without the run-time ones (what a metric's card lists)."""
    return tuple(row for row in option_rows(cls) if not row.runtime)


def unknown_options(cls: type, names: Iterable[str]) -> ArgumentTypeError:
    """The one refusal of options ``cls`` does not take, whichever door they came through.

    >>> from nlgscore.strings.scorers import ChrFScorer
    >>> str(unknown_options(ChrFScorer, ["prompt"]))  # doctest: +ELLIPSIS
    'ChrFScorer got an unknown option prompt=; its options: char_order, word_order, beta, multiref; run-time options: ...'
    """
    return ArgumentTypeError(unknown_message(cls.__name__, [row.name for row in metric_rows(cls)], names))


def unknown_message(class_name: str, own: Sequence[str], names: Iterable[str]) -> str:
    """The text of :func:`unknown_options` from the metric's own option names (for a process
    that has the names but not the class: a server's HTTP workers).

    >>> unknown_message("ChrFScorer", ["char_order"], ["prompt"]).split(";")[0]
    'ChrFScorer got an unknown option prompt='
    """
    runtime = ", ".join(row.name for row in RUNTIME_ROWS)
    return (
        f"{class_name} got an unknown option {'=, '.join(names)}=; its options: {', '.join(own) or 'none'}; "
        f"run-time options: {runtime}, runtime"
    )


def not_call_options(cls: type, names: Iterable[str]) -> Exception:
    """The one refusal of ``names`` given to a call (``compute``, a ``/v1/score`` field, a
    scorer's call defaults): an option the metric does not take is :func:`unknown_options`; a
    setting of the scorer (BERTScore's ``idf``) says where it is given instead.

    >>> from nlgscore.bertscore.scorer import BERTScorer
    >>> print(not_call_options(BERTScorer, ["idf"]))  # doctest: +NORMALIZE_WHITESPACE
    idf is a setting of the BERTScorer scorer, not of a call: give it when the scorer is built
    (nlgscore.load(spec, idf=...), nlgscore serve SPEC --option idf=...)
    """
    rows = {row.name: row for row in option_rows(cls)}
    names = list(names)
    unknown = [name for name in names if name not in rows]
    if unknown:
        return unknown_options(cls, unknown)
    settings = ", ".join(f"{name}" for name in names)
    example = names[0]
    return ArgumentError(
        f"{settings} {'is a setting' if len(names) == 1 else 'are settings'} of the {cls.__name__} scorer, "
        f"not of a call: give {'it' if len(names) == 1 else 'them'} when the scorer is built "
        f"(nlgscore.load(spec, {example}=...), nlgscore serve SPEC --option {example}=...)"
    )


def find_option(cls: type, name: str) -> Option:
    """The row ``name`` of ``cls``'s table; an option it does not take is :func:`unknown_options`."""
    for row in option_rows(cls):
        if row.name == name:
            return row
    raise unknown_options(cls, [name])


def call_option_names(cls: type) -> Tuple[str, ...]:
    """The options one call of ``cls`` takes, besides its inputs (``compute``'s keywords)."""
    return tuple(row.name for row in option_rows(cls) if row.call)


def split_options(cls: type, options: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``options`` for ``cls`` as (constructor and run-time options, call-only options); an option
    ``cls`` does not take is :func:`unknown_options`. An option of both kinds (BARTScore's
    ``direction``) goes to the constructor.

    >>> from nlgscore.seq2seq.bartscore import BARTScorer
    >>> split_options(BARTScorer, {"direction": "src", "prompt": "Such as", "device": "cpu"})
    ({'direction': 'src', 'device': 'cpu'}, {'prompt': 'Such as'})
    """
    rows = {row.name: row for row in option_rows(cls)}
    unknown = [name for name in options if name not in rows]
    if unknown:
        raise unknown_options(cls, unknown)
    call = {name: value for name, value in options.items() if not rows[name].constructor}
    return {name: value for name, value in options.items() if name not in call}, call


def parse_assignment(cls: type, text: str) -> Tuple[str, Any]:
    """``NAME=VALUE`` (``--option`` of ``nlgscore score`` and ``nlgscore serve``) as the option's
    name and value; errors name the option.

    >>> from nlgscore.bertscore.scorer import BERTScorer
    >>> parse_assignment(BERTScorer, "rescale_with_baseline=true")
    ('rescale_with_baseline', True)
    """
    name, sep, value = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not name:
        raise ArgumentError(f"an option is NAME=VALUE (e.g. idf=true), got {text!r}")
    return name, find_option(cls, name).parse(value)


def parse_assignments(cls: type, texts: Optional[Sequence[str]]) -> Dict[str, Any]:
    """Every ``NAME=VALUE`` of ``texts`` as options; an option given twice is an error.

    >>> from nlgscore.bertscore.scorer import BERTScorer
    >>> parse_assignments(BERTScorer, ["idf=true", "num_layers=4"])
    {'idf': True, 'num_layers': 4}
    """
    out: Dict[str, Any] = {}
    for text in texts or ():
        name, value = parse_assignment(cls, text)
        if name in out:
            raise ArgumentError(f"option {name} is given twice")
        out[name] = value
    return out


def check_table(cls: type) -> List[str]:
    """What ``cls``'s table and its constructor disagree on (empty when they agree): every
    constructor parameter is a constructor row and every constructor row a parameter."""
    params = set(metric_options(cls))
    rows = {row.name for row in _own_rows(cls) if row.constructor}
    problems = [f"{name}: a constructor parameter without a row" for name in sorted(params - rows)]
    problems += [f"{name}: a constructor row the constructor does not take" for name in sorted(rows - params)]
    takes_keywords = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(cls).parameters.values())
    if not takes_keywords:
        problems.append("the constructor takes no **runtime_options")
    return problems
