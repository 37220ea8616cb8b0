"""The one resumable driver behind ``score_to_file`` and ``mbr.decode_to_file``.

A run is a :class:`Job`: its *chunks* of input items, the *work* that turns one chunk into output
lines (one line per item, plus an optional header before the first), a *verify* of what a resume
reuses, a *finish* around publishing, and an *identity* (the inputs, the scorer's signature, the
settings) that a resume must match. :func:`run_chunks` does the rest once for every caller:

* the output: a :class:`~nlgscore.corpus.outputs.resumable.ResumableOutput` (a path: checkpointed chunk by
  chunk, resumed by a re-run, published by an atomic rename) or a text stream (``sys.stdout``:
  written and flushed chunk by chunk, nothing to resume);
* kernel pinning: the chunks are computed under the CPU kernel recorded by the run being
  resumed (:func:`~nlgscore.corpus.outputs.resumable.same_kernel`), so a resumed output is byte-identical;
* one run per output: the writer holds the output's lock (:class:`~nlgscore.corpus.outputs.lock.OutputLock`,
  and the lock of every side file it names in ``locks``) from before it reads the checkpoint
  until the output is published or the run fails; a second run on the same output is refused
  with an error naming the holder's PID;
* rank-0 writing: where the scorer splits its calls across the ranks of a launch
  (``shard=True``: :func:`splits_across_ranks`), every process calls it with the same arguments
  and computes its share of each chunk; only the one with ``writer=True`` writes, and a problem
  found by the writer (a refused resume) is raised on every process, so none waits. Otherwise
  each process runs on its own: nothing is exchanged.
* a resume is announced: ``on_resume(done)`` is called once on the writer, after the checkpoint
  and what it reuses are accepted and before any work (a CLI prints :func:`resume_line`).

>>> import io
>>> class Lines:
...     identity = {}
...     def chunks(self, done, state): return ([1, 2], [3])
...     def work(self, chunk, start): return Piece("".join(f"{x}\\n" for x in chunk), len(chunk), {})
...     def verify(self, done, state): pass
...     def finish(self, done, published): pass
>>> stream = io.StringIO()
>>> outcome = run_chunks(stream, Lines())
>>> stream.getvalue(), outcome.done
('1\\n2\\n3\\n', 3)
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Optional, Protocol, Sequence, Union

from nlgscore.backend.distributed import Ranks, broadcast_from_main, shard_ranks
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.corpus.outputs.lock import OutputLock
from nlgscore.corpus.outputs.resumable import ResumableOutput, kernel_in_use, same_kernel
from nlgscore.errors import ArgumentError, NlgscoreError


@dataclass
class Piece:
    """What the work function made of one chunk: its output ``text`` (one line per item),
    ``count`` items, the caller's running ``state`` after it (JSON-able: the checkpoint keeps it),
    and a ``header`` written before the first chunk of a fresh output."""

    text: str
    count: int
    state: Dict[str, Any] = field(default_factory=dict)
    header: str = ""


class Job(Protocol):
    """What one resumable run does, named (the driver calls nothing else).

    * ``identity``: what a resume must match (inputs, the scorer's signature, settings);
    * ``chunks(done, state)``: the chunks after the first ``done`` items (``state``: the resumed
      run's, the same on every process); may raise to refuse the resume;
    * ``work(chunk, start)``: one chunk whose first item is number ``start``, as a :class:`Piece`;
    * ``verify(done, state)``: on the writer of a resumed run, before any work (side files it reuses);
    * ``finish(done, published)``: on the writer after the last chunk, under the lock: with
      ``published=False`` before the output is published (e.g. a side file merged), then with
      ``published=True`` after it (side files removed).
    """

    identity: Dict[str, Any]

    def chunks(self, done: int, state: Dict[str, Any]) -> Iterable[Any]: ...

    def work(self, chunk: Any, start: int) -> "Piece": ...

    def verify(self, done: int, state: Dict[str, Any]) -> None: ...

    def finish(self, done: int, published: bool) -> None: ...


@dataclass
class Outcome:
    """A finished run: items ``done`` in all, ``resumed_at`` (done by an earlier run), the last ``state``."""

    done: int
    resumed_at: int
    state: Dict[str, Any]


def run_chunks(
    output: Union[str, Path, Any],
    job: Job,
    *,
    scorer: Optional[ScorerLike] = None,
    restart: bool = False,
    writer: bool = True,
    locks: Sequence[Union[str, Path]] = (),
    progress: bool = False,
    desc: str = "scoring",
    together: bool = False,
    on_resume: Optional[Callable[[int], None]] = None,
) -> Outcome:
    """Run ``job`` into ``output`` (a path, resumable; or a text stream); see :class:`Job`.

    ``locks`` are side files (e.g. a matrix file) locked with the output. ``scorer`` gives the
    CPU kernel to pin (None: nothing pinned). ``writer``: this process writes (rank 0).
    ``together``: every rank of the launch runs this with the same arguments (the scorer shards).
    ``on_resume``: called on the writer with the items an earlier run did, when this run resumes it.
    """
    ranks = shard_ranks() if together else None
    resumable = isinstance(output, (str, Path))
    with ExitStack() as held:  # the locks, released however the run ends
        out, problem = None, None
        if writer:
            try:
                for path in ([output] if resumable else []) + list(locks):
                    held.enter_context(OutputLock(path))
                if resumable:
                    out = ResumableOutput(output, job.identity, restart=restart)
                    if out.done:
                        job.verify(out.done, out.state)
            except NlgscoreError as err:
                problem = err
        # Every process starts where the writer resumes, with its state.
        done, state = _agree(ranks, problem, (out.done, out.state) if out is not None else (0, {}))
        resumed_at = done
        pieces = job.chunks(done, state)  # may refuse the resume (inputs that differ)
        if on_resume is not None and out is not None and done:
            on_resume(done)
        kernel = _agree(ranks, None, state.get("kernel") or (kernel_in_use(scorer) if scorer is not None else None))
        from nlgscore.backend.progress import progress_bar

        with same_kernel(kernel), progress_bar(initial=done, enabled=progress, desc=desc, unit="item") as bar:
            for chunk in pieces:
                piece = job.work(chunk, done)
                state = dict(piece.state, kernel=kernel)
                header = piece.header if done == 0 else ""
                if out is not None:
                    out.append(piece.text, piece.count, state, header=header)
                elif writer and not isinstance(output, (str, Path)):  # a text stream
                    output.write(header + piece.text)
                    output.flush()
                done += piece.count
                bar.update(piece.count)
        if writer:
            job.finish(done, False)
        if out is not None:
            out.finish()
        if writer:
            job.finish(done, True)
    return Outcome(done, resumed_at, state)


def resume_line(output: Union[str, Path], done: int, total: Optional[int], unit: str = "rows") -> str:
    """What a resumed run says before it continues: how far the earlier run got, of how many
    (``total`` None where the inputs cannot be counted without consuming them, e.g. stdin).

    >>> resume_line("scores.tsv", 8, 48), resume_line("out.jsonl", 2, None, "items")
    ('resuming scores.tsv after 8 of 48 rows', 'resuming out.jsonl after 2 items')
    """
    of = f" of {total}" if total is not None else ""
    return f"resuming {output} after {done}{of} {unit}"


def splits_across_ranks(scorer: ScorerLike, options: Optional[Dict[str, Any]] = None) -> bool:
    """Whether ``scorer``'s calls (with the call ``options``) are split across the ranks of a
    launch: ``shard=True`` in the options, or a scorer built to shard (its ``shards``).

    >>> splits_across_ranks(object(), {"shard": True}), splits_across_ranks(object())
    (True, False)
    """
    given = (options or {}).get("shard")
    return bool(given) if given is not None else bool(getattr(scorer, "shards", False))


def _agree(ranks: Optional[Ranks], problem: Optional[Exception], value: Any) -> Any:
    """The writer's ``value`` on every rank, or its ``problem`` raised on every rank (none
    waits for a writer that stopped)."""
    agreed, message = broadcast_from_main((value, str(problem) if problem else None), ranks)
    if problem is not None:
        raise problem
    if message is not None:
        raise ArgumentError(message)
    return agreed
