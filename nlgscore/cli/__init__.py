"""`nlgscore` command line: one sub-module per command, each exposing ``register(subparsers)``.

A command module adds its parser with ``subparsers.add_parser(NAME, ...)`` and sets
``parser.set_defaults(func=run)`` where ``run(args) -> int`` returns the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Optional, Sequence

# Order is the order of `nlgscore --help`.
COMMANDS = ("bertscore", "prism", "bartscore", "compare", "meta", "show", "bench")


def build_parser() -> argparse.ArgumentParser:
    from nlgscore import __version__

    parser = argparse.ArgumentParser(
        prog="nlgscore",
        description="BERTScore, Prism and BARTScore, exact and fast; meta-evaluation against human judgments.",
    )
    parser.add_argument("--version", action="version", version=f"nlgscore {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="logging level (default: WARNING)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"nlgscore.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"nlgscore.cli.{name}":
                continue  # command not built into this installation
            raise
        module.register(subparsers)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError, OSError) as err:
        # User errors end with one readable line, not a traceback.
        print(f"nlgscore {args.command}: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
