"""`nlgscore` command line: one sub-module per command, each exposing ``register(subparsers)``.

A command module adds its parser with ``subparsers.add_parser(NAME, ...)`` and sets
``parser.set_defaults(func=run)`` where ``run(args) -> int`` returns the exit status. Command
modules import torch, transformers and the metrics only inside ``run``, so ``nlgscore --help``
stays fast.

Exit status: 0 success; 2 a user error: an :class:`~nlgscore.errors.NlgscoreError` (a bad
argument or data file, a model not available, a missing extra), a file the system refuses
(missing, not readable) or an output that cannot be written (a full disk, stdout included: every
write to stdout is checked and flushed before the exit status is decided), one line on stderr
naming the cause; 130 interrupted (Ctrl-C); 1 anything
else, which is a bug: its traceback is printed (``--debug`` re-raises it instead). A warning
(``warnings`` or ``logging``) is one line on stderr, ``nlgscore: warning: ...``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import logging
import os
import sys
import traceback
import warnings
from typing import Any, List, Optional, Sequence, TextIO, TypeGuard

from nlgscore import registry
from nlgscore.cli.options import add_debug_options, input_line, progress_enabled
from nlgscore.errors import NlgscoreError

# Order is the order of `nlgscore --help`. Only the command being run is imported (fast --help,
# and a command whose optional dependencies are missing never breaks the others). A metric's own
# command (module nlgscore.cli.<name>) comes from its registry row's ``command`` summary.
COMMANDS = {
    "score": "score with any registered metric, named by a spec (e.g. bertscore:minilm)",
    **{
        name: registry.metric(name).command
        for name in registry.metric_names(builtin=True)
        if registry.metric(name).command
    },
    "compare": "paired significance tests of systems against a baseline",
    "meta": "meta-evaluate metrics against human judgments (wmt19, wmt21, summeval, MQM/DA folders)",
    "show": "heat map of the token similarities of one pair (greedy matches, idf weights)",
    "bench": "time nlgscore's BERTScore against bert_score's on your files: speed and agreement",
    "mbr": "MBR selection / QE reranking of each JSONL item's candidates under any metric",
    "serve": "serve a metric over HTTP: concurrent requests micro-batched, OpenRLHF's /get_reward, Prometheus /metrics",
    "calibrate": "choose a model's BERTScore layer on human scores and compute its rescale baseline (one file)",
}


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The parser; only the command named in ``argv`` gets its full options (all of them when None)."""
    from nlgscore.version import __version__

    parser = argparse.ArgumentParser(
        prog="nlgscore",
        description="BERTScore, Prism and BARTScore, exact and fast; meta-evaluation against human judgments. "
        "Every scoring command reads -c candidates, -r references and -s sources files ('-' = stdin).",
    )
    parser.add_argument("--version", action="version", version=f"nlgscore {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="logging level (default: WARNING)")
    add_debug_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = set(COMMANDS) if argv is None else {next((a for a in argv if a in COMMANDS), None)}
    for name, summary in COMMANDS.items():
        if name not in chosen:
            subparsers.add_parser(name, help=summary, add_help=False)
            continue
        try:
            module = importlib.import_module(f"nlgscore.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"nlgscore.cli.{name}":
                continue  # command not built into this installation
            raise
        module.register(subparsers)
    return parser


_LIBRARY_SWITCHES = ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")


def _quiet_libraries(args: argparse.Namespace) -> None:
    """Progress bars and warnings of the libraries follow --no-progress / --quiet."""
    if getattr(args, "quiet", False):
        warnings.simplefilter("ignore")
        logging.getLogger().setLevel(logging.ERROR)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        if "transformers.utils.logging" in sys.modules:
            sys.modules["transformers.utils.logging"].set_verbosity_error()
    if not progress_enabled(args):
        # transformers' "Loading weights" bars read this when huggingface_hub/transformers are
        # imported; modules already imported (a second in-process call) are told directly, so
        # --no-progress never costs an import.
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
        if "huggingface_hub.utils" in sys.modules:
            sys.modules["huggingface_hub.utils"].disable_progress_bars()
        if "transformers.utils.logging" in sys.modules:
            sys.modules["transformers.utils.logging"].disable_progress_bar()


def warning_line(message: Warning | str, category: type) -> str:
    """A warning as the command line prints it: one line, no source path or code line.

    >>> warning_line(UserWarning("BERTScore: 3 input(s) longer than 512 tokens\\nwere truncated"), UserWarning)
    'nlgscore: warning: BERTScore: 3 input(s) longer than 512 tokens were truncated'
    >>> warning_line(FutureWarning("x is deprecated"), FutureWarning)
    'nlgscore: warning: FutureWarning: x is deprecated'
    """
    kind = "" if category is UserWarning else f"{category.__name__}: "
    return f"nlgscore: warning: {kind}{' '.join(str(message).split())}"


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` while a command runs: the warning's text, not Python's
    ``path:line: Category: text`` and the source line (which are nlgscore's internals)."""
    try:
        print(warning_line(message, category), file=file or sys.stderr)
    except OSError:
        pass  # stderr gone: as warnings' own printer, never fail the command over a warning


class _LineFormatter(logging.Formatter):
    """Log records as the command line's other messages: ``nlgscore: warning: text``, one line.

    >>> record = logging.LogRecord("nlgscore.backend.batching", logging.WARNING, "", 0, "out of memory; retrying with %d", (64,), None)
    >>> _LineFormatter().format(record)
    'nlgscore: warning: out of memory; retrying with 64'
    """

    def format(self, record: logging.LogRecord) -> str:
        return f"nlgscore: {record.levelname.lower()}: {' '.join(super().format(record).split())}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``nlgscore`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    finally:  # main() called in-process (tests, notebooks) leaves Python's printer as it was
        warnings.showwarning = shown


def _main(argv: List[str]) -> int:
    try:
        parser = build_parser(argv)
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load
        print("nlgscore: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    args.argv = argv  # the command line as given, for reports that record it
    handler = logging.StreamHandler()
    handler.setFormatter(_LineFormatter())
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING), handlers=[handler])
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    prog = f"nlgscore {args.command}"
    environment = {name: os.environ.get(name) for name in _LIBRARY_SWITCHES}
    stdout = sys.stdout
    try:
        _quiet_libraries(args)
        sys.stdout = checked_stdout(stdout)
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a write that fails now is this command's failure, not a silent exit 0
        return status
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`nlgscore ... --seg | head`): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as err:
        if args.debug:
            raise
        if is_write_error(err):
            _drop_unwritten(stdout)
            print(f"{prog}: error: {write_error_line(err, args)}", file=sys.stderr)
            return 2
        if is_user_error(err):
            print(f"{prog}: error: {one_line(input_line(err, args))}", file=sys.stderr)
            return 2
        traceback.print_exc(file=sys.stderr)
        print(
            f"{prog}: internal error (a bug in nlgscore; please report it with the traceback above): "
            f"{type(err).__name__}: {one_line(err)}",
            file=sys.stderr,
        )
        return 1
    finally:  # main() called in-process (tests, notebooks) leaves the environment as it found it
        _restore_stdout(stdout)
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _FullWrites(io.RawIOBase):
    """A file descriptor whose ``write`` writes every byte or raises: Python 3.11's buffered stdout
    returns a short count for one large write into a full disk and drops the error (exit 0 with a
    truncated file); ``os.write`` in a loop raises ``ENOSPC`` on the write that cannot proceed."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        while view:
            try:
                written = os.write(self._fd, view)
            except OSError as err:
                if err.errno in _WRITE_ERRNOS:
                    raise OSError(err.errno, err.strerror, "<stdout>") from None
                raise
            view = view[written:]
        return len(data)


def checked_stdout(stream: TextIO) -> TextIO:
    """``stream`` (the process's real stdout) rewrapped so that a failed write raises
    (:class:`_FullWrites`); anything else (a test's captured stdout, a notebook) is returned as is."""
    if stream is not sys.__stdout__ or not isinstance(stream, io.TextIOWrapper):
        return stream
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return stream
    stream.flush()
    buffered = io.BufferedWriter(_FullWrites(fd))
    return io.TextIOWrapper(
        buffered,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=False,
    )


def _restore_stdout(original: TextIO) -> None:
    wrapper, sys.stdout = sys.stdout, original
    if wrapper is not original:
        try:
            wrapper.flush()
        except OSError:
            pass  # already reported (the command ended with its write error)
        if isinstance(wrapper, io.TextIOWrapper):
            wrapper.detach()  # the descriptor stays open: it is the original stdout's


def _drop_unwritten(stdout: TextIO) -> None:
    """After a failed write to stdout, what is still buffered would fail again at exit
    ("Exception ignored ..."): point the descriptor at /dev/null, as after a broken pipe."""
    try:
        fd = stdout.fileno()
    except (OSError, ValueError):
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


# errno values meaning "the output could not be written": a full disk or quota, a file too large,
# a read-only file system, an I/O error of the device.
_WRITE_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EIO") if hasattr(errno, name)
)


def is_write_error(err: BaseException) -> TypeGuard[OSError]:
    """An output that could not be written (full disk, quota, read-only file system, I/O error).

    >>> is_write_error(OSError(errno.ENOSPC, "No space left on device")), is_write_error(OSError(errno.EBADF, "x"))
    (True, False)
    """
    return isinstance(err, OSError) and err.errno in _WRITE_ERRNOS


# Flags naming a command's output files, for a write error that does not name its file.
_OUTPUT_FLAGS = {
    "output": "-o",
    "json_out": "--json-out",
    "csv": "--csv",
    "matrix_out": "--matrix-out",
    "export_scores": "--export-scores",
    "plot": "--plot",
    "markdown": "--markdown",
}


def write_error_line(err: OSError, args: argparse.Namespace) -> str:
    """One line for a failed write, naming the file (stdout, or the command's output flags).

    >>> write_error_line(OSError(errno.ENOSPC, "No space left on device", "<stdout>"), argparse.Namespace())
    'cannot write to stdout: No space left on device'
    >>> write_error_line(OSError(errno.ENOSPC, "No space left on device"), argparse.Namespace(output="out.tsv"))
    'cannot write the output (-o out.tsv): No space left on device'
    """
    cause = err.strerror or str(err)
    if err.filename == "<stdout>":
        return f"cannot write to stdout: {cause}"
    if err.filename is not None:
        return f"cannot write {err.filename}: {cause}"
    given = [
        f"{flag} {getattr(args, dest)}"
        for dest, flag in _OUTPUT_FLAGS.items()
        if getattr(args, dest, None) not in (None, False, "")
    ]
    return f"cannot write the output ({', '.join(given)}): {cause}" if given else f"cannot write the output: {cause}"


def is_user_error(err: BaseException) -> bool:
    """An error the user can fix: an :class:`NlgscoreError`, or the file system refusing a path
    (not found, a folder, no permission), which says nothing about nlgscore's code. A plain
    ``ValueError`` or ``TypeError`` is not one: user input is checked with NlgscoreErrors.

    >>> from nlgscore.errors import ArgumentError
    >>> is_user_error(ArgumentError("bad")), is_user_error(FileNotFoundError(2, "No such file", "x.txt"))
    (True, True)
    >>> is_user_error(ValueError("an internal invariant")), is_user_error(KeyError("x"))
    (False, False)
    """
    return isinstance(err, (NlgscoreError, *_PATH_ERRORS)) or (isinstance(err, OSError) and err.filename is not None)


# The file system refusing a path the user gave (raised by nlgscore with a message naming it, or by Python).
_PATH_ERRORS = (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError)


def one_line(err: BaseException) -> str:
    """The error's message on one line (file errors keep their file name).

    >>> one_line(ValueError("first\\nsecond"))
    'first second'
    """
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        text = f"{err.strerror}: {err.filename}"
    else:
        text = str(err) or type(err).__name__
        if isinstance(err, KeyError) and err.args:
            text = f"missing key {err.args[0]!r}"
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
