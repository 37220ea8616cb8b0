"""RunOptions: the run settings every meta task shares, checked once when built."""

import dataclasses

import numpy as np
import pytest

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.meta import RunOptions, run, tasks
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.stats import CORRELATIONS
from nlgscore.meta.tasks.generic import TaskDescriptor
from nlgscore.meta.tasks.measures import Measure, system_scores


@pytest.mark.parametrize(
    "field, value, error, flag",
    [
        ("limit", 0, ArgumentError, "--limit"),
        ("limit", "5", ArgumentTypeError, "--limit"),
        ("bootstrap", -1, ArgumentError, "--bootstrap"),
        ("permutations", -1, ArgumentError, "--permutations"),
        ("seed", -1, ArgumentError, "--seed"),
        ("context", -1, ArgumentError, "--context"),
        ("context", 1.5, ArgumentTypeError, "--context"),
        ("top_k", 1, ArgumentError, "--top-k"),
    ],
)
def test_bad_value_fails_at_construction_naming_its_flag(field, value, error, flag):
    with pytest.raises(error, match=flag) as caught:
        RunOptions(**{field: value})
    assert field in str(caught.value)


def test_bad_names_and_selection_fail_at_construction():
    with pytest.raises(ArgumentTypeError, match="lower_is_better"):
        RunOptions(lower_is_better="ter")
    with pytest.raises(ArgumentTypeError, match="select_model"):
        RunOptions(select_model=True)


def test_frozen_and_normalised():
    options = RunOptions(limit=np.int64(3), lower_is_better=["ter"])
    assert (type(options.limit), options.lower_is_better) == (int, ("ter",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.limit = 4  # type: ignore[misc]


def _toy() -> TaskDescriptor:
    data = EvalSet(
        "toy",
        ["A", "B", "C", "D"],
        [["the cat sat", "on a mat"], ["a cat sat", "on the mat"], ["dogs", "run"], ["the cat", "mat"]],
        [["the cat sat", "on the mat"]],
        human={"system": np.array([2.0, 3.0, 1.0, 2.5])},
    )
    return TaskDescriptor(
        "toy",
        lambda folder, limit=None: data,
        (Measure("system", "pearson", system_scores, CORRELATIONS["pearson"]),),
    )


def test_options_and_keywords_give_the_same_rows():
    by_object = run(_toy(), ["chrf"], options=RunOptions(top_k=3, lower_is_better=["chrf"])).rows()
    by_keywords = run(_toy(), ["chrf"], top_k=3, lower_is_better=["chrf"]).rows()
    assert by_object == by_keywords
    assert {r["measure"] for r in by_object} == {"pearson", "pearson-top3"}
    assert all("lower-is-better:negated" in r["signature"] for r in by_object)


def test_options_and_keywords_together_are_refused():
    with pytest.raises(ArgumentError, match="not both"):
        run(_toy(), ["chrf"], options=RunOptions(), bootstrap=10)


def test_a_task_refuses_a_setting_it_does_not_take(tmp_path):
    with pytest.raises(ArgumentError, match="mqm does not take bootstrap"):
        tasks.mqm(tmp_path, ["chrf"], options=RunOptions(bootstrap=10))
    with pytest.raises(TypeError, match="wmt19\\(\\) got an unexpected keyword argument 'top_k'"):
        tasks.wmt19(tmp_path, metrics=["chrf"], top_k=4)
