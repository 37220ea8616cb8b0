"""WMT25's human evaluation JSONL (``data/wmt25-genmt-humeval.jsonl`` of ``wmt-conference/wmt25-general-mt``).

One record per paragraph, in document order::

    {"doc_id": "en-cs_CZ_#_news_#_<doc>", "src_text": "...",
     "tgt_text": {"refA": "...", "<SYS>": "...", ...},
     "scores": {"<SYS>": {"human1": 87.0, "errors1": [...], "human2": ...}, ...}}

The pair is the ``doc_id``'s first ``_#_`` field. A paragraph's score for a system is the mean of
its ``human<k>`` values (the annotators who rated it; an empty ``scores`` entry or a ``null``
rating means unrated). Systems are those with a translation of every paragraph of the pair; the
references are the ``ref*`` entries. A line that is not a JSON object, lacks a field, has a
``doc_id`` that does not start with a language pair and ``_#_``, or rates a system without a
translation is a ``DataError`` naming ``file:line``.

>>> import json, pathlib, tempfile
>>> f = pathlib.Path(tempfile.mkdtemp()) / "h.jsonl"
>>> recs = [{"doc_id": "en-cs_CZ_#_news_#_d1", "src_text": "Hi.", "tgt_text": {"refA": "Ahoj.", "S1": "Ahoj."},
...          "scores": {"S1": {"human1": 90, "errors1": [], "human2": 70}}}]
>>> _ = f.write_text("\\n".join(json.dumps(r) for r in recs) + "\\n")
>>> texts, seg, _ = read_paragraphs(f, "en-cs_CZ")
>>> texts.src, texts.docs, seg["S1"].tolist()
(['Hi.'], ['en-cs_CZ_#_news_#_d1'], [80.0])
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple, Union

import numpy as np

from nlgscore.errors import DataError
from nlgscore.meta.data.files import read_lines
from nlgscore.meta.data.wmt_text import TextSet

PathLike = Union[str, "os.PathLike[str]"]
_HUMAN = re.compile(r"human\d*")
# A WMT25 pair: ``<src>-<tgt>`` ISO codes, then the target's locale parts (``en-cs_CZ``,
# ``en-sr_Cyrl_RS``). An id without it would otherwise become a "pair" of its own and be averaged
# into avg-corr with the weight of a real one, so it is refused instead.
_PAIR = re.compile(r"[A-Za-z]{2,3}-[A-Za-z]{2,3}(?:_[A-Za-z0-9]+)*")
_DOC_ID_FORM = "'<src>-<tgt>_<locale>_#_<domain>_#_<document>', e.g. 'en-cs_CZ_#_news_#_doc1'"
FIELDS = ("doc_id", "src_text", "tgt_text", "scores")


def _pair(where: str, doc_id: object) -> str:
    """The language pair ``doc_id`` starts with; a ``DataError`` naming ``where`` and the field if none.

    >>> _pair("f:1", "en-cs_CZ_#_news_#_d1")
    'en-cs_CZ'
    >>> _pair("f:2", "news_#_d1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.errors.DataError: f:2: doc_id 'news_#_d1' does not start with a language pair and '_#_': ...
    """
    pair = doc_id.split("_#_")[0] if isinstance(doc_id, str) and "_#_" in doc_id else None
    if pair is None or not _PAIR.fullmatch(pair):
        raise DataError(
            f"{where}: doc_id {doc_id!r} does not start with a language pair and '_#_': it must look like "
            f"{_DOC_ID_FORM}"
        )
    return pair


def _records(path: Path) -> Iterator[Tuple[str, str, Dict[str, Any]]]:
    """``(file:line, pair, record)`` of every non-blank line of ``path``, each checked."""
    for number, line in enumerate(read_lines(path, "JSONL file"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{where}: not JSON ({err.msg})") from None
        if not isinstance(record, dict) or any(f not in record for f in FIELDS):
            raise DataError(f"{where}: a paragraph record has the fields {', '.join(FIELDS)}")
        if not isinstance(record["tgt_text"], dict) or not isinstance(record["scores"], dict):
            raise DataError(f"{where}: tgt_text and scores are objects keyed by system")
        yield where, _pair(where, record["doc_id"]), record


def paragraph_pairs(path: PathLike) -> List[str]:
    """The language pairs of a paragraph JSONL file, sorted."""
    return sorted({pair for _, pair, _ in _records(Path(path))})


def read_paragraphs(path: PathLike, lp: str) -> Tuple[TextSet, Dict[str, np.ndarray], str]:
    """``(texts, per-system paragraph scores (NaN unrated), file name)`` of pair ``lp``."""
    path = Path(path)
    records = [(w, r) for w, pair, r in _records(path) if pair == lp]
    if not records:
        raise DataError(f"{path}: no paragraph of pair {lp!r} (pairs: {paragraph_pairs(path)})")
    names = set.intersection(*(set(r["tgt_text"]) for _, r in records))
    refs = sorted(n for n in names if n.startswith("ref"))
    if not refs:
        raise DataError(f"{records[0][0]}: no reference (refA ...) in tgt_text of every paragraph of {lp}")
    systems = sorted(names - set(refs))
    seg = {s: np.full(len(records), np.nan) for s in systems + refs}
    for i, (where, record) in enumerate(records):
        for system, rating in record["scores"].items():
            if system not in seg:
                raise DataError(f"{where}: system {system!r} is rated but has no translation of every paragraph")
            if not isinstance(rating, dict):
                raise DataError(f"{where}: scores of {system!r} is an object of human1, errors1 ...")
            values = [v for k, v in rating.items() if _HUMAN.fullmatch(k) and v is not None]
            for v in values:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                    raise DataError(f"{where}: a human score of {system!r} is not a finite number: {v!r}")
            if values:
                seg[system][i] = float(np.mean(values))
    texts = TextSet(
        path,
        lp,
        [str(r["src_text"]) for _, r in records],
        {n: [str(r["tgt_text"][n]) for _, r in records] for n in refs},
        {s: [str(r["tgt_text"][s]) for _, r in records] for s in systems},
        [str(r["doc_id"]) for _, r in records],
    )
    return texts, {s: v for s, v in seg.items() if np.any(~np.isnan(v))}, path.name
