"""griffe extension: the package's docstrings read as Markdown on the site.

The docstrings are Google style (``Args:``, ``Returns:``, ``Raises:``, ``Example:``) written for
``help()`` and doctest: their examples are plain ``>>>`` lines (``make test`` runs them), which
Markdown would read as nested quotes (and ``[1.0, 2.0]`` in an output line as a link), and they
cite names with Sphinx roles (``:func:`decode```), which read well in a terminal. Before
mkdocstrings renders a docstring, this extension

* fences each run of doctest lines (prompts and their output, up to a blank or a dedented line)
  as ``pycon``, without the ``# doctest:`` flags, so an example is code on the page;
* turns each role into what the renderer resolves: a cross-reference ``[`name`][nlgscore.face.name]``
  (an autorefs link) when a reference page renders the object it names, found the way Python
  would find the name from the docstring's own scope (its class, its module and what that module
  imports); inline code when the object is internal (no page renders it).

The package docstring is given to ``on_package``, every other object's to ``on_object``. A
``Protocol`` class (``ScorerLike``) loses the placeholder ``__init__`` that ``typing`` gives it,
which griffe cannot resolve and which says nothing about the class. A constant a face re-exports
(``nlgscore.__version__``, a ``str``) has no docstring of its own, and inspection gives it its
type's (``str``'s constructor); it gets the summary of the module it is imported from instead.
The ``Attributes:`` rows of a class with annotated fields (a dataclass, a NamedTuple) get each
field's annotation as their type, which inspection alone does not find.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import sys
from typing import Any, Dict, Iterator, List, Optional

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):`(?P<target>[^`]+)`")
DOCTEST_FLAGS = re.compile(r"\s*#\s*doctest:.*$")
# The public faces, whose ``__all__`` the reference pages render and tests/api snapshots.
FACES = (
    "nlgscore",
    "nlgscore.mbr",
    "nlgscore.stream",
    "nlgscore.serve",
    "nlgscore.meta",
    "nlgscore.extend",
    "nlgscore.registry",
)
_MISSING = object()


def _canonical(value: Any) -> Optional[str]:
    """Where ``value`` is defined: a module's name, a function's or class's ``module.qualname``
    (a property's, its getter's); None for a plain value (a number, a dict).

    >>> _canonical(re.compile), _canonical(re), _canonical(3)
    ('re.compile', 're', None)
    """
    if inspect.ismodule(value):
        return value.__name__
    value = getattr(value, "fget", None) or getattr(value, "__func__", None) or value
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    return f"{module}.{qualname}" if isinstance(module, str) and isinstance(qualname, str) else None


def _documented_members(cls: type) -> Iterator[str]:
    """The public methods and properties ``cls`` itself defines with a docstring: the ones the
    reference renders under the class (inherited ones are rendered under the class that defines them)."""
    for attr, member in vars(cls).items():
        if attr.startswith("_"):
            continue
        function = getattr(member, "__func__", member)
        if (inspect.isfunction(function) or isinstance(member, property)) and inspect.getdoc(member):
            yield attr


def heading_id(face: str, name: str, value: Any) -> str:
    """The id of the heading that renders ``face.name``: its path, except for a function named as
    the submodule it lives in (``nlgscore.mbr.decode``), which griffe finds by the module's path.

    >>> from nlgscore.mbr import decode
    >>> heading_id("nlgscore.mbr", "decode", decode), heading_id("nlgscore", "load", None)
    ('nlgscore.mbr.decode.decode', 'nlgscore.load')
    """
    if not inspect.ismodule(value) and getattr(value, "__module__", None) == f"{face}.{name}":
        return f"{face}.{name}.{value.__name__}"
    return f"{face}.{name}"


@functools.lru_cache(maxsize=None)
def targets() -> Dict[str, str]:
    """Every path a role may name (a face's path or where the object is defined) -> the id of the
    heading that renders it; the first face wins (``Result`` is rendered under ``nlgscore``).

    >>> table = targets()
    >>> table["nlgscore.core.result.Result"], table["nlgscore.registry.load"], table["nlgscore.stream"]
    ('nlgscore.Result', 'nlgscore.load', 'nlgscore.stream')
    """
    table: Dict[str, str] = {}
    for face in FACES:
        table.setdefault(face, face)
        module = importlib.import_module(face)
        for name in module.__all__:
            value = getattr(module, name)
            anchor = heading_id(face, name, value)
            canonical = _canonical(value)
            for path in (f"{face}.{name}", anchor, canonical):
                if path is not None:
                    table.setdefault(path, anchor)
            if inspect.isclass(value):
                for attr in _documented_members(value):
                    for path in (f"{anchor}.{attr}", f"{canonical}.{attr}"):
                        table.setdefault(path, f"{anchor}.{attr}")
    return table


def _lookup(path: str) -> Any:
    """The object at dotted ``path`` as Python finds it: the longest imported module prefix, then
    attributes (what a module imports included); ``_MISSING`` where there is none."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        value: Any = sys.modules.get(".".join(parts[:cut]))
        if value is None:
            continue
        for part in parts[cut:]:
            try:
                value = getattr(value, part)
            except Exception:  # a lazy attribute that fails to import is no target
                return _MISSING
        return value
    return _MISSING


def scopes(path: str) -> List[str]:
    """The scopes a name in the docstring of ``path`` is looked up in, innermost first, then the
    top (an absolute path).

    >>> scopes("nlgscore.core.base.Scorer.compute")[:3]
    ['nlgscore.core.base.Scorer.compute', 'nlgscore.core.base.Scorer', 'nlgscore.core.base']
    >>> scopes("nlgscore")
    ['nlgscore', '']
    """
    parts = path.split(".")
    return [".".join(parts[:cut]) for cut in range(len(parts), 0, -1)] + [""]


def resolve(target: str, scope: str) -> Optional[str]:
    """The heading id ``target`` (a role's name) means in the docstring of ``scope``; None when the
    name is found but no reference page renders it (an internal object), or is not found.

    >>> resolve("Result", "nlgscore.core.result.Result.split"), resolve("ArgumentError", "nlgscore.registry")
    ('nlgscore.Result', 'nlgscore.ArgumentError')
    >>> resolve("RUNTIME_OPTIONS", "nlgscore.core.runtime") is None
    True
    """
    table = targets()
    for where in scopes(scope):
        path = f"{where}.{target}" if where else target
        if path in table:
            return table[path]
        value = _lookup(path)
        if value is not _MISSING:
            return table.get(_canonical(value) or "")
    return None


def roles_as_references(text: str, scope: str) -> str:
    """Sphinx cross-reference roles of the docstring of ``scope`` as autorefs links where a page
    renders the object, else inline code; ``~`` shows the last name only, as in Sphinx.

    >>> roles_as_references("see :func:`~nlgscore.registry.build` and :class:`Scorer`", "nlgscore.core.base")
    'see [`build`][nlgscore.registry.build] and [`Scorer`][nlgscore.extend.Scorer]'
    >>> roles_as_references(":mod:`nlgscore.backend.gemm`", "nlgscore")
    '`nlgscore.backend.gemm`'
    """

    def replace(match: re.Match) -> str:
        target = match.group("target").strip()
        short = target.startswith("~")
        target = target.lstrip("~!.")
        shown = target.rsplit(".", 1)[-1] if short else target
        anchor = resolve(target, scope)
        return f"[`{shown}`][{anchor}]" if anchor else f"`{shown}`"

    return ROLE.sub(replace, text)


def fence_doctests(text: str) -> str:
    r"""``text`` with each run of doctest lines inside a ```` ```pycon ```` fence, without the
    ``# doctest:`` flags (the reader does not need them); lines already fenced are left as they
    are, so fencing twice is fencing once.

    >>> fenced = fence_doctests("Example:\n    >>> 1 + 1  # doctest: +SKIP\n    2\n\nEnd.")
    >>> fenced.splitlines()
    ['Example:', '    ```pycon', '    >>> 1 + 1', '    2', '    ```', '', 'End.']
    >>> fence_doctests(fenced) == fenced
    True
    """
    out: List[str] = []
    lines = text.splitlines()
    fenced = False
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced or not stripped.startswith(">>>"):
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(stripped)]
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
            out.append(DOCTEST_FLAGS.sub("", lines[i]))
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


def constant_docstring(module: str, name: str) -> Optional[str]:
    """The first paragraph of the docstring of the module that ``module`` imports ``name`` from
    (``from nlgscore.version import __version__``); None where it defines ``name`` itself.

    >>> constant_docstring("nlgscore", "__version__").split(",")[0]
    'The package version'
    >>> constant_docstring("nlgscore", "load") is None
    True
    """
    try:
        tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    except (OSError, TypeError, ImportError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if any((alias.asname or alias.name) == name for alias in node.names):
                text = inspect.getdoc(importlib.import_module(node.module)) or ""
                return text.split("\n\n")[0] or None
    return None


def typed_attributes(text: str, annotations: Dict[str, Any]) -> str:
    """``text`` with each row of its ``Attributes:`` section that names an annotated field given
    the field's annotation as its type (``name (type): ...``); rows that have one keep it.

    >>> typed_attributes("A pair.\\n\\nAttributes:\\n    left: the first.\\n    right (int): kept.", {"left": "str"})
    'A pair.\\n\\nAttributes:\\n    left (str): the first.\\n    right (int): kept.'
    """
    out, indent = [], None
    for line in text.splitlines():
        stripped = line.lstrip()
        depth = len(line) - len(stripped)
        if stripped == "Attributes:":
            indent = depth
        elif indent is not None and stripped and depth <= indent:
            indent = None
        elif indent is not None and depth == indent + 4:
            name, colon, rest = stripped.partition(":")
            if colon and name in annotations:
                hint = annotations[name]
                hint = hint if isinstance(hint, str) else getattr(hint, "__name__", repr(hint))
                line = f"{line[:depth]}{name} ({hint}):{rest}"
        out.append(line)
    return "\n".join(out)


def _annotations(cls: type) -> Dict[str, Any]:
    """The annotations of ``cls`` and its bases, the nearest winning."""
    found: Dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        own = vars(base).get("__annotations__")
        if isinstance(own, dict):  # a builtin's is a descriptor, not its fields
            found.update(own)
    return found


def as_markdown(text: str, scope: str) -> str:
    """A docstring of ``scope`` as the site renders it: doctests fenced, roles resolved."""
    return roles_as_references(fence_doctests(text), scope)


class DocstringMarkdown(griffe.Extension):
    """Fence the doctest lines and resolve the roles of every docstring griffe loads."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        if pkg.docstring is not None:
            pkg.docstring.value = as_markdown(pkg.docstring.value, pkg.path)

    def on_object(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.is_attribute and obj.docstring is not None and obj.parent is not None:
            value = _lookup(obj.path)
            if value is not _MISSING and obj.docstring.value == inspect.getdoc(type(value)):
                own = constant_docstring(obj.parent.path, obj.name)
                obj.docstring = griffe.Docstring(own, parent=obj) if own else None
        if obj.docstring is not None:
            obj.docstring.value = as_markdown(obj.docstring.value, obj.path)
            value = _lookup(obj.path) if obj.is_class else _MISSING
            if inspect.isclass(value):
                obj.docstring.value = typed_attributes(obj.docstring.value, _annotations(value))
        init = obj.members.get("__init__") if obj.is_class else None
        if init is not None and init.is_alias and init.target_path.startswith("typing."):
            # a Protocol's placeholder __init__ (typing's): no signature of its own to merge, and
            # griffe cannot resolve it
            del obj.members["__init__"]
