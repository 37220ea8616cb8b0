"""verl's custom reward function, scoring with nlgscore on a server (``nlgscore serve``) or in-process.

verl calls a custom reward function once per sample (its reward loop's ``run_single``), many at a
time. Pointed at one ``nlgscore serve`` process, the calls of every rollout worker are batched by
the server and the model is loaded once, not in every worker. The interface followed is verl
0.9.1's (``verl/trainer/ppo/reward.py`` ``get_custom_reward_fn``; the reward loop's managers,
``verl/experimental/reward_loop/reward_manager/``: naive, dapo, gdpo, limited, remote, all per
sample: verl 0.9.1 has no batch reward manager, ``reward_manager.name=batch`` is unknown there):

* :func:`compute_score` — ``(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> float``;
  verl runs a plain function in a thread pool.
* :func:`compute_score_async` — the same as a coroutine; verl's reward loop awaits a coroutine
  function (``inspect.iscoroutinefunction``) instead of using a thread.
* :func:`compute_score_batch` — ``(data_sources, solution_strs, ground_truths, extra_infos, **kwargs) -> list[float]``:
  one request for a whole batch, for a loop of your own (no verl 0.9.1 manager calls it).

Configure verl with ``reward.custom_reward_function.path=pkg://nlgscore.integrations.verl`` and
``name=compute_score_async`` (or ``compute_score``); verl merges
``custom_reward_function.reward_kwargs`` into every call, so the scorer is chosen by, first found:

1. ``url=`` (a server, ``"http://127.0.0.1:8000"``) or ``spec=`` (a local scorer,
   ``"bertscore:minilm"``, with ``options=`` for :func:`nlgscore.registry.build`) in reward_kwargs;
2. ``extra_info["nlgscore_url"]`` or ``extra_info["nlgscore_spec"]`` in the data;
3. the environment: ``NLGSCORE_URL``, else ``NLGSCORE_SPEC``.

The prediction is ``solution_str``; the references are ``ground_truth`` (one string or a list:
several references, aggregated by the metric's own rule); a source-based metric (``prism:src``)
reads ``extra_info[source_key]`` (``source_key="question"`` in reward_kwargs). ``column=`` picks
a score column other than the primary one. Other keywords verl passes (``reward_router_address``
...) are ignored. A local spec is scored through the scorer's micro-batcher, so concurrent calls
of one process are merged too. Everything here is a module-level function: verl's remote reward
manager pickles the function into its Ray workers.

>>> extra = {"nlgscore_spec": "bertscore:minilm:L2"}
>>> round(compute_score("chat", "It is cold today.", "It is cold today.", extra), 4)
1.0
>>> compute_score_batch(["chat"] * 2, ["It is cold.", "Stocks fell."], ["It is cold."] * 2, [extra] * 2)[1] < 0.9
True
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from nlgscore import envs
from nlgscore.core.inputs import check_references, check_texts
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.rewards import column_values
from nlgscore.integrations.trl import SERVER_URL
from nlgscore.registry import cached

ENV_URL, ENV_SPEC = envs.URL.name, envs.SPEC.name
INFO_URL, INFO_SPEC = "nlgscore_url", "nlgscore_spec"


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Mapping[str, Any]] = None,
    **kwargs: Any,
) -> float:
    """The reward of one sample: verl's plain custom reward function (see the module docstring).

    Args:
        data_source: the sample's data source (not read).
        solution_str: the model's answer, the prediction.
        ground_truth: the reference, a string or a list of references.
        extra_info: the sample's extra info: ``nlgscore_url``/``nlgscore_spec`` may name the scorer,
            and ``extra_info[source_key]`` is a source-based metric's source.
        **kwargs: verl's ``reward_kwargs`` and what else it passes: ``url``/``spec`` (with
            ``options``) name the scorer, ``column`` the score column, ``source_key`` the
            ``extra_info`` key of a source; other keywords are ignored.

    Returns:
        The reward.

    Raises:
        ArgumentError: no scorer is named (by ``kwargs``, ``extra_info`` or the environment), or an
            input the metric refuses.
        ArgumentTypeError: ``extra_info`` is not a dict, ``options`` not a dict, or a scorer is
            named by something else than a string.
    """
    (scorer, remote), predictions, inputs = _one(solution_str, ground_truth, extra_info, kwargs)
    return column_values(_sync_call(scorer, remote, predictions, inputs), kwargs.get("column"))[0]


async def compute_score_async(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Mapping[str, Any]] = None,
    **kwargs: Any,
) -> float:
    """`compute_score` as a coroutine: verl's reward loop awaits it, many samples at once.

    Args:
        data_source: the sample's data source (not read).
        solution_str: the model's answer, the prediction.
        ground_truth: the reference, a string or a list of references.
        extra_info: the sample's extra info, as `compute_score` reads it.
        **kwargs: verl's ``reward_kwargs`` and what else it passes: ``url``/``spec`` (with
            ``options``) name the scorer, ``column`` the score column, ``source_key`` the
            ``extra_info`` key of a source; other keywords are ignored.

    Returns:
        The reward.

    Raises:
        ArgumentError: as `compute_score`.
    """
    (scorer, _), predictions, inputs = _one(solution_str, ground_truth, extra_info, kwargs)
    # a local scorer's acompute goes through its micro-batcher; a RemoteScorer's is an async request
    return column_values(await scorer.acompute(predictions, **inputs), kwargs.get("column"))[0]


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Optional[Sequence[Optional[Mapping[str, Any]]]] = None,
    **kwargs: Any,
) -> List[float]:
    """The rewards of a batch, in order, from one scoring call (verl 0.9.1's managers call per sample).

    Every sample must name the same scorer (the reward_kwargs or the environment usually do).

    Args:
        data_sources: each sample's data source (not read; one per sample).
        solution_strs: the model's answers, the predictions.
        ground_truths: each sample's reference, a string or a list of references.
        extra_infos: each sample's extra info, as `compute_score` reads it (None: none).
        **kwargs: verl's ``reward_kwargs`` and what else it passes: ``url``/``spec`` (with
            ``options``) name the scorer, ``column`` the score column, ``source_key`` the
            ``extra_info`` key of a source; other keywords are ignored.

    Returns:
        One reward per sample (none for an empty batch).

    Raises:
        ArgumentError: the sequences differ in length, the samples name different scorers, or as
            `compute_score`.
    """
    solution_strs = check_texts("solution_strs", list(solution_strs))
    n = len(solution_strs)
    ground_truths, infos = list(ground_truths), list(extra_infos) if extra_infos is not None else [None] * n
    for name, values in (("data_sources", data_sources), ("ground_truths", ground_truths), ("extra_infos", infos)):
        if len(values) != n:
            raise ArgumentError(f"{name} has {len(values)} items for {n} solution_strs")
    if not n:
        return []
    targets = {_target(info, kwargs) for info in infos}
    if len(targets) > 1:
        raise ArgumentError(f"the extra_infos of one batch name different scorers: {sorted(map(str, targets))}")
    scorer, remote = _scorer(targets.pop(), kwargs)
    inputs = _inputs(scorer, ground_truths, infos, kwargs.get("source_key"), n)
    return column_values(_sync_call(scorer, remote, solution_strs, inputs), kwargs.get("column"))


def _one(
    solution_str: Any, ground_truth: Any, extra_info: Any, kwargs: Dict[str, Any]
) -> Tuple[Tuple[Any, bool], List[str], Dict[str, Any]]:
    """``(scorer, remote)``, the prediction list and the inputs of one sample."""
    scorer, remote = _scorer(_target(extra_info, kwargs), kwargs)
    predictions = check_texts("solution_str", [solution_str])
    return (scorer, remote), predictions, _inputs(scorer, [ground_truth], [extra_info], kwargs.get("source_key"), 1)


def _target(extra_info: Any, kwargs: Mapping[str, Any]) -> Tuple[str, str]:
    """``("url" | "spec", value)``: where this sample is scored (the order of the module docstring)."""
    if extra_info is not None and not isinstance(extra_info, Mapping):
        raise ArgumentTypeError(f"extra_info must be a dict or None, got {type(extra_info).__name__}")
    info = extra_info or {}
    for kind, value, where in (
        ("url", kwargs.get("url"), "url="),
        ("spec", kwargs.get("spec"), "spec="),
        ("url", info.get(INFO_URL), f"extra_info[{INFO_URL!r}]"),
        ("spec", info.get(INFO_SPEC), f"extra_info[{INFO_SPEC!r}]"),
        ("url", envs.URL.get(), ENV_URL),
        ("spec", envs.SPEC.get(), ENV_SPEC),
    ):
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise ArgumentTypeError(f"{where} must be a string, got {type(value).__name__}")
        return kind, value
    raise ArgumentError(
        f"no scorer to reward with: pass url= (a `nlgscore serve` address) or spec= in verl's custom_reward_function.reward_kwargs, "
        f"extra_info[{INFO_URL!r}] / [{INFO_SPEC!r}], or set {ENV_URL} / {ENV_SPEC}"
    )


def _scorer(target: Tuple[str, str], kwargs: Mapping[str, Any]) -> Tuple[Any, bool]:
    """The (per-process cached) scorer and whether it is remote: a RemoteScorer for a URL, a local one for a spec."""
    kind, value = target
    options = kwargs.get("options") or {}
    if not isinstance(options, Mapping):
        raise ArgumentTypeError(f"options must be a dict of scorer options, got {type(options).__name__}")
    if kind == "url":
        if not value.startswith(SERVER_URL):
            raise ArgumentError(f"url must start with http:// or https://, got {value!r}")
        return cached(value), True
    if value.startswith(SERVER_URL):
        raise ArgumentError(f"spec names a server ({value!r}): pass it as url= (or {INFO_URL} / {ENV_URL})")
    return cached(value, **options), False


def _inputs(scorer: ScorerLike, ground_truths: List[Any], infos: List[Any], source_key: Any, n: int) -> Dict[str, Any]:
    """The references (the ground truths) and sources (``extra_info[source_key]``) the metric needs."""
    inputs: Dict[str, Any] = {}
    needs = tuple(scorer.needs)
    if "references" in needs:
        references = [
            gt.tolist() if hasattr(gt, "tolist") else gt for gt in ground_truths
        ]  # a parquet list column arrives as a numpy array
        inputs["references"] = check_references("ground_truth", references, n)
    if "sources" in needs:
        if not isinstance(source_key, str) or not source_key:
            raise ArgumentError(
                "this metric scores against sources: "
                "pass source_key= (the extra_info key holding the source, e.g. 'question') in reward_kwargs"
            )
        sources = []
        for i, info in enumerate(infos):
            if not isinstance(info, Mapping) or source_key not in info:
                raise ArgumentError(f"extra_info of sample {i} has no {source_key!r} (source_key={source_key!r})")
            sources.append(info[source_key])
        inputs["sources"] = check_texts(f"extra_info[{source_key!r}]", sources)
    return inputs


def _sync_call(scorer: ScorerLike, remote: bool, predictions: List[str], inputs: Dict[str, Any]) -> Any:
    """A blocking call: a local scorer through its micro-batcher (verl calls from many threads at
    once; the batcher merges them and keeps one model call at a time), a remote one directly."""
    if not remote:
        from nlgscore.scheduler.microbatch import shared_batcher

        return shared_batcher(scorer).compute(predictions, **inputs)
    return scorer.compute(predictions, **inputs)
