"""chrF, BLEU and TER with the settings WMT used: each option equals sacreBLEU's own sentence and
corpus numbers (``==``, no tolerance) and is recorded in the signature; specs name the settings."""

from __future__ import annotations

import pytest

sacrebleu = pytest.importorskip("sacrebleu")

from nlgscore import registry  # noqa: E402
from nlgscore.errors import ArgumentError  # noqa: E402

# Case, punctuation, Chinese characters and several references, so that every option moves a number.
HYPS = ["The cat sat on the Mat.", "a dog, barking at night", "猫坐在垫子上", "It's cold today!"]
REFS = ["the cat sat on a mat .", "A dog barks at night.", "猫在垫子上坐着", "it is cold today"]
REFS2 = ["A cat was sitting on the mat.", "dogs bark at night", "一只猫坐在垫子上", "Today it's cold."]


def two_refs():
    return [[a, b] for a, b in zip(REFS, REFS2, strict=True)]


@pytest.mark.parametrize(
    "options",
    [dict(beta=3), dict(beta=1, word_order=1), dict(beta=3, word_order=2), dict(char_order=4, beta=2)],
)
def test_chrf_settings_equal_sacrebleu(options):
    scorer = registry.build("chrf", **options)
    ours = scorer.compute(HYPS, two_refs())
    theirs = [sacrebleu.sentence_chrf(h, refs, **options).score for h, refs in zip(HYPS, two_refs(), strict=True)]
    assert ours.scores == theirs
    assert ours.score == sacrebleu.corpus_chrf(HYPS, [REFS, REFS2], **options).score
    assert scorer.corpus_score(HYPS, REFS) == sacrebleu.corpus_chrf(HYPS, [REFS], **options).score
    signature = scorer.signature
    assert signature["beta"] == str(options.get("beta", 2))
    assert signature["nw"] == str(options.get("word_order", 0))
    assert signature["nc"] == str(options.get("char_order", 6))


@pytest.mark.parametrize("tokenize", ["13a", "intl", "zh", "char", "none"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_bleu_tokenisers_and_case_equal_sacrebleu(tokenize, lowercase):
    scorer = registry.build("bleu", tokenize=tokenize, lowercase=lowercase)
    ours = scorer.compute(HYPS, two_refs())
    theirs = [
        sacrebleu.sentence_bleu(h, refs, tokenize=tokenize, lowercase=lowercase).score
        for h, refs in zip(HYPS, two_refs(), strict=True)
    ]
    assert ours.scores == theirs
    corpus = sacrebleu.corpus_bleu(HYPS, [REFS, REFS2], tokenize=tokenize, lowercase=lowercase).score
    assert ours.score == corpus
    assert scorer.signature["tok"] == tokenize and scorer.signature["case"] == ("lc" if lowercase else "mixed")


def test_the_options_move_the_numbers():
    """The controls: each setting gives other numbers than the default on these texts."""
    scores = lambda spec: registry.build(spec).compute(HYPS, REFS).scores  # noqa: E731
    assert scores("chrf:beta=3") != scores("chrf")
    assert scores("bleu:zh") != scores("bleu")
    assert scores("bleu:lowercase=true") != scores("bleu")
    assert scores("ter:case_sensitive=true") != scores("ter")


@pytest.mark.parametrize(
    "options",
    [
        {},
        dict(case_sensitive=True),
        dict(normalized=True),
        dict(no_punct=True),
        dict(normalized=True, asian_support=True),
    ],
)
def test_ter_equals_sacrebleu_with_one_and_two_references(options):
    scorer = registry.build("ter", **options)
    for refs, streams in ((REFS, [REFS]), (two_refs(), [REFS, REFS2])):
        ours = scorer.compute(HYPS, refs)
        per_item = refs if isinstance(refs[0], list) else [[r] for r in refs]
        assert ours.scores == [
            sacrebleu.sentence_ter(h, r, **options).score for h, r in zip(HYPS, per_item, strict=True)
        ]
        assert ours.score == sacrebleu.corpus_ter(HYPS, streams, **options).score  # fractional reference lengths
    fields = scorer.signature
    assert fields["case"] == ("mixed" if options.get("case_sensitive") else "lc")
    assert fields["norm"] == ("yes" if options.get("normalized") else "no")
    assert scorer.lower_is_better and not registry.build("chrf").lower_is_better


def test_specs_name_the_settings():
    assert registry.spec_options("chrf:beta=3:word_order=1") == ("chrf", {"beta": 3, "word_order": 1})
    assert registry.spec_options("bleu:intl:lowercase=true") == ("bleu", {"tokenize": "intl", "lowercase": True})
    assert registry.spec_options("bleu:tokenize=zh") == ("bleu", {"tokenize": "zh"})
    assert registry.spec_options("chrf++") == ("chrf", {"word_order": 2})
    assert registry.spec_options("ter:case_sensitive=yes") == ("ter", {"case_sensitive": True})
    assert registry.cached("chrf:beta=3") is registry.cached("chrf", beta=3)
    with pytest.raises(ValueError, match="the part after bleu is a tokeniser"):
        registry.build("bleu:klingon")
    with pytest.raises(ValueError, match="NAME=VALUE"):
        registry.build("chrf:3")
    with pytest.raises(ValueError, match="option beta takes an integer"):
        registry.build("chrf:beta=three")
    with pytest.raises(ValueError, match="tokenize is given twice"):
        registry.build("bleu:intl:tokenize=zh")
    with pytest.raises(ValueError, match="sets beta=3 but beta=2"):
        registry.build("chrf:beta=3", beta=2)


def test_bad_values_are_refused_by_name():
    with pytest.raises(ArgumentError, match="beta must be an integer >= 1"):
        registry.build("chrf", beta=0)
    with pytest.raises(ArgumentError, match="lowercase must be True or False"):
        registry.build("bleu", lowercase="yes")
    with pytest.raises(TypeError, match="TERScorer got an unknown option multiref"):
        registry.build("ter", multiref="max")  # an item's references are scored jointly, as sacreBLEU does
