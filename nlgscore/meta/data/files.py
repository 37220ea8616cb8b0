"""One rule for every text file meta-evaluation reads, and one way to write its outputs.

Reading: UTF-8, a leading byte-order mark dropped (editors on Windows add one), anything else
(UTF-16, Latin-1, binary) a ``DataError`` naming the file. Lines are split on ``\\n`` only (a
segment may contain U+2028 and similar separators), a final ``\\r`` is dropped.

Writing: outputs are checked before any work (``check_writable``) and written to a temporary
file in the same folder, then renamed over the target (``nlgscore.corpus.outputs.resumable.write_atomic``), so a crash or a full
disk never leaves a truncated or empty file where the previous one was.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterable, List, Optional, Union

from nlgscore.errors import ArgumentError, DataError

PathLike = Union[str, "os.PathLike[str]"]
BOM = "\ufeff"


def read_text(path: PathLike, what: str = "data file") -> str:
    """The text of ``path`` (UTF-8, BOM dropped); FileNotFoundError / DataError name the file.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = f.write_bytes("\\ufeffa\\nb\\r\\n".encode("utf-8"))
    >>> read_lines(f)
    ['a', 'b']
    >>> _ = f.write_bytes("a".encode("utf-16"))
    >>> read_lines(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.errors.DataError: ...t.txt: not UTF-8 text (byte 0xff at offset 0); save it as UTF-8
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such {what}: {path}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(
            f"{path}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}); save it as UTF-8"
        ) from None
    return text[1:] if text.startswith(BOM) else text


def read_lines(path: PathLike, what: str = "data file") -> List[str]:
    """The lines of ``path`` by :func:`read_text`'s rule, without line ends."""
    text = read_text(path, what)
    if not text:
        return []
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def finite_number(text: str, where: str, what: str = "score") -> float:
    """``text`` as a finite float; DataError naming ``where`` (``file:line``) otherwise.

    >>> finite_number("2.5", "f.tsv:3")
    2.5
    >>> finite_number("inf", "f.tsv:3")
    Traceback (most recent call last):
    ...
    nlgscore.errors.DataError: f.tsv:3: score is 'inf' (NaN or infinite)
    """
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where}: {what} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: {what} is {text!r} (NaN or infinite)")
    return value


def check_writable(paths: Iterable[Optional[PathLike]]) -> None:
    """Fail before the work when an output cannot be written: a missing or read-only folder, a folder
    given as a file. ArgumentError names the output.

    >>> check_writable([None, "out.json"])
    >>> check_writable(["/no/such/folder/out.json"])
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: output /no/such/folder/out.json: folder /no/such/folder does not exist
    """
    for path in paths:
        if path is None:
            continue
        path = Path(path)
        folder = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            raise ArgumentError(f"output {path} is a folder; give a file name")
        if not folder.is_dir():
            raise ArgumentError(f"output {path}: folder {folder} does not exist")
        if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise ArgumentError(f"output {path} is not writable")
