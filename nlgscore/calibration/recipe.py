"""``nlgscore calibrate``: the BERTScore paper's recipe for a new backbone, in one call.

1. **Layer.** Every layer is scored in one pass (``all_layers``) on the validation folder's
   (system output, reference) pairs; the layer is the one whose F has the highest segment-level
   Pearson with the human scores (Zhang et al. 2020, App. B). A WMT21-style DA folder
   (``da-seg-scores.csv``, as ``data/wmt21-de-en``) is read as ``nlgscore meta wmt21``
   reads it (DA z-scores, MT systems only); any other human-scores folder (MQM, DA: the layout
   of :mod:`nlgscore.meta.data.ratings`) by its ``<kind>-seg-scores.tsv``, pooled over rated
   (system, segment) items.
2. **Baseline.** The mean P/R/F of random pairs of two different references of the folder, every
   layer (:mod:`nlgscore.calibration.baseline`; the paper draws its pairs from Common Crawl).
3. **One file** (:mod:`nlgscore.bertscore.calibration_file`) that ``BERTScorer(calibration=PATH)``
   loads: the layer becomes the default ``num_layers``, the baseline the rescaling one.

On the embedded MiniLM and WMT21 de-en this gives layer 4, F segment r = 0.2572 (BENCHMARKS.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from nlgscore.bertscore.calibration_file import write_calibration
from nlgscore.calibration.baseline import all_layers_scorer, compute_baseline
from nlgscore.calibration.layers import COLUMNS, calibrate_wmt21, score_all_layers, select_layer
from nlgscore.errors import DataError
from nlgscore.meta.stats.resample import check_seed

PathLike = Union[str, "os.PathLike[str]"]
DEFAULT_PAIRS = 24_000  # as the embedded MiniLM's shipped baseline
DEFAULT_SEED = 1


@dataclass
class Validation:
    """Pairs to score, and what turns their all-layer scores into the layer choice."""

    name: str
    criterion: str
    hyps: List[str]
    refs: List[str]
    corpus: List[str]  # distinct references: the baseline's sentences
    human: np.ndarray  # per pair, its human score (NaN: not judged, scored for the array's shape only)
    choose: Any  # (3, layers+1, pairs) scores -> (best layer, per-layer r)


def read_validation(
    folder: PathLike, limit: Optional[int] = None, include_human: bool = False, reference: Optional[str] = None
) -> Validation:
    """The validation pairs of a WMT21-style DA folder or a human-scores folder (module doc).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name, lines in {"src.de": ["a", "b"], "ref.A.en": ["one", "two"],
    ...                     "hyp.S1.en": ["one", "too"], "hyp.S2.en": ["won", "two"]}.items():
    ...     _ = (folder / name).write_text("\\n".join(lines) + "\\n", encoding="utf-8")
    >>> _ = (folder / "mqm-seg-scores.tsv").write_text("S1\\t1\\t0\\nS1\\t2\\t-5\\nS2\\t1\\t-1\\n", encoding="utf-8")
    >>> v = read_validation(folder)
    >>> v.hyps, v.refs, v.corpus, v.criterion
    (['one', 'too', 'won'], ['one', 'two', 'one'], ['one', 'two'], 'F segment Pearson with mqm scores')
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"--data: no such folder: {folder}")
    if (folder / "da-seg-scores.csv").is_file():
        from nlgscore.meta.data.wmt21 import load_wmt21, wmt21_inputs, wmt21_judgments

        data = load_wmt21(folder, reference=reference or "A")
        judgments = wmt21_judgments(data, include_human=include_human, limit=limit)
        hyps, refs = wmt21_inputs(data, judgments)
        shape = (3, -1, len(judgments.systems), judgments.raw.shape[1])
        return Validation(
            f"{folder.name} (WMT21 DA, {len(judgments.systems)} systems, {int(judgments.judged.sum())} judged segments)",
            "F segment Pearson with DA z",
            hyps,
            refs,
            _distinct(refs),
            judgments.z.reshape(-1),
            lambda scores: calibrate_wmt21(judgments, scores.reshape(shape)),
        )
    from nlgscore.meta.data.ratings import load_ratings

    ratings = load_ratings(folder, reference=reference)
    n = min(len(ratings.ref), limit or len(ratings.ref))
    hyps, refs, human = [], [], []
    for system in ratings.systems(include_human=include_human):
        if system in ratings.reference_system:
            continue
        for seg in np.nonzero(~np.isnan(ratings.seg[system][:n]))[0]:
            hyps.append(ratings.hyps[system][seg])
            refs.append(ratings.ref[seg])
            human.append(float(ratings.seg[system][seg]))
    if len(human) < 3:
        raise DataError(f"{folder}: need at least 3 rated segments to choose a layer, got {len(human)}")
    f = COLUMNS.index("F")
    return Validation(
        f"{folder.name} ({ratings.kind}, {len(human)} rated segments)",
        f"F segment Pearson with {ratings.kind} scores",
        hyps,
        refs,
        _distinct(ratings.ref[:n]),
        np.asarray(human),
        lambda scores: select_layer(human, scores[f]),
    )


def _distinct(texts: List[str]) -> List[str]:
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def calibrate(
    model: str,
    data: PathLike,
    out: Optional[PathLike] = None,
    *,
    pairs: int = DEFAULT_PAIRS,
    seed: int = DEFAULT_SEED,
    limit: Optional[int] = None,
    include_human: bool = False,
    reference: Optional[str] = None,
    **options: Any,
) -> Tuple[Dict[str, Any], Validation]:
    """Run the recipe for ``model`` on the folder ``data``; write the file to ``out`` if given.

    ``options`` go to the all-layers :class:`~nlgscore.bertscore.BERTScorer` (``device``,
    ``dtype``, ``max_tokens``, ``progress``, ``long_inputs``, ``max_length``, ...). Returns the
    file's fields and the validation set.
    """
    seed = check_seed(seed, "seed=")  # refused before the model loads and the layers are scored
    validation = read_validation(data, limit, include_human, reference)
    if len(validation.corpus) < 2:
        raise DataError(f"{data}: the baseline needs at least 2 distinct references, got {len(validation.corpus)}")
    scorer = all_layers_scorer(model, cache_references=True, **options)
    scores = score_all_layers(scorer, validation.hyps, validation.refs)
    best, correlations = validation.choose(scores)
    estimate = compute_baseline(validation.corpus, pairs, seed, scorer=scorer, progress=bool(options.get("progress")))
    fields = {
        "model": scorer.model_type,
        "revision": scorer.encoder.resolved.revision,
        "layer": int(best),
        "criterion": validation.criterion,
        "correlations": [round(float(r), 6) for r in correlations],
        "baseline": [[float(np.float32(v)) for v in row] for row in estimate.mean],
        "baseline_pairs": estimate.n_pairs,
        "baseline_sentences": estimate.n_sentences,
        "seed": seed,
        "data": validation.name,
        "signature": str(scorer.signature),
    }
    if out is not None:
        write_calibration(out, fields)
    return fields, validation
