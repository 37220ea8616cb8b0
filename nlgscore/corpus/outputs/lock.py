"""One run per output file: an exclusive lock beside the output, held for the whole run.

Two runs writing the same resumable output would interleave their chunks and rename each
other's partial file (a complete-looking file with NUL bytes in place of rows).
:class:`OutputLock` takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``OUT.lock`` and writes its PID
there; a second run is refused at once with an error naming the holder's PID (it never waits).
The kernel drops the lock when its holder exits, a ``kill -9`` included, so a stale lock file
never blocks a re-run. On a platform without ``fcntl`` (Windows) nothing is locked.

>>> import tempfile
>>> out = Path(tempfile.mkdtemp()) / "scores.tsv"
>>> first = OutputLock(out)
>>> OutputLock(out)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: output .../scores.tsv is being written by another run (PID ...); ...
>>> first.release()
>>> OutputLock(out).release()  # free again
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

from nlgscore.corpus.outputs.resumable import check_output_folder
from nlgscore.errors import ArgumentError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

LOCK_SUFFIX = ".lock"


def lock_path(path: Union[str, Path]) -> Path:
    """The lock file of output ``path``: ``OUT.lock`` next to it.

    >>> lock_path("out/scores.jsonl").name
    'scores.jsonl.lock'
    """
    path = Path(path)
    return path.with_name(path.name + LOCK_SUFFIX)


class OutputLock:
    """The exclusive lock of output ``path`` (see the module docstring); :meth:`release` frees it."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.output = Path(path)
        self.path = lock_path(path)
        self._fd: Optional[int] = None
        check_output_folder(self.output)
        if fcntl is None:
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # BlockingIOError: another open file description holds it
                holder = _read_pid(fd)
                os.close(fd)
                raise ArgumentError(
                    f"output {self.output} is being written by another run (PID {holder}); wait for it to finish "
                    f"or write elsewhere (lock file {self.path})"
                ) from None
            if _same_file(fd, self.path):
                break
            os.close(fd)  # its holder removed it between our open and our lock: lock the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file (while still holding it, so no one locks a file about to vanish) and unlock."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "OutputLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the kernel unlocks; the file stays (harmless, see the module docstring)


def _read_pid(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return text if text.isdigit() else "unknown"


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
