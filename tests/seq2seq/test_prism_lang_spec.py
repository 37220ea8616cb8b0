"""Prism's language from a spec part or ``--lang``: ``prism:src:CKPT:de`` was
refused ("must look like nothing"), so every CLI Prism run and QE reranking scored English. The
language is force-decoded as the target tag, so it changes the numbers; the signature shows it."""

from __future__ import annotations

import json

import pytest

from nlgscore.cli import main
from nlgscore.errors import ArgumentError
from nlgscore.registry import spec_options

CKPT = "tests/golden/tiny-prism"
CANDS = ["Hallo Welt.", "Die Katze sitzt auf der Matte."]
SRCS = ["Hello world.", "The cat sits on the mat."]


@pytest.mark.parametrize(
    "spec, expected",
    [
        (f"prism:src:{CKPT}:de", {"mode": "src", "checkpoint": CKPT, "lang": "de"}),
        ("prism:ref:de", {"mode": "ref", "lang": "de"}),
        (f"prism:ref:{CKPT}", {"mode": "ref", "checkpoint": CKPT}),
        ("prism:src:org/prism-model:kk", {"mode": "src", "checkpoint": "org/prism-model", "lang": "kk"}),
    ],
)
def test_spec_parts(spec, expected):
    assert spec_options(spec)[1] == expected


def test_a_spec_language_contradicting_lang_is_refused():
    with pytest.raises(ArgumentError, match="sets lang='de' but lang='fr' was also given"):
        spec_options(f"prism:src:{CKPT}:de", {"lang": "fr"})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prism")
    (folder / "c.txt").write_text("\n".join(CANDS) + "\n", encoding="utf-8")
    (folder / "s.txt").write_text("\n".join(SRCS) + "\n", encoding="utf-8")
    return folder


def cli(capsys, *argv):
    assert main(["score", *argv, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_cli_scores_in_the_language_given(files, capsys):
    from nlgscore.seq2seq.prism import PrismScorer

    german = PrismScorer(CKPT, lang="de").compute(CANDS, sources=SRCS)
    english = PrismScorer(CKPT, lang="en").compute(CANDS, sources=SRCS)
    inputs = ["-c", str(files / "c.txt"), "-s", str(files / "s.txt")]
    by_spec = cli(capsys, f"prism:src:{CKPT}:de", *inputs)
    by_flag = cli(capsys, f"prism:src:{CKPT}", "--lang", "de", *inputs)
    default = cli(capsys, f"prism:src:{CKPT}", *inputs)
    for out in (by_spec, by_flag):
        assert out["scores"] == pytest.approx(list(german.scores), abs=1e-6)
        assert "|lang:de|" in out["signature"]
    assert default["scores"] == pytest.approx(list(english.scores), abs=1e-6) and "|lang:en|" in default["signature"]
    assert by_spec["scores"] != pytest.approx(default["scores"], abs=1e-6)  # the language changes the numbers


def test_lang_for_a_metric_without_one_is_refused(files, capsys):
    status = main(
        [
            "score",
            "bartscore:tests/golden/tiny-bart",
            "-c",
            str(files / "c.txt"),
            "-r",
            str(files / "s.txt"),
            "--lang",
            "de",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err  # the one builder's refusal of an option the metric does not list
    assert status == 2 and "BARTScorer got an unknown option lang=" in err and len(err.strip().splitlines()) == 1
