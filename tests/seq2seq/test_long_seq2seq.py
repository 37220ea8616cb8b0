"""Long inputs of Prism and BARTScore: ``long_inputs="auto"|"truncate"|"error"``.

The tiny checkpoints make a text "long" cheaply: Prism's copy gets 48 positions, BARTScore
``max_length=48``. Nothing is mocked; numbers come from the real models.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from long_texts import GOLDEN, LIMIT, LONG, SENTS, SHORT, TAIL_A, TAIL_B, TARGET, TINY_BART, short_prism

from nlgscore.core.long_inputs import LongInputError
from nlgscore.errors import ArgumentError
from nlgscore.seq2seq.bartscore import BARTScorer
from nlgscore.seq2seq.prism import PrismScorer

MODES = ("auto", "truncate", "error")


@pytest.fixture(scope="module")
def prism_folder(tmp_path_factory):
    return short_prism(tmp_path_factory.mktemp("prism") / "tiny-prism-48")


@pytest.fixture(scope="module")
def prism(prism_folder):
    return {mode: PrismScorer(str(prism_folder), long_inputs=mode) for mode in MODES}


@pytest.fixture(scope="module")
def bart():
    return {mode: BARTScorer(checkpoint=TINY_BART, max_length=LIMIT, long_inputs=mode) for mode in MODES}


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# (metric, how the two texts are passed): the long texts as encoder side (source/reference) or as targets.
CASES = {
    "prism-src-as-source": ("prism", lambda s, a, b: s.compute([TARGET, TARGET], sources=[a, b])),
    "prism-src-as-target": ("prism", lambda s, a, b: s.compute([a, b], sources=[SHORT, SHORT])),
    "prism-ref-as-reference": ("prism", lambda s, a, b: s.compute([TARGET, TARGET], references=[a, b])),
    "prism-ref-as-candidate": ("prism", lambda s, a, b: s.compute([a, b], references=[SHORT, SHORT])),
    "bart-src-as-source": ("bart", lambda s, a, b: s.compute([TARGET, TARGET], sources=[a, b], direction="src")),
    "bart-src-as-target": ("bart", lambda s, a, b: s.compute([a, b], sources=[SHORT, SHORT], direction="src")),
    "bart-precision-reference": ("bart", lambda s, a, b: s.compute([TARGET, TARGET], [a, b], direction="precision")),
    "bart-recall-reference-target": ("bart", lambda s, a, b: s.compute([SHORT, SHORT], [a, b], direction="recall")),
    "bart-f-prompt-decoder": (
        "bart",
        lambda s, a, b: s.compute([a, b], [SHORT, SHORT], direction="f", prompt="Such as", prompt_side="decoder"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_texts_differing_after_the_limit(prism, bart, case):
    metric, run = CASES[case]
    scorers = prism if metric == "prism" else bart
    auto = run(scorers["auto"], TAIL_A, TAIL_B)
    with pytest.warns(UserWarning, match="truncated"):
        cut = run(scorers["truncate"], TAIL_A, TAIL_B)
    assert cut.scores[0] == cut.scores[1]  # the tail is never read
    assert abs(auto.scores[0] - auto.scores[1]) > 1e-4  # every token counts
    assert min(auto.windows) > 1 and cut.windows == [1, 1]
    assert str(auto.signature).count("long_inputs:auto") == 1 and "long_inputs:truncate" in str(cut.signature)


def test_within_the_limit_the_three_settings_are_bit_identical(prism, bart):
    preds, refs, srcs = (
        ["Hi world.", "a b c", SENTS[0], ""],
        ["Hello world.", SENTS[1], "x", "y z"],
        [SENTS[2], "Bonjour.", SENTS[3], "w"],
    )
    for name, scorers in (("prism", prism), ("bart", bart)):
        calls = [lambda s: s.compute(preds, references=refs), lambda s: s.compute(preds, sources=srcs)]
        if name == "bart":
            calls.append(
                lambda s: s.compute(
                    preds, [[r, p] for r, p in zip(refs, preds)], direction="harmonic", prompt="ref_hyp", agg="max"
                )
            )
        for call in calls:
            got = [call(scorers[mode]) for mode in MODES]
            for other in got[1:]:
                assert other.columns() == got[0].columns()
            assert all(r.windows == [1] * len(preds) for r in got)


def test_bartscore_golden_cases_under_auto():
    """The default scorer (auto, 1,024 tokens) is the golden's numbers on every case within the
    limit (bit-identical to truncate) and reads the whole text of the one case over it."""
    data = json.loads((GOLDEN / "golden_bartscore.json").read_text(encoding="utf-8"))
    cases = data["cases"]
    auto, cut = BARTScorer(checkpoint=TINY_BART), BARTScorer(checkpoint=TINY_BART, long_inputs="truncate")
    within = [c for c in cases if c["id"] != "long_1500_words"]
    hyps, refs = [c["hyp"] for c in within], [c["ref"] for c in within]
    a, t = auto.compute(hyps, refs, direction="f"), cut.compute(hyps, refs, direction="f")
    assert a.columns() == t.columns() and a.windows == [1] * len(within)
    for i, case in enumerate(within):
        assert abs(a.scores[i] - case["scores"]["batch_size_4"]["f_mean_p_r"]) <= 1e-5
    case = next(c for c in cases if c["id"] == "long_1500_words")
    want = case["scores"]["batch_size_4"]["f_mean_p_r"]
    long_auto, long_cut = (
        auto.compute([case["hyp"]], [case["ref"]], direction="f"),
        quiet(cut.compute, [case["hyp"]], [case["ref"]], direction="f"),
    )
    assert (
        abs(long_cut.score - want) <= 1e-5 and abs(long_auto.score - want) > 1e-4 and long_auto.windows[0] > 1
    )  # past the 1e-5 parity budget


def greedy_chunks(counts, limit):
    """An independent count of sentence chunks: sentences tokenised one by one, packed greedily."""
    chunks, size = 0, None
    for n in counts:
        assert n <= limit
        if size is None or size + n > limit:
            chunks, size = chunks + 1, n
        else:
            size += n
    return chunks


def test_windows_count_sentence_chunks(prism, bart):
    sentences = SENTS
    tok = prism["auto"].tokenizer
    prism_chunks = greedy_chunks([len(tok.encode([s])[0]) for s in sentences], LIMIT - 1)
    prism_pieces = greedy_chunks([len(tok.encode([s])[0]) for s in sentences], LIMIT - 2)
    result = prism["auto"].compute([SHORT, LONG, LONG, SHORT], sources=[LONG, SHORT, LONG, SHORT])
    assert result.windows == [prism_chunks, prism_pieces, prism_chunks * prism_pieces, 1]
    assert prism_chunks >= 4
    btok = bart["auto"].tokenizer
    # Within a text, every sentence but the first is tokenised after a space.
    counts = [len(btok((" " if i else "") + s, add_special_tokens=False)["input_ids"]) for i, s in enumerate(sentences)]
    bart_chunks = greedy_chunks(counts, LIMIT - 2)
    result = bart["auto"].compute([SHORT, SHORT], [LONG, [SHORT, LONG]], direction="precision", agg="max")
    assert result.windows == [bart_chunks, bart_chunks]  # per prediction: its most-chunked reference
    assert bart["auto"].compute([LONG], [LONG], direction="f").windows == [bart_chunks**2]


def test_chunks_are_whole_sentences_and_lose_nothing(bart):
    pairs = bart["auto"]._pairs
    plan, _ = pairs.plan([LONG], [SHORT], encode=None)
    content = [ids[1:-1] for ids in plan.sources]
    assert content and all(len(ids) + 2 <= LIMIT for ids in plan.sources)
    assert sum(content, []) == pairs.long_text(LONG).ids  # every token once, in order
    for ids in content:
        assert bart["auto"].tokenizer.decode(ids).strip() in LONG and any(
            bart["auto"].tokenizer.decode(ids).strip().startswith(s) for s in SENTS
        )


def test_a_long_target_is_scored_token_for_token(prism):
    """G (sum) / H (mean) is the number of scored tokens: the whole target and its </s>, each once."""
    scorer = prism["auto"]
    for target in (LONG, " ".join(["word"] * 150)):  # the second is one sentence longer than the limit: token windows
        result = scorer.compute([target], sources=[SHORT])
        n = len(scorer.tokenizer.encode([target])[0])
        assert result.G_cand_given_src[0] / result.H_cand_given_src[0] == pytest.approx(n + 1, abs=1e-9)
        assert result.windows[0] >= math.ceil(n / (LIMIT - 2))


def test_one_sentence_longer_than_the_limit_as_source(prism, bart):
    endless = " ".join(["word"] * 150)
    for scorers, call in (
        (prism, lambda s: s.compute([SHORT], sources=[endless])),
        (bart, lambda s: s.compute([SHORT], sources=[endless], direction="src")),
    ):
        result = call(scorers["auto"])
        assert result.windows[0] > 1 and math.isfinite(result.score)


def test_error_names_the_item(prism, bart):
    with pytest.raises(
        LongInputError, match=r"sources\[1\] has \d+ tokens, more than the 47 that tiny-prism-48 on the source side"
    ):
        prism["error"].compute([SHORT, SHORT], sources=[SHORT, LONG])
    with pytest.raises(ArgumentError, match=r"references\[1\]\[0\]"):
        prism["error"].compute([SHORT, SHORT], references=[[SHORT, SHORT], [LONG, SHORT]])
    with pytest.raises(ArgumentError, match=r"predictions\[2\]"):
        prism["error"].compute([SHORT, SHORT, LONG], references=[SHORT, SHORT, SHORT])
    with pytest.raises(ArgumentError, match=r"srcs\[0\]"):
        prism["error"].score([SHORT], srcs=[LONG])
    with pytest.raises(ArgumentError, match=r"sources\[2\]"):
        bart["error"].compute([SHORT] * 3, sources=[SHORT, SHORT, LONG], direction="src")
    with pytest.raises(ArgumentError, match=r"references\[0\]"):
        bart["error"].compute([SHORT], [LONG], direction="recall")
    with pytest.raises(ArgumentError, match=r"tgts\[1\]"):
        bart["error"].score([SHORT, SHORT], [SHORT, LONG])
    # A prompt counts: a text just under the limit goes over it with the encoder-side suffix.
    near = " ".join(SENTS[:3])
    assert len(bart["error"].tokenizer(near)["input_ids"]) <= LIMIT
    with pytest.raises(ArgumentError, match=r"references\[0\]"):
        bart["error"].compute([SHORT], [near], direction="precision", prompt="In other words, that is to say")


def test_bad_setting_is_refused():
    with pytest.raises(ArgumentError, match="long_inputs must be one of 'auto', 'truncate', 'error'"):
        BARTScorer(checkpoint=TINY_BART, long_inputs="window")
    with pytest.raises(ArgumentError, match="long_inputs"):
        PrismScorer(str(GOLDEN / "tiny-prism"), long_inputs=None)


def test_max_length_without_room_for_a_text_token_is_refused():
    """max_length=2 is only <s></s>; a window of 0 tokens raised range()'s error."""
    with pytest.raises(
        ArgumentError,
        match=r"max_length must be at least 3 for 'tiny-bart' \(2 special tokens and one text token\), got 2",
    ):
        BARTScorer(checkpoint=TINY_BART, max_length=2, device="cpu")
    with pytest.raises(ValueError, match="a window needs at least 1 token, got limit=0"):
        _words("Aa bb. Cc.", 10).units(0)


def test_auto_does_not_warn(prism, bart):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prism["auto"].compute([LONG], references=[LONG])
        bart["auto"].score([LONG], [LONG])


def test_matrix_equals_compute_and_chunks_each_long_text_once(prism, bart):
    preds, refs = [TAIL_A, SHORT, "It rained."], [TAIL_B, SHORT, TAIL_A]
    for scorer, kwargs in ((prism["auto"], {}), (bart["auto"], {"direction": "f"})):
        grid = scorer.matrix(preds, refs, **kwargs)
        flat = scorer.compute([p for p in preds for _ in refs], [r for _ in preds for r in refs], **kwargs).scores
        np.testing.assert_array_equal(grid.ravel(), flat)  # each pair the bits it gets in any batch
    # QE reranking of many candidates against one long source: its chunks are encoded once.
    scorer = prism["auto"]
    rows = []
    handle = scorer._loaded.model.get_encoder().register_forward_pre_hook(
        lambda m, a, k: rows.append(int(k["input_ids"].shape[0])), with_kwargs=True
    )
    try:
        result = scorer.compute([SHORT, "It rained.", SENTS[3], SENTS[4]], sources=[LONG] * 4)
    finally:
        handle.remove()
    assert sum(rows) == result.windows[0] == result.windows[3]


@pytest.mark.parametrize("metric", ["prism", "bart"])
def test_bfloat16_on_long_inputs_is_finite_and_close(prism_folder, prism, bart, metric):
    import torch

    if metric == "prism":
        half = PrismScorer(str(prism_folder), dtype="bfloat16")
        run = lambda s: s.compute([SHORT, TAIL_A], sources=[TAIL_B, SHORT])  # noqa: E731
        full = run(prism["auto"])
    else:
        half = BARTScorer(checkpoint=TINY_BART, max_length=LIMIT, dtype="bfloat16")
        run = lambda s: s.compute([SHORT, TAIL_A], [TAIL_B, LONG], direction="f")  # noqa: E731
        full = run(bart["auto"])
    got = run(half)
    assert half.dtype == torch.bfloat16
    assert all(math.isfinite(v) for v in got.scores) and got.windows == full.windows and min(got.windows) > 1
    np.testing.assert_allclose(got.scores, full.scores, atol=0.03)


def test_cli_streaming_output_equals_compute_on_long_inputs(prism_folder, prism, tmp_path, capsys):
    """``nlgscore score ... -o`` (windows of 2 rows, resumable writer) and ``nlgscore prism`` give
    the Python scores on long sources (auto is the default everywhere)."""
    from nlgscore.cli import main

    preds, srcs = [TARGET, SHORT, TAIL_A], [TAIL_A, TAIL_B, SHORT]
    (tmp_path / "c.txt").write_text("\n".join(preds) + "\n", encoding="utf-8")
    (tmp_path / "s.txt").write_text("\n".join(srcs) + "\n", encoding="utf-8")
    want = prism["auto"].compute(preds, sources=srcs).scores
    out = tmp_path / "scores.jsonl"
    argv = [
        "score",
        f"prism:src:{prism_folder}",
        "-c",
        str(tmp_path / "c.txt"),
        "-s",
        str(tmp_path / "s.txt"),
        "--window",
        "2",
        "--no-progress",
    ]
    assert main([*argv, "-o", str(out)]) == 0
    np.testing.assert_allclose([json.loads(line)["segment"] for line in out.read_text().splitlines()], want, atol=1e-6)
    capsys.readouterr()
    assert (
        main(
            [
                "prism",
                "-c",
                str(tmp_path / "c.txt"),
                "-s",
                str(tmp_path / "s.txt"),
                "--checkpoint",
                str(prism_folder),
                "--json",
                "--no-progress",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(printed["segment"], want, atol=1e-6)
    assert "|long_inputs:auto|" in printed["signature"]


def test_long_inputs_flag_on_the_commands(prism_folder, tmp_path, capsys):
    """``--long-inputs`` reaches Prism and BARTScore from the prism, bartscore and score commands."""
    from nlgscore.cli import main

    (tmp_path / "c.txt").write_text(f"{TARGET}\n{TARGET}\n", encoding="utf-8")
    (tmp_path / "s.txt").write_text(f"{TAIL_A}\n{TAIL_B}\n", encoding="utf-8")
    files = ["-c", str(tmp_path / "c.txt"), "-s", str(tmp_path / "s.txt"), "--json", "--no-progress"]
    commands = {
        "prism": ["prism", "--checkpoint", str(prism_folder), *files],
        "score": ["score", f"prism:src:{prism_folder}", *files],
    }
    for name, argv in commands.items():
        for setting in ("auto", "truncate"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert main([*argv, "--long-inputs", setting]) == 0, name
            out = json.loads(capsys.readouterr().out)
            assert f"|long_inputs:{setting}|" in out["signature"]
            assert (out["segment"][0] == out["segment"][1]) == (setting == "truncate"), (name, setting)
        assert main([*argv, "--long-inputs", "error"]) == 2  # a user error, not an internal one
        assert f"error: {tmp_path / 's.txt'}:1 has" in capsys.readouterr().err  # file:line
    # BARTScore's command has no max_length: a text over its 1,024 tokens.
    huge = " ".join(SENTS * 6)
    (tmp_path / "h.txt").write_text(f"{huge}\n", encoding="utf-8")
    (tmp_path / "t.txt").write_text(f"{SHORT}\n", encoding="utf-8")
    argv = [
        "bartscore",
        "--checkpoint",
        TINY_BART,
        "-c",
        str(tmp_path / "t.txt"),
        "-s",
        str(tmp_path / "h.txt"),
        "--json",
        "--no-progress",
    ]
    assert (
        main([*argv, "--long-inputs", "truncate"]) == 0
        and "|long_inputs:truncate|" in json.loads(capsys.readouterr().out)["signature"]
    )
    assert main([*argv, "--long-inputs", "error"]) == 2  # a user error, not an internal one
    assert f"error: {tmp_path / 'h.txt'}:1 has" in capsys.readouterr().err


def _words(text: str, first_id: int):
    """A LongText whose tokens are the words of ``text`` (ids counting from ``first_id``)."""
    from nlgscore.seq2seq.chunking import LongText

    spans, at = [], 0
    for word in text.split():
        at = text.index(word, at)
        spans.append((at, at + len(word)))
        at += len(word)
    return LongText(text, list(range(first_id, first_id + len(spans))), spans, "en")


def test_each_target_sentence_takes_its_best_chunk():
    """The rule on hand-made log-probabilities (no model): per target sentence, the chunk with the
    highest counted sum; specials go with the first/last sentence; uncounted tokens do not vote."""
    from nlgscore.seq2seq.chunking import Plan, Side

    source = _words("One two three four. Five six seven eight.", 100)  # two sentences of 4 tokens
    target = _words("Aa bb. Cc dd ee. Ff.", 200)  # sentences of 2, 3 and 1 tokens
    plan = Plan(Side((0,), (2,), 5), Side((0,), (2,), 10))
    plan.add_long(source, target)
    assert plan.sources == [[0, 100, 101, 102, 103, 2], [0, 104, 105, 106, 107, 2]] and plan.windows == [2]
    assert plan.targets == [[0, 200, 201, 202, 203, 204, 205, 2]] * 2
    chunk0 = np.array([-9.0, -1, -1, -5, -5, -5, -1, -1])  # BOS badly predicted here
    chunk1 = np.array([-0.1, -2, -2, -0.5, -0.5, -0.5, -2, -2])
    out = plan.assemble([chunk0, chunk1], lambda ids: np.ones(len(ids)))[0]
    np.testing.assert_array_equal(out, [-0.1, -2, -2, -0.5, -0.5, -0.5, -1, -1])  # BOS votes: sentence 1 from chunk 1
    out = plan.assemble([chunk0, chunk1], lambda ids: np.r_[0.0, np.ones(len(ids) - 1)])[
        0
    ]  # BOS not counted (Prism's tag)
    np.testing.assert_array_equal(out, [-9.0, -1, -1, -0.5, -0.5, -0.5, -1, -1])


def test_a_long_target_is_cut_into_sentence_pieces_each_token_once():
    from nlgscore.seq2seq.chunking import Plan, Side

    target = _words("Aa bb. Cc dd ee. Ff gg. Hh.", 200)  # sentences of 2, 3, 2, 1 tokens
    plan = Plan(Side((), (2,), 50), Side((7,), (2,), 4))
    plan.add_long(_words("Short source.", 100), target)
    # Pieces of whole sentences within 4 tokens: [Aa bb.] [Cc dd ee.] [Ff gg. Hh.], each with the tag and </s>.
    assert plan.targets == [[7, 200, 201, 2], [7, 202, 203, 204, 2], [7, 205, 206, 207, 2]] and plan.windows == [3]
    scored = [np.arange(len(ids)) + 10.0 * p for p, ids in enumerate(plan.targets)]  # value = 10 x piece + position
    out = plan.assemble(scored, lambda ids: np.ones(len(ids)))[0]
    # Tag from the first piece, </s> from the last, each content token from its own piece, once.
    np.testing.assert_array_equal(out, [0, 1, 2, 11, 12, 13, 21, 22, 23, 24])
