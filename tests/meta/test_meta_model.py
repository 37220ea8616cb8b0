"""The one data model of meta-evaluation (``EvalSet``): shapes checked with errors naming the data
set, daRR pairs derived from human scores (hand-computed), and the daRR measure rows over them."""

from __future__ import annotations

import numpy as np
import pytest

from nlgscore.errors import DataError
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.tasks.measures import DARR_MEASURES, darr_outcome_inputs


def _set(human, hyps=None):
    hyps = hyps or [["a", "b", "c"], ["d", "e", "f"], ["g", "h", "i"]]
    return EvalSet("toy", ["A", "B", "C"], hyps, [["r1", "r2", "r3"]], human={"segment": np.array(human, dtype=float)})


def test_darr_pairs_by_hand():
    human = [[50, 10, np.nan], [20, 40, 70], [80, 12, 10]]
    data = _set(human)
    # item 0: A-B 30 apart, A-C 30, B-C 60; item 1: A-B 30, A-C 2, B-C 28; item 2: only B-C 60
    item, better, worse = data.darr_pairs(margin=25)
    assert list(zip(item.tolist(), better.tolist(), worse.tolist())) == [
        (0, 0, 1),
        (0, 2, 0),
        (0, 2, 1),
        (1, 1, 0),
        (1, 1, 2),
        (2, 1, 2),
    ]
    assert data.darr_pairs(margin=29)[0].tolist() == [0, 0, 0, 1, 2]
    # metric: tau over those pairs, a tie discordant (WMT17-19) or left out
    metric = np.array([[0.5, 0.1, 0.0], [0.2, 0.4, 0.9], [0.5, 0.3, 0.1]])
    data._derived["darr"] = data.darr_pairs(margin=25)
    (outcomes,) = darr_outcome_inputs(data, metric, metric.mean(axis=1))
    assert outcomes.tolist() == [1, 0, 1, 1, 1, 1]
    tau, ties = DARR_MEASURES
    assert tau.statistic(outcomes, ties="discordant") == pytest.approx((5 - 1) / 6)
    assert tau.statistic(outcomes, ties="exclude") == 1.0 and ties.statistic(outcomes, ties="exclude") == pytest.approx(
        1 / 6
    )


def test_shapes_are_checked_naming_the_data_set():
    with pytest.raises(DataError, match="toy: the outputs of B have 2 items, the references 3"):
        _set([[1, 2, 3]] * 3, hyps=[["a", "b", "c"], ["d", "e"], ["g", "h", "i"]])
    with pytest.raises(DataError, match=r"toy: segment human scores have shape \(2, 3\), expected \(3, 3\)"):
        _set([[1, 2, 3]] * 2)
    with pytest.raises(DataError, match="toy: 2 output lists for 3 systems"):
        EvalSet("toy", ["A", "B", "C"], [["a"], ["b"]], [["r"]])


def test_derived_values_are_made_once():
    data, calls = _set([[1, 2, 3]] * 3), []
    assert data.derived("x", lambda: calls.append(1) or 7) == 7 and data.derived("x", lambda: 8) == 7 and calls == [1]
