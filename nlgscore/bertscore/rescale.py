"""BERTScore rescale baselines: reading the reference package's files and finding them (the files
themselves are the package ``nlgscore.baselines``).

A baseline file is comma-separated despite its ``.tsv`` name: a ``LAYER,P,R,F`` header, then one
row per layer (row 0 = embeddings). Rescaling is ``(x - b) / (1 - b)`` per column. Files are
looked up in this order: an explicit path, a Hub dataset repo where one is configured
(``NLGSCORE_BASELINE_REPO``, or a commit recorded in ``hub.json``; see :mod:`nlgscore.backend.hub`),
the copies shipped under ``baselines/`` (installed as the package ``nlgscore.baselines``). The
signature's ``rescale:`` field names the source: ``file:<name>``, ``hub:<repo>@<commit>`` or
``package:<lang>/<model>.tsv``.

>>> table = parse_baseline("LAYER,P,R,F\\n0,0.5,0.5,0.5\\n1,0.8,0.6,0.7\\n")
>>> table.shape
(2, 3)
>>> round(float(rescale(0.9, table[1, 0])), 4)
0.5
"""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import List, Optional, Tuple

import numpy as np

from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError

PACKAGE = "nlgscore.baselines"
HEADER = ["LAYER", "P", "R", "F"]
# Rescaling divides by 1 - b: a baseline at (or within this of) 1 would blow scores up by 1,000x or
# more (real baselines are below 0.95), so it is rejected as a broken file.
MAX_BASELINE = 1.0 - 1e-3
# A language code names a folder of baselines: letters, digits, '-' and '_' only (no path tricks).
LANG_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


def parse_baseline(text: str, origin: str = "baseline") -> np.ndarray:
    """Rows ``(P, R, F)`` indexed by layer; a :class:`DataError` names ``origin`` and the bad line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or [cell.strip() for cell in lines[0].split(",")] != HEADER:
        first = lines[0] if lines else "<empty>"
        raise DataError(f"baseline_path {origin}: header must be {','.join(HEADER)}, got {first!r}")
    rows: List[List[float]] = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != len(HEADER):
            raise DataError(
                f"baseline_path {origin} line {number}: expected {len(HEADER)} columns, got {len(cells)}: {line!r}"
            )
        try:
            layer = int(cells[0])
            values = [float(cell) for cell in cells[1:]]
        except ValueError:
            raise DataError(f"baseline_path {origin} line {number}: non-numeric value in {line!r}") from None
        if layer != len(rows):
            raise DataError(f"baseline_path {origin} line {number}: expected layer {len(rows)}, got {layer}")
        if not all(np.isfinite(values)) or any(v > MAX_BASELINE for v in values):
            raise DataError(
                f"baseline_path {origin} line {number}: baselines must be finite and at most {MAX_BASELINE} "
                f"(rescaling divides by 1 - b), got {line!r}"
            )
        rows.append(values)
    if not rows:
        raise DataError(f"baseline_path {origin}: no layer rows")
    return np.asarray(rows, dtype=np.float64)


def select_layers(table: np.ndarray, num_layers: int, all_layers: bool, origin: str) -> np.ndarray:
    """Row ``num_layers`` (shape ``(3,)``), or rows 0..num_layers (``(num_layers+1, 3)``) with all_layers."""
    needed = num_layers + 1
    if table.shape[0] < needed:
        raise DataError(
            f"baseline_path {origin} has {table.shape[0]} layer rows; layer {num_layers} needs at least {needed}"
        )
    return table[:needed] if all_layers else table[num_layers]


def shipped_path(lang: str, model_name: str) -> str:
    """Relative name of a shipped baseline (model ids with '/' are sub-folders)."""
    return f"{lang}/{model_name}.tsv"


def find_baseline(lang: Optional[str], model_name: str, baseline_path: Optional[str] = None) -> Tuple[np.ndarray, str]:
    """The baseline table and its source for the signature.

    Args:
        lang: Language of the baseline (its folder); needed unless ``baseline_path`` is given.
        model_name: Model the baseline was computed for.
        baseline_path: An explicit ``LAYER,P,R,F`` file, used before any other source.

    Returns:
        ``(table, source)``: rows ``(P, R, F)`` by layer, and ``file:<name>`` (``baseline_path``),
        ``hub:<repo>@<commit>`` (a configured Hub repo) or ``package:<lang>/<model>.tsv`` (shipped).

    Raises:
        ArgumentError: No baseline was found (the message lists every place searched), or
            ``lang``/``baseline_path`` is unusable.
        DataError: The file found is malformed.
    """
    if baseline_path is not None:
        if not isinstance(baseline_path, (str, os.PathLike)):
            raise ArgumentTypeError(f"baseline_path must be a file path, got {type(baseline_path).__name__}")
        if not os.path.isfile(baseline_path):
            raise ArgumentError(f"baseline_path {str(baseline_path)!r} is not a file")
        table = parse_baseline(_read_text(baseline_path), str(baseline_path))
        return table, f"file:{os.path.basename(str(baseline_path))}"
    if not lang:
        raise ArgumentError("rescale_with_baseline needs lang (to find the baseline) or an explicit baseline_path")
    if not LANG_PATTERN.match(lang):
        raise ArgumentError(f"lang must be a language code (letters, digits, '-', '_'), got {lang!r}")
    from nlgscore.backend.hub import baseline_filename, configured_baseline_repo, describe_baseline_repo, fetch_baseline

    fetched = fetch_baseline(lang, model_name)
    if fetched is not None:
        path, source = fetched
        return parse_baseline(_read_text(path), path), source
    relative = shipped_path(lang, model_name)
    resource = resources.files(PACKAGE).joinpath(*relative.split("/"))
    if resource.is_file():
        return parse_baseline(resource.read_text(encoding="utf-8"), relative), f"package:{relative}"
    raise ArgumentError(
        f"no rescale baseline for lang={lang!r} and model {model_name!r}: searched baseline_path (not given), "
        f"{describe_baseline_repo(configured_baseline_repo())} (file {baseline_filename(lang, model_name)}) and "
        f"the shipped copies ({PACKAGE}/{relative}). Pass baseline_path=, or rescale_with_baseline=False."
    )


def _read_text(path) -> str:
    """The UTF-8 text of a baseline file; any other encoding is an error naming the file and byte."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(
            f"baseline_path {os.fspath(path)}: not UTF-8 text (byte {err.start}: {data[err.start : err.start + 1]!r}); "
            "a baseline file is LAYER,P,R,F rows in UTF-8"
        ) from None


def rescale(values, baseline):
    """``(x - b) / (1 - b)``; broadcasting lets ``baseline`` be one value or one per layer."""
    return (values - baseline) / (1 - baseline)
