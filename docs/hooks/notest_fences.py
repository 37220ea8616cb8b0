"""mkdocs hook: a code block fenced ```` ```python notest ```` renders like any ```` ```python ```` block.

``notest`` tells the documentation tests not to run a block (tests/docs/test_code_blocks.py); to
Markdown's fence syntax it is an unknown option, which would make the block plain text.
"""

from __future__ import annotations

import re

NOTEST = re.compile(r"^([ \t]*```[\w+-]+)[ \t]+notest[ \t]*$", re.M)


def strip_notest(markdown: str) -> str:
    """``markdown`` with the ``notest`` flag taken off every fence.

    >>> strip_notest("```bash notest\\nmake test\\n```")
    '```bash\\nmake test\\n```'
    """
    return NOTEST.sub(r"\1", markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return strip_notest(markdown)
