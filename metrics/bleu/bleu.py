"""BLEU as a Hugging Face ``evaluate`` module, computed by nlgscore's ``bleu`` scorer."""

import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    ReferenceListsInputs,
    module_options,
    reference_features,
    registry_scores,
)

_CITATION = """@inproceedings{papineni-etal-2002-bleu,
  title={{B}leu: a Method for Automatic Evaluation of Machine Translation},
  author={Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing},
  booktitle={Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics},
  year={2002},
  url={https://aclanthology.org/P02-1040}
}"""

_DESCRIPTION = (
    "BLEU (Papineni et al., 2002) per prediction: sacreBLEU's sentence_bleu (13a, exponential smoothing, effective order), "
    "WMT's segment-level BLEU since WMT21, or the BARTScore paper's Moses-tokenised sentBLEU."
)

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidates.
    references (list of str, or list of list of str: all of a prediction's references at once, as sacreBLEU; lists may differ in length).
    multiref (str): "joint" (sacreBLEU's multi-reference score, default) or "max" (the best single-reference score).
    tokenize (str): "13a" (sacreBLEU sentence_bleu, default), "intl" (WMT18's BLEU), "zh", "char", "none"
        (sacreBLEU's tokenisers) or "moses" (the BARTScore paper's sentBLEU).
    lowercase (bool): sacreBLEU's -lc.
    device (str), verbose (bool): progress bar.
Returns:
    scores (list of float), score (float: sacreBLEU's corpus statistic, WMT's system score),
    sentence_mean (float: the mean of the scores), signature (str).
Examples:
    The examples load the module by name, as evaluate's own module tests do (they map
    ``evaluate.load("bleu")`` to ``./metrics/bleu``). Outside those tests that name reaches the
    Hub's ``bleu`` module (other code, other outputs), not this one; load this one with
    ``evaluate.load(nlgscore.evaluate_module("bleu"))`` (or a local folder path).

    >>> bleu = evaluate.load("bleu")
    >>> round(bleu.compute(predictions=["the cat sat on a mat"], references=["the cat sat on the mat"])["scores"][0], 4)
    53.7285
    >>> refs = [["the cat sat on the mat", "a cat sat on a mat"], ["the dog ran"]]
    >>> out = bleu.compute(predictions=["the cat sat on a mat", "a dog"], references=refs)
    >>> round(out["score"], 4), round(out["sentence_mean"], 4), out["signature"].split("|")[1]
    (81.5492, 65.1633, 'nrefs:var')
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BLEU(OptionChecks, ReferenceListsInputs, evaluate.Metric):
    metric = "bleu"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/mjpost/sacrebleu",
            inputs_description=_KWARGS_DESCRIPTION,
            features=reference_features(),
            codebase_urls=["https://github.com/mjpost/sacrebleu"],
            reference_urls=["https://aclanthology.org/P02-1040"],
        )

    def _compute(
        self,
        predictions,
        references,
        tokenize=None,
        lowercase=None,
        multiref=None,
        verbose=False,
        device=None,
        dtype=None,
        batch_size=None,
        max_tokens=None,
        progress=None,
        accelerator=None,
        shard=None,
    ):
        return registry_scores("bleu", predictions, references, **module_options(locals()))
