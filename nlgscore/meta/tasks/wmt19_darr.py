"""WMT19 daRR on the generic runner: Kendall's tau-like per language pair (``wmt-<lp>.jsonl``).

Each language pair's daRR file is one ``EvalSet`` whose two "systems" are the better and the worse
translation of each pair (items = pairs; the human level ranks ``better`` above ``worse``), so the
daRR pairs derived from it are the file's own. Rows: ``tau`` (WMT19 rule: a metric tie is
discordant; ``ties="exclude"`` leaves tied pairs out) with bootstrap intervals over pairs, and
``metric-ties``; notes: paired bootstrap between metrics.

>>> import json, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pair = {"id": 0, "lp": "xx-en", "src": "s", "ref": "the cat sat",
...         "better": {"system": "A", "text": "the cat sat"}, "worse": {"system": "B", "text": "a dog"}}
>>> _ = (folder / "wmt-xx-en.jsonl").write_text(json.dumps(pair) + "\\n")
>>> table = wmt19(folder, metrics=["chrf"], bootstrap=0)
>>> [(r.dataset, r.measure, r.value) for r in table.rows]
[('xx-en', 'tau', 1.0), ('xx-en', 'metric-ties', 0.0)]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError
from nlgscore.meta.data import loaders, precomputed
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.tasks.generic import BARTSCORE_SEGMENT, Scores, TaskDescriptor, run
from nlgscore.meta.tasks.measures import DARR_MEASURES, darr_outcome_inputs
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import (
    MetaTable,
    Run,
    check_names,
    keep_finished,
    sources_of,
)

PathLike = Union[str, "os.PathLike[str]"]


def language_pairs(data_dir: Optional[PathLike], pairs: Optional[Sequence[str]]) -> List[str]:
    """``pairs``, else every ``wmt-<lp>.jsonl`` in the data folder."""
    if pairs:
        return check_names(pairs, "pairs")
    folder = loaders.data_file("", data_dir)
    lps = sorted(p.name[len("wmt-") : -len(".jsonl")] for p in folder.glob("wmt-*.jsonl"))
    if not lps:
        raise FileNotFoundError(f"no wmt-<lp>.jsonl daRR files in {folder}")
    return lps


def load_darr_set(
    data: Optional[PathLike] = None, limit: Optional[int] = None, lp: str = "", n_lps: int = 1
) -> EvalSet:
    """The first ``limit`` daRR pairs of ``wmt-<lp>.jsonl`` as an ``EvalSet`` (systems: better, worse)."""
    full = loaders.load_darr(loaders.darr_path(lp, data))
    darr = full.head(limit)
    n = len(darr)
    evalset = EvalSet(
        lp,
        ["better", "worse"],
        [darr.better, darr.worse],
        [darr.ref],
        darr.src,
        {"segment": np.array([np.ones(n), np.zeros(n)])},
        lines=len(full),
    )
    evalset.derived("darr", lambda: (np.arange(n), np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)))
    evalset.derived("file", lambda: (full.ids, n_lps))
    evalset.notes.append(f"{lp} ({n} daRR pairs):")
    return evalset


def _per_lp(path: Any, lp: str, n_lps: int) -> str:
    text = str(path)
    if "{lp}" in text:
        return text.replace("{lp}", lp)
    if n_lps > 1:
        raise ArgumentError(f"score file {text} serves several language pairs: name them with {{lp}} in the path")
    return text


def read_scores(data: EvalSet, name: str, path: Any) -> Scores:
    """JSONL ``{"id", "better", "worse"}`` per pair of the data file (``{lp}`` in the path for several pairs)."""
    ids, n_lps = data.derived("file", lambda: ([], 1))
    file = _per_lp(path, data.name, n_lps)
    better, worse = (a[: data.items] for a in precomputed.read_darr_scores(file, ids))
    seg = np.array([better, worse], dtype=float)
    return seg, seg.mean(axis=1), f"scores:{Path(file).name}"


def significance(
    data: EvalSet,
    kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]],
    table: MetaTable,
    task: Run,
    permutations: int,
) -> List[str]:
    """Paired bootstrap between every two metrics' tau: who significantly beats whom."""
    return task.beaten(
        {name: found[0] for name, (seg, system) in kept.items() if (found := darr_outcome_inputs(data, seg, system))},
        task.tau,
        "segment tau",
    )


WMT19_TASK = TaskDescriptor(
    "wmt19",
    load_darr_set,
    DARR_MEASURES,
    read_scores,
    BARTSCORE_SEGMENT,
    significance=significance,
    settings=("ties",),
    bootstrap_items="daRR pair(s)",
    system_level=False,
    progress="wmt19 {data}: {metric} ({items} pairs)",
)


# the run settings wmt19 reads (``RunOptions`` fields): every task's and these
WMT19_READS = EVERY_TASK + ("bootstrap",)


def wmt19(
    data_dir: Optional[PathLike] = None,
    pairs: Optional[Sequence[str]] = None,
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, PathLike]] = None,
    *,
    ties: str = "discordant",
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> MetaTable:
    """WMT19 daRR Kendall's tau-like per language pair (``wmt-<lp>.jsonl`` in ``data_dir``).

    ``metrics`` are specs; ``options.load_options`` go to ``nlgscore.load`` for model-based ones.

    ``scores`` maps a name to a JSONL file of ``{"id", "better", "worse"}`` (``{lp}`` in the path
    when several pairs are evaluated). Rows: ``tau`` (WMT19 rule: a metric tie is discordant;
    ``ties="exclude"`` leaves tied pairs out) and ``metric-ties`` (share of pairs the metric ties).
    ``options`` (or its fields as keywords, ``settings``; ``bootstrap`` 1000 by default then):
    ``lower_is_better``, metric names whose scores are negated first (error rates: a lower score
    for the better translation is then concordant). The generic runner over ``WMT19_TASK``, once
    per language pair, into one table.
    """
    opts = RunOptions.given(options, settings, "wmt19", WMT19_READS, bootstrap=1000).with_scorers()
    task, sources = opts.run(ties), sources_of(metrics, scores)
    lps = language_pairs(data_dir, pairs)
    table = MetaTable("wmt19")
    with keep_finished(table, task, sources):
        for lp in lps:
            run(
                WMT19_TASK,
                metrics,
                scores,
                data=data_dir,
                options=opts,
                into=table,
                task=task,
                ties=ties,
                lp=lp,
                n_lps=len(lps),
            )
    return table
