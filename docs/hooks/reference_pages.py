"""mkdocs hook: the Python reference pages render what the code declares.

* Members from ``__all__``: a ``::: FACE`` block whose options say ``members: __all__`` gets the
  face's ``__all__`` as its member list, in that order, less the names the page renders in a
  block of their own (``::: nlgscore.load`` first, with its tables). A name added to a face is
  on its page without an edit, and a name removed leaves it.
* ``<!-- load-specs -->``: one row per spec form ``nlgscore.load`` takes, from the metric table
  (``nlgscore.registry``: each built-in metric's spec syntax, its aliases, a server's URL).
* ``<!-- load-options -->``: the options of every built-in metric, from its option table
  (``nlgscore.core.options``: where it may be set, the default, what it does), then the run-time
  options every scorer takes, once.
"""

from __future__ import annotations

import html
import importlib
import inspect
import re
from typing import List

from docstring_markdown import heading_id, resolve

SPECS_MARKER = "<!-- load-specs -->"
OPTIONS_MARKER = "<!-- load-options -->"
# ``::: PATH`` and its indented options block (up to the first line that is not indented)
BLOCK = re.compile(r"^::: (?P<path>[\w.]+)[ \t]*\n(?P<options>(?:[ \t]+\S.*\n?)*)", re.M)
MEMBERS = re.compile(r"^(?P<indent>[ \t]+)members: __all__[ \t]*$", re.M)


def _class_reference(cls: type) -> str:
    """``cls`` as a link to its heading where a reference page renders it, else as code."""
    anchor = resolve(f"{cls.__module__}.{cls.__qualname__}", "")
    return f"[`{cls.__name__}`][{anchor}]" if anchor else f"`{cls.__name__}`"


def _cell(text: str) -> str:
    r"""A table cell: one line, HTML-escaped, pipes escaped (not a table edge).

    >>> _cell("prism:ref|src <x>")
    'prism:ref\\|src &lt;x&gt;'
    """
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def face_members(face: str, rendered: List[str]) -> List[str]:
    """``face``'s ``__all__`` in its order, less the names whose heading is one of ``rendered``
    (the paths of the page's other ``:::`` blocks).

    >>> face_members("nlgscore.mbr", ["nlgscore.mbr.decode.decode"])[:3]
    ['Choice', 'DecodeSummary', 'MBRItem']
    """
    module = importlib.import_module(face)
    return [name for name in module.__all__ if heading_id(face, name, getattr(module, name)) not in rendered]


def _members(indent: str, names: List[str]) -> str:
    return f"{indent}members:" + "".join(f"\n{indent}  - {name}" for name in names)


def module_block(face: str, name: str) -> str:
    """The block of a module a face names (``nlgscore.bertscore``, the callable module;
    ``nlgscore.meta.tasks``): mkdocstrings renders no module as a member, so it gets a block of its
    own after the face's, with the names of its ``__all__`` that the face does not render itself.

    >>> print(module_block("nlgscore", "bertscore"))
    ::: nlgscore.bertscore
        options:
          members:
            - bertscore
            - default_layer
            - default_model
    """
    outer = importlib.import_module(face)
    inner = importlib.import_module(f"{face}.{name}")
    shown = {id(getattr(outer, other)) for other in outer.__all__}
    names = [member for member in getattr(inner, "__all__", ()) if id(getattr(inner, member)) not in shown]
    return f"::: {face}.{name}\n    options:\n" + _members("      ", names)


def with_members(markdown: str) -> str:
    r"""``markdown`` with each ``members: __all__`` of a ``:::`` block replaced by the face's names
    (a module among them in a block of its own, after the face's).

    >>> page = "::: nlgscore.registry.load\n\n::: nlgscore.registry\n    options:\n      members: __all__\n"
    >>> with_members(page).splitlines()[4:7]
    ['      members:', '        - Metric', '        - SCORER_CACHE_SIZE']
    >>> "- load" in with_members(page)
    False
    """
    blocks = list(BLOCK.finditer(markdown))
    paths = [block.group("path") for block in blocks]

    def options(block: re.Match) -> str:
        face = block.group("path")
        if not MEMBERS.search(block.group("options")):
            return block.group(0)
        module = importlib.import_module(face)
        names = face_members(face, [path for path in paths if path != face])
        modules = [name for name in names if inspect.ismodule(getattr(module, name))]
        listed = MEMBERS.sub(
            lambda match: _members(match.group("indent"), [name for name in names if name not in modules]),
            block.group("options"),
        )
        return f"::: {face}\n{listed}" + "".join(f"\n{module_block(face, name)}\n" for name in modules)

    return BLOCK.sub(options, markdown)


def specs_markdown() -> str:
    """The spec forms of ``nlgscore.load``: each built-in metric's syntax and what it is, its
    aliases, and a running server's URL."""
    from nlgscore import registry

    lines = ["| spec | metric | scorer |", "|---|---|---|"]
    for name in registry.metric_names(builtin=True):
        row = registry.metric(name)
        what, _, syntax = row.help.partition(": ")
        # in code, < > stay as they are, and a pipe is no table edge (Markdown's tables skip code
        # spans), so it is left bare: escaped, the backslash would show
        spec = syntax or name
        lines.append(f"| `{spec}` | {_cell(what)} | {_class_reference(row.scorer_class())} |")
    aliases = ", ".join(f"`{alias}` = `{spec}`" for alias, spec in registry.ALIASES.items())
    lines.append(f"| aliases | {aliases} | |")
    lines.append(
        "| `http://HOST:PORT`, `https://...` | a running `nlgscore serve` (any metric) | "
        "[`RemoteScorer`][nlgscore.serve.RemoteScorer] |"
    )
    return "\n".join(lines)


def _options_table(cls: type, rows: list) -> List[str]:
    from nlgscore.core.options import default_text, where_set

    lines = ["| option | set on | default | what it does |", "|---|---|---|---|"]
    for row in rows:
        lines.append(f"| `{row.name}` | {where_set(row)} | {default_text(cls, row)} | {_cell(row.help)} |")
    return lines


def options_markdown() -> str:
    """A table per built-in metric of its own options (its constructor's and its calls'), then
    the run-time options every scorer takes."""
    from nlgscore import registry
    from nlgscore.core.options import RUNTIME_ROWS, metric_rows

    lines: List[str] = []
    for name in registry.metric_names(builtin=True):
        cls = registry.metric(name).scorer_class()
        lines += [f"#### `{name}` ({_class_reference(cls)})", ""]
        lines += _options_table(cls, list(metric_rows(cls))) + [""]
    lines += ["#### Run-time options (every metric)", ""]
    lines += _options_table(object, list(RUNTIME_ROWS))  # each row states its own default
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "::: " in markdown:
        markdown = with_members(markdown)
    if SPECS_MARKER in markdown:
        markdown = markdown.replace(SPECS_MARKER, specs_markdown())
    if OPTIONS_MARKER in markdown:
        markdown = markdown.replace(OPTIONS_MARKER, options_markdown())
    return markdown
