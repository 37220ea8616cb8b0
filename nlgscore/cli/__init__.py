"""`nlgscore` command line: one sub-module per command, each exposing ``register(subparsers)``.

A command module adds its parser with ``subparsers.add_parser(NAME, ...)`` and sets
``parser.set_defaults(func=run)`` where ``run(args) -> int`` returns the exit status. Command
modules import torch, transformers and the metrics only inside ``run``, so ``nlgscore --help``
stays fast.

Exit status: 0 success; 2 a user error: an :class:`~nlgscore.core.errors.NlgscoreError` (a bad
argument or data file, a model not available, a missing extra) or a file the system refuses
(missing, not readable), one line on stderr naming the cause; 130 interrupted (Ctrl-C); 1 anything
else, which is a bug: its traceback is printed (``--debug`` re-raises it instead).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
import warnings
from typing import Optional, Sequence

from nlgscore import registry
from nlgscore.cli.options import add_debug_options, progress_enabled
from nlgscore.core.errors import NlgscoreError

# Order is the order of `nlgscore --help`. Only the command being run is imported (fast --help,
# and a command whose optional dependencies are missing never breaks the others). A metric's own
# command (module nlgscore.cli.<name>) comes from its registry row's ``command`` summary.
COMMANDS = {
    "score": "score with any registered metric, named by a spec (e.g. bertscore:minilm)",
    **{name: registry.metric(name).command for name in registry.metric_names(builtin=True) if registry.metric(name).command},
    "compare": "paired significance tests of systems against a baseline",
    "meta": "meta-evaluate metrics against human judgments (wmt19, wmt21, summeval, MQM/DA folders)",
    "show": "heat map of the token similarities of one pair (greedy matches, idf weights)",
    "bench": "benchmark nlgscore against bert_score and a BARTScore-style loop",
    "mbr": "MBR selection / QE reranking of each JSONL item's candidates under any metric",
    "calibrate": "choose a model's BERTScore layer on human scores and compute its rescale baseline (one file)",
}


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The parser; only the command named in ``argv`` gets its full options (all of them when None)."""
    from nlgscore import __version__

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


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``nlgscore`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load
        print("nlgscore: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    args.argv = argv  # the command line as given, for reports that record it
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    prog = f"nlgscore {args.command}"
    environment = {name: os.environ.get(name) for name in _LIBRARY_SWITCHES}
    try:
        _quiet_libraries(args)
        return int(args.func(args) or 0)
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
        if is_user_error(err):
            print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
            return 2
        traceback.print_exc(file=sys.stderr)
        print(f"{prog}: internal error (a bug in nlgscore; please report it with the traceback above): "
              f"{type(err).__name__}: {one_line(err)}", file=sys.stderr)
        return 1
    finally:  # main() called in-process (tests, notebooks) leaves the environment as it found it
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def is_user_error(err: BaseException) -> bool:
    """An error the user can fix: an :class:`NlgscoreError`, or the file system refusing a path
    (not found, a folder, no permission), which says nothing about nlgscore's code. A plain
    ``ValueError`` or ``TypeError`` is not one: user input is checked with NlgscoreErrors.

    >>> from nlgscore.core.errors import ArgumentError
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
