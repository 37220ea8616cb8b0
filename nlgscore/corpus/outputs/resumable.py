"""Output files that survive a kill: finished chunks on disk as they come, resumed by a re-run.

:class:`ResumableOutput` writes ``OUT`` through two sidecar files next to it:

* ``OUT.partial``: the finished chunks, appended in input order (never named like a complete file);
* ``OUT.ckpt.json``: the checkpoint, i.e. the run's ``identity`` (inputs, signature, settings: a flat
  dict of strings/numbers), how many items are done, the byte length of ``OUT.partial`` that holds
  them, its SHA-256 and line count, and a caller ``state`` (e.g. running sums).

Each item is one line of output; a header's lines are counted apart. A resume verifies what it
reuses: the partial file's first ``bytes`` must have the recorded SHA-256 and hold one line per
item done (plus the header's), else it is refused naming what differs (a partial file changed
after the checkpoint, a count raised by hand), never finished short.

Each chunk is appended and fsync'd *before* the checkpoint is atomically replaced, so after a
kill at any moment the checkpoint names a prefix that is fully on disk; a resumed run truncates
whatever was appended past it (at most one chunk is recomputed). :meth:`ResumableOutput.finish`
renames ``OUT.partial`` to ``OUT`` (atomic on one file system), so a file named ``OUT`` is always
complete. A checkpoint written for other inputs or settings is refused with an error naming
what differs; ``restart=True`` discards it. For byte-identical numbers after a resume, record
:func:`kernel_in_use` in the state and score under :func:`same_kernel` of the recorded kernel
(each process otherwise picks its CPU matmul kernel by timing, and the two round differently).

>>> import tempfile
>>> out = Path(tempfile.mkdtemp()) / "scores.tsv"
>>> writer = ResumableOutput(out, {"metric": "toy", "window": 2}, header="score\\n")
>>> writer.append("0.5\\n0.25\\n", 2, state={"sum": 0.75})
>>> del writer  # as if killed here: OUT does not exist yet
>>> out.exists(), out.with_name("scores.tsv.partial").exists()
(False, True)
>>> again = ResumableOutput(out, {"metric": "toy", "window": 2})
>>> again.done, again.state
(2, {'sum': 0.75})
>>> again.append("1.0\\n", 1, state={"sum": 1.75})
>>> again.finish().read_text()
'score\\n0.5\\n0.25\\n1.0\\n'
>>> ResumableOutput(out.with_name("other.tsv"), {"metric": "toy"}).done
0
>>> ResumableOutput(out.with_name("other.tsv"), {"metric": "other"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: cannot resume .../other.tsv from .../other.tsv.ckpt.json: metric: 'toy' → 'other'; ...
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Union

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, DataError

PARTIAL_SUFFIX = ".partial"
CHECKPOINT_SUFFIX = ".ckpt.json"
CHECKPOINT_VERSION = 2  # 2: the partial file's sha256 and header lines are recorded and verified


def sidecar_paths(path: Union[str, Path]) -> Dict[str, Path]:
    """The two files next to ``path`` that a resumable run writes (``partial``, ``checkpoint``).

    >>> sorted(p.name for p in sidecar_paths("out/scores.jsonl").values())
    ['scores.jsonl.ckpt.json', 'scores.jsonl.partial']
    """
    path = Path(path)
    return {
        "partial": path.with_name(path.name + PARTIAL_SUFFIX),
        "checkpoint": path.with_name(path.name + CHECKPOINT_SUFFIX),
    }


def check_output_folder(path: Path) -> None:
    """Refuse an output whose folder does not exist (before any work), naming both."""
    if not path.parent.is_dir():
        raise ArgumentError(f"output folder does not exist: {path.parent} (for {path})")


def describe_mismatch(old: Dict[str, Any], new: Dict[str, Any]) -> str:
    """``key: old → new`` for every key whose value differs (a missing key shows as None); for
    two signatures, the fields that differ (``signature dtype: float32 → bfloat16``), not the
    two long strings.

    >>> describe_mismatch({"a": 1, "b": "x"}, {"a": 2, "b": "x", "c": 3})
    'a: 1 → 2; c: None → 3'
    >>> describe_mismatch({"signature": "nlgscore:toy|L:2|dtype:float32"}, {"signature": "nlgscore:toy|L:2|dtype:bfloat16"})
    'signature dtype: float32 → bfloat16'
    """
    keys = list(old) + [key for key in new if key not in old]
    return "; ".join(_difference(key, old.get(key), new.get(key)) for key in keys if old.get(key) != new.get(key))


def _difference(key: str, old: Any, new: Any) -> str:
    fields_old, fields_new = _signature_fields(old), _signature_fields(new)
    if fields_old is None or fields_new is None:
        return f"{key}: {_short(old)} → {_short(new)}"
    names = list(fields_old) + [name for name in fields_new if name not in fields_old]
    changed = [
        f"{name}: {fields_old.get(name, 'none')} → {fields_new.get(name, 'none')}"
        for name in names
        if fields_old.get(name) != fields_new.get(name)
    ]
    return f"{key} " + ", ".join(changed)


def _signature_fields(value: Any) -> Optional[Dict[str, str]]:
    """The fields of a signature string (``nlgscore:...|key:value|...``), else None."""
    if not isinstance(value, str) or not value.startswith("nlgscore:"):
        return None
    from nlgscore.core.signature import Signature

    try:
        return Signature.parse(value).to_dict()
    except ArgumentError:
        return None


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def write_atomic(path: Union[str, Path], data: Union[str, bytes]) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file in the same folder, fsync'd,
    and an atomic rename: a crash leaves the old file or the new one, never a part (a unique
    temporary name, so two writers never share one; removed on failure). The one atomic write of
    the package (checkpoints, meta's score cache, reports).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "out.json"
    >>> write_atomic(f, "{}\\n"); f.read_text()
    '{}\\n'
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class ResumableOutput:
    """A text output written chunk by chunk, resumable after a kill (see the module docstring).

    ``identity`` must describe everything that changes the output (input files' size and hash,
    the scorer's signature, chunking and format settings). ``header`` is written once at the
    start of a fresh file. ``restart=True`` ignores and replaces an existing checkpoint.
    """

    def __init__(
        self, path: Union[str, Path], identity: Dict[str, Any], *, header: str = "", restart: bool = False
    ) -> None:
        self.path = Path(path)
        sidecars = sidecar_paths(self.path)
        self.partial, self.checkpoint = sidecars["partial"], sidecars["checkpoint"]
        self.identity = json.loads(json.dumps(identity))  # what a reload would compare against
        check_output_folder(self.path)
        self.done, self._bytes, self._header_lines = 0, 0, 0
        self.state: Dict[str, Any] = {}
        self._hash = hashlib.sha256()
        self.resumed = False
        if self.checkpoint.exists() and not restart:
            self._resume()
        else:
            self._start(header)

    # -- opening ------------------------------------------------------------------------------
    def _start(self, header: str) -> None:
        data = header.encode("utf-8")
        with open(self.partial, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        self._bytes, self._header_lines = len(data), data.count(b"\n")
        self._hash.update(data)
        self._save(complete=False)

    def _resume(self) -> None:
        try:
            saved = json.loads(self.checkpoint.read_text(encoding="utf-8"))
            if saved.get("version") != CHECKPOINT_VERSION:
                raise ValueError(
                    f"version {saved.get('version')!r}, this nlgscore writes and verifies version {CHECKPOINT_VERSION}"
                )
            done, size, state, identity = (
                int(saved["done"]),
                int(saved["bytes"]),
                dict(saved["state"]),
                dict(saved["identity"]),
            )
            digest, header_lines = str(saved["sha256"]), int(saved["header_lines"])
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise DataError(
                f"checkpoint {self.checkpoint} is unreadable ({err}); delete it or pass --restart"
            ) from None
        if identity != self.identity:
            raise ArgumentError(
                f"cannot resume {self.path} from {self.checkpoint}: {describe_mismatch(identity, self.identity)}; "
                "run the same command as before, or pass --restart to start over"
            )
        if saved.get("complete") and not self.partial.exists() and self.path.exists():
            os.replace(self.path, self.partial)  # killed between the final rename and the clean-up
        if not self.partial.exists() or self.partial.stat().st_size < size:
            raise DataError(
                f"{self.partial} is missing or shorter than its checkpoint {self.checkpoint} says; pass --restart"
            )
        lines = self._read_prefix(size)
        where = f"cannot resume {self.path}: {self.partial}"
        if self._hash.hexdigest() != digest:
            raise DataError(
                f"{where} is not what its checkpoint {self.checkpoint} recorded (its first {size} bytes have another "
                "SHA-256: changed after the checkpoint); pass --restart"
            )
        if lines != done + header_lines:
            raise DataError(
                f"{where} holds {lines - header_lines} item rows but its checkpoint {self.checkpoint} counts {done}; "
                "pass --restart"
            )
        with open(self.partial, "r+b") as handle:
            handle.truncate(size)  # drop a chunk appended after the last checkpoint
        self.done, self.state, self._bytes, self._header_lines, self.resumed = done, state, size, header_lines, True

    def _read_prefix(self, size: int) -> int:
        """Hash the partial file's first ``size`` bytes (into ``_hash``); their line count."""
        lines, left = 0, size
        with open(self.partial, "rb") as handle:
            while left:
                block = handle.read(min(left, 1 << 20))
                self._hash.update(block)
                lines += block.count(b"\n")
                left -= len(block)
        return lines

    def _save(self, complete: bool) -> None:
        record = {
            "version": CHECKPOINT_VERSION,
            "identity": self.identity,
            "done": self.done,
            "bytes": self._bytes,
            "sha256": self._hash.hexdigest(),
            "header_lines": self._header_lines,
            "state": self.state,
            "complete": complete,
        }
        write_atomic(self.checkpoint, json.dumps(record, ensure_ascii=False, indent=1))

    # -- writing ------------------------------------------------------------------------------
    def append(self, text: str, count: int, state: Optional[Dict[str, Any]] = None, *, header: str = "") -> None:
        """Append ``header`` (lines that are not items) and ``text`` holding ``count`` more finished
        items, one line each, then checkpoint (with ``state``)."""
        self._header_lines += header.count("\n")
        data = (header + text).encode("utf-8")
        with open(self.partial, "r+b") as handle:
            handle.seek(self._bytes)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        self._bytes += len(data)
        self._hash.update(data)
        self.done += count
        if state is not None:
            self.state = json.loads(json.dumps(state))
        self._save(complete=False)

    def finish(self) -> Path:
        """Publish the output: ``OUT.partial`` becomes ``OUT`` atomically; the checkpoint is removed."""
        self._save(complete=True)
        os.replace(self.partial, self.path)
        self.checkpoint.unlink()
        return self.path


def kernel_in_use(scorer: ScorerLike) -> Optional[str]:
    """The CPU linear kernel (``onednn``/``mkl``) the scorer runs; None off CPU.

    A model scorer says its own (``scorer.kernel``: its ``kernel=`` as its load resolved it);
    another, the kernel this process chose last for its dtype. A resumable writer records it
    in its checkpoint state and runs under :func:`same_kernel` of the recorded one, so that a
    resumed run computes the same bits.
    """
    if not str(getattr(scorer, "device", "cpu")).startswith("cpu"):
        return None
    from nlgscore.backend.gemm import KERNELS, kernel_choice

    own = getattr(scorer, "kernel", None)
    if own in KERNELS:
        return own
    dtype = str(getattr(scorer, "dtype", "float32")).replace("torch.", "")
    return kernel_choice(dtype if dtype in ("float32", "bfloat16") else "float32")["kernel"]


@contextmanager
def same_kernel(kernel: Optional[str]) -> Iterator[None]:
    """Run with the CPU linear ``kernel`` of the run being resumed.

    The two kernels round differently in the last bits, and the machine's rule or the scorer's
    ``kernel=`` may pick another one in the resuming process (:mod:`nlgscore.backend.gemm`); a
    resumed run must use the first run's kernel for its output to be byte-identical, so every
    loaded model runs ``kernel`` for the run and its own one after.
    """
    from nlgscore.backend.gemm import loaded_models_on

    with loaded_models_on(kernel):
        yield
