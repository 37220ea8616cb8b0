"""The metric table: metric name -> scorer class (an import path, so this module stays cheap) + spec parser.

``nlgscore.load``, the CLI, ``map_function``, the Trainer integration and the meta-evaluation
tasks all build scorers from here. Specs:

* ``bertscore`` (default English model), ``bertscore:MODEL_OR_FOLDER``, ``bertscore:MODEL:L4``;
* ``prism:ref`` / ``prism:src``, optionally ``prism:ref:CHECKPOINT`` (a folder or Hub id) and the
  candidates' language last (``prism:src:CHECKPOINT:de``, ``prism:ref:de``; default en);
* ``bartscore``, ``bartscore:VARIANT_OR_CHECKPOINT``, ``bartscore:VARIANT_OR_CHECKPOINT:DIRECTION``.

:func:`build` is the one builder (``load`` and ``nlgscore.load`` are its aliases, :func:`cached`
the one scorer cache): the run-time options every scorer takes are resolved into its Runtime, the
others go to the metric's constructor; an option that contradicts the spec is an error. This
table is the one list of metrics: the tests, the Hub cards, the wheel check, every entry point
and the CLI's per-metric commands are derived from its rows. Adding a metric is one package
folder plus one :func:`register` call at the end of this module (and its evaluate module and
card under ``metrics/<name>/``); see CONTRIBUTING.md.

>>> parse_spec("bertscore:minilm:L4")
('bertscore', ['minilm', 'L4'])
>>> spec_options("prism:ref:tests/golden/tiny-prism")
('prism', {'mode': 'ref', 'checkpoint': 'tests/golden/tiny-prism'})
>>> "bartscore" in metric_names()
True
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from nlgscore.core.cache import ScorerCache, content_key
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.specs import bartscore_spec, bertscore_spec, bleu_spec, chrf_spec, prism_spec, rouge_spec, ter_spec

# parts of the spec after the name, and the caller's options -> constructor options named by the spec
SpecParser = Callable[[List[str], Dict[str, Any]], Dict[str, Any]]

__all__ = [
    "Metric",
    "SCORER_CACHE_SIZE",
    "ServerRow",
    "build",
    "cached",
    "cached_scorers",
    "check_options",
    "clear_cache",
    "load",
    "metric",
    "metric_names",
    "parse_spec",
    "register",
    "register_server",
    "server_row",
    "spec_options",
    "unregister",
]


@dataclass(frozen=True)
class Metric:
    """One row of the table: what :func:`load`, the CLI and the integrations read about a metric.

    Rows are made by :func:`register`; the scorer class is imported only when the metric is built
    (:meth:`scorer_class`), so reading the table stays cheap.

    Args:
        name: the metric's name, the first part of its specs.
        scorer: the scorer class, or its import path ``"package.module:ClassName"``.
        parse_spec: turns the parts of a spec after the name (and the caller's options) into
            constructor options; None: the metric takes no spec parts.
        help: one line, ``"what: syntax"`` (``"Prism: prism:ref|src[:CHECKPOINT][:LANG]"``), for
            ``--help``, the errors of a malformed spec and the reference's table of specs.
        model_option: the constructor argument that chooses the model, named by offline errors.
        command: the one-line summary of the metric's own command ``nlgscore <name>`` (the module
            ``nlgscore.cli.<name>``); empty when ``nlgscore score <spec>`` is its only one.
    """

    name: str
    scorer: Union[str, type]
    parse_spec: Optional[SpecParser] = None
    help: str = ""
    model_option: str = ""  # the constructor argument naming the model, for error messages
    command: str = ""

    @property
    def builtin(self) -> bool:
        """Whether the scorer lives in this package (not a plug-in or a test's row)."""
        path = self.scorer if isinstance(self.scorer, str) else self.scorer.__module__
        return path.split(".")[0].split(":")[0] == __name__.split(".")[0]

    def scorer_class(self) -> type[Any]:
        """The scorer class, imported from its path on first use."""
        if isinstance(self.scorer, str):
            module, _, attribute = self.scorer.partition(":")
            return getattr(import_module(module), attribute)
        return self.scorer


_TABLE: Dict[str, Metric] = {}


def register(
    name: str,
    scorer: Union[str, type],
    parse_spec: Optional[SpecParser] = None,
    *,
    help: str = "",
    model_option: str = "",
    command: str = "",
    replace: bool = False,
) -> Metric:
    """Add a metric to the table (what ``load``, the CLI and the integrations read).

    A plug-in package can instead declare an entry point in the ``nlgscore.metrics`` group, read
    when a name is first missed; CONTRIBUTING.md's "Add a metric" registers a built-in one.

    Args:
        name: the metric's name: lowercase letters, digits, ``-`` and ``_``.
        scorer: a :class:`~nlgscore.core.base.Scorer` subclass or its import path ``"module:Class"``
            (imported only when the metric is built).
        parse_spec: ``parse_spec(parts, options)`` turns the ``:``-separated parts after the name
            into constructor options; without one, a spec with parts is an error.
        help: one line, ``"what: syntax"``, for ``--help`` and the errors of a malformed spec.
        model_option: the constructor argument that chooses the model, for error messages.
        command: the summary line of a command ``nlgscore <name>`` in the module
            ``nlgscore.cli.<name>``; empty: ``nlgscore score <spec>`` is the metric's command.
        replace: replace a row of the same name instead of refusing it.

    Returns:
        The new row.

    Raises:
        ArgumentError: a malformed name, or a name already registered without ``replace=True``.
        ArgumentTypeError: ``scorer`` is neither a class nor a ``"module:Class"`` path, or
            ``parse_spec`` is not callable.

    Example:
        >>> from nlgscore.core.base import Scorer
        >>> entry = register("toy-doc", "nlgscore.core.base:Scorer", help="a doctest row", replace=True)
        >>> entry.scorer_class() is Scorer
        True
        >>> unregister("toy-doc")
    """
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_\-]*", name):
        raise ArgumentError(f"metric name must be lowercase letters, digits, '-' or '_', got {name!r}")
    if not isinstance(scorer, (str, type)) or (isinstance(scorer, str) and not re.fullmatch(r"[\w.]+:[\w.]+", scorer)):
        raise ArgumentTypeError(f"scorer must be a Scorer class or a 'module:Class' path, got {scorer!r}")
    if parse_spec is not None and not callable(parse_spec):
        raise ArgumentTypeError(f"parse_spec must be callable, got {type(parse_spec).__name__}")
    if name in _TABLE and not replace:
        raise ArgumentError(f"metric {name!r} is already registered (pass replace=True to replace it)")
    _TABLE[name] = Metric(name, scorer, parse_spec, help, model_option, command)
    return _TABLE[name]


def unregister(name: str) -> None:
    """Remove a metric from the table (for tests and plug-ins that registered one).

    Args:
        name: the metric's name; a name not in the table is no error.
    """
    _TABLE.pop(name, None)


PLUGIN_GROUP = "nlgscore.metrics"
_plugins_read = False


def _read_plugins() -> None:
    """Rows declared by installed packages, once: an entry point ``NAME = "module:ScorerClass"``
    in the ``nlgscore.metrics`` group (the class may define ``parse_spec(parts, options)``).
    Nothing is imported until the metric is loaded. A malformed entry point (a name that is not
    lowercase, a value without ``module:Class``) is skipped with one warning naming its
    distribution, so one broken plug-in never stops the others or the built-in metrics."""
    global _plugins_read
    if _plugins_read:
        return
    _plugins_read = True
    from importlib.metadata import entry_points

    for point in entry_points(group=PLUGIN_GROUP):
        if point.name in _TABLE:
            continue
        try:
            register(point.name, point.value, _class_spec_parser(point.name), help=f"plug-in ({point.value})")
        except (ArgumentError, ArgumentTypeError) as err:
            dist = getattr(getattr(point, "dist", None), "name", None) or "an unknown distribution"
            warnings.warn(
                f"skipping the {PLUGIN_GROUP} entry point {point.name} = {point.value} of {dist}: {err}",
                RuntimeWarning,
                stacklevel=3,
            )


def _class_spec_parser(name: str) -> SpecParser:
    def parse(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
        own = getattr(_TABLE[name].scorer_class(), "parse_spec", None)
        if own is None:
            if parts:
                raise ArgumentError(f"metric {name!r} takes no spec parts")
            return {}
        return own(parts, options)

    return parse


def metric_names(builtin: bool = False) -> List[str]:
    """The registered metric names, in registration order.

    Args:
        builtin: only the metrics of this package (what its tests, cards and wheel cover); by
            default the installed plug-ins' too.

    Returns:
        The names, the built-in metrics first.

    Example:
        >>> builtin = metric_names(builtin=True)
        >>> builtin[0], set(builtin) <= set(metric_names()), all(metric(name).builtin for name in builtin)
        ('bertscore', True, True)
    """
    if builtin:
        return [name for name, row in _TABLE.items() if row.builtin]
    _read_plugins()
    return list(_TABLE)


def metric(name: str) -> Metric:
    """The table row of metric ``name``.

    Args:
        name: a metric's name (any case, surrounding spaces ignored).

    Returns:
        Its row.

    Raises:
        ArgumentError: an unknown name; the message lists the known ones.

    Example:
        >>> metric("prism").model_option
        'checkpoint'
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in _TABLE:
        _read_plugins()
    if key not in _TABLE:
        raise ArgumentError(f"unknown metric {name!r}; known metrics: {', '.join(_TABLE)}")
    return _TABLE[key]


# Names that stand for a spec (the meta-evaluation baselines' names): ``sentbleu`` is ``bleu:moses``.
ALIASES = {
    "sentbleu": "bleu:moses",
    "chrf++": "chrf:word_order=2",
    "sentence-bleu": "bleu",
    "rouge1": "rouge:1",
    "rouge2": "rouge:2",
    "rougel": "rouge:L",
}


def parse_spec(spec: str) -> Tuple[str, List[str]]:
    """Split a spec into the metric name and its parts.

    Args:
        spec: ``NAME[:PART...]``, where ``NAME`` is registered or one of :data:`ALIASES`.

    Returns:
        The metric's name and the parts after it.

    Raises:
        ArgumentError: an unknown metric, or an empty part (``bertscore::L4`` would otherwise
            silently mean the default model).
        ArgumentTypeError: ``spec`` is not a non-empty string.

    Example:
        >>> parse_spec("rougeL"), parse_spec("sentbleu")
        (('rouge', ['L']), ('bleu', ['moses']))
        >>> parse_spec("bertscore::L4")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: spec 'bertscore::L4' has an empty part between ':';
        bertscore specs are bertscore[:MODEL_OR_FOLDER[:L<layer>]]
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ArgumentTypeError(f"metric spec must be a non-empty string, got {spec!r}")
    name, *parts = spec.strip().split(":")
    if name.lower() in ALIASES and not parts:
        name, *parts = ALIASES[name.lower()].split(":")
    try:
        entry = metric(name)
    except ValueError:
        raise ArgumentError(f"unknown metric {name!r} in spec {spec!r}; known metrics: {', '.join(_TABLE)}") from None
    if not all(parts):
        syntax = entry.help.split(": ", 1)[-1] if entry.help else f"{entry.name}[:PART...]"
        raise ArgumentError(f"spec {spec!r} has an empty part between ':'; {entry.name} specs are {syntax}")
    return entry.name, parts


def spec_options(spec: str, options: Optional[Dict[str, Any]] = None) -> Tuple[str, Dict[str, Any]]:
    """The metric name and the constructor options of ``spec`` merged with ``options``.

    Args:
        spec: a metric spec (see :func:`load`).
        options: the caller's options; a spec part may fill one that is unset or equal.

    Returns:
        The metric's name and the merged options.

    Raises:
        ArgumentError: a spec the metric's parser cannot read, or an option that contradicts it.

    Example:
        >>> spec_options("bertscore:minilm:L4", {"idf": True})
        ('bertscore', {'idf': True, 'num_layers': 4, 'model_type': 'minilm'})
    """
    name, parts = parse_spec(spec)
    given = dict(options or {})
    parser = _TABLE[name].parse_spec
    if parser is None:
        if parts:
            raise ArgumentError(f"metric {name!r} takes no spec parts, got {spec!r}")
        return name, given
    try:
        named = parser(parts, given)
    except ValueError as err:
        raise ArgumentError(f"cannot read spec {spec!r}: {err}") from None
    for key, value in named.items():
        if given.get(key) is not None and given[key] != value:
            raise ArgumentError(f"spec {spec!r} sets {key}={value!r} but {key}={given[key]!r} was also given")
        given[key] = value
    return name, given


def build(spec: str, runtime: Any = None, **options: Any) -> Any:
    """A ready scorer for ``spec``: the one builder behind :func:`load`, with a ready run time.

    ``nlgscore.load``, the CLI, the evaluate modules and every integration build here, so a spec
    and its options mean the same scorer at every door. The options are split by one rule: the
    run-time options every scorer takes (:data:`nlgscore.core.runtime.RUNTIME_OPTIONS`) are
    resolved once into a :class:`~nlgscore.core.runtime.Runtime` that the scorer gets as
    ``runtime=``; every other option goes to the metric's constructor (a call option becomes the
    default of the scorer's calls), which refuses one it does not list, naming it. Nothing is
    dropped silently. (A constructor that takes no ``runtime=``, a model-free metric that never
    calls ``Scorer.__init__``, gets it set after construction.)

    Args:
        spec: a metric spec (see :func:`load`), or the URL of a running ``nlgscore serve``
            (``http://HOST:PORT``), which builds a :class:`~nlgscore.remote.client.RemoteScorer`.
        runtime: a ready :class:`~nlgscore.core.runtime.Runtime` the run-time options are
            resolved over (a caller that has resolved device and dtype once); None: from the options.
        **options: the metric's options (see :func:`load`); for a URL, the client's own
            (``timeout``, ``retries``, ``backoff``, ``api_key``, ``wait``).

    Returns:
        The scorer, or the client of the server.

    Raises:
        ArgumentError: an unknown metric, a malformed spec, or an option that contradicts it.
        ArgumentTypeError: an option the metric does not take; the message lists its options.

    Example:
        >>> scorer = build("bertscore:minilm:L4", batch_size=8)
        >>> scorer.signature["L"], scorer.runtime.batch_size
        ('4', 8)
        >>> build("bertscore:minilm", num_layer=4)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentTypeError: BERTScorer got an unknown option num_layer=; its options: model_type, num_layers, ...
    """
    server = server_row(spec)
    if server is not None:
        return _remote(server, spec, options)
    return _construct(*_split(spec, runtime, options))


def _construct(name: str, own: Dict[str, Any], call: Dict[str, Any], resolved: Any) -> Any:
    entry = _TABLE[name]
    cls = entry.scorer_class()
    try:
        if _takes_runtime(cls):
            scorer = cls(runtime=resolved, **own)
        else:
            scorer = cls(**own)
            scorer.runtime = resolved
    except OSError as err:
        # name the keyword that chose the model (model_type= or checkpoint=) in offline errors
        if entry.model_option and hasattr(err, "for_flag"):
            raise err.for_flag(f"{entry.model_option}=") from err.__cause__
        raise
    return scorer.set_call_defaults(**call) if call else scorer


def load(spec: str, **options: Any) -> Any:
    """A ready scorer for ``spec``, or the client of a running server when ``spec`` is its URL.

    The front door of the package: the CLI, the evaluate modules and every integration build
    their scorers the same way (:func:`build`), so one spec and one set of options mean one scorer
    everywhere. A spec is the metric's name, then the ``:``-separated parts its spec parser reads:
    ``bertscore:minilm:L4`` is BERTScore on the packaged MiniLM at layer 4, ``prism:src:de``
    reference-free Prism for German candidates, ``bleu:moses`` the BARTScore paper's sentBLEU.
    Every registered metric's forms are ``nlgscore.registry.metric(NAME).help`` (the reference
    tabulates them under this function); ``http://HOST:PORT`` is a running ``nlgscore serve``.

    Every scorer answers the same calls: ``compute(predictions, references, sources)`` (a
    :class:`~nlgscore.core.result.Result`), ``matrix`` (every prediction against every reference)
    and ``acompute`` (from asyncio, merged with concurrent calls), and carries a ``signature``.

    Args:
        spec: a metric spec (``bertscore``, ``bertscore:MODEL_OR_FOLDER:L<layer>``,
            ``prism:ref|src[:CHECKPOINT][:LANG]``, ``bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]]``,
            ``chrf``, ``bleu``, ``rouge:L`` ...) or the URL of a running ``nlgscore serve``.
        **options: the metric's options, by its option table: the run-time options every
            scorer takes (``device``, ``dtype``, ``batch_size``, ``max_tokens``, ``progress``,
            ``accelerator``, ``shard``) set where and how it runs; a setting of the scorer
            (BERTScore's ``idf``, Prism's ``lang``) goes to its constructor; a call option
            (BARTScore's ``prompt``) becomes the default of every call. A server's client takes
            ``timeout``, ``retries``, ``backoff``, ``api_key`` and ``wait`` only.

    Returns:
        The scorer of the metric (a :class:`~nlgscore.core.base.Scorer`), or a
        :class:`~nlgscore.remote.client.RemoteScorer` for a URL.

    Raises:
        ArgumentError: an unknown metric, a malformed spec, or an option that contradicts it
            (``load("bertscore:minilm", model_type="roberta-large")``).
        ArgumentTypeError: an option the metric does not take; the message lists the ones it does.
        ModelNotAvailableError: the model is neither cached nor downloadable (offline, or a
            wrong name), named by the option that chose it.

    Example:
        >>> scorer = load("bertscore:minilm:L4")
        >>> scorer.signature["L"]
        '4'
        >>> load("chrf").compute(["The cat sat."], ["The cat sat."]).scores
        [100.0]
    """
    return build(spec, **options)


def _split(spec: str, runtime: Any, options: Dict[str, Any]) -> Tuple[str, Dict[str, Any], Dict[str, Any], Any]:
    """``spec`` and ``options`` as (metric name, the constructor's options, the call options that
    become the scorer's call defaults, the resolved Runtime), by the metric's option table
    (:mod:`nlgscore.core.options`): an option it does not take fails here, before a model loads."""
    from nlgscore.core.options import split_options
    from nlgscore.core.runtime import RUNTIME_OPTIONS
    from nlgscore.core.scorer_runtime import scorer_runtime

    name, merged = spec_options(spec, options)
    cls = _TABLE[name].scorer_class()
    merged, call = split_options(cls, merged)
    settings = {key: merged.pop(key) for key in RUNTIME_OPTIONS if key in merged}
    return name, merged, call, scorer_runtime(cls, runtime, settings)


def check_options(spec: str, **options: Any) -> None:
    """Refuse an option the metric of ``spec`` does not take, as :func:`build` would, without
    building it (nothing loads): for doors that build later, in another process (``map_function``).

    Args:
        spec: a metric spec (see :func:`load`); a server's URL is not checked (its options are
            the server's).
        **options: the options the scorer will be built with.

    Raises:
        ArgumentError: a malformed spec, or an option that contradicts it.
        ArgumentTypeError: an option the metric does not take.

    Example:
        >>> check_options("bertscore:minilm", idf=True)
        >>> check_options("chrf", prompt="x")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentTypeError: ChrFScorer got an unknown option prompt=; ...
    """
    from nlgscore.core.options import split_options

    if server_row(spec) is not None:
        return
    name, merged = spec_options(spec, options)
    split_options(_TABLE[name].scorer_class(), merged)


def _takes_runtime(cls: type) -> bool:
    import inspect

    params = inspect.signature(cls).parameters.values()
    return any(p.name == "runtime" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


# The scorer cache: content key -> (scorer, what keeps its key's ids alive), LRU past SCORER_CACHE_SIZE.
SCORER_CACHE_SIZE = 8
_CACHE = ScorerCache(SCORER_CACHE_SIZE)


def cached(spec: str, runtime: Any = None, **options: Any) -> Any:
    """:func:`build`, once per process for the same content: the one scorer cache, which the
    evaluate modules, ``map_function``, ``compute_metrics`` and the TRL and lighteval adapters share.

    The key is the content of the build, never a ``repr``: the metric name with its options as the
    spec parser made them (``"bertscore:minilm:L4"`` and ``("bertscore", model_type="minilm",
    num_layers=4)`` are one entry; an ``idf_sents`` list is keyed by every sentence), and the
    resolved run-time settings (an ``accelerator`` by identity). Thread-safe; the
    :data:`SCORER_CACHE_SIZE` most recently used scorers are kept.

    Args:
        spec: a metric spec or a server's URL, as for :func:`build`.
        runtime: a ready run time the run-time options are resolved over, as for :func:`build`.
        **options: the metric's options, as for :func:`build`; part of the key.

    Returns:
        The cached scorer, built on the first call with this content.

    Example:
        >>> cached("bertscore:minilm:L4") is cached("bertscore", model_type="minilm", num_layers=4, device="cpu")
        True
        >>> cached("bertscore:minilm:L4") is cached("bertscore:minilm:L4", batch_size=8)
        False
    """
    server = server_row(spec)
    if server is not None:  # a server: one client per URL and options
        return _CACHE.get_or_build(("remote", spec, content_key(options)), lambda: (_remote(server, spec, options),))[0]
    name, own, call, resolved = _split(spec, runtime, options)
    settings = resolved.options()
    accelerator = settings.pop("accelerator")
    given = {**own, **{f"call:{name}": value for name, value in call.items()}}
    own_key = content_key(given)
    if own_key is None:  # an option without stable content (an object): by identity, kept alive by the entry
        own_key = repr(sorted((k, id(v)) for k, v in given.items()))
    key = (name, own_key, content_key(settings), id(accelerator))
    # the entry keeps the options and the accelerator alive, so that their ids stay theirs
    return _CACHE.get_or_build(key, lambda: (_construct(name, own, call, resolved), given, accelerator))[0]


def cached_scorers() -> List[Any]:
    """The scorers the cache holds now, least recently used first."""
    return [entry[0] for entry in _CACHE.values()]


def clear_cache() -> None:
    """Forget every cached scorer (the next :func:`cached` call builds again)."""
    _CACHE.clear()


@dataclass(frozen=True)
class ServerRow:
    """One row of the server table: a spec starting with one of ``prefixes`` (a URL) names a running
    server, and ``client`` scores through it with the same compute/matrix/Result as a local
    scorer: ``client(url, **options)``.

    Args:
        prefixes: the starts of the specs the row takes (``("http://", "https://")``).
        client: the client class, or ``"package.module:ClassName"`` as the metric rows have it.
    """

    prefixes: Tuple[str, ...]
    client: Union[str, type]

    def client_class(self) -> type[Any]:
        """The client class, imported from its path on first use."""
        return Metric("", self.client).scorer_class()


_SERVERS: List[ServerRow] = []


def register_server(prefixes: Tuple[str, ...], client: Union[str, type]) -> None:
    """Add a server row: a spec starting with one of ``prefixes`` is built as ``client(spec, **options)``.

    A later row is asked first, as a later metric row replaces one.

    Args:
        prefixes: the starts of the specs the row takes (``("grpc://",)``).
        client: the client class, or its import path ``"module:Class"``.

    Example:
        >>> server_row("http://127.0.0.1:8000").client
        'nlgscore.remote.client:RemoteScorer'
        >>> server_row("bertscore:minilm") is None
        True
    """
    _SERVERS.insert(0, ServerRow(tuple(prefixes), client))  # a later row wins, as a later metric row replaces one


def server_row(spec: Any) -> Optional[ServerRow]:
    """The server row whose prefix ``spec`` starts with.

    Args:
        spec: a spec, or anything a caller passed as one (not a string: no row).

    Returns:
        The row, or None when ``spec`` names a metric.
    """
    if not isinstance(spec, str):
        return None
    return next((row for row in _SERVERS if spec.startswith(row.prefixes)), None)


def _remote(row: ServerRow, url: str, options: Dict[str, Any]) -> Any:
    import inspect

    from nlgscore.core.runtime import RUNTIME_OPTIONS

    client = row.client_class()
    # The run-time settings are the server's: a caller's unset ones and its progress bar are no request.
    options = {k: v for k, v in options.items() if not (k in RUNTIME_OPTIONS and (v is None or k == "progress"))}
    takes = set(list(inspect.signature(client).parameters)[1:])  # after the URL
    others = sorted(set(options) - takes)
    if others:
        raise ArgumentError(
            f"options {others} cannot be given for the server at {url}: they are set when it starts (nlgscore serve SPEC ...)"
        )
    return client(url, **options)


register(
    "bertscore",
    "nlgscore.bertscore.scorer:BERTScorer",
    bertscore_spec,
    model_option="model_type",
    help="BERTScore (bert_score 0.3.13): bertscore[:MODEL_OR_FOLDER[:L<layer>]]",
    command="BERTScore (bert_score 0.3.13 semantics) of candidates against references",
)
register(
    "prism",
    "nlgscore.seq2seq.prism:PrismScorer",
    prism_spec,
    model_option="checkpoint",
    help="Prism: prism:ref|src[:CHECKPOINT][:LANG]",
    command="Prism (Thompson & Post 2020): paraphrase log-probabilities of candidates",
)
register(
    "bartscore",
    "nlgscore.seq2seq.bartscore:BARTScorer",
    bartscore_spec,
    model_option="checkpoint",
    help="BARTScore: bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]]",
    command="BARTScore (Yuan et al. 2021, the authors' numbers) of candidates",
)
register(
    "chrf",
    "nlgscore.strings.scorers:ChrFScorer",
    chrf_spec,
    help="chrF (sacreBLEU sentence chrF): chrf[:NAME=VALUE...] (e.g. chrf:beta=3; alias chrf++)",
)
register(
    "bleu",
    "nlgscore.strings.scorers:BLEUScorer",
    bleu_spec,
    help="BLEU (sacreBLEU): bleu[:13a|intl|zh|char|none|moses][:NAME=VALUE...] (alias sentbleu)",
)
register(
    "ter",
    "nlgscore.strings.scorers:TERScorer",
    ter_spec,
    help="TER (sacreBLEU, lower is better): ter[:NAME=VALUE...]",
)
register(
    "rouge",
    "nlgscore.strings.scorers:RougeScorer",
    rouge_spec,
    help="ROUGE F (rouge-score, Porter stemming): rouge[:1|2|L] (aliases rouge1, rouge2, rougeL)",
)
# A spec that is a URL names a running ``nlgscore serve``.
register_server(("http://", "https://"), "nlgscore.remote.client:RemoteScorer")
