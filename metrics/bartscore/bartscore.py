"""BARTScore as a Hugging Face ``evaluate`` module, computed by nlgscore (the authors' numbers, faster)."""

import datasets
import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    bartscore_inputs,
    module_options,
    reference_lists,
    require_inputs,
    table_compute,
)
from nlgscore.extend import table

_CITATION = """@inproceedings{yuan2021bartscore,
  title={BARTScore: Evaluating Generated Text as Text Generation},
  author={Weizhe Yuan and Graham Neubig and Pengfei Liu},
  booktitle={Advances in Neural Information Processing Systems},
  year={2021},
  url={https://openreview.net/forum?id=5Ya8PbvpZ9}
}"""

_DESCRIPTION = """BARTScore: the mean log-probability of each target token given the source under BART
(neulab/BARTScore semantics). Directions: src (source -> prediction), precision (reference ->
prediction), recall (prediction -> reference), f (mean of both), harmonic (the authors' harm_f)."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): texts to score.
    references (list of str or list of list of str): one or more references per prediction (a plain
        string among lists counts as one reference).
    sources (list of str): source texts, for direction "src" (which reads no references: giving
        both is an error naming the one the direction does not read).
    direction (str): "f" (default), "precision", "recall", "src" or "harmonic".
    prompt (str or list of str): a prompt, or "ref_hyp" / "src_hyp" (the paper's sets).
    prompt_side (str): "encoder" (suffix of the source) or "decoder" (prefix of the target).
    agg (str): "mean" or "max" over multiple references.
    checkpoint (str): Hub id or folder replacing the variant's weights; para_weights (str): bart.pth.
    variant (str): the config's, or a variant for the default config; revision (str).
    device (str), dtype (str), batch_size (int), max_tokens (int), max_length (int), verbose (bool),
    progress (bool), accelerator, shard (bool): as nlgscore.load takes them.
    context (int), doc_ids (list, one id per prediction): read each sentence after the previous
        `context` sentences of its document, only its own tokens scored (default 0: sentence level).
    long_inputs (str): "auto" (default: a text over max_length is scored in sentence chunks),
        "truncate" (cut at max_length, as the authors' scorer) or "error".
    kernel (str): the CPU linear kernel, "onednn" or "mkl"; forward (str): "tokens" (packed tokens) or
        "padded"; both default to "auto", what NLGSCORE_ONEDNN / NLGSCORE_TOKEN_FORWARD say, and
        are recorded in the signature.
Returns:
    scores (list of float, <= 0, higher is better), mean (float), signature (str).
Examples:
    >>> import nlgscore
    >>> bartscore = evaluate.load(nlgscore.evaluate_module("bartscore"), "bart-large-cnn", checkpoint="tests/golden/tiny-bart")
    >>> out = bartscore.compute(predictions=["On Monday the weather in Almaty was sunny."],
    ...     references=["It was sunny in Almaty on Monday."], device="cpu")
    >>> round(out["mean"], 5), "|variant:bart-large-cnn|" in out["signature"]
    (-8.17331, True)
"""

_STR = datasets.Value("string", id="sequence")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BARTScore(OptionChecks, evaluate.Metric):
    metric = "bartscore"

    def __init__(self, config_name=None, checkpoint=None, **kwargs):
        super().__init__(config_name=config_name, **kwargs)
        self.checkpoint = checkpoint

    def _info(self):
        if self.config_name not in (*table("bartscore_variants")["variants"], "default"):
            raise ValueError(f"config name must be a BARTScore variant, got {self.config_name!r}")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/neulab/BARTScore",
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": _STR, "references": datasets.Sequence(_STR), "sources": _STR}),
                datasets.Features({"predictions": _STR, "references": _STR, "sources": _STR}),
            ],
            codebase_urls=["https://github.com/neulab/BARTScore"],
            reference_urls=["https://arxiv.org/abs/2106.11520"],
        )

    def compute(self, *, predictions=None, references=None, sources=None, **kwargs):
        """As ``evaluate``'s compute, but ``references`` or ``sources`` may be left out."""
        require_inputs("bartscore", self.config_name, {"predictions": predictions})
        if references is None and sources is None:
            raise ValueError(
                "bartscore needs references= (directions f, precision, recall, harmonic) or sources= (direction src)"
            )
        n = len(predictions)
        # evaluate needs every feature column: a missing one is filled with "" and flagged.
        kwargs.update(use_references=references is not None, use_sources=sources is not None)
        references = [""] * n if references is None else reference_lists(references)
        sources = [""] * n if sources is None else sources
        return super().compute(predictions=predictions, references=references, sources=sources, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        sources,
        checkpoint=None,
        variant=None,
        max_length=None,
        revision=None,
        para_weights=None,
        direction=None,
        long_inputs=None,
        kernel=None,
        forward=None,
        prompt=None,
        prompt_side=None,
        agg=None,
        context=None,
        doc_ids=None,
        verbose=False,
        use_references=True,
        use_sources=True,
        device=None,
        dtype=None,
        batch_size=None,
        max_tokens=None,
        progress=None,
        accelerator=None,
        shard=None,
    ):
        given = module_options(locals(), references=references, sources=sources)
        given.update(bartscore_inputs(given, self.config_name), checkpoint=checkpoint or self.checkpoint)
        refs, srcs = given.pop("references"), given.pop("sources")
        self._scorer, result = table_compute("bartscore", predictions, refs, srcs, **given)
        return {"scores": result.scores, "mean": result.score, "signature": str(result.signature)}
