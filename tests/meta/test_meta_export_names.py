"""A task that scores a metric name with its protocol's definition (WMT21's ``bleu`` is the
BARTScore paper's sentBLEU) exports the scores under the name asked for, not under the spec."""

import json

import pytest

pytest.importorskip("sacremoses")

from string_reference import sentbleu  # sacreBLEU/sacremoses' own values

from nlgscore.meta.engine import Scorers


def test_scores_are_exported_under_the_metric_name(tmp_path):
    scorers = Scorers(record=True)
    hyps, refs = ["The cat sat.", "A dog ran."], ["The cat sat on the mat.", "A dog ran."]
    scores, _ = scorers.score("sentbleu", hyps, refs, name="bleu")
    assert scores == sentbleu(hyps, refs)
    (path,) = scorers.export(tmp_path)
    assert path.name == "bleu.jsonl"
    assert [json.loads(line)["metric"] for line in path.read_text().splitlines()] == ["bleu", "bleu"]
