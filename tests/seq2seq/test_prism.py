"""PrismScorer: parity with the golden values (original token layout), API and bad input."""

import json
import math
import os
import random
import shutil
import warnings
from pathlib import Path

import pytest

from nlgscore.core.signature import Signature
from nlgscore.seq2seq.prism import PrismResult, PrismScorer

GOLDEN = Path(__file__).parents[1] / "golden"
TINY = str(GOLDEN / "tiny-prism")
DATA = json.loads((GOLDEN / "golden_prism.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]
TOL = 1e-5


def _g_tolerance(n_tokens):
    # G sums up to 745 log-probs of a float32 model normalised in float32 (nlgscore.seq2seq.likelihood);
    # each carries ~1e-7 of rounding that batching and threads reshuffle, so a sum gets
    # max(1e-5, 2e-7 per token): 1.5e-4 on the 736-token case, where |G| is about 6000.
    return max(TOL, 2e-7 * n_tokens)


def _check(result_ref, result_src, cases, temperature):
    key = f"temperature_{temperature}"
    cols_ref, cols_src = result_ref.columns(), result_src.columns()
    for i, case in enumerate(cases):
        gold = case["scores"][key]
        assert result_ref.segment[i] == pytest.approx(gold["prism_ref"], abs=TOL), case["id"]
        assert result_src.segment[i] == pytest.approx(gold["prism_src"], abs=TOL), case["id"]
        for name in ("H_cand_given_ref", "H_ref_given_cand"):
            assert cols_ref[name][i] == pytest.approx(gold[name], abs=TOL), (case["id"], name)
        for name, n in (
            ("G_cand_given_ref", gold["n_scored_tokens_cand"]),
            ("G_ref_given_cand", gold["n_scored_tokens_ref"]),
        ):
            assert cols_ref[name][i] == pytest.approx(gold[name], abs=_g_tolerance(n)), (case["id"], name)
        assert cols_src["H_cand_given_src"][i] == pytest.approx(gold["H_cand_given_src"], abs=TOL), case["id"]
        gold_g, n = gold["G_cand_given_src"], gold["n_scored_tokens_cand"]
        assert cols_src["G_cand_given_src"][i] == pytest.approx(gold_g, abs=_g_tolerance(n)), case["id"]


_SCORERS = {}


def _scorer(temperature):
    if temperature not in _SCORERS:
        _SCORERS[temperature] = PrismScorer(TINY, lang="en", temperature=temperature)
    return _SCORERS[temperature]


@pytest.fixture(scope="module", params=[1.0, 0.95])
def scorer(request):
    return _scorer(request.param)


# Batch size 1 (one forward per pair) is the slow run, so it is done once, at T=1.0, shuffled;
# a 300-token budget splits the pairs into many padded batches (the long case gets its own). T=1.0
# in padded batches runs under each kernel (test_golden_parity_under_each_kernel).
@pytest.mark.parametrize(
    "temperature, batch_size, max_tokens, shuffle",
    [(1.0, 1, None, True), (0.95, None, 300, True)],
    ids=["T1-one-shuffled", "T0.95-300-tokens-shuffled"],
)
def test_golden_parity(temperature, batch_size, max_tokens, shuffle):
    _check_golden(_scorer(temperature), batch_size, max_tokens, shuffle)


def test_golden_parity_under_each_kernel(kernel):
    _check_golden(PrismScorer(TINY, lang="en"), None, None, False)


def _check_golden(scorer, batch_size, max_tokens, shuffle):
    cases = list(CASES)
    if shuffle:
        random.Random(7).shuffle(cases)
    scorer.batch_size, scorer.max_tokens = batch_size, max_tokens
    try:
        ref = scorer.score([c["cand"] for c in cases], refs=[c["ref"] for c in cases])
        src = scorer.compute([c["cand"] for c in cases], sources=[c["src"] for c in cases])
    finally:
        scorer.batch_size, scorer.max_tokens = None, None
    _check(ref, src, cases, scorer.temperature)
    system = DATA["system"][f"temperature_{scorer.temperature}"]
    assert ref.score == pytest.approx(system["prism_ref"], abs=TOL)
    assert src.score == pytest.approx(system["prism_src"], abs=TOL)


def test_result_columns_and_signature(scorer):
    result = scorer.score(["Hi world.", ""], refs=["Hello world.", "Nothing."])
    assert isinstance(result, PrismResult) and len(result) == 2
    assert set(result.columns()) == {
        "segment",
        "H_cand_given_ref",
        "H_ref_given_cand",
        "G_cand_given_ref",
        "G_ref_given_cand",
    }
    assert all(math.isfinite(v) and v <= 0 for v in result.segment)  # empty strings are scored
    assert result.score == pytest.approx(sum(result.segment) / 2) and result.system["segment"] == result.score
    sig = Signature.parse(str(result.signature))
    assert (sig["nlgscore"], sig["model"], sig["revision"], sig["lang"], sig["mode"]) == (
        "prism",
        "tiny-prism",
        "local",
        "en",
        "ref",
    )
    assert sig["T"] == f"{scorer.temperature:g}" and sig["seg"] == "avg_log_prob" and sig["dtype"] == "float32"
    assert "transformers" in sig and "torch" in sig
    assert result.to_dict()["system"] == result.system


@pytest.fixture(scope="module")
def tiny():
    return PrismScorer(TINY, lang="en")


def test_compute_follows_mode_or_inputs(tiny):
    cands, refs, srcs = ["The cat sat."], ["A cat sat."], ["Die Katze."]
    assert tiny.compute(cands, references=refs).signature["mode"] == "ref"
    assert tiny.compute(cands, sources=srcs).signature["mode"] == "src"
    with pytest.raises(ValueError, match="exactly one"):
        tiny.compute(cands, references=refs, sources=srcs)
    with pytest.raises(ValueError, match="exactly one"):
        tiny.compute(cands)
    src_mode = PrismScorer(TINY, mode="src")
    assert src_mode.compute(cands, references=refs, sources=srcs).segment == tiny.score(cands, srcs=srcs).segment
    with pytest.raises(ValueError, match="sources are required"):
        src_mode.compute(cands, references=refs)


def test_score_needs_exactly_one_of_refs_srcs(tiny):
    with pytest.raises(ValueError, match="exactly one of refs"):
        tiny.score(["a"])
    with pytest.raises(ValueError, match="exactly one of refs"):
        tiny.score(["a"], refs=["b"], srcs=["c"])
    with pytest.raises(ValueError, match="refs has 2 items"):
        tiny.score(["a"], refs=["b", "c"])
    with pytest.raises(TypeError, match="cands"):
        tiny.score("a", srcs=["b"])


def test_multi_reference_is_the_mean_over_references(tiny):
    cand, r1, r2 = "The cat sat on the mat.", "A cat was sitting on the mat.", "On the mat sat a cat."
    multi = tiny.score([cand, cand], refs=[[r1, r2], [r1]])
    single = tiny.score([cand, cand], refs=[r1, r2])
    assert multi.segment[0] == pytest.approx((single.segment[0] + single.segment[1]) / 2, abs=1e-12)
    assert multi.segment[1] == pytest.approx(single.segment[0], abs=1e-12)
    assert multi.columns()["G_ref_given_cand"][0] == pytest.approx(
        sum(single.columns()["G_ref_given_cand"]) / 2, abs=1e-9
    )
    assert (
        multi.signature["multiref"] == "mean" == single.signature["multiref"]
    )  # the rule is recorded for every reference-based call


@pytest.mark.parametrize("temperature", [0, -1.0, float("nan"), float("inf")])
def test_bad_temperature(temperature):
    with pytest.raises(ValueError, match="temperature"):
        PrismScorer(TINY, temperature=temperature)


def test_unknown_language():
    with pytest.raises(ValueError, match="lang 'xx'"):
        PrismScorer(TINY, lang="xx")
    # The default m39v1 checkpoint is refused before any download is attempted.
    with pytest.raises(ValueError, match="lang 'gu' is not one of the 39 languages"):
        PrismScorer(lang="gu")


def test_bad_mode_and_sizes():
    with pytest.raises(ValueError, match="mode"):
        PrismScorer(TINY, mode="both")
    with pytest.raises(ValueError, match="batch_size"):
        PrismScorer(TINY, batch_size=0)


def test_not_an_encoder_decoder_checkpoint():
    with pytest.raises(ValueError, match="checkpoint 'minilm' is not an encoder-decoder"):
        PrismScorer("minilm")
    with pytest.raises(ValueError, match="model_type 'bart'"):
        PrismScorer(str(GOLDEN / "tiny-bart"))


def test_long_texts_are_truncated_with_one_warning(tmp_path):
    folder = tmp_path / "short-positions"
    shutil.copytree(TINY, folder)
    config = json.loads((folder / "config.json").read_text())
    config["max_position_embeddings"] = 12
    (folder / "config.json").write_text(json.dumps(config))
    scorer = PrismScorer(str(folder), long_inputs="truncate")  # the original's behaviour ("auto" scores every token)
    long = " ".join(["the cat sat on the mat"] * 10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scorer.score([long, long + " again", "short"], refs=["short", long, "short"])
    messages = [str(w.message) for w in caught if "truncated" in str(w.message)]
    assert len(messages) == 1 and messages[0].startswith("4 of 6 Prism input pairs")
    assert all(math.isfinite(v) for v in result.segment)
    # Truncation keeps the first pieces: extra text past the limit does not change the score.
    with pytest.warns(UserWarning, match="truncated"):
        longer = scorer.score([long, long + " more words"], srcs=["x", "x"]).segment
    assert longer[0] == pytest.approx(longer[1], abs=1e-9)


def test_registry_spec_builds_the_scorer():
    from nlgscore.registry import load

    scorer = load(f"prism:src:{TINY}")
    assert isinstance(scorer, PrismScorer) and scorer.mode == "src" and scorer.needs == ("sources",)
    assert len(scorer.compute(["a b"], sources=["c d"])) == 1


README = {
    "cands": ["Hi world.", "This is a Test."],
    "refs": ["Hello world.", "This is a test."],
    "srcs": ["Bonjour le monde.", "C'est un test."],
}


@pytest.mark.skipif(
    not os.environ.get("NLGSCORE_PRISM_CHECKPOINT"),
    reason="set NLGSCORE_PRISM_CHECKPOINT to a folder with the converted m39v1 weights",
)
def test_real_m39v1_readme_values():
    scorer = PrismScorer(os.environ["NLGSCORE_PRISM_CHECKPOINT"], lang="en")
    ref = scorer.score(README["cands"], refs=README["refs"])
    assert ref.segment == pytest.approx([-1.4878583, -0.5490748], abs=1e-4)
    assert ref.score == pytest.approx(-1.0184666, abs=1e-4)
    src = scorer.score(README["cands"], srcs=README["srcs"])
    assert src.segment == pytest.approx([-2.462842, -1.1985264], abs=1e-4)
    assert src.score == pytest.approx(-1.8306842, abs=1e-4)


def test_default_checkpoint_offline_says_how_to_get_it(monkeypatch):
    import nlgscore
    from nlgscore.backend.models import ModelNotAvailableError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotAvailableError, match="dariast/prism"):
        nlgscore.PrismScorer(lang="en")


@pytest.mark.parametrize(
    "module", ["nlgscore.seq2seq.prism", "nlgscore.seq2seq.prism_loading", "nlgscore.seq2seq.prism_tokenizer"]
)
def test_docstring_examples_run(module, monkeypatch):
    import doctest
    import importlib

    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # examples use tests/golden/ paths
    results = doctest.testmod(importlib.import_module(module), raise_on_error=False)
    assert results.attempted > 0 and results.failed == 0
