"""Data-set descriptors: what each meta-evaluation task reads, measures and takes as options.

A ``MetaCommand`` (the ``nlgscore meta`` subcommand of a data set, after mt-metrics-eval's ``Task``
over ``meta_info``; the runner's side is the ``TaskDescriptor``) names the data, the human judgments,
the standard reference, the levels and measures, the task function that returns the ``MetaTable``,
and the task's own options. ``nlgscore meta`` builds one subcommand per descriptor
from this table (no per-task code in the command line); a new data set is a new row.

>>> sorted(DESCRIPTORS)
['bartscore-bench', 'mqm', 'summeval', 'wmt16', 'wmt17', 'wmt18', 'wmt19', 'wmt21', 'wmt24', 'wmt25']
>>> DESCRIPTORS["mqm"].measures[:3]
('system pearson', 'system accuracy', 'system spa')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

from nlgscore.meta.stats.resample import DEFAULT_SEED
from nlgscore.meta.stats.subsets import AUTHORS_SEED
from nlgscore.meta.stats.wmt import TIES_RULES
from nlgscore.meta.tasks import human_scores as _mqm
from nlgscore.meta.tasks import select_model as _select
from nlgscore.meta.tasks import summeval_docs as _summeval
from nlgscore.meta.tasks import wmt16_18 as _wmt16_18
from nlgscore.meta.tasks import wmt19_darr as _wmt19
from nlgscore.meta.tasks import wmt21_da as _wmt21
from nlgscore.meta.tasks import wmt24_25 as _wmt24_25
from nlgscore.meta.tasks.bartscore_bench import REFS_RULES as BENCH_REFS
from nlgscore.meta.tasks.bartscore_bench import bartscore_bench
from nlgscore.meta.tasks.generic import TaskDescriptor, run


@dataclass(frozen=True)
class Option:
    """One task option: its command-line flags, the task keyword it fills and argparse settings."""

    flags: Tuple[str, ...]
    param: str
    help: str
    settings: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MetaCommand:
    """A meta-evaluation data set and how it is evaluated."""

    name: str
    help: str
    description: str
    task: Callable[..., Any]
    files: str  # what --data must hold
    data_param: str  # the task keyword --data fills
    human: str
    reference: str
    levels: Tuple[str, ...]
    measures: Tuple[str, ...]
    scores_help: str
    resampling: str = "bootstrap"  # "bootstrap" (CIs, paired bootstrap) or "permutations" (WMT significance)
    options: Tuple[Option, ...] = ()
    systems: bool = True  # scores are per system and item: --export-scores also writes mt-metrics-eval files
    documents: bool = False  # the data set has document ids: the task takes ``context`` (--context K)
    seed: int = DEFAULT_SEED  # the default of --seed (the BARTScore benchmark: its authors' 666)
    top_k: bool = False  # systems with human system scores: the task takes ``top_k`` (--top-k K)
    hybrids: bool = False  # systems x segments with human segment scores: ``nlgscore meta select-model`` runs it


def from_protocol(
    protocol: TaskDescriptor,
    help: str,
    description: str,
    files: str,
    human: str,
    reference: str,
    scores_help: str = "mt-metrics-eval file <system><TAB><score> (a .seg.score file, its .sys.score "
    "sibling used when present; or SEG,SYS)",
    resampling: Optional[str] = None,
    options: Tuple[Option, ...] = (),
    top_k: bool = False,
    hybrids: bool = False,
) -> MetaCommand:
    """The ``nlgscore meta`` subcommand of a data set the generic runner evaluates: ``--data`` is
    given to ``protocol.load``, the levels and measures come from its ``Measure`` rows.

    ``resampling`` (the command's flag: ``--bootstrap`` or ``--permutations``) is derived from the
    measures when not given: ``"bootstrap"`` when any measure has bootstrap intervals, else
    ``"permutations"`` (the significance tests of the WMT22+ protocol).

    >>> from nlgscore.meta.tasks.human_scores import MQM_TASK
    >>> row = from_protocol(MQM_TASK, "h", "d", "f", "MQM", "A")
    >>> row.measures[-1], row.resampling
    ('segment acc-t-epsilon', 'permutations')
    """
    if resampling is None:
        resampling = "bootstrap" if any(m.resampling == "bootstrap" for m in protocol.measures) else "permutations"
    levels = tuple(dict.fromkeys(m.level for m in protocol.measures))
    return MetaCommand(
        protocol.name,
        help,
        description,
        functools.partial(run, protocol),
        files,
        "data",
        human,
        reference,
        levels,
        tuple(f"{m.level} {m.name}" for m in protocol.measures),
        scores_help,
        resampling=resampling,
        options=options,
        top_k=top_k,
        hybrids=hybrids,
    )


_TIES = Option(
    ("--ties",),
    "ties",
    "a metric tie on a daRR pair: 'discordant' (WMT17-19 rule, default) or 'exclude' "
    "(tied pairs left out); the share of ties is reported either way",
    dict(choices=TIES_RULES, default="discordant"),
)
_INCLUDE_HUMAN = Option(
    ("--include-human",),
    "include_human",
    "also evaluate human translations as systems (default: MT systems only; the reference in use never is one)",
    dict(action="store_true"),
)
_REPEATS = Option(
    ("--average-repeats",),
    "repeats",
    "average repeated judgments of one (system, segment) (several raters) instead of refusing the file",
    dict(action="store_const", const="average", default="error"),
)


def _wmt_command(test_set: str, task: Callable[..., Any], year: str) -> MetaCommand:
    """The ``nlgscore meta wmt24`` / ``wmt25`` subcommand: mt-metrics-eval's task set of that year."""
    return MetaCommand(
        test_set,
        f"{year}: SPA and acc-eq per pair, avg-corr and average rank (mt-metrics-eval's {year} tasks)",
        f"The {year} metrics task as mt-metrics-eval runs it: per language pair, system-level soft pairwise "
        "accuracy and segment-level acc-eq (tie-calibrated, item-grouped) with significance clusters from "
        "permutation tests, Pairwise Difference Pearson; over the pairs, avg-corr (each task mapped to [0, 1], "
        "equal weights, clusters from the averaged draws) and the average rank. --data is WMT's folder (txt/ "
        "and humeval/ ESA CSVs or MQM TSVs), mt-metrics-eval's folder (<test set>/ with human-scores/), or "
        "WMT25's paragraph JSONL.",
        task,
        "txt/ + humeval/, or mt-metrics-eval's <test set>/ folder, or a paragraph JSONL file",
        "data",
        "ESA or MQM (mt-metrics-eval's standard gold per pair, or --gold)",
        "the pair's standard reference (or --ref)",
        ("system", "segment"),
        tuple(f"{m.level} {m.name}" for m in _wmt24_25.WMT_MEASURES),
        "mt-metrics-eval .seg.score file <system><TAB><score> (one line per line of the test set, or per scored "
        "item as --export-scores writes them; {lp} in the path for several pairs)",
        resampling="permutations",
        documents=True,
        top_k=True,
        hybrids=True,
        options=(
            Option(
                ("--lp",),
                "pairs",
                "language pair as the data spell it (en-cs, en-cs_CZ; repeatable; default: every pair of the data)",
                dict(action="append", default=None),
            ),
            Option(
                ("--gold",), "gold", "human scores to use (default: mt-metrics-eval's standard: esa, mqm, esa-human1)"
            ),
            Option(("--ref",), "reference", "reference to use (default: the pair's standard one, e.g. refA)"),
            Option(
                ("--include-human",),
                "include_human",
                "also evaluate rated human translations as systems (the reference in use never is one)",
                dict(action="store_true"),
            ),
            Option(
                ("--all-lines",),
                "all_lines",
                "score every line of the test set, not only the rated ones "
                "(the measures ignore unrated lines; this only makes --export-scores files complete)",
                dict(action="store_true"),
            ),
            Option(
                ("--export-mtme",),
                "export_mtme",
                "write the scored metrics' segment scores to DIR/<LP>/ as mt-metrics-eval files",
                dict(type=Path, metavar="DIR"),
            ),
        ),
    )


def _package_command(year: str) -> MetaCommand:
    """The ``nlgscore meta wmt16`` / ``wmt17`` / ``wmt18`` subcommand: WMT's metrics-task package of that year."""
    return MetaCommand(
        year,
        f"{year.upper()} metrics-task package: daRR tau, DA segment/system Pearson, 10K hybrids, Williams",
        f"{year.upper()} as the WMT18 metrics task runs it, on WMT's metrics-task package: per language pair, "
        "daRR Kendall's tau-like over RR-seglevel.csv (a metric tie discordant) with bootstrap intervals, "
        "Pearson with DA-seglevel.csv and with DA-syslevel.csv's Ave z, Pearson over 10,000 hybrid systems, "
        "paired bootstrap and Williams tests between metrics. --baselines adds the report's baselines "
        "through sacreBLEU (sentBLEU, BLEU intl, chrF beta 3, chrF+, TER).",
        functools.partial(_wmt16_18.wmt_package, year),
        "manual-evaluation/{RR-seglevel,DA-seglevel,DA-syslevel}.csv and txt/{sources,references,system-outputs}/",
        "data",
        "daRR (RR-seglevel.csv), DA (DA-seglevel.csv, DA-syslevel.csv)",
        "the pair's reference (txt/references/)",
        ("segment", "system", "hybrid"),
        tuple(f"{m.level} {m.name}" for m in _wmt16_18.WMT_PACKAGE_MEASURES),
        "WMT's final-metric-scores .seg.score file (METRIC LP DATA SYSTEM SID SCORE; the rows of METRIC NAME, "
        "or of the file's one metric), or SEG,SYS with its .sys.score",
        options=(
            Option(
                ("--lp",),
                "pairs",
                "language pair, e.g. de-en (repeatable; default: every pair with system outputs)",
                dict(action="append", default=None),
            ),
            _TIES,
            Option(
                ("--hybrids",),
                "hybrids",
                f"hybrid systems of the hybrid rows (default: {_select.HYBRIDS}, as WMT18)",
                dict(type=int, default=_select.HYBRIDS, metavar="N"),
            ),
            Option(
                ("--official",),
                "official",
                "evaluate the metric NAME of the package's final-metric-scores/ (repeatable)",
                dict(action="append", default=None, metavar="NAME"),
            ),
            Option(
                ("--baselines",),
                "baselines",
                "also score the WMT18 baselines through sacreBLEU: " + ", ".join(_wmt16_18.WMT18_BASELINES.values()),
                dict(action="store_true"),
            ),
        ),
        top_k=True,
        hybrids=True,
    )


DESCRIPTORS: Dict[str, MetaCommand] = {
    d.name: d
    for d in (
        MetaCommand(
            "wmt19",
            "WMT19 daRR pairs (BARTScore/COMET version): Kendall's tau-like",
            "WMT19 daRR: per language pair, Kendall's tau-like over relative-ranking pairs built from DA "
            "(wmt-<lp>.jsonl in --data), with bootstrap CIs.",
            _wmt19.wmt19,
            "wmt-<lp>.jsonl",
            "data_dir",
            "daRR",
            "the pair's reference",
            ("segment",),
            ("segment tau", "segment metric-ties"),
            'JSONL {"id": <pair id>, "better": x, "worse": x}; {lp} in FILE for several pairs',
            options=(
                Option(
                    ("--lp",),
                    "pairs",
                    "language pair, e.g. kk-en (repeatable; default: every wmt-*.jsonl in --data)",
                    dict(action="append", default=None),
                ),
                _TIES,
            ),
            systems=False,
        ),
        MetaCommand(
            "wmt21",
            "WMT21 DA (any to-English pair): daRR tau, segment and system Pearson",
            "WMT21 DA of a to-English pair: daRR tau built from raw DA, segment Pearson (raw and z) and "
            "system Pearson against the official z scores, with bootstrap CIs and Williams tests.",
            _wmt21.wmt21,
            "wmt21-<lp>/ with src.<xx>, ref.A.en, hyp.<system>.en, da-seg-scores.csv, da-sys-scores.csv",
            "data_dir",
            "DA",
            "A",
            ("segment", "system"),
            ("segment tau", "segment metric-ties", "segment pearson-raw", "segment pearson-z", "system pearson-z"),
            "TSV system<TAB>line<TAB>score, optionally ',SYS.tsv' with system<TAB>score rows",
            options=(
                Option(
                    ("--lp",),
                    "lp",
                    "language pair: the folder is <data>/wmt21-<lp> unless --data is the folder "
                    "itself (default: from its src.<xx> file, else de-en)",
                ),
                Option(("--reference",), "reference", "reference file ref.<X>.en (default: A)", dict(default="A")),
                Option(
                    ("--include-human",),
                    "include_human",
                    "also evaluate the HUMAN translation (ref.B) as a system (default: MT systems only)",
                    dict(action="store_true"),
                ),
                _TIES,
                _REPEATS,
            ),
            top_k=True,
            hybrids=True,
        ),
        MetaCommand(
            "summeval",
            "SummEval: summary-level Spearman/Kendall per aspect",
            "SummEval: per aspect, summary-level Spearman and Kendall (per document across systems, "
            "averaged; BARTScore protocol) with bootstrap CIs, and system-level correlations.",
            _summeval.summeval,
            "sum-summeval.jsonl",
            "data_dir",
            "summary ratings",
            "every reference (combined by --refs)",
            ("summary", "system"),
            ("summary spearman", "summary kendall", "system pearson", "system spearman", "system kendall"),
            'JSONL {"id": <document id>, "system": <name>, "score": x}',
            options=(
                Option(
                    ("--aspect",),
                    "aspects",
                    "coherence, consistency, fluency or relevance (repeatable; default: all)",
                    dict(action="append", default=None),
                ),
                Option(
                    ("--refs",),
                    "refs",
                    "combine scores against the several references (default: max)",
                    dict(choices=("max", "mean", "first"), default="max"),
                ),
            ),
        ),
        from_protocol(
            _mqm.MQM_TASK,
            "a human-scores folder (MQM or DA): WMT22-25 measures (SPA, acc-t, pairwise accuracy ...)",
            "A folder of src.<l>, ref.<X>.<l>, hyp.<SYSTEM>.<l> and <kind>-seg-scores.tsv (MQM, DA ...): "
            "system Pearson, pairwise accuracy and soft pairwise accuracy; segment Pearson and Kendall "
            "(no grouping and item-grouped) and tie-calibrated acc-t, as mt-metrics-eval computes them; "
            "significance clusters from permutation tests; a WMT24-style summary (SPA, acc-t, average).",
            "src.<l>, ref.<X>.<l>, hyp.<SYSTEM>.<l>, <kind>-seg-scores.tsv [, <kind>-sys-scores.tsv]",
            "MQM or DA segment scores",
            "--ref (default: the only ref.<X>, else A)",
            options=(
                Option(("--ref",), "reference", "reference X of ref.<X>.<l> (default: the only one, else A)"),
                Option(("--kind",), "kind", "which <kind>-seg-scores.tsv (default: the only one)"),
                _INCLUDE_HUMAN,
                _REPEATS,
                Option(
                    ("--export-mtme",),
                    "export_mtme",
                    "write the scored metrics' segment and system scores to DIR as mt-metrics-eval files",
                    dict(type=Path, metavar="DIR"),
                ),
            ),
            top_k=True,
            hybrids=True,
        ),
        _package_command("wmt16"),
        _package_command("wmt17"),
        _package_command("wmt18"),
        _wmt_command("wmt24", _wmt24_25.wmt24, "WMT24"),
        _wmt_command("wmt25", _wmt24_25.wmt25, "WMT25"),
        MetaCommand(
            "bartscore-bench",
            "the BARTScore benchmark: its 16 data sets in the authors' data.pkl layout, their statistics",
            "The BARTScore paper's benchmark as its authors' analysis code evaluates it: REALSumm, SummEval, "
            "Newsroom (summary-level Spearman/Kendall averaged over documents), Rank19 (accuracy), QAGS_CNN and "
            "QAGS_XSUM (Pearson), BAGEL, SFHOT, SFRES (Spearman/Kendall over samples), WMT19 DARR de-en ... zh-en "
            "(Kendall's tau-like); the authors' significance test (--bootstrap N subsets of 80% of the records, "
            "seed 666) and the paper's tables. --data is a data.pkl (read as plain data only), its folder, the "
            "authors' SUM/ D2T/ WMT/ tree, or a JSONL file of the same records.",
            bartscore_bench,
            "data.pkl, <set>/data.pkl or SUM|D2T|WMT/<set>/data.pkl (the authors' layout), or a JSONL file",
            "data",
            "the human scores in each record (litepyramid_recall, coherence ..., fact, informativeness ...; "
            "DARR: better/worse)",
            "every reference of a record (combined by --refs: the authors' mean for summaries, max for D2T)",
            ("summary", "corpus", "segment"),
            (
                "summary spearman",
                "summary kendall",
                "summary accuracy",
                "summary pearson",
                "corpus spearman",
                "corpus kendall",
                "segment tau",
            ),
            'the authors\' layout with the metric NAME in each scores dict (.pkl), or JSONL {"id", "system", '
            '"score"} (summaries), {"id", "score"} (D2T), {"id", "better", "worse"} (DARR); {task} in FILE',
            options=(
                Option(
                    ("--task",),
                    "tasks",
                    "data set to evaluate: REALSumm, SummEval, NeR18, Rank19, QAGS-CNN, QAGS-XSUM, BAGEL, SFHOT, "
                    "SFRES, de-en ... (repeatable; default: every one in --data)",
                    dict(action="append", default=None),
                ),
                Option(
                    ("--refs",),
                    "refs",
                    "combine a metric's scores against several references (default: the authors' rule)",
                    dict(choices=BENCH_REFS, default=None),
                ),
            ),
            systems=False,
            seed=AUTHORS_SEED,
        ),
    )
}
