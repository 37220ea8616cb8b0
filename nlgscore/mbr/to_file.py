"""MBR decoding into a file, resumably: ``decode_to_file(metric, "items.jsonl", "chosen.jsonl")``.

The items (a JSONL file as :mod:`nlgscore.mbr.files` reads it, ``-`` for stdin, or a list of
items) are decoded ``chunk`` at a time by :func:`nlgscore.mbr.decode`, one JSON line per item in
input order. Into a path, every finished chunk is checkpointed by the resumable driver that
``stream.score_to_file`` uses too (:func:`nlgscore.corpus.outputs.driver.run_chunks`): a re-run of
the same call continues where it stopped (``restart=True`` starts over), under the CPU kernel
of the first run, so the file is byte-identical to an uninterrupted run, and OUT appears only
when complete. Into a text stream (``sys.stdout``) each chunk is written as it finishes.
``matrix_out`` writes every item's utility matrix to one ``.npz`` keyed by id.

>>> import io, nlgscore
>>> stream = io.StringIO()
>>> summary = decode_to_file("bertscore:minilm:L2", [["A cat sat.", "The cat sat.", "Rain."]], stream, nbest=2)
>>> row = json.loads(stream.getvalue())
>>> row["best"], [c["index"] for c in row["nbest"]], summary.items
('The cat sat.', [1, 0], 1)
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.corpus.outputs.driver import Piece, run_chunks, splits_across_ranks
from nlgscore.corpus.outputs.lock import OutputLock
from nlgscore.errors import ArgumentError, DataError
from nlgscore.mbr.decode import check_nbest, decode, load_metric
from nlgscore.mbr.files import check_part, jsonl_rows, merge_parts, parts_folder, read_items, save_part
from nlgscore.mbr.items import MBRItem, as_items

DEFAULT_CHUNK = 256  # items per decode call and per checkpoint


class DecodeSummary:
    """What a finished :func:`decode_to_file` run reports.

    Args:
        output: where the rows went (the path, or the stream).
        items: how many items the output holds.
        resumed_at: how many an earlier, interrupted run had done (0: a fresh run).
        signature: the metric's signature string.
    """

    def __init__(self, output: Any, items: int, resumed_at: int, signature: str) -> None:
        self.output, self.items, self.resumed_at, self.signature = output, items, resumed_at, signature

    def to_dict(self) -> Dict[str, Any]:
        """The summary as the CLI prints it with ``--json``."""
        return {
            "output": str(self.output),
            "items": self.items,
            "resumed_at": self.resumed_at,
            "signature": self.signature,
        }

    def __str__(self) -> str:
        return f"{self.signature} items: {self.items}"


def decode_to_file(
    metric: Any,
    items: Union[str, Path, Sequence[Any]],
    output: Any,
    *,
    matrix_out: Optional[Union[str, Path]] = None,
    column: Optional[str] = None,
    nbest: Optional[int] = None,
    chunk: int = DEFAULT_CHUNK,
    restart: bool = False,
    settings: Optional[Dict[str, Any]] = None,
    progress: bool = False,
    writer: bool = True,
    on_resume: Optional[Callable[[int, Optional[int]], None]] = None,
    **options: Any,
) -> DecodeSummary:
    """Decode ``items`` into ``output``, ``chunk`` items at a time, one JSON line per item.

    Into a path, every finished chunk is checkpointed: a re-run of the same call continues where
    it stopped, and the file appears only when complete, byte-identical to an uninterrupted run.
    The checkpoint's identity is the items' SHA-256, the metric's signature, the column, the
    chunk, ``nbest``, ``matrix_out`` and ``settings``: a run with other ones does not resume it.

    Args:
        metric: a spec, a loaded scorer, or a function returning one (called once the items are
            read, so that a bad input file fails before a model loads).
        items: a JSONL path (``-``: stdin) or a list as :func:`nlgscore.mbr.decode` takes it.
        output: a path (resumable) or a text stream (``sys.stdout``: each chunk written as it finishes).
        matrix_out: also write every item's utility matrix to this ``.npz``, keyed by id.
        column: a non-primary score as the utility, as for :func:`~nlgscore.mbr.decode`.
        nbest: list the K best candidates in each row, as for :func:`~nlgscore.mbr.decode`.
        chunk: items per decode call and per checkpoint.
        restart: start over instead of resuming.
        settings: strings and numbers that join the checkpoint's identity (the CLI's flags).
        progress: draw a progress bar over the items.
        writer: whether this process writes; in a launched multi-process run with a scorer that
            shards (``shard=True``), every process calls with the same arguments and only rank 0
            writes.
        on_resume: called once when the run resumes, before any work, with the items done by the
            earlier run and how many there are.
        **options: the metric's options, for a spec.

    Returns:
        The run's summary.

    Raises:
        ArgumentError: a bad ``chunk`` or ``nbest``, or a ``matrix_out`` folder that does not exist.
        DataError: an item of the input file that cannot be read, naming its line.
    """
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ArgumentError(f"chunk must be a positive integer (items per decode call and checkpoint), got {chunk!r}")
    nbest = check_nbest(nbest)
    checked, digest = _read(items)
    matrices = None if matrix_out is None else str(matrix_out)
    if matrices is not None and not Path(matrices).parent.is_dir():
        raise ArgumentError(f"matrix_out {matrices}: folder {Path(matrices).parent} does not exist")
    outputs = [path for path in (output, matrices) if isinstance(path, (str, Path))]
    for path in outputs if writer else []:  # a busy output fails before a model loads (the driver then holds the locks)
        OutputLock(path).release()
    scorer = load_metric(metric, options)
    identity = {
        "input": f"sha256={digest}",
        "metric": str(scorer.signature),
        "column": column,
        "chunk": chunk,
        "matrix_out": matrices,
        **({"nbest": nbest} if nbest else {}),
        **(settings or {}),
    }

    job = _DecodeJob(scorer, checked, identity, output, chunk, column, nbest, matrices, writer)
    outcome = run_chunks(
        Path(output) if isinstance(output, (str, Path)) else output,
        job,
        scorer=scorer,
        restart=restart,
        writer=writer,
        locks=[matrices] if matrices is not None else [],
        progress=progress,
        desc="decoding",
        together=splits_across_ranks(scorer),
        on_resume=None if on_resume is None else lambda done: on_resume(done, len(checked)),
    )
    return DecodeSummary(output, outcome.done, outcome.resumed_at, str(scorer.signature))


class _DecodeJob:
    """``decode_to_file``'s :class:`~nlgscore.corpus.outputs.driver.Job`: ``chunk`` items per decode
    call; with ``matrices``, each chunk's utility matrices saved as a part before its checkpoint,
    the parts checked on a resume, merged before publishing and removed after."""

    def __init__(
        self,
        scorer: ScorerLike,
        items: List[MBRItem],
        identity: Dict[str, Any],
        output: Any,
        chunk: int,
        column: Optional[str],
        nbest: int,
        matrices: Optional[str],
        writer: bool,
    ) -> None:
        self.scorer, self.items, self.identity, self.output, self.chunk = scorer, items, identity, output, chunk
        self.column, self.nbest, self.matrices, self.writer = column, nbest, matrices, writer

    def chunks(self, done: int, state: Dict[str, Any]) -> Any:
        if self.writer and self.matrices is not None and done == 0:
            shutil.rmtree(parts_folder(self.matrices), ignore_errors=True)  # parts of another run
        return (self.items[first : first + self.chunk] for first in range(done, len(self.items), self.chunk))

    def work(self, part: List[MBRItem], start: int) -> Piece:
        choices = decode(
            self.scorer, part, column=self.column, keep_matrices=self.matrices is not None, nbest=self.nbest or None
        )
        if self.writer and self.matrices is not None:
            save_part(self.matrices, start, choices)  # before the checkpoint that counts these items
        return Piece(jsonl_rows(choices), len(part))

    def _parts(self, done: int) -> List[Tuple[int, List[str]]]:
        return [
            (first, [str(item.id) for item in self.items[first : first + self.chunk]])
            for first in range(0, done, self.chunk)
        ]

    def verify(self, done: int, state: Dict[str, Any]) -> None:  # the matrices a resume reuses
        if self.matrices is None:
            return
        for first, ids in self._parts(done):
            try:
                check_part(self.matrices, first, ids)
            except DataError as err:
                raise DataError(
                    f"cannot resume {self.output} with --matrix-out {self.matrices}: {err}; pass --restart"
                ) from None

    def finish(self, done: int, published: bool) -> None:
        if self.matrices is not None and not published:
            merge_parts(self.matrices, self._parts(done))
        elif self.matrices is not None:
            shutil.rmtree(parts_folder(self.matrices), ignore_errors=True)


def _read(items: Union[str, Path, Sequence[Any]]) -> Tuple[List[MBRItem], str]:
    """The checked items and the SHA-256 that identifies them (of the file's bytes; of their JSON)."""
    if isinstance(items, (str, Path)):
        return read_items(str(items))
    checked = as_items(items)
    record = [[item.id, item.source, item.candidates, item.pseudo_references] for item in checked]
    return checked, hashlib.sha256(json.dumps(record, ensure_ascii=False).encode("utf-8")).hexdigest()
