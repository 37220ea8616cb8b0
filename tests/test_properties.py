"""Property-based tests (hypothesis) over the public entry points of every registered metric.

Properties, for arbitrary Unicode text (surrogates, controls, right-to-left, combining marks,
emoji, special-token spellings, long strings) and arbitrary reference nesting:

* every input item gets exactly one finite score, or the call raises TypeError/ValueError whose
  message names the argument;
* permuting or duplicating input pairs permutes or duplicates their scores;
* the evaluate module, the CLI (``--seg --json``) and the Python API give the same numbers.

The metrics are the registry's built-in rows (``registry.metric_names(builtin=True)``), run as
``tests/offline.py`` says (tiny checkpoints and the packaged MiniLM for the three whose default
models live on the Hub; any other metric as ``nlgscore.load(name)``, its evaluate module
``metrics/<name>`` and ``nlgscore score <name>``).

Run time is bounded: tiny checkpoints, short texts, a fixed ``max_examples`` per property, no
deadline (model calls on a shared 2-core machine have uneven latency).
"""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stdout
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from offline import ENTRY_POINTS, OFFLINE  # noqa: E402  (tests/offline.py: the one table of offline stand-ins)

import nlgscore  # noqa: E402
from nlgscore import registry  # noqa: E402

TOLERANCE = 1e-5
SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

# Text that has broken tokenizers or scorers somewhere in this field.
TRICKY = [
    "\ud800",  # lone surrogate: not encodable as UTF-8
    "\udfff tail",
    "\x00\x07\x1b[31m",  # controls
    "\u202eright-to-left override",
    "שלום עולם",
    "مرحبا بالعالم",
    "e\u0301\u0301\u0301",  # stacked combining marks
    "👍🏽👨‍👩‍👧",
    "<pad> <s> </s> <mask> <unk>",
    "[CLS] [SEP] [PAD] [MASK]",
    "<en> __en__ <de>",
    "",
    "   ",
    "word " * 400,  # longer than the tiny models' positions
]
# Surrogates are excluded by hypothesis' default alphabet; TRICKY brings them in.
TEXT = st.one_of(st.sampled_from(TRICKY), st.text(min_size=0, max_size=40))
PLAIN = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


_LOADED: dict = {}


def test_offline_table_names_registered_metrics():
    assert set(OFFLINE) <= set(registry.metric_names(builtin=True))


def scorer(name: str):
    if name not in _LOADED:
        _LOADED[name] = nlgscore.load(ENTRY_POINTS[name].spec)
    return _LOADED[name]


def _inputs(name: str, predictions, others):
    return {need: others for need in scorer(name).needs}


def _compute(name: str, predictions, others):
    return scorer(name).compute(predictions, **_inputs(name, predictions, others))


def _named(error: Exception, names) -> bool:
    return any(n in str(error) for n in names)


METRICS = list(ENTRY_POINTS)


def _draw_pairs(data, text, least: int, most: int):
    """Two equally long lists of texts (predictions, and references or sources)."""
    n = data.draw(st.integers(least, most))
    return data.draw(st.lists(text, min_size=n, max_size=n)), data.draw(st.lists(text, min_size=n, max_size=n))


@pytest.mark.parametrize("name", METRICS)
@SETTINGS
@given(data=st.data())
def test_one_finite_score_per_item_or_a_named_error(name, data):
    n = data.draw(st.integers(1, 4))
    predictions = data.draw(st.lists(TEXT, min_size=n, max_size=n))
    if "references" not in scorer(name).needs:
        others = data.draw(st.lists(TEXT, min_size=n, max_size=n))
    else:  # a str or a (non-empty) list of str per item: arbitrary nesting
        others = data.draw(st.lists(st.one_of(TEXT, st.lists(TEXT, min_size=1, max_size=3)), min_size=n, max_size=n))
    try:
        result = _compute(name, predictions, others)
    except (TypeError, ValueError) as error:
        assert _named(error, ("predictions", "references", "sources")), f"error names no argument: {error}"
        return
    assert len(result.scores) == n
    assert all(isinstance(s, float) and math.isfinite(s) for s in result.scores), result.scores
    # the system value is the mean, except a corpus statistic's (chrF, BLEU), whose mean is sentence_mean
    assert result.system.get("sentence_mean", result.score) == pytest.approx(sum(result.scores) / n, abs=1e-9)


@pytest.mark.parametrize("name", METRICS)
@SETTINGS
@given(data=st.data())
def test_permuting_or_duplicating_pairs_permutes_or_duplicates_scores(name, data):
    """Any reordering with repeats of the pairs (a permutation, a duplicated pair, both) gives
    the same reordering of the scores: batching, de-duplication and caching leave no trace."""
    predictions, others = _draw_pairs(data, PLAIN, 1, 5)
    n = len(predictions)
    picks = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2 * n + 2))
    base = _compute(name, predictions, others).scores
    again = _compute(name, [predictions[i] for i in picks], [others[i] for i in picks]).scores
    assert again == pytest.approx([base[i] for i in picks], abs=TOLERANCE)


@pytest.mark.parametrize("name", METRICS)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_ragged_references_score_as_their_best_or_mean(name, data):
    """Several references per item aggregate the single-reference scores (the metric's
    ``multiref``: max for BERTScore F1, mean for Prism and, by default, BARTScore): the
    multi-reference path is not a different computation."""
    if scorer(name).needs != ("references",):
        pytest.skip(f"{name} does not score with references alone")
    if scorer(name).multiref not in (
        "max",
        "mean",
    ):  # chrF, BLEU: sacreBLEU's joint statistics (tests/strings/test_string_multiref.py)
        pytest.skip(f"{name} scores an item's references jointly, not one by one")
    n = data.draw(st.integers(1, 3))
    predictions = data.draw(st.lists(PLAIN, min_size=n, max_size=n))
    refs = data.draw(st.lists(st.lists(PLAIN, min_size=1, max_size=3), min_size=n, max_size=n))
    got = _compute(name, predictions, refs).scores
    for i, item_refs in enumerate(refs):
        singles = _compute(name, [predictions[i]] * len(item_refs), item_refs).scores
        want = max(singles) if scorer(name).multiref == "max" else sum(singles) / len(singles)
        assert got[i] == pytest.approx(want, abs=TOLERANCE)


# One line of a text file: no line breaks, no surrogates (files are UTF-8).
LINE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=25)
_MODULES: dict = {}


def _module(name: str):
    import evaluate

    if name not in _MODULES:
        entry = ENTRY_POINTS[name]
        _MODULES[name] = evaluate.load(nlgscore.evaluate_module(entry.metric), entry.config, **entry.load)
    return _MODULES[name]


def _cli(name: str, predictions, others, tmp: Path):
    from nlgscore.cli import main

    cands, second = tmp / "cands.txt", tmp / "second.txt"
    cands.write_text("\n".join(predictions) + "\n", encoding="utf-8")
    second.write_text("\n".join(others) + "\n", encoding="utf-8")
    flags = [arg for need in scorer(name).needs for arg in ({"references": "-r", "sources": "-s"}[need], str(second))]
    out = io.StringIO()
    with redirect_stdout(out):
        argv = list(ENTRY_POINTS[name].cli or ("score", ENTRY_POINTS[name].spec))
        status = main(argv + ["-c", str(cands), *flags, "--seg", "--json", "--no-progress", "--quiet"])
    assert status == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("name", METRICS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_evaluate_module_cli_and_api_agree(name, data, tmp_path):
    predictions, others = _draw_pairs(data, LINE, 1, 3)
    api = _compute(name, predictions, others)
    key = ENTRY_POINTS[name].key
    inputs = _inputs(name, predictions, others)
    module = _module(name).compute(predictions=predictions, **inputs, **ENTRY_POINTS[name].compute)
    assert module[key] == pytest.approx(api.scores, abs=TOLERANCE)
    printed = _cli(name, predictions, others, tmp_path)
    assert printed[key] == pytest.approx(api.scores, abs=TOLERANCE)
