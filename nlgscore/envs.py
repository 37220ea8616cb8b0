"""Every ``NLGSCORE_*`` environment variable, one row each, and the one place they are read.

A row (:class:`Variable`) holds a variable's name, how its text becomes a value (``bool``,
``int``, ``str`` or ``path``), its default, one line saying what it does, and, where it changes a
number, the signature field that records it and the scorer option whose ``"auto"`` reads it. The
rows are read at call time, never cached: a test sets and unsets them, and a long-lived process
sees a change at its next read. A bad value is an :class:`~nlgscore.errors.ArgumentError` naming
the variable and what it takes, at the read.

The module sits just above the ground floor, below every room (it imports nothing of the package
but ``nlgscore.errors``), so every room reads its switches here; the documentation's list of
variables is generated from :data:`VARIABLES` when the site builds.

>>> env = {"NLGSCORE_ONEDNN": " Yes ", "NLGSCORE_THREADS": "4"}
>>> ONEDNN.get(env), THREADS.get(env), TOKEN_FORWARD.get(env), CACHE.get(env)
(True, 4, False, None)
>>> ONEDNN.signature, variable("NLGSCORE_TOKEN_FORWARD").option
('kernel', 'forward')
>>> THREADS.get({"NLGSCORE_THREADS": "many"})
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: NLGSCORE_THREADS must be a positive integer, got 'many'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, MutableMapping, Optional, Tuple

from nlgscore.errors import ArgumentError

__all__ = ["KINDS", "VARIABLES", "Variable", "cache_folder", "variable"]

# How a variable's text becomes its value.
KINDS = ("bool", "int", "str", "path")
# The spellings a bool switch takes (case and surrounding spaces ignored); empty or unset is its default.
ON, OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, parser, default and what it does.

    Attributes:
        name: The variable, ``NLGSCORE_...``.
        kind: How its text becomes the value (:data:`KINDS`): ``bool`` takes :data:`ON`/:data:`OFF`,
            ``int`` a positive integer, ``str`` any text, ``path`` a folder (``~`` expanded).
        doc: One line: what it does.
        default: The value when the variable is unset or empty.
        default_doc: The default in words where the value does not say it (None: the CPU's rule).
        signature: The signature field that records its effect where it changes a number; empty
            where it changes none.
        option: The scorer option whose ``"auto"`` reads this variable (empty: none).
    """

    name: str
    kind: str
    doc: str
    default: Any = None
    default_doc: str = ""
    signature: str = ""
    option: str = ""

    def __post_init__(self) -> None:
        if not self.name.startswith("NLGSCORE_") or self.kind not in KINDS:
            raise ValueError(f"variable {self.name}: the name starts NLGSCORE_ and kind is one of {KINDS}")

    @property
    def changes_numbers(self) -> bool:
        """Whether the variable can change a score (its effect is then recorded in :attr:`signature`)."""
        return bool(self.signature)

    def raw(self, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
        """The variable's text as set, None where it is unset.

        Args:
            environ: The environment to read (default: this process's, at this call).

        Returns:
            The text, spaces and all, or None.
        """
        return (os.environ if environ is None else environ).get(self.name)

    def is_set(self, environ: Optional[Mapping[str, str]] = None) -> bool:
        """Whether the variable gives a value of its own: set and not empty (an empty one is its default).

        Args:
            environ: The environment to read (default: this process's).

        Returns:
            True when :meth:`get` reads the variable rather than its default.

        Example:
            >>> THREADS.is_set({"NLGSCORE_THREADS": " "}), THREADS.is_set({"NLGSCORE_THREADS": "2"})
            (False, True)
        """
        text = self.raw(environ)
        return text is not None and bool(text.strip())

    def get(self, environ: Optional[Mapping[str, str]] = None) -> Any:
        """The variable's value, parsed by its kind; the default where it is unset or empty.

        Args:
            environ: The environment to read (default: this process's, at this call).

        Returns:
            A bool, an int, a str or a :class:`~pathlib.Path` (by :attr:`kind`), or :attr:`default`.

        Raises:
            ArgumentError: The text is not a value of its kind; the message names the variable
                and what it takes.

        Example:
            >>> CUDA_GRAPHS.get({}), CUDA_GRAPHS.get({"NLGSCORE_CUDA_GRAPHS": "off"})
            (True, False)
            >>> CUDA_GRAPHS.get({"NLGSCORE_CUDA_GRAPHS": "maybe"})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            nlgscore.errors.ArgumentError: NLGSCORE_CUDA_GRAPHS='maybe' is not a value it takes: 1, true, ...
        """
        text = self.raw(environ)
        if text is None or not text.strip():
            return self.default
        value = text.strip()
        if self.kind == "bool":
            if value.lower() in ON + OFF:
                return value.lower() in ON
            raise ArgumentError(
                f"{self.name}={text!r} is not a value it takes: {', '.join(ON)} (on) or {', '.join(OFF)} (off); "
                f"unset or empty: {self.default_text}"
            )
        if self.kind == "int":
            if not value.isdigit() or int(value) < 1:
                raise ArgumentError(f"{self.name} must be a positive integer, got {text!r}")
            return int(value)
        if self.kind == "path":
            return Path(value).expanduser()
        return value

    def set(self, value: Any, environ: Optional[MutableMapping[str, str]] = None) -> None:
        """Set the variable for this process and the processes it starts (a bool as ``1``/``0``).

        Args:
            value: The value, of the variable's kind (or its text).
            environ: The environment to write (default: this process's).

        Raises:
            ArgumentError: ``value`` is not a value of the variable's kind.

        Example:
            >>> env = {}
            >>> THREADS.set(3, env); env
            {'NLGSCORE_THREADS': '3'}
        """
        text = ("1" if value else "0") if isinstance(value, bool) else str(value)
        self.get({self.name: text})  # the same check as a read: nothing unreadable is handed on
        (os.environ if environ is None else environ)[self.name] = text

    def unset(self, environ: Optional[MutableMapping[str, str]] = None) -> None:
        """Remove the variable (its default applies again).

        Args:
            environ: The environment to change (default: this process's).
        """
        (os.environ if environ is None else environ).pop(self.name, None)

    @property
    def default_text(self) -> str:
        """The default as the documentation states it.

        Example:
            >>> TOKEN_FORWARD.default_text, THREADS.default_text
            ('0 (off)', 'the CPUs this process may use (affinity mask, cgroup CPU quota)')
        """
        if self.default_doc:
            return self.default_doc
        if self.kind == "bool":
            return "1 (on)" if self.default else "0 (off)"
        return "unset" if self.default is None else str(self.default)


ONEDNN = Variable(
    "NLGSCORE_ONEDNN",
    "bool",
    "the CPU linear kernel of scorers built with kernel='auto': 1 oneDNN, 0 MKL (F.linear)",
    default_doc="the CPU's rule: oneDNN for bfloat16 on a CPU with native bf16 and on AMD CPUs, MKL otherwise",
    signature="kernel",
    option="kernel",
)
TOKEN_FORWARD = Variable(
    "NLGSCORE_TOKEN_FORWARD",
    "bool",
    "the forward of scorers built with forward='auto': 1 packed tokens (attention per sequence), 0 padded batches",
    default=False,
    signature="forward",
    option="forward",
)
CUDNN_ATTENTION = Variable(
    "NLGSCORE_CUDNN_ATTENTION",
    "bool",
    "lets SDPA pick cuDNN attention on CUDA (read at each forward)",
    default=False,
    signature="kernel",
)
CUDA_GRAPHS = Variable(
    "NLGSCORE_CUDA_GRAPHS",
    "bool",
    "CUDA graph replays of the token forward (CUDA, 16-bit); 0 runs every batch eagerly, with the same bits",
    default=True,
)
THREADS = Variable(
    "NLGSCORE_THREADS",
    "int",
    "torch's CPU threads, set when a scorer's CPU run time is resolved (same bits at 1 and 2 threads)",
    default_doc="the CPUs this process may use (affinity mask, cgroup CPU quota)",
)
KERNEL_CACHE = Variable(
    "NLGSCORE_KERNEL_CACHE",
    "bool",
    "keeps the load-time measurements of dtype='auto' on disk, once per machine and model; 0 measures at every load",
    default=True,
)
CACHE = Variable(
    "NLGSCORE_CACHE",
    "path",
    "the cache folder: kernel measurements (kernels/) and meta-evaluation scores (meta-scores/)",
    default_doc="$XDG_CACHE_HOME/nlgscore, else ~/.cache/nlgscore",
)
DATA = Variable(
    "NLGSCORE_DATA",
    "path",
    "the human-judgment data folder of meta-evaluation (--data / data_dir= first)",
    default_doc="$XDG_DATA_HOME/nlgscore, else ~/.cache/nlgscore/data",
)
BASELINE_REPO = Variable(
    "NLGSCORE_BASELINE_REPO",
    "str",
    "a Hub dataset repo of BERTScore rescale baselines, owner/name[@revision]; none turns a recorded one off",
    default_doc="the copies shipped in the wheel (or the commit recorded in hub.json)",
    signature="rescale",
)
API_KEY = Variable(
    "NLGSCORE_API_KEY",
    "str",
    "the bearer token a serve client sends (api_key= first)",
    default_doc="no token",
)
URL = Variable(
    "NLGSCORE_URL",
    "str",
    "the nlgscore serve address a verl reward scores with, after url=/spec= and extra_info",
)
SPEC = Variable(
    "NLGSCORE_SPEC",
    "str",
    "the metric spec a verl reward loads in-process where no address is given",
)

# Every variable, in the order of the documentation's list.
VARIABLES: Tuple[Variable, ...] = (
    ONEDNN,
    TOKEN_FORWARD,
    CUDNN_ATTENTION,
    CUDA_GRAPHS,
    THREADS,
    KERNEL_CACHE,
    CACHE,
    DATA,
    BASELINE_REPO,
    API_KEY,
    URL,
    SPEC,
)
_BY_NAME: Dict[str, Variable] = {row.name: row for row in VARIABLES}


def variable(name: str) -> Variable:
    """The row of variable ``name``.

    Args:
        name: An ``NLGSCORE_*`` name.

    Returns:
        Its :class:`Variable`.

    Raises:
        ArgumentError: No such variable; the message lists them.

    Example:
        >>> variable("NLGSCORE_CACHE").kind
        'path'
    """
    if name not in _BY_NAME:
        raise ArgumentError(f"{name} is not an nlgscore environment variable; they are: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]


def cache_folder(*parts: str, environ: Optional[Mapping[str, str]] = None) -> Path:
    """A folder under the cache root: ``$NLGSCORE_CACHE``, else ``$XDG_CACHE_HOME/nlgscore``,
    else ``~/.cache/nlgscore`` (the one rule for every cache of the package).

    Args:
        *parts: The sub-folder (``"kernels"``, ``"meta-scores"``).
        environ: The environment to read (default: this process's).

    Returns:
        The folder's path, ``~`` expanded (not created).

    Example:
        >>> cache_folder("kernels", environ={"NLGSCORE_CACHE": "/tmp/c"}).as_posix()
        '/tmp/c/kernels'
        >>> cache_folder("x", environ={"XDG_CACHE_HOME": "/tmp/x"}).as_posix()
        '/tmp/x/nlgscore/x'
    """
    root = CACHE.get(environ)
    if root is None:
        xdg = (os.environ if environ is None else environ).get("XDG_CACHE_HOME") or "~/.cache"
        root = Path(xdg).expanduser() / "nlgscore"
    return root.joinpath(*parts)
