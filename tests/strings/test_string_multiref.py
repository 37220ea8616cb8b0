"""Multi-reference chrF and BLEU are sacreBLEU's own (all of an item's references at once), and a
string metric's system value is sacreBLEU's corpus statistic, on random multi-reference sets with
ragged reference counts (a missing reference is sacreBLEU's ``None`` in that reference stream)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

sacrebleu = pytest.importorskip("sacrebleu")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nlgscore import registry  # noqa: E402
from nlgscore.cli import main  # noqa: E402
from nlgscore.core.call import Call  # noqa: E402
from nlgscore.evaluate_modules import registry_scores  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WORDS = ["the", "cat", "sat", "on", "a", "mat", ".", "dog", "ran", "Prices", "rose", "sharply", "über", "'s", "it"]
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
# One item: a prediction and 1-3 references of its own (ragged across items).
item = st.tuples(sentence, st.lists(sentence, min_size=1, max_size=3))
corpora = st.lists(item, min_size=1, max_size=8)


def streams(references):
    """sacreBLEU's reference streams: the k-th reference of every item, None where it has fewer."""
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


def moses(text):
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang="en").tokenize(text, return_str=True, escape=True)


@settings(max_examples=60, deadline=None)
@given(corpora)
def test_bleu_and_chrf_equal_sacrebleus_functions(corpus):
    hyps = [h for h, _ in corpus]
    refs = [r for _, r in corpus]
    bleu = registry.cached("bleu").compute(hyps, refs)
    chrf = registry.cached("chrf").compute(hyps, refs)
    assert bleu.scores == [sacrebleu.sentence_bleu(h, r).score for h, r in corpus]
    assert chrf.scores == [sacrebleu.sentence_chrf(h, r).score for h, r in corpus]
    assert bleu.score == sacrebleu.corpus_bleu(hyps, streams(refs)).score
    assert chrf.score == sacrebleu.corpus_chrf(hyps, streams(refs)).score
    assert registry.cached("bleu").corpus_score(hyps, refs) == bleu.score
    counts = {len(r) for r in refs}
    expected = str(counts.pop()) if len(counts) == 1 else "var"
    assert bleu.signature["nrefs"] == chrf.signature["nrefs"] == expected
    assert bleu.signature["multiref"] == chrf.signature["multiref"] == "joint"
    assert bleu.system == {
        "score": bleu.score,
        "sentence_mean": pytest.approx(sum(bleu.scores) / len(bleu.scores), abs=1e-9),
    }


@settings(max_examples=25, deadline=None)
@given(corpora)
def test_moses_bleu_scores_references_jointly(corpus):
    pytest.importorskip("sacremoses")
    hyps = [h for h, _ in corpus]
    refs = [r for _, r in corpus]
    result = registry.cached("bleu:moses").compute(hyps, refs)
    assert result.scores == [sacrebleu.corpus_bleu([moses(h)], [[moses(x)] for x in r]).score for h, r in corpus]
    assert result.score == sacrebleu.corpus_bleu(hyps, streams(refs)).score  # WMT's system BLEU of the text


@settings(max_examples=25, deadline=None)
@given(corpora)
def test_max_rule_is_an_explicit_option(corpus):
    hyps = [h for h, _ in corpus]
    refs = [r for _, r in corpus]
    result = registry.cached("bleu", multiref="max").compute(hyps, refs)
    assert result.scores == [max(sacrebleu.sentence_bleu(h, [x]).score for x in r) for h, r in corpus]
    assert result.signature["multiref"] == "max"
    assert (
        result.score == sacrebleu.corpus_bleu(hyps, streams(refs)).score
    )  # the system value does not depend on the rule
    chrf = registry.cached("chrf", multiref="max").compute(hyps, refs)
    assert chrf.scores == [max(sacrebleu.sentence_chrf(h, [x]).score for x in r) for h, r in corpus]


def test_quick_start_two_references():
    hyp, refs = "The cat sat on the mat.", ["A cat was sitting on the mat.", "On the mat sat a cat."]
    result = registry.cached("bleu").compute([hyp], [refs])
    assert result.scores == [sacrebleu.sentence_bleu(hyp, refs).score]
    assert "|nrefs:2|" in str(result.signature) and "|multiref:joint|" in str(result.signature)
    with pytest.raises(ValueError, match="multiref must be one of joint, max"):
        registry.build("bleu", multiref="mean")


def test_parts_of_a_merged_call_keep_their_own_corpus_statistic():
    scorer = registry.cached("bleu")
    first = scorer.make_call(
        ["the cat sat on a mat", "a dog"], [["the cat sat on the mat", "a cat sat"], ["the dog ran", "a dog ran"]]
    )
    second = scorer.make_call(["it rose"], ["Prices rose sharply"])
    parts = scorer.run(Call.concat([first, second])).split([2, 1])
    alone = [scorer.run(first), scorer.run(second)]
    assert [p.score for p in parts] == [a.score for a in alone]
    assert [p.signature["nrefs"] for p in parts] == ["2", "1"]


def test_examples_system_values_on_every_front_door(capsys, tmp_path):
    cands = (REPO / "examples" / "cands.txt").read_text(encoding="utf-8").splitlines()
    refs = (REPO / "examples" / "refs.txt").read_text(encoding="utf-8").splitlines()
    corpus = sacrebleu.corpus_bleu(cands, [refs]).score
    mean = sum(sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(cands, refs, strict=True)) / len(cands)
    assert round(corpus, 2) == 9.93 and round(mean, 2) == 14.66  # the two numbers differ on these files
    result = registry.cached("bleu").compute(cands, refs)
    assert result.score == corpus and result.sentence_mean == pytest.approx(mean, abs=1e-9)
    module = registry_scores("bleu", cands, refs)
    assert module["score"] == corpus and module["sentence_mean"] == pytest.approx(mean, abs=1e-9)
    # two windows of the command line: the system line is the corpus statistic of every line
    args = [
        "score",
        "bleu",
        "-c",
        str(REPO / "examples" / "cands.txt"),
        "-r",
        str(REPO / "examples" / "refs.txt"),
        "--no-progress",
    ]
    assert main(args + ["--window", "2"]) == 0
    system, signature = capsys.readouterr().out.strip().split("\n")
    assert system == f"score: {corpus:.6f} sentence_mean: {mean:.6f}" and "|nrefs:1|" in signature
    # the same corpus written to a file window by window: its summary is the corpus statistic too
    assert main(args + ["--window", "2", "-o", str(tmp_path / "scores.tsv"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["score"] == corpus and summary["system"]["sentence_mean"] == pytest.approx(mean, abs=1e-9)
