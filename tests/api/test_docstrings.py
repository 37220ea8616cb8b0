"""Every public callable documents its parameters in one style: Google's ``Args:`` section.

The API reference (mkdocstrings, ``docstring_style: google``) tabulates a callable's parameters
from its ``Args:`` section, and ``help()`` shows the same text: a parameter left out of it has no
row on the page. Checked for every function and class each face's ``__all__`` names, every
public method those classes define, and the public functions and classes of the integration
modules (each adapter is its framework's front door). A parameter whose name starts with ``_`` is
internal and needs no row; a ``Protocol`` has no constructor to document. A class whose parameters
are its fields (a dataclass, a NamedTuple, a msgspec Struct) may document them under ``Attributes:``
instead: they are what a reader reads back from an instance, and the reference tabulates them there.
A class that inherits its constructor from a class of the package is documented by that class.

The docstrings are read with griffe's Google parser, the one the site uses.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from typing import Any, Iterator, List, Tuple

import griffe
import pytest
from faces import FACES

import nlgscore.integrations


def _integration_objects() -> Iterator[Tuple[str, Any]]:
    for info in pkgutil.iter_modules(nlgscore.integrations.__path__):
        name = f"nlgscore.integrations.{info.name}"
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None) or [
            attr
            for attr, value in vars(module).items()
            if not attr.startswith("_")
            and (inspect.isfunction(value) or inspect.isclass(value))
            and value.__module__ == name
        ]
        for attr in names:
            yield f"{name}.{attr}", getattr(module, attr)


def _face_objects() -> Iterator[Tuple[str, Any]]:
    for face in FACES:
        module = importlib.import_module(face)
        for name in module.__all__:
            yield f"{face}.{name}", getattr(module, name)


def public_callables() -> List[Tuple[str, Any]]:
    """(path, object) for every documented callable: the faces' functions and classes (errors
    left out: they take a message), the integrations', and the public methods those classes define."""
    seen, out = set(), []
    for path, value in [*_face_objects(), *_integration_objects()]:
        if inspect.ismodule(value) or not callable(value) or id(value) in seen:
            continue
        if inspect.isclass(value) and issubclass(value, BaseException):
            continue
        seen.add(id(value))
        out.append((path, value))
        if inspect.isclass(value):
            # a dataclass field's default (a function) is the field's value, not a method
            fields = {f.name for f in dataclasses.fields(value)} if dataclasses.is_dataclass(value) else set()
            for attr, member in vars(value).items():
                if attr in fields:
                    continue
                function = getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(function) and id(function) not in seen:
                    seen.add(id(function))
                    out.append((f"{path}.{attr}", function))
    return out


def documented_parameters(text: str, fields: bool = False) -> List[str]:
    """The names of the ``Args:`` section of ``text`` (``**options`` with its stars), and of its
    ``Attributes:`` section with ``fields`` (a class whose parameters are its fields).

    >>> documented_parameters("Score.\\n\\nArgs:\\n    spec: a spec.\\n    **options: more.\\n")
    ['spec', '**options']
    >>> text = "A pair.\\n\\nAttributes:\\n    left: the first.\\n"
    >>> documented_parameters(text), documented_parameters(text, fields=True)
    ([], ['left'])
    """
    kinds = {griffe.DocstringSectionKind.parameters}
    if fields:
        kinds.add(griffe.DocstringSectionKind.attributes)
    sections = griffe.Docstring(text).parse("google", warnings=False)
    return [p.name for s in sections if s.kind in kinds for p in s.value]


def has_fields(value: Any) -> bool:
    """Whether ``value`` is a class whose constructor takes its fields: a dataclass, a NamedTuple
    or a msgspec Struct.

    >>> from typing import NamedTuple
    >>> has_fields(NamedTuple("Pair", [("left", int)])), has_fields(dict)
    (True, False)
    """
    if not inspect.isclass(value):
        return False
    named_tuple = issubclass(value, tuple) and hasattr(value, "_fields")
    return dataclasses.is_dataclass(value) or named_tuple or hasattr(value, "__struct_fields__")


def needed_parameters(value: Any) -> List[str]:
    """The parameters of ``value``'s signature a reader passes: ``self``/``cls`` and ``_private``
    ones left out, stars kept (``**options``); none for a Protocol."""
    if inspect.isclass(value) and getattr(value, "_is_protocol", False):
        return []
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return []
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [
        stars.get(p.kind, "") + p.name
        for p in parameters
        if p.name not in ("self", "cls") and not p.name.startswith("_")
    ]


def docstring_text(value: Any) -> str:
    """What the reference renders for ``value``: its docstring, and a class's ``__init__``'s merged in."""
    text = inspect.getdoc(value) or ""
    if inspect.isclass(value) and "__init__" in vars(value):
        text += "\n\n" + (inspect.getdoc(vars(value)["__init__"]) or "")
    return text


def constructor_owner(value: Any) -> Any:
    """The class of the package whose docstring documents ``value``'s parameters: ``value``
    itself, or for a class that inherits its constructor, the package's class that defines it.

    >>> from nlgscore.remote.client import RemoteResult
    >>> from nlgscore.core.result import Result
    >>> constructor_owner(RemoteResult) is Result, constructor_owner(Result) is Result
    (True, True)
    """
    if not inspect.isclass(value) or "__init__" in vars(value):
        return value
    owner = next((cls for cls in value.__mro__ if "__init__" in vars(cls)), object)
    return owner if owner.__module__.startswith("nlgscore.") else value


CALLABLES = public_callables()


def test_the_survey_finds_the_surface():
    paths = {path for path, _ in CALLABLES}
    assert {"nlgscore.load", "nlgscore.BERTScorer", "nlgscore.extend.Scorer.compute"} <= paths
    assert any(path.startswith("nlgscore.integrations.trl.") for path in paths)


@pytest.mark.parametrize(("path", "value"), CALLABLES, ids=[path for path, _ in CALLABLES])
def test_every_parameter_has_a_row_in_args(path, value):
    needed = needed_parameters(value)
    if not needed:
        return
    owner, fields = constructor_owner(value), has_fields(value)
    text = docstring_text(value) + ("" if owner is value else "\n\n" + docstring_text(owner))
    section = "Args: or Attributes:" if fields else "Args:"
    assert "Args:" in text or (fields and "Attributes:" in text), f"{path} takes {needed} but has no {section} section"
    missing = [name for name in needed if name not in documented_parameters(text, fields)]
    assert not missing, f"{path}'s Args: section has no row for {missing}"


@pytest.mark.parametrize(("path", "value"), CALLABLES, ids=[path for path, _ in CALLABLES])
def test_no_row_names_a_parameter_the_signature_lacks(path, value):
    needed = needed_parameters(value)
    # an Attributes: section may also list what is not a parameter (a property): only Args: is checked
    extra = [name for name in documented_parameters(docstring_text(value)) if name not in needed]
    assert not extra, f"{path} documents {extra}, which it does not take"
