"""chrF, BLEU and ROUGE are registry metrics like any other: ``nlgscore score chrf``,
``nlgscore mbr --metric chrf`` and ``nlgscore serve chrf`` run them, with sacreBLEU's own numbers."""

from __future__ import annotations

import json

import pytest

sacrebleu = pytest.importorskip("sacrebleu")

from servers import ServeProcess  # noqa: E402
from string_reference import chrf, corpus, rouge, sentbleu, sentence_bleu  # noqa: E402

from nlgscore import registry  # noqa: E402
from nlgscore.cli import main  # noqa: E402

HYPS = ["the cat sat on a mat", "hello world", "The cat's mat.", "rain"]
REFS = ["the cat sat on the mat", "hello there world", "The cat's mat.", "it rains today"]


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("chrf", lambda: chrf(HYPS, REFS)),
        ("bleu", lambda: sentence_bleu(HYPS, REFS)),
        ("sentence-bleu", lambda: sentence_bleu(HYPS, REFS)),
        ("sentbleu", lambda: sentbleu(HYPS, REFS)),
        ("bleu:moses", lambda: sentbleu(HYPS, REFS)),
        ("rouge1", lambda: rouge("rouge1", HYPS, REFS)),
        ("rougeL", lambda: rouge("rougeL", HYPS, REFS)),
        ("rouge:2", lambda: rouge("rouge2", HYPS, REFS)),
    ],
)
def test_every_spec_gives_its_librarys_numbers(spec, expected):
    pytest.importorskip("rouge_score")
    assert registry.cached(spec).compute(HYPS, REFS).scores == expected()


def test_corpus_scores_and_signatures():
    assert registry.cached("chrf").corpus_score(HYPS, REFS) == corpus("chrf", HYPS, REFS)
    assert registry.cached("bleu:moses").corpus_score(HYPS, REFS) == corpus("bleu", HYPS, REFS)
    signature = registry.cached("chrf").signature
    assert signature["nc"] == "6" and signature["sacrebleu"] == sacrebleu.__version__
    assert registry.build("chrf", word_order=2).compute(HYPS[:1], REFS[:1]).scores == [
        sacrebleu.sentence_chrf(HYPS[0], [REFS[0]], word_order=2).score
    ]
    with pytest.raises(ValueError, match="the part after bleu is a tokeniser"):
        registry.build("bleu:wordpiece")


def test_score_and_mbr_commands(tmp_path, capsys):
    (tmp_path / "c.txt").write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    assert (
        main(["score", "chrf", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "--seg", "--no-progress"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert [float(x) for x in lines[: len(HYPS)]] == pytest.approx(chrf(HYPS, REFS), abs=5e-7)  # printed to 6 decimals
    candidates = ["the cat sat", "a cat sat on the mat", "the cat sat on the mat", "dogs"]
    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "x", "candidates": candidates}) + "\n", encoding="utf-8")
    assert main(["mbr", str(tmp_path / "items.jsonl"), "--metric", "chrf", "--no-progress"]) == 0
    chosen = json.loads(capsys.readouterr().out)
    utility = [sum(chrf([c], [o])[0] for j, o in enumerate(candidates) if j != i) for i, c in enumerate(candidates)]
    assert chosen["best"] == candidates[max(range(len(candidates)), key=utility.__getitem__)]


def test_serve_chrf():
    with ServeProcess("chrf") as proc:
        proc.wait_ready()
        answer = proc.post("/v1/score", json={"predictions": HYPS, "references": REFS}).json()
        assert proc.terminate() == 0, proc.output()
    assert answer["scores"] == chrf(HYPS, REFS) and answer["signature"].startswith("nlgscore:chrf|")
