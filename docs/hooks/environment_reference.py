"""mkdocs hook: the environment-variable reference is generated from ``nlgscore.envs`` at build time.

``docs/reference/environment.md`` holds the marker ``<!-- environment-variables -->``; this hook
replaces it with one table row per :data:`nlgscore.envs.VARIABLES` row (name, what it takes, its
default, what it does, whether it changes a number and the signature field that records it, the
scorer option whose ``"auto"`` reads it), so the page lists exactly the variables the package reads.
"""

from __future__ import annotations

import html

MARKER = "<!-- environment-variables -->"
TAKES = {
    "bool": "1, true, yes, on / 0, false, no, off",
    "int": "a positive integer",
    "str": "text",
    "path": "a folder",
}


def _cell(text: str) -> str:
    r"""A table cell: one line, HTML-escaped, pipes escaped (not a table edge).

    >>> _cell("owner/name[@revision] | none")
    'owner/name[@revision] \\| none'
    """
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def environment_markdown() -> str:
    """The table of every variable, in the order of ``nlgscore.envs.VARIABLES``."""
    from nlgscore import envs

    lines = [
        "| variable | takes | default (unset or empty) | what it does | changes a number | scorer option |",
        "|---|---|---|---|---|---|",
    ]
    for row in envs.VARIABLES:
        numbers = f"yes: the signature's `{row.signature}:` field" if row.changes_numbers else "no"
        option = f'`{row.option}=` (`"auto"` reads it)' if row.option else ""
        lines.append(
            f"| `{row.name}` | {_cell(TAKES[row.kind])} | {_cell(row.default_text)} | {_cell(row.doc)} "
            f"| {numbers} | {option} |"
        )
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, environment_markdown())
