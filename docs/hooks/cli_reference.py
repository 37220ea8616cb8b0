"""mkdocs hook: the command-line reference is generated from the argparse parsers at build time.

``docs/reference/cli.md`` holds the marker ``<!-- cli-reference -->``; this hook replaces it with
every command of ``nlgscore.cli.build_parser()`` (usage, then one row per option with its help),
so the page cannot drift from the flags the commands accept. Nested commands (``nlgscore meta
wmt19`` ...) get a section each. argparse has no public way to walk a parser's actions or expand
an action's help; this reads them as sphinx-argparse does (``_actions``, the help formatter).
"""

from __future__ import annotations

import argparse
import html

MARKER = "<!-- cli-reference -->"


def _cell(text: str) -> str:
    r"""A table cell: one line, HTML-escaped; pipes and brackets escaped (not a table edge or a link).

    >>> _cell("prism:ref|src[:LANG] <x>")
    'prism:ref\\|src&#91;:LANG&#93; &lt;x&gt;'
    """
    return html.escape(" ".join(text.split())).replace("|", "\\|").replace("[", "&#91;").replace("]", "&#93;")


def subcommands(parser: argparse.ArgumentParser) -> dict:
    for action in parser._actions:  # argparse has no public accessor for its sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)) or action.help == argparse.SUPPRESS:
            continue
        names = ", ".join(f"`{name}`" for name in action.option_strings) or f"`{action.dest}` (positional)"
        value = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ""
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {names} | {_cell(value)} | {_cell(help_text)} |")
    return rows


def _command_section(path: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = [f"{'#' * level} `{path}`", ""]
    if parser.description:
        lines += [_cell(parser.description), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    rows = _option_rows(parser)
    if rows:
        lines += ["| option | value | what it does |", "|---|---|---|", *rows, ""]
    for name, sub in subcommands(parser).items():
        lines += _command_section(f"{path} {name}", sub, min(level + 1, 4))
    return lines


def cli_markdown() -> str:
    """Every command's section, in the order of ``nlgscore --help``."""
    from nlgscore.cli import COMMANDS, build_parser

    top = build_parser([])
    lines = ["```text", top.format_help().strip(), "```", ""]
    for name in COMMANDS:
        commands = subcommands(build_parser([name]))
        if name in commands:
            lines += _command_section(f"nlgscore {name}", commands[name], 2)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_markdown())
