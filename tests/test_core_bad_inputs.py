"""Bad-input defects that live in the scorers, each reproduced on the real components.

Nothing is mocked: the packaged MiniLM, the tiny Prism and BART checkpoints, copies of their
folders with files removed or corrupted.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from nlgscore.backend.model_files import IncompleteModelError

GOLDEN = Path(__file__).parent / "golden"
P = ["The cat sat on the mat.", "Prices rose sharply."]
R = ["A cat was sitting on the mat.", "Prices increased steeply."]


def _minilm_folder(tmp_path: Path) -> Path:
    from nlgscore.backend.models import resolve

    folder = tmp_path / "minilm"
    shutil.copytree(resolve("minilm").path, folder)
    return folder


# -- dict and set inputs ----------------------------------------------------------------
@pytest.mark.parametrize("bad", [{"a": 1, "b": 2}, {"a", "b"}, frozenset({"a", "b"})])
def test_mapping_and_set_inputs_are_rejected(minilm_scorer, prism, bart, bad):
    for call, name in (
        (lambda: minilm_scorer.compute(bad, R), "predictions"),
        (lambda: minilm_scorer.compute(P, bad), "references"),
        (lambda: minilm_scorer.score(P, [bad, "x"]), r"refs\[0\]"),
        (lambda: prism.compute(P, sources=bad), "sources"),
        (lambda: prism.compute(bad, references=R), "predictions"),
        (lambda: bart.compute(P, bad), "references"),
        (lambda: bart.score(bad, R), "srcs"),
    ):
        with pytest.raises(TypeError, match=name):
            call()


# -- lone surrogates ---------------------------------------------------------------------
def test_lone_surrogates_name_the_argument_and_index(minilm_scorer, prism, bart):
    bad = ["fine", "broken \ud800 text"]
    for call, where in (
        (lambda: minilm_scorer.compute(bad, R), r"predictions\[1\]"),
        (lambda: minilm_scorer.compute(P, [["ok", "x\udfff"], "y"]), r"references\[0\]\[1\]"),
        (lambda: prism.compute(P, sources=bad), r"sources\[1\]"),
        (lambda: bart.compute(P, bad), r"references\[1\]"),
        (lambda: bart.compute(P, R, prompt=["Such as", "\ud800"]), r"prompt\[1\]"),
        (lambda: minilm_scorer.compute_idf(bad), r"idf_sents\[1\]"),
        (lambda: minilm_scorer.similarity("a \ud800", "b"), "cand"),  # the heat map of show -c
    ):
        with pytest.raises(ValueError, match=where + ".*surrogate"):
            call()


# -- model folders without tokenizer files; BART without merges.txt, corrupt JSON ----
def test_bertscore_folder_without_tokenizer_files_fails_clearly(tmp_path):
    from nlgscore.bertscore import BERTScorer

    folder = _minilm_folder(tmp_path)
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink()
    with pytest.raises(IncompleteModelError, match="no tokenizer files") as caught:
        BERTScorer(model_type=str(folder), num_layers=4)
    assert str(folder) in str(caught.value)


def test_tokenizer_far_smaller_than_the_model_fails(tmp_path):
    """A tokenizer.json of 5 tokens (what transformers 5 builds from nothing) beside a 30k model."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    from nlgscore.bertscore import BERTScorer

    folder = _minilm_folder(tmp_path)
    (folder / "vocab.txt").unlink()
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
    Tokenizer(WordLevel(vocab, unk_token="[UNK]")).save(str(folder / "tokenizer.json"))
    with pytest.raises(IncompleteModelError, match="has 5 tokens but the model has 30522"):
        BERTScorer(model_type=str(folder), num_layers=4)


def test_bart_folder_without_tokenizer_or_merges_fails_clearly(tmp_path):
    from nlgscore.seq2seq.bartscore import BARTScorer

    folder = tmp_path / "bart"
    shutil.copytree(GOLDEN / "tiny-bart", folder)
    (folder / "merges.txt").unlink()
    with pytest.raises(IncompleteModelError, match="no merges.txt"):
        BARTScorer(checkpoint=str(folder))
    (folder / "vocab.json").unlink()
    with pytest.raises(IncompleteModelError, match="no tokenizer files"):
        BARTScorer(checkpoint=str(folder))


def test_corrupt_json_configs_name_the_file(tmp_path):
    from nlgscore.bertscore import BERTScorer
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    folder = _minilm_folder(tmp_path)
    (folder / "config.json").write_text('{"model_type": "bert",', encoding="utf-8")
    with pytest.raises(IncompleteModelError, match="config.json.*not valid JSON"):
        BERTScorer(model_type=str(folder), num_layers=4)
    for name, make in (("tiny-bart", lambda f: BARTScorer(checkpoint=f)), ("tiny-prism", lambda f: PrismScorer(f))):
        copy = tmp_path / name
        shutil.copytree(GOLDEN / name, copy)
        (copy / "config.json").write_bytes(b"\xff\xfe{}")
        with pytest.raises(IncompleteModelError, match="config.json"):
            make(str(copy))


def test_prism_vocab_that_is_a_list_fails_clearly(tmp_path):
    from nlgscore.seq2seq.prism import PrismScorer

    folder = tmp_path / "prism"
    shutil.copytree(GOLDEN / "tiny-prism", folder)
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    (folder / "vocab.json").write_text(json.dumps(list(vocab)), encoding="utf-8")
    with pytest.raises(IncompleteModelError, match="vocab.json.*JSON object"):
        PrismScorer(str(folder))


# -- the one-shot cache keys idf_sents by content ----------------------------------------
def test_one_shot_cache_keys_idf_sents_by_content(bertscore_golden):
    pd = pytest.importorskip("pandas")
    from nlgscore.bertscore import oneshot

    refs = bertscore_golden["refs"]
    base = (refs * 2)[:80]
    changed = list(base)
    changed[40] = "A completely different sentence about quantum chromodynamics."
    first, second = pd.Series(base), pd.Series(changed)
    assert repr(first) == repr(second)  # elided reprs are equal: a key by repr would mix the two lists up
    options = dict(model_type="minilm", num_layers=2)
    a = oneshot.bertscore(P, R, idf_sents=first, **options)
    b = oneshot.bertscore(P, R, idf_sents=second, **options)
    assert a.signature["idf"] != b.signature["idf"]
    assert oneshot.bertscore(P, R, idf_sents=pd.Series(base), **options).scores == a.scores


# -- layer 0 -------------------------------------------------------------------------------
def test_layer_zero_is_the_embeddings_output(bertscore_golden):
    from nlgscore.bertscore import BERTScorer

    run = next(r for r in bertscore_golden["runs"] if r["name"] == "all-layers-first10")
    n = np.asarray(run["F"]).shape[1]
    got = BERTScorer(model_type="minilm", num_layers=0).score(
        bertscore_golden["cands"][:n], bertscore_golden["refs"][:n]
    )
    np.testing.assert_allclose(got.f1, np.asarray(run["F"])[0], atol=1e-5)  # bert_score's hidden_states[0]


# -- Prism temperature --------------------------------------------------------------------
@pytest.mark.parametrize("temperature", [1e-40, 0.0, -1.0, 1e9, float("nan")])
def test_prism_temperature_out_of_range(temperature):
    from nlgscore.seq2seq.prism import PrismScorer

    with pytest.raises(ValueError, match="temperature"):
        PrismScorer(str(GOLDEN / "tiny-prism"), temperature=temperature)


def test_non_finite_scores_are_never_returned(prism):
    prism.temperature = 1e-40  # bypassing the constructor's check: the template still refuses NaN
    try:
        with pytest.raises(ValueError, match="not finite for predictions"):
            prism.compute(P, references=R)
    finally:
        prism.temperature = 1.0


# -- plot with all_layers ------------------------------------------------------------------
def test_plot_with_all_layers_draws_the_chosen_layer(tmp_path):
    pytest.importorskip("matplotlib")
    from nlgscore.bertscore import BERTScorer

    result = BERTScorer(model_type="minilm", num_layers=3, all_layers=True).compute(P, R)
    result.plot(1, str(tmp_path / "pair.png"))
    assert (tmp_path / "pair.png").stat().st_size > 0


# -- options ------------------------------------------------------------------------------
def test_reference_cache_size_must_be_positive():
    from nlgscore.bertscore import BERTScorer

    with pytest.raises(ValueError, match="reference_cache_size"):
        BERTScorer(model_type="minilm", num_layers=2, reference_cache_size=-1)


# -- decided and documented -------------------------------------------------------------------
def test_decided_rules(tmp_path, minilm_scorer):
    from nlgscore.bertscore import BERTScorer
    from nlgscore.bertscore.rescale import find_baseline, parse_baseline

    with pytest.raises(ValueError, match="at most"):
        parse_baseline("LAYER,P,R,F\n0,0.5,0.99999,0.5\n")
    with pytest.raises(ValueError, match="idf_sents given with idf=False"):
        BERTScorer(model_type="minilm", num_layers=2, idf=False, idf_sents=R)
    assert BERTScorer(model_type="minilm", num_layers=2, idf_sents=R).idf  # unset idf: idf_sents turns it on
    with pytest.raises(ValueError, match="revision"):
        BERTScorer(model_type="minilm", num_layers=2, revision="main")
    for lang in ("../en", "en/../../x", "en\\x", ".."):
        with pytest.raises(ValueError, match="lang must be a language code"):
            find_baseline(lang, "all-MiniLM-L6-v2")
    idf = BERTScorer(model_type="minilm", num_layers=2, idf=True)
    with pytest.warns(UserWarning, match="degenerate"):
        idf.compute(P[:1], R[:1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idf.compute(P, R)  # two references: no warning
