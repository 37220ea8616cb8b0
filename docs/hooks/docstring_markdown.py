"""griffe extension: the package's docstrings read as Markdown on the site.

The docstrings are written for ``help()`` and doctest: their examples are plain ``>>>`` lines
(``make test`` runs them), which Markdown would read as nested quotes (and ``[1.0, 2.0]`` in an
output line as a link), and they cite names with Sphinx roles (``:func:`decode```). Each run of
doctest lines (prompts and their output, up to a blank or a dedented line) is fenced as ``pycon``,
and a role becomes inline code, before mkdocstrings renders the docstring.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):`~?([^`]+)`")


def roles_as_code(text: str) -> str:
    """Sphinx cross-reference roles as inline code.

    >>> roles_as_code("see :func:`decode` and :class:`~nlgscore.mbr.MBRItem`")
    'see `decode` and `nlgscore.mbr.MBRItem`'
    """
    return ROLE.sub(r"`\1`", text)


def fence_doctests(text: str) -> str:
    r"""``text`` with each run of doctest lines inside a ```` ```pycon ```` fence.

    >>> fence_doctests("Example:\n>>> 1 + 1\n2\n\nEnd.").splitlines()
    ['Example:', '```pycon', '>>> 1 + 1', '2', '```', '', 'End.']
    """
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if not stripped.startswith(">>>"):
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(stripped)]
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DocstringMarkdown(griffe.Extension):
    """Fence the doctest lines and turn the roles of every docstring griffe loads into code."""

    def on_object(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = roles_as_code(fence_doctests(obj.docstring.value))
