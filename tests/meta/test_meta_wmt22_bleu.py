"""WMT22+ baselines in ``meta mqm``: segment-level ``bleu`` is sacreBLEU's sentence_bleu
(WMT's baseline since WMT21, what mt-metrics-eval's BLEU files hold) and system-level BLEU is
sacreBLEU corpus BLEU; ``sentbleu`` stays the BARTScore paper's Moses-tokenised variant and the
WMT19/WMT21 tasks keep it for ``bleu``. The reference values come from sacrebleu's public API."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

sacrebleu = pytest.importorskip("sacrebleu")

from nlgscore import registry  # noqa: E402
from nlgscore.meta import stats  # noqa: E402
from nlgscore.meta.data.mtme import read_mtme  # noqa: E402
from nlgscore.meta.data.ratings import load_ratings  # noqa: E402
from nlgscore.meta.tasks.human_scores import mqm  # noqa: E402

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "data" / "mqm-wmt21-zh-en"
LINES = 120


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not FOLDER.is_dir():
        pytest.skip(f"{FOLDER} not found (../shared/data)")
    export = tmp_path_factory.mktemp("mtme")
    table = mqm(FOLDER, ["bleu", "sentbleu"], limit=LINES, permutations=0, export_mtme=export)
    return table, export


def test_segment_bleu_is_sacrebleu_sentence_bleu_and_system_bleu_is_corpus_bleu(run):
    table, export = run
    data = load_ratings(FOLDER)
    systems = data.systems(False)
    seg, system = read_mtme(next(export.glob("bleu-ref*.seg.score")), systems, len(data.src), first=LINES)
    system = read_mtme(next(export.glob("bleu-ref*.sys.score")), systems, 0)[1]
    for i, name in enumerate(systems):
        hyps, refs = data.hyps[name][:LINES], data.ref[:LINES]
        expected = [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, refs)]
        assert seg[i, :LINES].tolist() == expected
        assert system[i] == sacrebleu.corpus_bleu(hyps, [refs]).score
    signatures = {r.signature for r in table.rows if r.metric == "bleu"}
    assert signatures == {next(iter(signatures))} and next(iter(signatures)).startswith("nlgscore:bleu|")
    assert "eff:yes|tok:13a|smooth:exp" in next(iter(signatures)) and "system:corpus" in next(iter(signatures))


def test_segment_measures_of_bleu_are_the_statistics_of_sentence_bleu(run):
    table, export = run
    data = load_ratings(FOLDER)
    systems = data.systems(False)
    seg = read_mtme(next(export.glob("bleu-ref*.seg.score")), systems, len(data.src), first=LINES)[0][:, :LINES]
    human = np.array([data.seg[s][:LINES] for s in systems])
    values = {(r.metric, r.level, r.measure): r.value for r in table.rows}
    assert values["bleu", "segment", "pearson"] == stats.correlation(human, seg)
    assert values["bleu", "segment", "kendall-item"] == stats.correlation(human, seg, "kendall", by_item=True)
    assert values["bleu", "segment", "acc-t"] == stats.acc_t(human, seg)[0]
    # the two definitions differ: sentbleu (Moses-tokenised, BARTScore) is its own row
    assert values["bleu", "segment", "pearson"] != values["sentbleu", "segment", "pearson"]


def test_bleu_keeps_the_bartscore_definition_outside_the_wmt22_tasks():
    from nlgscore.meta.tasks.descriptors import DESCRIPTORS
    from nlgscore.meta.tasks.human_scores import MQM_TASK
    from nlgscore.meta.tasks.wmt21_da import WMT21_TASK

    assert WMT21_TASK.segment_specs["bleu"] == "sentbleu" and "bleu" not in MQM_TASK.segment_specs
    assert DESCRIPTORS["mqm"].name == "mqm"
    assert registry.build("sentbleu").tokenize == "moses" and registry.build("bleu").tokenize == "13a"
    result = registry.build("sentence-bleu").compute(["The cat sat on a mat."], ["The cat sat on the mat."])
    assert result.scores == [sacrebleu.sentence_bleu("The cat sat on a mat.", ["The cat sat on the mat."]).score]
    assert str(result.signature).startswith("nlgscore:bleu|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|")


@pytest.mark.skipif(
    not os.environ.get("NLGSCORE_SLOW_TESTS"),
    reason="both full MQM folders take ~2 min; set NLGSCORE_SLOW_TESTS=1 to run it",
)
def test_readme_mqm_table_is_what_the_full_folders_give():
    from nlgscore.meta.tasks.human_scores import MEASURES

    readme = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "meta-evaluation.md").read_text(
        encoding="utf-8"
    )
    rows = [line.strip("|").split("|") for line in readme.splitlines() if line.startswith("| mqm-")]
    assert len(rows) == 4
    for folder in {r[0].strip() for r in rows}:
        path = FOLDER.parent / folder
        if not path.is_dir():
            pytest.skip(f"{path} not found")
        table = mqm(path, ["chrf", "bleu"], permutations=0)
        values = {(r.metric, r.level, r.measure): r.value for r in table.rows}
        averages = {s["metric"]: s["average"] for s in table.summary()}
        for row in (r for r in rows if r[0].strip() == folder):
            metric = row[1].strip().lower()
            expected = [f"{values[metric, level, measure]:.4f}" for level, measure in MEASURES[:-1]]
            assert [cell.strip() for cell in row[2:]] == expected + [f"{averages[metric]:.4f}"], (folder, metric)
