"""The ``evaluate`` modules, one folder each (``<name>/<name>.py`` and its card README.md).

In a checkout ``evaluate.load("metrics/<name>")`` loads them from here; the wheel ships this
folder as the package ``nlgscore.evaluate_modules`` so that ``evaluate.load(
nlgscore.evaluate_module("<name>"))`` works from any folder. The input checks and the
feature formats the modules share live here (imported as ``nlgscore.evaluate_modules``), so a module loaded from the Hub uses
those of the installed package.
"""

from __future__ import annotations

from typing import Any, Optional


def reference_lists(references: Any, chosen: Optional[Any] = None) -> Any:
    """``references`` with each plain string made a one-item list when the lists form is in use.

    ``evaluate`` picks one feature format from the first entry and casts every entry to it, so a
    plain string among lists of references would be cast to a list of its characters. The lists
    form is in use when any entry is a list or tuple, or when an earlier batch chose it
    (``chosen``: the module's selected feature format). One-reference lists score as the string.

    >>> reference_lists([["a b", "c"], "d e"])
    [['a b', 'c'], ['d e']]
    >>> reference_lists(["a b", "d e"])
    ['a b', 'd e']
    """
    if references is None or isinstance(references, str) or not hasattr(references, "__iter__"):
        return references
    entries = list(references)
    as_lists = any(isinstance(entry, (list, tuple)) for entry in entries) or _uses_lists(chosen)
    return [[entry] if as_lists and isinstance(entry, str) else entry for entry in entries] if as_lists else references


def with_reference_lists(inputs: dict, chosen: Optional[Any] = None) -> dict:
    """The keyword inputs of ``add_batch`` (``references``) or ``add`` (``reference``), normalised by :func:`reference_lists`.

    >>> with_reference_lists({"predictions": ["p", "q"], "references": [["a", "b"], "c"]})["references"]
    [['a', 'b'], ['c']]
    """
    if inputs.get("references") is not None:
        inputs["references"] = reference_lists(inputs["references"], chosen)
    if inputs.get("reference") is not None:
        inputs["reference"] = reference_lists([inputs["reference"]], chosen)[0]
    return inputs


class ReferenceListsInputs:
    """Mixed before ``evaluate.Metric``: ``add``/``add_batch`` normalise references by :func:`with_reference_lists`.

    Not itself an ``evaluate`` module, so ``evaluate.load`` still finds the module's own class.
    """

    def add_batch(self, **inputs):
        """As ``evaluate``'s add_batch; a plain-string reference among lists counts as one reference."""
        super().add_batch(**with_reference_lists(inputs, self.selected_feature_format))

    def add(self, **inputs):
        """As ``evaluate``'s add; a plain-string reference after lists counts as one reference."""
        super().add(**with_reference_lists(inputs, self.selected_feature_format))


class OptionChecks:
    """Mixed before ``evaluate.Metric``: ``compute`` refuses an option the module's metric does not
    take with the message every door gives (:func:`nlgscore.core.options.unknown_options`), rather
    than Python's bare TypeError from ``_compute``. ``metric`` names the registry metric.

    Not itself an ``evaluate`` module, so ``evaluate.load`` still finds the module's own class.
    """

    metric = ""

    def compute(self, *, predictions=None, references=None, **kwargs):
        """As ``evaluate``'s compute, after checking every keyword against ``_compute``'s."""
        import inspect

        from nlgscore.core.options import unknown_options
        from nlgscore.registry import metric

        accepted = set(inspect.signature(self._compute).parameters)
        unknown = sorted(set(kwargs) - accepted - set(self._feature_names()))
        if unknown:
            raise unknown_options(metric(self.metric).scorer_class(), unknown)
        return super().compute(predictions=predictions, references=references, **kwargs)


def reference_features() -> list:
    """The two input formats of a module scoring predictions against references: lists of
    references (first: ``evaluate`` tries the formats in order) and one reference per prediction.

    >>> [sorted(features) for features in reference_features()]
    [['predictions', 'references'], ['predictions', 'references']]
    """
    import datasets

    text = datasets.Value("string", id="sequence")
    return [
        datasets.Features({"predictions": text, "references": datasets.Sequence(text, id="references")}),
        datasets.Features({"predictions": text, "references": text}),
    ]


def table_compute(
    name: str,
    predictions: Any,
    references: Any = None,
    sources: Any = None,
    spec: Optional[str] = None,
    doc_ids: Any = None,
    **options: Any,
) -> Any:
    """``(scorer, result)``: the registry scorer of ``spec`` (default: ``name``) with ``options``
    split by the metric's option table (:mod:`nlgscore.core.options`), as every module's
    ``_compute`` does: the options of a call (``batch_size``, ``progress``, BARTScore's ``prompt``)
    go to this call only, the others build the scorer (kept by :func:`nlgscore.registry.cached`),
    so that one call's settings never leak into the next. None is "not given".

    >>> scorer, result = table_compute("chrf", ["the cat sat"], ["the cat sat"], char_order=6, batch_size=2)
    >>> result.scores, scorer.runtime.batch_size is None
    ([100.0], True)
    """
    from nlgscore.core.options import option_rows, unknown_options
    from nlgscore.registry import cached, metric

    rows = {row.name: row for row in option_rows(metric(name).scorer_class())}
    unknown = [key for key in options if key not in rows]
    if unknown:
        raise unknown_options(metric(name).scorer_class(), unknown)
    given = {key: value for key, value in options.items() if value is not None}
    per_call = {key: value for key, value in given.items() if rows[key].call}
    scorer = cached(spec or name, **{key: value for key, value in given.items() if key not in per_call})
    if doc_ids is not None:  # the document of each prediction: data of the call, beside context=
        per_call["doc_ids"] = doc_ids
    return scorer, scorer.compute(predictions, references, sources, **per_call)


INPUTS = ("self", "predictions", "references", "sources")


def module_options(given: dict, **overrides: Any) -> dict:
    """The options of a module's ``_compute`` from its keywords (``given``: its ``locals()`` on
    entry): the inputs left out, bert_score's ``verbose`` read as ``progress``, ``overrides``
    applied. The modules list every option as a keyword (evaluate's module test refuses
    ``**kwargs``), and pass them on through this one rule.

    >>> module_options({"self": None, "predictions": [], "verbose": True, "idf": None}, idf=True)
    {'idf': True, 'progress': True}
    """
    options = {key: value for key, value in given.items() if key not in INPUTS and key != "verbose"}
    if given.get("verbose"):
        options["progress"] = True
    options.update(overrides)
    return options


def bartscore_inputs(given: dict, config_name: str) -> dict:
    """The BARTScore module's direction, variant and inputs from its keywords (``given``, with
    ``references``, ``sources`` and the ``use_references``/``use_sources`` that its ``compute``
    sets): a direction reads sources (``src``) or references (the others), never both, so giving
    the other is an error naming it; ``variant`` is the config's (the default config takes any).

    >>> bartscore_inputs({"references": ["r"], "sources": [""], "use_references": True, "use_sources": False,
    ...     "direction": None, "variant": None}, "default")["direction"]
    'f'
    """
    from nlgscore.extend import table

    use_references, use_sources = given.pop("use_references"), given.pop("use_sources")
    direction = given.get("direction") or ("src" if use_sources and not use_references else "f")
    reads, unused = ("sources", "references") if direction == "src" else ("references", "sources")
    if use_references if direction == "src" else use_sources:
        raise ValueError(
            f"bartscore (direction {direction!r}) does not read {unused}=; pass {reads}= (or a direction that reads {unused})"
        )
    configured = None if config_name == "default" else config_name
    variant = given.get("variant")
    if variant is not None and configured is not None and variant != configured:
        raise ValueError(f"variant={variant!r} contradicts the module's config {configured!r}: load that config")
    return {
        "direction": direction,
        "variant": variant or configured or table("bartscore_variants")["default"],
        "references": given["references"] if use_references else None,
        "sources": given["sources"] if use_sources else None,
    }


def registry_scores(name: str, predictions: Any, references: Any, verbose: bool = False, **options: Any) -> dict:
    """``{"scores", "score", "signature"}`` of the registry scorer ``name`` with ``options``
    (:func:`table_compute`): the ``_compute`` of the string-metric modules. ``verbose`` is
    bert_score's name of ``progress``. ``score`` is the system value: sacreBLEU's corpus statistic
    for chrF and BLEU (the mean of the sentence scores is beside it as ``sentence_mean``), the
    mean for ROUGE.

    >>> registry_scores("chrf", ["the cat sat"], ["the cat sat"])["scores"]
    [100.0]
    """
    if verbose:
        options["progress"] = True
    _, result = table_compute(name, predictions, references, **options)
    system = result.system
    out = {"scores": result.scores, "score": result.score, "signature": str(result.signature)}
    if "sentence_mean" in system:
        out["sentence_mean"] = system["sentence_mean"]
    return out


def config_inputs(module: str, config: str, needs: str, predictions: Any, **given: Any) -> dict:
    """``{needs: given[needs]}`` for ``evaluate``'s compute, after :func:`require_inputs` checked them.

    Called without any input (the data came by ``add``/``add_batch``) it checks nothing.

    >>> config_inputs("prism", "src", "sources", ["p"], references=None, sources=["s"])
    {'sources': ['s']}
    """
    if predictions is not None or any(value is not None for value in given.values()):
        require_inputs(
            module,
            config,
            {"predictions": predictions, needs: given[needs]},
            {k: v for k, v in given.items() if k != needs},
        )
    return {needs: given[needs]}


# bert_score 0.3.13 as released on PyPI reports __version__ "0.3.12" and writes that into its hash.
BERT_SCORE_HASH_VERSION = "0.3.12"


def bert_score_hashcode(
    model: str,
    num_layers: int,
    idf: bool,
    rescale_with_baseline: bool,
    use_custom_baseline: bool,
    use_fast_tokenizer: bool,
) -> str:
    """The ``hashcode`` bert_score 0.3.13's ``utils.get_hash`` gives for these settings.

    The Hub's ``bertscore`` module returns that hash, and code written for it parses it, so the
    ``bertscore`` module standing in for it returns the same string (the full record of what
    nlgscore ran is its ``signature``). ``hug_trans`` is the installed transformers version.

    Args:
        model: The model name (bert_score's ``model_type``).
        num_layers: The layer scored.
        idf: Whether idf weights were used.
        rescale_with_baseline: Whether scores were rescaled.
        use_custom_baseline: Whether the baseline came from elsewhere than the shipped copies.
        use_fast_tokenizer: The argument of that name, as given (it changes no number here).

    Returns:
        ``<model>_L<layer>_(no-)idf_version=0.3.12(hug_trans=<v>)`` with bert_score's suffixes
        ``-rescaled`` (or ``-custom-rescaled``) and ``_fast-tokenizer``.

    Example:
        >>> bert_score_hashcode("roberta-large", 17, False, True, False, False).split("(hug_trans=")[0]
        'roberta-large_L17_no-idf_version=0.3.12'
    """
    import transformers

    code = f"{model}_L{num_layers}{'_idf' if idf else '_no-idf'}_version={BERT_SCORE_HASH_VERSION}"
    code += f"(hug_trans={transformers.__version__})"
    if rescale_with_baseline:
        code += "-custom-rescaled" if use_custom_baseline else "-rescaled"
    return code + ("_fast-tokenizer" if use_fast_tokenizer else "")


def _uses_lists(chosen: Optional[Any]) -> bool:
    feature = None if chosen is None else chosen.get("references")
    return feature is not None and type(feature).__name__ in ("Sequence", "List", "LargeList")


def require_inputs(module: str, config: str, needs: dict, unused: Optional[dict] = None) -> None:
    """Raise ValueError naming the input ``config`` of ``module`` needs, before ``evaluate`` casts None.

    ``needs``: input name -> value that must be given; ``unused``: input name -> value that this
    config does not read (giving it is a mistake, not something to ignore silently).

    >>> require_inputs("prism", "ref", {"predictions": ["a"], "references": None})
    Traceback (most recent call last):
    ...
    ValueError: prism (config 'ref') needs references= (a list with one entry per prediction)
    >>> require_inputs("prism", "ref", {"predictions": ["a"], "references": ["b"]}, {"sources": ["c"]})
    Traceback (most recent call last):
    ...
    ValueError: prism (config 'ref') does not read sources=; pass references= (or load the config that reads sources)
    """
    for name, value in (unused or {}).items():
        if value is not None:
            wanted = ", ".join(f"{n}=" for n in needs if n != "predictions")
            raise ValueError(
                f"{module} (config {config!r}) does not read {name}=; pass {wanted} (or load the config that reads {name})"
            )
    for name, value in needs.items():
        if value is None:
            what = "a list of texts" if name == "predictions" else "a list with one entry per prediction"
            raise ValueError(f"{module} (config {config!r}) needs {name}= ({what})")
