"""The package's user-error classes: what the command line reports in one line, exit 2.

An :class:`NlgscoreError` means the caller (or their data) is wrong and the message says how;
anything else escaping the package is a bug and keeps its traceback. The subclasses also
derive from the built-in class callers already catch (``ValueError``/``TypeError``), so
``except ValueError`` keeps working.

>>> from nlgscore.errors import ArgumentError, NlgscoreError
>>> def check_lang(lang: str) -> str:
...     if not lang.isalpha():
...         raise ArgumentError(f"lang must be a language code such as 'en', got {lang!r}")
...     return lang
>>> try:
...     check_lang("e n")
... except NlgscoreError as err:
...     print(f"error: {err}")
error: lang must be a language code such as 'en', got 'e n'
>>> isinstance(ArgumentError("x"), ValueError), isinstance(ArgumentTypeError("x"), TypeError)
(True, True)
"""

from __future__ import annotations


class NlgscoreError(Exception):
    """A mistake the user can fix (argument, data file, missing model or extra); the message says how."""


class ArgumentError(NlgscoreError, ValueError):
    """An argument has a bad value; the message names the argument and what it must be."""


class ArgumentTypeError(NlgscoreError, TypeError):
    """An argument has the wrong type; the message names the argument and the expected type."""


class DataError(NlgscoreError, ValueError):
    """A data file is malformed; the message names the file (and line, where there is one)."""
