"""BERTScore's long_inputs: windows for texts over the encoder's limit, truncation, error.

MiniLM (512 positions) is loaded with ``max_length=32`` so that a text of a few hundred tokens
needs many windows and the tests stay fast; the rule is the same at 512.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import nlgscore.bertscore.pairs as pairs_module
from nlgscore.bertscore import BERTScorer
from nlgscore.bertscore.windows import WindowPlan, window_spans
from nlgscore.core.long_inputs import LongInputError
from nlgscore.errors import ArgumentError

LIMIT = 32
HEAD = (
    "The committee met on Monday to discuss the budget for next year. Members agreed that road repairs "
    "come first. The mayor said taxes will not rise. Several residents asked about the new library."
)
TAIL_A = "Later a fire broke out in the old bakery and firefighters rescued two cats from the roof."
TAIL_B = "In the evening the orchestra played Mozart while children danced in the square."


@pytest.fixture(scope="module")
def auto():
    return BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT)


@pytest.fixture(scope="module")
def cut():
    return BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, long_inputs="truncate")


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_texts_differing_after_the_limit_as_references(auto, cut):
    ref_a, ref_b = f"{HEAD} {TAIL_A}", f"{HEAD} {TAIL_B}"
    assert len(auto.encoder.tokenize([ref_a], truncate=False)[0][0]) > LIMIT + 20
    cand = "A fire broke out in the bakery and two cats were rescued."
    a, b = auto.compute([cand, cand], [ref_a, ref_b]), auto.compute([cand], [ref_b])
    assert abs(a.recall[0] - a.recall[1]) > 1e-3 and abs(a.precision[0] - a.precision[1]) > 1e-3
    assert a.precision[1] == b.precision[0]  # each pair scored on its own texts
    assert a.windows[0] > 1
    t = _quiet(cut.compute, [cand, cand], [ref_a, ref_b])
    assert t.f1[0] == t.f1[1] and t.precision[0] == t.precision[1] and t.windows == [1, 1]


def test_texts_differing_after_the_limit_as_candidates(auto, cut):
    cand_a, cand_b = f"{HEAD} {TAIL_A}", f"{HEAD} {TAIL_B}"
    ref = "Firefighters rescued two cats when the bakery burned."
    a = auto.compute([cand_a, cand_b], [ref, ref])
    assert abs(a.precision[0] - a.precision[1]) > 1e-3 and abs(a.recall[0] - a.recall[1]) > 1e-3
    t = _quiet(cut.compute, [cand_a, cand_b], [ref, ref])
    assert t.columns() == {k: [v[0], v[0]] for k, v in t.columns().items()}


def test_a_candidate_copied_from_the_tail_gets_a_higher_precision_with_windows(auto, cut):
    reference = f"{HEAD} {TAIL_A} {TAIL_B}"
    candidate = TAIL_B
    windowed, truncated = auto.compute([candidate], [reference]), _quiet(cut.compute, [candidate], [reference])
    assert windowed.precision[0] > truncated.precision[0] + 0.05
    assert windowed.precision[0] > 0.9  # every token of the copy finds itself in the reference


def test_within_the_limit_auto_is_truncate_bit_for_bit(auto, cut):
    cands = ["The mayor said taxes will not rise.", "Two cats were rescued."]
    refs = ["Taxes stay the same, says the mayor.", "Firefighters saved two cats."]
    a, t = auto.compute(cands, refs), cut.compute(cands, refs)
    assert a.columns() == t.columns() and a.windows == t.windows == [1, 1]
    assert a.signature["long_inputs"] == "auto" and t.signature["long_inputs"] == "truncate"
    assert a.signature["window_stride"] == str((LIMIT - 2) // 2) and "window_stride" not in t.signature


def test_windowed_embedding_takes_each_token_from_its_most_central_window(auto):
    """Embed a long text through the scorer and check each row against its own window encoded alone."""
    import torch

    ids = auto.encoder.tokenize([f"{HEAD} {TAIL_A}"], truncate=False)[0][0]
    plan = auto._window_plan(ids)
    whole = auto._embed_text(ids)
    assert whole.shape[0] == len(ids) and len(plan) == len(window_spans(len(ids) - 2, LIMIT - 2, (LIMIT - 2) // 2))
    alone = torch.cat([auto.encoder.embed([w])[0] for w in plan.windows])
    assert torch.equal(whole, alone[torch.as_tensor(plan.rows)])
    # the middle of the text comes from a window where it has at least a quarter window on each side
    from nlgscore.bertscore.windows import best_window

    middle = (len(ids) - 2) // 2
    start, stop = plan.spans[best_window(plan.spans, len(ids) - 2)[middle]]
    assert min(middle - start, stop - 1 - middle) >= (LIMIT - 2) // 4


def test_encoder_cost_is_at_most_about_twice_the_text():
    room = 510
    for n in (511, 700, 1_000, 5_000, 100_000):
        plan = WindowPlan([101] + [7] * n + [102], prefix=1, suffix=1, room=room, stride=room // 2)
        encoded = sum(len(w) for w in plan.windows)
        assert encoded <= 2.1 * (n + 2), (n, encoded / (n + 2))
        assert sorted(plan.rows.tolist()) == plan.rows.tolist() and len(set(plan.rows.tolist())) == n + 2


def test_matrix_equals_compute_on_long_texts(auto):
    texts = [f"{HEAD} {TAIL_A}", f"{HEAD} {TAIL_B}", TAIL_A, f"{TAIL_B} {HEAD}"]
    grid = auto.matrix(texts, texts)
    pairs = auto.compute([a for a in texts for _ in texts], [b for _ in texts for b in texts])
    np.testing.assert_allclose(grid, np.asarray(pairs.f1).reshape(4, 4), rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.diag(grid), 1.0, atol=1e-5)


def test_bf16_on_long_inputs():
    fp32 = BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT)
    bf16 = BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, dtype="bfloat16")
    cands = [TAIL_B, f"{HEAD} {TAIL_A}"]
    refs = [f"{HEAD} {TAIL_A} {TAIL_B}", f"{HEAD} {TAIL_B}"]
    a, b = fp32.compute(cands, refs), bf16.compute(cands, refs)
    assert b.signature["dtype"] == "bfloat16" and a.windows == b.windows and min(b.windows) > 1
    np.testing.assert_allclose(b.f1, a.f1, atol=0.02)
    assert not np.array_equal(b.f1, a.f1)  # bf16 really ran


def test_long_pair_of_long_texts_is_matched_in_blocks(auto, monkeypatch):
    long_a = " ".join([HEAD, TAIL_A] * 6)
    long_b = " ".join([TAIL_B, HEAD] * 6)
    whole = auto.compute([long_a], [long_b])
    monkeypatch.setattr(pairs_module, "MATCH_BUDGET", 1_000)  # so small that this pair is matched a few rows at a time
    blocked = auto.compute([long_a], [long_b])
    for column in ("precision", "recall", "f1"):
        np.testing.assert_allclose(getattr(blocked, column), getattr(whole, column), rtol=0, atol=1e-6)


def test_all_layers_and_reference_cache_on_long_inputs(auto):
    layered = BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, all_layers=True)
    cached = BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, cache_references=True)
    cands, refs = [TAIL_B, TAIL_A], [f"{HEAD} {TAIL_A} {TAIL_B}", f"{HEAD} {TAIL_A}"]
    expected = auto.compute(cands, refs)
    np.testing.assert_allclose(layered.compute(cands, refs).f1[4], expected.f1, atol=1e-6)
    first, again = cached.compute(cands, refs), cached.compute(cands, refs)
    assert first.f1.tolist() == again.f1.tolist() == expected.f1.tolist()


def test_error_mode_names_the_item():
    strict = BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, long_inputs="error")
    refs = ["short one", "short two", "short three", f"{HEAD} {TAIL_A}"]
    with pytest.raises(LongInputError, match=r"references\[3\] has \d+ tokens, more than the 32"):
        strict.compute(["a", "b", "c", "d"], refs)
    with pytest.raises(LongInputError, match=r"predictions\[1\]"):
        strict.matrix(["a", f"{HEAD} {TAIL_B}"], ["b"])
    assert strict.compute(["a"], ["b"]).windows == [1]


def test_bad_options_are_refused_naming_them():
    with pytest.raises(ArgumentError, match="long_inputs must be one of 'auto', 'truncate', 'error'"):
        BERTScorer(model_type="minilm", num_layers=4, long_inputs="window")
    with pytest.raises(ArgumentError, match="window_stride must be between 1 and the window's 30 content tokens"):
        BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, window_stride=31)
    with pytest.raises(ArgumentError, match="window_stride is only used with long_inputs='auto'"):
        BERTScorer(model_type="minilm", num_layers=4, long_inputs="truncate", window_stride=8)


def test_max_length_without_room_for_a_text_token_is_refused():
    """A 2-position window holds [CLS] and [SEP] only; max_length=2 grew memory
    without bound. Refused at construction, before anything is scored."""
    for mode in ("auto", "truncate"):
        with pytest.raises(
            ArgumentError,
            match=r"max_length must be at least 3 for 'all-MiniLM-L6-v2' \(2 special tokens and one text token\), got 2",
        ):
            BERTScorer(model_type="minilm", num_layers=4, max_length=2, long_inputs=mode)
    assert BERTScorer(model_type="minilm", num_layers=4, max_length=3).compute(
        ["The cat sat."], ["A dog."]
    ).windows == [4]  # one window per token of "the cat sat ."


def test_window_loop_is_bounded_by_the_text():
    """A window that cannot advance is refused; on the unfixed code this loop filled memory, so it
    runs in a child process capped at 2 GiB of address space."""
    code = (
        "import resource; from nlgscore.bertscore.windows import window_spans; "
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); window_spans(3, room=0, stride=1)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "ValueError: a window needs room >= 1 and stride >= 1" in done.stderr, done.stderr[
        -500:
    ]


def test_window_stride_changes_long_scores_only(auto):
    dense_windows = BERTScorer(model_type="minilm", num_layers=4, max_length=LIMIT, window_stride=5)
    cands, refs = [TAIL_B, "Two cats."], [f"{HEAD} {TAIL_A} {TAIL_B}", "Cats, two."]
    a, b = auto.compute(cands, refs), dense_windows.compute(cands, refs)
    assert b.windows[0] > a.windows[0] and a.f1[1] == b.f1[1] and a.f1[0] != b.f1[0]


def test_cli_long_inputs(tmp_path):
    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text(f"{TAIL_B}\nshort\n", encoding="utf-8")
    refs.write_text(f"{HEAD} {TAIL_A} {TAIL_B}\nshort\n", encoding="utf-8")
    base = [
        sys.executable,
        "-m",
        "nlgscore",
        "bertscore",
        "-m",
        "minilm",
        "-l",
        "4",
        "-c",
        str(cands),
        "-r",
        str(refs),
        "--no-progress",
        "--json",
    ]
    error = subprocess.run(
        base + ["--long-inputs", "error", "--max-length", str(LIMIT)], capture_output=True, text=True
    )
    # the command names the file and its 1-based line, not the 0-based references[0]
    assert error.returncode == 2 and f"error: {refs}:1 has" in error.stderr and "Traceback" not in error.stderr
    ok = subprocess.run(
        base + ["--long-inputs", "auto", "--window-stride", "10", "--max-length", str(LIMIT)],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert "long_inputs:auto|window_stride:10" in ok.stdout


def test_the_score_command_names_the_line_of_the_corpus_not_of_its_window(tmp_path, capsys):
    """`score` computes window by window; the error named the item's index in
    its window (references[0] for line 2 with --window 1)."""
    from nlgscore.cli import main

    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text("a\nb\nc\n", encoding="utf-8")
    refs.write_text("short\n" + "word " * 600 + "\nshort\n", encoding="utf-8")  # line 2 is over MiniLM's 512 tokens
    argv = [
        "score",
        "bertscore:minilm",
        "--long-inputs",
        "error",
        "--window",
        "1",
        "-c",
        str(cands),
        "-r",
        str(refs),
        "--no-progress",
    ]
    assert main(argv) == 2
    assert f"error: {refs}:2 has 602 tokens, more than the 512" in capsys.readouterr().err
