"""A corpus scored into a file, resumably: ``score_to_file(scorer, inputs, "scores.tsv")``.

Each window's rows are appended as it finishes (TSV with a header line, or JSON lines), through
:class:`nlgscore.corpus.outputs.resumable.ResumableOutput`: a re-run of the same call after a kill
continues after the last finished window (the inputs, the scorer's signature and the settings
must match; ``restart=True`` starts over), and the finished file is byte-identical to an
uninterrupted run. Values are written with Python's shortest round-trip float repr.

>>> import nlgscore, tempfile
>>> from pathlib import Path
>>> from nlgscore.stream.readers import lists
>>> out = Path(tempfile.mkdtemp()) / "scores.tsv"
>>> summary = score_to_file(nlgscore.load("bertscore:minilm:L2"), lists(["a cat", "a dog"], ["the cat", "a dog"]), out, window=1)
>>> out.read_text().splitlines()[0], summary.items, round(summary.system["f1"], 4) == round(summary.score, 4)
('precision\\trecall\\tf1', 2, True)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

from nlgscore.corpus.outputs.driver import Piece, run_chunks, splits_across_ranks
from nlgscore.errors import ArgumentError, DataError
from nlgscore.stream.readers import Inputs, is_regular_file
from nlgscore.stream.row_windows import (
    DEFAULT_WINDOW,
    RowDigest,
    check_streamable,
    check_window,
    chunks,
    item_rows,
    score_chunk,
)

if TYPE_CHECKING:
    from nlgscore.core.scorer_like import ScorerLike

OUTPUT_FORMATS = {".tsv": "tsv", ".jsonl": "jsonl"}


def output_format(path: Union[str, Path], format: Optional[str] = None) -> str:
    """``tsv`` or ``jsonl``: ``format`` if given, else from the extension (``.tsv``/``.jsonl``).

    >>> output_format("out.jsonl"), output_format("scores.txt", "tsv")
    ('jsonl', 'tsv')
    """
    fmt = format or OUTPUT_FORMATS.get(Path(path).suffix.lower())
    if fmt is None or fmt not in OUTPUT_FORMATS.values():
        raise ArgumentError(
            f"output {path}: name it .tsv or .jsonl (or give the format: tsv or jsonl), got {format or Path(path).suffix!r}"
        )
    return fmt


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else json.dumps(value)


def format_rows(rows: List[Dict[str, Any]], fmt: str, header: bool) -> str:
    """Rows as TSV (``header`` adds the column line) or JSON lines (NaN as ``null``).

    >>> format_rows([{"f1": 0.5, "p": 1.0}], "tsv", header=True)
    'f1\\tp\\n0.5\\t1.0\\n'
    >>> format_rows([{"f1": float("nan")}], "jsonl", header=False)
    '{"f1": null}\\n'
    """
    if fmt == "jsonl":
        safe = (
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()} for row in rows
        )
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in safe)
    return (header_line(rows, fmt) if header else "") + "".join(
        "\t".join(_cell(v) for v in row.values()) + "\n" for row in rows
    )


def header_line(rows: List[Dict[str, Any]], fmt: str) -> str:
    """The TSV column line of ``rows`` (empty for JSON lines or no rows).

    >>> header_line([{"f1": 0.5, "p": 1.0}], "tsv"), header_line([{"f1": 0.5}], "jsonl")
    ('f1\\tp\\n', '')
    """
    return "\t".join(rows[0]) + "\n" if fmt == "tsv" and rows else ""


class Summary:
    """What a finished :func:`score_to_file` run reports: the system value of every column (the
    mean over items), the call's signature and how many items. A metric whose system value is a
    corpus statistic (chrF, BLEU) reports that for its primary column, and the mean as
    ``sentence_mean``.

    Args:
        path: the output file.
        signature: the call's signature string.
        primary: the primary column.
        sums: per column, the exact sum of its values over the items.
        items: how many items the output holds.
        resumed_at: how many were already done by an earlier run (0: a fresh run).
        statistics: the summed per-item sufficient statistics of a corpus-statistic metric.
        corpus: the metric's corpus statistic of ``statistics`` (chrF's, BLEU's).
    """

    def __init__(
        self,
        path: Path,
        signature: str,
        primary: str,
        sums: Dict[str, Any],
        items: int,
        resumed_at: int,
        statistics: Optional[List[int]] = None,
        corpus: Any = None,
    ) -> None:
        self.path, self.signature, self.primary, self.items, self.resumed_at = (
            path,
            signature,
            primary,
            items,
            resumed_at,
        )
        self.system = {name: _mean(total, items) for name, total in sums.items()}
        if statistics is not None and corpus is not None and items:
            self.system = {
                primary: float(corpus(statistics)),
                "sentence_mean": self.system.get(primary, math.nan),
                **{k: v for k, v in self.system.items() if k != primary},
            }

    @property
    def score(self) -> float:
        """The primary column's system value."""
        return self.system.get(self.primary, math.nan)

    def rows(self) -> List[Dict[str, Any]]:
        """One ``{"column", "system"}`` dict per column (the CLI's table)."""
        return [{"column": name, "system": value} for name, value in self.system.items()]

    def to_dict(self) -> Dict[str, Any]:
        """The summary as the CLI prints it with ``--json``."""
        return {
            "output": str(self.path),
            "items": self.items,
            "resumed_at": self.resumed_at,
            "system": dict(self.system),
            "score": self.score,
            "signature": self.signature,
        }

    def __str__(self) -> str:
        extra = f" sentence_mean: {self.system['sentence_mean']:.6f}" if "sentence_mean" in self.system else ""
        return f"{self.primary}: {self.score:.6f}{extra}\n{self.signature}"  # as ScoreReport: values, then signature


def _mean(total: Any, items: int) -> Any:
    if isinstance(total, list):
        return [_mean(t, items) for t in total]
    return total / items if items else math.nan


def _add(total: Any, values: List[Any]) -> Any:
    """``total`` plus the exact (fsum) sum of ``values`` (lists per layer are summed element-wise)."""
    if values and isinstance(values[0], list):
        columns = list(zip(*values))
        base = total if total is not None else [0.0] * len(columns)
        return [b + math.fsum(c) for b, c in zip(base, columns)]
    return (total or 0.0) + math.fsum(values)


def score_to_file(
    scorer: "ScorerLike",
    inputs: Inputs,
    path: Union[str, Path],
    *,
    window: int = DEFAULT_WINDOW,
    format: Optional[str] = None,
    restart: bool = False,
    settings: Optional[Dict[str, Any]] = None,
    progress: bool = False,
    writer: bool = True,
    on_resume: Optional[Callable[[int, Optional[int]], None]] = None,
    **options: Any,
) -> Summary:
    """Score ``inputs`` into ``path`` window by window, resuming an interrupted run of the same call.

    Every finished window is checkpointed; the file appears only when complete. The checkpoint's
    identity is the scorer's signature, the window, the format, the input files' size and SHA-256
    and ``settings``: a run with other ones does not resume it. The run holds ``path``'s lock
    (:mod:`nlgscore.corpus.outputs.lock`): a second run on the same output is refused.

    Args:
        scorer: a loaded scorer (local or remote) whose scores do not depend on the whole call.
        inputs: the corpus, from a reader of :mod:`nlgscore.stream.readers`.
        path: the output, ``.tsv`` or ``.jsonl`` (one row per item, in input order).
        window: rows per ``compute`` call and per checkpoint.
        format: ``tsv`` or ``jsonl``; None: from the extension.
        restart: start over instead of resuming.
        settings: strings and numbers that join the checkpoint's identity (the command line's spec).
        progress: draw a progress bar over the rows.
        writer: whether this process writes: in a launched multi-process run (torchrun, accelerate
            launch) with a scorer that shards (``shard=True``), every process calls with the same
            arguments and scores its share of each window, and only rank 0 writes. Without
            sharding each process runs on its own (its own inputs and output).
        on_resume: called once when the run resumes, before any work, with the rows done by the
            earlier run and the corpus's rows (None where they cannot be counted).
        **options: ``compute``'s keywords for every call.

    Returns:
        The run's summary: every column's system value.

    Raises:
        ArgumentError: a bad window or output name, or a scorer whose scores depend on the call.
    """
    check_window(window)
    check_streamable(scorer)
    fmt = output_format(path, format)
    identity = {
        "signature": str(scorer.signature),
        "window": window,
        "format": fmt,
        **(settings or {}),
        **inputs.identity(),
    }
    job = _ScoreJob(scorer, inputs, Path(path), identity, window, fmt, options)
    outcome = run_chunks(
        Path(path),
        job,
        scorer=scorer,
        restart=restart,
        writer=writer,
        progress=progress,
        together=splits_across_ranks(scorer, options),
        on_resume=None if on_resume is None else lambda done: on_resume(done, row_count(inputs)),
    )
    state = outcome.state
    return Summary(
        Path(path),
        state.get("signature", str(scorer.signature)),
        state.get("primary", ""),
        job.sums,
        outcome.done,
        outcome.resumed_at,
        state.get("statistics"),
        getattr(scorer, "corpus_from_statistics", None),
    )


def row_count(inputs: Inputs) -> Optional[int]:
    """How many rows ``inputs`` has, where reading them twice is possible: files on disk only
    (stdin, a pipe or an in-memory/streamed corpus: None, since counting would consume or refetch it).

    >>> from nlgscore.stream.readers import text_files
    >>> row_count(text_files("examples/cands.txt", ["examples/refs.txt"]))
    5
    """
    if not inputs.files or not all(is_regular_file(path) for _, path in inputs.files):
        return None
    return sum(1 for _ in inputs.rows())


class _ScoreJob:
    """``score_to_file``'s :class:`~nlgscore.corpus.outputs.driver.Job`: windows of input rows, each
    scored into output lines; the rows' running SHA-256 and column sums ride in the checkpoint."""

    def __init__(
        self,
        scorer: "ScorerLike",
        inputs: Inputs,
        path: Path,
        identity: Dict[str, Any],
        window: int,
        fmt: str,
        options: Dict[str, Any],
    ) -> None:
        self.scorer, self.inputs, self.path, self.identity = scorer, inputs, path, identity
        self.window, self.fmt, self.options = window, fmt, options
        self.digest = RowDigest()
        self.sums: Dict[str, Any] = {}
        self.statistics: Optional[List[Any]] = None  # a corpus statistic's summed per-item statistics

    def chunks(self, done: int, state: Dict[str, Any]) -> Any:
        self.sums.update(state.get("sums", {}))
        self.statistics = state.get("statistics")
        rows = self.inputs.rows()
        skipped = 0
        for row in _take(rows, done):  # re-read (not re-scored) and hashed one by one: memory stays flat
            self.digest.update([row])
            skipped += 1
        if done and (skipped < done or self.digest.hexdigest() != state.get("rows_sha256")):
            raise DataError(
                f"cannot resume {self.path}: the first {done} input rows differ from those its checkpoint was written for; pass --restart"
            )
        return chunks(rows, self.window)

    def work(self, chunk: List[Any], start: int) -> Piece:
        result = score_chunk(self.scorer, chunk, self.inputs, start=start, **self.options)
        self.digest.update(chunk)
        values = item_rows(result)
        for name in result.columns():
            self.sums[name] = _add(self.sums.get(name), [row[name] for row in values])
        state: Dict[str, Any] = {
            "sums": self.sums,
            "rows_sha256": self.digest.hexdigest(),
            "signature": str(result.signature),
            "primary": result.primary,
        }
        statistics = getattr(result, "statistics", None)  # a string metric's per-item corpus statistics (StringResult)
        if statistics is not None and len(statistics):
            sums = statistics.sum(axis=0)  # counts stay ints; TER's average reference lengths are fractional
            window: List[Any] = [float(v) for v in sums] if sums.dtype.kind == "f" else [int(v) for v in sums]
            self.statistics = (
                window if self.statistics is None else [a + b for a, b in zip(self.statistics, window, strict=True)]
            )
        if self.statistics is not None:
            state["statistics"] = self.statistics
        return Piece(format_rows(values, self.fmt, header=False), len(chunk), state, header_line(values, self.fmt))

    def verify(self, done: int, state: Dict[str, Any]) -> None:
        """Nothing beside the output is reused (the rows are checked by ``chunks``)."""

    def finish(self, done: int, published: bool) -> None:
        """Nothing to merge or remove."""


def _take(rows: Any, n: int) -> Any:
    for _, row in zip(range(n), rows):
        yield row
