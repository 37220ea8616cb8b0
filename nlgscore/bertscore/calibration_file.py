"""A model's BERTScore calibration in one JSON file: its layer and its rescale baseline.

``nlgscore calibrate MODEL --data FOLDER`` writes it (:mod:`nlgscore.calibration.recipe`, the
BERTScore paper's recipe); ``BERTScorer(model_type=MODEL, calibration=PATH)`` reads it: the file's
layer is the default ``num_layers`` and its baseline the one ``rescale_with_baseline=True`` uses
(signature ``rescale:calibration:<digest>``), so a new model is usable after one command.

Fields: ``format`` (:data:`FORMAT`), ``model`` (the resolved model name the scores came from),
``revision``, ``layer``, ``criterion``, ``correlations`` (the criterion per layer, row 0 =
embeddings), ``baseline`` (``LAYER,P,R,F`` rows as ``[[P, R, F], ...]``), ``baseline_pairs``,
``seed``, ``data`` and ``signature`` (of the all-layers scorer that made the numbers).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "cal.json")
>>> _ = write_calibration(path, {"model": "m", "revision": "local", "layer": 1, "correlations": [0.1, 0.3],
...     "baseline": [[0.5, 0.5, 0.5], [0.8, 0.7, 0.75]], "criterion": "r", "baseline_pairs": 10, "seed": 1,
...     "data": "toy", "signature": "nlgscore:bertscore"})
>>> cal = read_calibration(path)
>>> cal.layer, cal.baseline.shape, cal.source.startswith("calibration:")
(1, (2, 3), True)
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Union

import numpy as np

from nlgscore.bertscore.rescale import MAX_BASELINE
from nlgscore.errors import ArgumentTypeError, DataError

FORMAT = "nlgscore-bertscore-calibration/1"
REQUIRED = ("model", "layer", "correlations", "baseline")
PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Calibration:
    """A read calibration file; ``source`` names it in signatures (a digest of its content)."""

    path: str
    model: str
    layer: int
    baseline: np.ndarray  # (layers+1, 3): P, R, F
    fields: Dict[str, Any]
    source: str


def write_calibration(path: PathLike, fields: Dict[str, Any]) -> str:
    """Write ``fields`` (with :data:`FORMAT`) as JSON to ``path``, checked by reading it back; return the path."""
    text = json.dumps({"format": FORMAT, **fields}, indent=1, ensure_ascii=False) + "\n"
    _parse(text, str(path))
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:  # complete or absent: never a half-written file
        handle.write(text)
    os.replace(tmp, path)
    return os.fspath(path)


def read_calibration(path: PathLike) -> Calibration:
    """The calibration file at ``path``; a :class:`DataError` names the file and the bad field."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"calibration must be a path to a calibration file, got {type(path).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"calibration: no such file: {os.fspath(path)} (make one with `nlgscore calibrate MODEL --data FOLDER`)"
        )
    with open(path, encoding="utf-8") as handle:
        return _parse(handle.read(), os.fspath(path))


def _parse(text: str, origin: str) -> Calibration:
    try:
        fields = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"calibration {origin}: not JSON ({err})") from None
    if not isinstance(fields, dict) or fields.get("format") != FORMAT:
        raise DataError(
            f"calibration {origin}: format must be {FORMAT!r}, got {fields.get('format') if isinstance(fields, dict) else fields!r}"
        )
    missing = [key for key in REQUIRED if key not in fields]
    if missing:
        raise DataError(f"calibration {origin}: missing field(s) {', '.join(missing)}")
    baseline = np.asarray(fields["baseline"], dtype=np.float64)
    layer = fields["layer"]
    if (
        baseline.ndim != 2
        or baseline.shape[1] != 3
        or not np.isfinite(baseline).all()
        or (baseline > MAX_BASELINE).any()
    ):
        raise DataError(
            f"calibration {origin}: baseline must be finite [P, R, F] rows below {MAX_BASELINE}, one per layer"
        )
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(baseline):
        raise DataError(f"calibration {origin}: layer must be an int between 0 and {len(baseline) - 1}, got {layer!r}")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return Calibration(origin, str(fields["model"]), layer, baseline, fields, f"calibration:{digest}")
