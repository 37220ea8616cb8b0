"""WMT24/WMT25 test sets with their human judgments, in any of the layouts they are published in,
as one ``EvalSet`` per language pair.

``load_wmt(data, lp, test_set)`` reads:

* **WMT's own folder** (``wmt-conference/wmt24-news-systems``): ``txt/`` (the text layout of
  ``nlgscore.meta.data.wmt_text``) beside ``humeval/`` holding ESA CSVs (``esa_*.csv``, read by
  ``nlgscore.meta.data.esa``) and MQM TSVs (``mqm_*_<src><tgt>.tsv``, ``nlgscore.meta.data.mqm_tsv``);
* **mt-metrics-eval's folder** (``<root>/<test_set>/`` or the test-set folder itself): the text
  layout beside ``human-scores/<LP>.<GOLD>.seg.score`` (``system<TAB>score``, ``None`` where
  unrated, one line per segment of each system) and optional ``<LP>.<GOLD>.sys.score``;
* **WMT25's JSONL** (``wmt25-genmt-humeval.jsonl``, ``nlgscore.meta.data.paragraphs``): one record per
  paragraph.

The gold and the reference are mt-metrics-eval's standard ones (``meta_info.py``; ``STANDARD``)
unless named. Systems: the rated ones with outputs, never a reference (a human translation is
evaluated only with ``include_human``). Items: the lines rated for at least one evaluated system
(the CANARY line among them, 100 for every system as WMT's conversion writes it) -- every WMT24/25
measure (SPA on the segments all systems were rated on, acc-eq and Pearson over rated cells)
ignores the other lines, so they are not scored; ``all_lines=True`` keeps every line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.data.esa import read_esa
from nlgscore.meta.data.files import read_lines
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.data.mqm_tsv import read_mqm_tsv
from nlgscore.meta.data.wmt_text import TextSet, read_text_layout

PathLike = Union[str, "os.PathLike[str]"]
TEST_SETS = ("wmt24", "wmt24pp", "wmt25")
# mt-metrics-eval meta_info.py: (standard gold, standard reference) per test set; exceptions per pair.
Standard = Tuple[Optional[str], str]  # (gold, reference); no gold: the set has no human scores
_MQM_24: Dict[str, Standard] = {"en-de": ("mqm", "refB"), "en-es": ("mqm", "refA"), "ja-zh": ("mqm", "refA")}
_MQM_25: Dict[str, Standard] = {"ja-zh_CN": ("mqm", "refA"), "en-ko_KR": ("mqm", "refA")}
STANDARD: Dict[str, Tuple[Tuple[Optional[str], str], Dict[str, Tuple[Optional[str], str]]]] = {
    "wmt24": (("esa", "refA"), _MQM_24),
    "wmt25": (("esa-human1", "refA"), _MQM_25),
    "wmt24pp": ((None, "posteditA"), {"en-de_DE": (None, "posteditB"), "en-is_IS": (None, "refA")}),
}


def standard(test_set: str, lp: str) -> Tuple[Optional[str], str]:
    """``(gold, reference)`` mt-metrics-eval uses for ``lp`` of ``test_set`` (gold None: WMT24++ has none).

    >>> standard("wmt24", "en-cs"), standard("wmt24", "en-de"), standard("wmt25", "en-cs_CZ")
    (('esa', 'refA'), ('mqm', 'refB'), ('esa-human1', 'refA'))
    """
    if test_set not in STANDARD:
        raise ArgumentError(f"test_set must be one of {TEST_SETS}, got {test_set!r}")
    default, pairs = STANDARD[test_set]
    return pairs.get(lp, default)


def read_human_scores(path: PathLike, lines: int) -> Dict[str, np.ndarray]:
    """An mt-metrics-eval ``.seg.score`` human file: per system, ``lines`` scores (``None`` -> NaN).

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "en-cs.esa.seg.score"
    >>> _ = f.write_text("A\\t100.0\\nA\\tNone\\nB\\t100.0\\nB\\t55\\n")
    >>> {s: v.tolist() for s, v in read_human_scores(f, 2).items()}
    {'A': [100.0, nan], 'B': [100.0, 55.0]}
    """
    path = Path(path)
    values: Dict[str, List[float]] = {}
    for number, line in enumerate(read_lines(path, "human scores file"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(f"{where}: expected <system><TAB><score or None>, got {len(fields)} fields")
        if fields[1].strip() == "None":
            value = float("nan")
        else:
            try:
                value = float(fields[1])
            except ValueError:
                raise DataError(f"{where}: score is not a number or None: {fields[1]!r}") from None
            if not np.isfinite(value):
                raise DataError(f"{where}: score {fields[1]!r} is NaN or infinite (write None for unrated)")
        scores = values.setdefault(fields[0], [])
        if len(scores) == lines:
            raise DataError(f"{where}: system {fields[0]!r} has more than {lines} scores (one per segment)")
        scores.append(value)
    for system, scores in values.items():
        if len(scores) != lines:
            raise DataError(f"{path}: system {system!r} has {len(scores)} scores, the sources {lines} lines")
    if not values:
        raise DataError(f"{path}: no scores")
    return {s: np.array(v) for s, v in values.items()}


def _wmt_repo_gold(folder: Path, texts: TextSet, gold: str) -> Tuple[Dict[str, np.ndarray], str]:
    names = set(texts.outputs) | set(texts.refs)
    src, tgt = texts.lp.split("_")[0].split("-")
    if gold.startswith("mqm"):
        files = sorted((folder / "humeval").glob(f"mqm_*_{src}{tgt}.tsv"))
        if not files:
            raise DataError(f"{folder / 'humeval'}: no MQM file mqm_*_{src}{tgt}.tsv for pair {texts.lp}")
        return read_mqm_tsv(files[0], len(texts.src), names), files[0].name
    files = sorted((folder / "humeval").glob("esa_*.csv"))
    if not files:
        raise DataError(f"{folder / 'humeval'}: no ESA file esa_*.csv")
    seg = read_esa(files, texts.lp, len(texts.src), names, texts.docs)
    return seg, ", ".join(p.name for p in files)


def _mtme_root(data: Path, test_set: str) -> Optional[Path]:
    for root in (data / test_set, data):
        if (root / "human-scores").is_dir() or (root / "sources").is_dir() and test_set == "wmt24pp":
            return root
    return None


def pairs_in(data: PathLike, test_set: str = "wmt24") -> List[str]:
    """The language pairs of a data folder (those with sources), sorted."""
    data = Path(data)
    if data.is_file():
        from nlgscore.meta.data.paragraphs import paragraph_pairs

        return paragraph_pairs(data)
    root = data / "txt" if (data / "humeval").is_dir() else _mtme_root(data, test_set)
    if root is None or not (root / "sources").is_dir():
        raise DataError(
            f"{data}: neither WMT's folder (txt/ and humeval/) nor mt-metrics-eval's "
            f"({test_set}/sources and human-scores/) nor a JSONL file"
        )
    return sorted(p.stem for p in (root / "sources").glob("*.txt"))


def load_wmt(
    data: PathLike,
    lp: Optional[str] = None,
    test_set: str = "wmt24",
    gold: Optional[str] = None,
    reference: Optional[str] = None,
    include_human: bool = False,
    all_lines: bool = False,
    limit: Optional[int] = None,
    context: int = 0,
) -> EvalSet:
    """Pair ``lp`` (default: the only pair) of a WMT24/WMT25 data folder or JSONL file as an ``EvalSet``.

    ``context``: the items also hold the ``context`` lines before each rated one in its document
    (unrated, so no measure counts them), for metrics that read them as document context."""
    if data is None:
        raise ArgumentError("data is required: the WMT folder or JSONL file (--data)")
    data = Path(data)
    if not data.exists():
        raise ArgumentError(f"--data {data}: no such file or folder")
    if lp is None:
        pairs = pairs_in(data, test_set)
        if len(pairs) != 1:
            raise ArgumentError(f"--data {data} holds pairs {pairs}: name one with --lp")
        lp = pairs[0]
    std_gold, std_ref = standard(test_set, lp)
    gold = gold or std_gold
    if data.is_file():
        from nlgscore.meta.data.paragraphs import read_paragraphs

        texts, seg, source = read_paragraphs(data, lp)
        gold = gold or "esa-human"
    elif (data / "humeval").is_dir():
        if gold is None:
            raise ArgumentError(f"{lp} of {test_set} has no standard human scores: name them with --gold")
        texts = read_text_layout(data / "txt", lp)
        seg, source = _wmt_repo_gold(data, texts, gold)
    else:
        root = _mtme_root(data, test_set)
        if root is None:
            raise DataError(
                f"{data}: neither WMT's folder (txt/ and humeval/) nor mt-metrics-eval's "
                f"({test_set}/sources and human-scores/) nor a JSONL file"
            )
        if gold is None:
            found = (
                sorted({p.name.split(".")[1] for p in (root / "human-scores").glob(f"{lp}.*.seg.score")})
                if (root / "human-scores").is_dir()
                else []
            )
            raise DataError(
                f"{root}: {test_set} has no human scores for {lp} (WMT24++ is post-edits only)"
                + (f"; name one with --gold ({', '.join(found)})" if found else "")
            )
        texts = read_text_layout(root, lp)
        path = root / "human-scores" / f"{lp}.{gold}.seg.score"
        if not path.is_file():
            raise DataError(f"{path}: no {gold!r} human scores for {lp}")
        seg, source = read_human_scores(path, len(texts.src)), path.name
    if context > 0 and texts.docs is None:
        raise ArgumentError(
            f"--context {context}: {lp} of {data} has no document ids (documents/{lp}.docs, or doc_id in the "
            "JSONL), so there is no document to read the previous segments of; leave --context out"
        )
    return _evalset(
        f"{test_set}-{lp}", texts, seg, reference or std_ref, gold, source, include_human, all_lines, limit, context
    )


def with_context(items: np.ndarray, docs: List[str], context: int) -> np.ndarray:
    """``items`` (sorted line numbers) and, before each, up to ``context`` lines of its document.

    >>> with_context(np.array([1, 4]), ["a", "a", "a", "b", "b", "b"], 2).tolist()  # line 3 starts document b
    [0, 1, 3, 4]
    """
    lines = set(items.tolist())
    for i in items.tolist():
        j = i - 1
        while j >= 0 and i - j <= context and docs[j] == docs[i]:
            lines.add(j)
            j -= 1
    return np.array(sorted(lines), dtype=items.dtype)


def _system_means(human: np.ndarray, items: np.ndarray, src: List[str]) -> np.ndarray:
    """Each system's mean over its rated segments, the CANARY line left out (it is a marker, not a segment)."""
    segment = np.array([not (i == 0 and "canary" in src[0].lower()) for i in items], dtype=bool)
    rows = human[:, segment]
    return np.array([float(np.nanmean(r)) if np.any(~np.isnan(r)) else float("nan") for r in rows])


def _evalset(
    name: str,
    texts: TextSet,
    seg: Dict[str, np.ndarray],
    reference: str,
    gold: str,
    source: str,
    include_human: bool,
    all_lines: bool,
    limit: Optional[int],
    context: int = 0,
) -> EvalSet:
    if reference not in texts.refs:
        raise ArgumentError(
            f"{name}: no reference {reference!r} (references: {sorted(texts.refs)}); choose one with --ref"
        )
    for system in seg:
        if system not in texts.outputs and system not in texts.refs:
            raise DataError(f"{name}: rated system {system!r} has no output file")
    humans = {
        s
        for s in seg
        if s in texts.refs or (s in texts.outputs and any(texts.outputs[s] == r for r in texts.refs.values()))
    }
    systems = sorted(
        s
        for s in seg
        if s != reference
        and s in texts.outputs | texts.refs
        and np.any(~np.isnan(seg[s]))
        and (include_human or s not in humans)
    )
    if len(systems) < 3:
        raise DataError(f"{name}: meta-evaluation needs at least 3 rated systems, got {systems}")
    human = np.array([seg[s] for s in systems])
    n = len(texts.src)
    items = np.arange(n) if all_lines else np.flatnonzero((~np.isnan(human)).any(axis=0))
    if limit is not None:
        items = items[:limit]
    rated = len(items)
    if context > 0 and texts.docs is not None and not all_lines:
        items = with_context(items, texts.docs, context)
    outputs = {**texts.refs, **texts.outputs}
    pick = lambda lines: [lines[i] for i in items]  # noqa: E731
    human = human[:, items]
    evalset = EvalSet(
        name,
        systems,
        [pick(outputs[s]) for s in systems],
        [pick(texts.refs[reference])],
        pick(texts.src),
        {"segment": human, "system": _system_means(human, items, texts.src)},
        reference[3:] if reference.startswith("ref") else reference,
    )  # mtme file names add "ref"
    if texts.docs is not None:
        evalset.docs = pick(texts.docs)
    evalset.derived("lines", lambda: items)
    evalset.derived("total", lambda: n)
    left = sorted(set(texts.outputs) - set(systems))
    evalset.notes.append(
        f"{name} ({source}, gold {gold}): {len(items)} of {n} lines scored ("
        + ("rated ones" if len(items) == rated else f"{rated} rated, {len(items) - rated} as their context only")
        + "), "
        f"{len(systems)} systems; reference {reference}; not evaluated: {', '.join(left) or 'none'}"
    )
    return evalset
