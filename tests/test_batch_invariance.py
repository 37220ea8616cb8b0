"""An item's score is a function of the item alone: the same bits whatever its call holds.

For each metric (BERTScore on MiniLM, Prism and BARTScore on the tiny golden checkpoints), in
float32 and bfloat16, under both CPU kernels (``NLGSCORE_ONEDNN=0`` and ``=1``), hypothesis draws
a subset of a small pool of pairs, an order, a batch size, a token budget, whether a long text
joins the first call, and a chunking of the call into several calls; every item must get exactly (``==``)
the score it gets alone. ``matrix`` must give every cell the bits of that pair alone too, in both dtypes.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import pytest
from conftest import GOLDEN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgscore.backend import gemm

# Short golden pairs (with an empty candidate and a perfect match), and one long text (the first
# 120 words of the golden 700-word input: 20x the others' padded length, cheap enough for CI).
POOL = 6
SETTINGS = settings(
    max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@contextlib.contextmanager
def kernel(onednn: str):
    """Run with NLGSCORE_ONEDNN=onednn (the choice is read at load and at every product)."""
    saved = os.environ.get(gemm.ENV_SWITCH)
    os.environ[gemm.ENV_SWITCH] = onednn
    gemm.onednn_available.cache_clear()
    try:
        yield
    finally:
        if saved is None:
            del os.environ[gemm.ENV_SWITCH]
        else:
            os.environ[gemm.ENV_SWITCH] = saved
        gemm.onednn_available.cache_clear()


def build(metric: str, dtype: str):
    if metric == "bertscore":
        from nlgscore.bertscore import BERTScorer

        return BERTScorer(model_type="minilm", num_layers=4, dtype=dtype)
    if metric == "prism":
        from nlgscore.seq2seq.prism import PrismScorer

        return PrismScorer(str(GOLDEN / "tiny-prism"), lang="en", dtype=dtype)
    from nlgscore.seq2seq.bartscore import BARTScorer

    return BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", dtype=dtype)


_CASES = {}


@pytest.fixture
def case(request, bertscore_golden):
    """(scorer, candidates, references, long text, each pool item's score alone), built once per
    parameter set and kept for the session."""
    key = request.param
    if key not in _CASES:
        metric, dtype, onednn = key
        cands = [bertscore_golden["cands"][i] for i in (0, 1, 44, 45, 47)] + [bertscore_golden["refs"][5]]
        refs = [bertscore_golden["refs"][i] for i in (0, 1, 44, 45, 47, 5)]
        long_text = " ".join(bertscore_golden["cands"][49].split()[:120])
        with kernel(onednn), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scorer = build(metric, dtype)
            alone = [scorer.compute([c], [r]).scores[0] for c, r in zip(cands, refs)]
        _CASES[key] = (scorer, cands, refs, long_text, alone, onednn)
    return _CASES[key]


PARAMS = [(m, d, k) for m in ("bertscore", "prism", "bartscore") for d in ("float32", "bfloat16") for k in ("0", "1")]


@pytest.mark.parametrize("case", PARAMS, indirect=True, ids=["-".join(p) for p in PARAMS])
@SETTINGS
@given(
    order=st.permutations(range(POOL)),
    size=st.integers(1, POOL),
    chunk=st.integers(1, POOL),
    batch_size=st.sampled_from([None, 1, 2, 3, 7]),
    max_tokens=st.sampled_from([None, 32, 96, 4096]),
    with_long=st.booleans(),
)
def test_every_item_gets_its_bits_alone(case, order, size, chunk, batch_size, max_tokens, with_long):
    scorer, cands, refs, long_text, alone, onednn = case
    items = list(order[:size])
    with kernel(onednn), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, len(items), chunk):
            part = items[start : start + chunk]
            preds, golds = [cands[i] for i in part], [refs[i] for i in part]
            extra = int(with_long and start == 0)  # the long text joins the first call
            if extra:
                preds, golds = [long_text, *preds], [refs[0], *golds]
            got = scorer.compute(preds, golds, batch_size=batch_size, max_tokens=max_tokens).scores[extra:]
            assert got == [alone[i] for i in part], (part, batch_size, max_tokens, with_long)


@pytest.mark.parametrize("case", PARAMS, indirect=True, ids=lambda p: "-".join(p))
def test_matrix_cells_are_the_pairs_alone(case):
    scorer, cands, refs, _, _, onednn = case
    preds, golds = cands[:3], refs[3:6]
    with kernel(onednn), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = scorer.matrix(preds, golds)
        for i, pred in enumerate(preds):
            for j, ref in enumerate(golds):
                assert grid[i, j] == scorer.compute([pred], [ref]).scores[0], (i, j)


@pytest.mark.parametrize("onednn", ["0", "1"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_few_rows_get_the_bits_of_a_large_product(onednn, dtype):
    """MKL runs 1-7 rows on another path than a large product (oneDNN 1 row): gemm.linear pads them."""
    import torch

    generator = torch.Generator().manual_seed(0)
    x, w, b = (
        torch.randn(shape, generator=generator).to(getattr(torch, dtype))
        for shape in ((300, 384), (1536, 384), (1536,))
    )
    with kernel(onednn), torch.inference_mode():
        big = gemm.linear(x, w, b)
        for rows in (1, 3, 7, 15, 16, 17, 129):
            assert torch.equal(gemm.linear(x[:rows], w, b), big[:rows]), rows


def test_the_kernel_is_in_the_signature(minilm_scorer):
    # the scorer's own kernel (chosen at its load), whatever was loaded after it
    assert minilm_scorer.signature["kernel"] == minilm_scorer.kernel in ("onednn", "mkl")


def test_a_pairs_match_does_not_depend_on_its_padded_length():
    """A pair matched beside a longer pair is padded further; its P, R, F keep their bits (plain
    ``Tensor.sum`` over 48 vs 64 padded tokens differed for a WMT19 kk-en pair in bf16, 6e-8)."""
    import torch

    from nlgscore.bertscore.matching import greedy_match

    generator = torch.Generator().manual_seed(0)

    def padded(emb, width):
        out, mask = torch.zeros(1, width, emb.shape[-1]), torch.zeros(1, width, dtype=torch.bool)
        out[0, : len(emb)], mask[0, : len(emb)] = emb, True
        return out, mask, mask.float()

    for _ in range(100):  # 4 of the first 100 draws moved with Tensor.sum (seed 0)
        hyp, ref = (torch.nn.functional.normalize(torch.randn(n, 32, generator=generator), dim=-1) for n in (43, 39))
        with torch.inference_mode():
            short = greedy_match(*padded(hyp, 48), *padded(ref, 48))
            long = greedy_match(*padded(hyp, 64), *padded(ref, 80))
        assert [float(v) for v in short] == [float(v) for v in long]
