"""chrF as a Hugging Face ``evaluate`` module, computed by nlgscore's ``chrf`` scorer."""

import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    ReferenceListsInputs,
    module_options,
    reference_features,
    registry_scores,
)

_CITATION = """@inproceedings{popovic-2015-chrf,
  title={chr{F}: character n-gram {F}-score for automatic {MT} evaluation},
  author={Popovi{\'c}, Maja},
  booktitle={Proceedings of the Tenth Workshop on Statistical Machine Translation},
  year={2015},
  url={https://aclanthology.org/W15-3049}
}"""

_DESCRIPTION = (
    "chrF (Popović, 2015): the character n-gram F-score (n up to 6, beta 2), sacreBLEU's sentence chrF per prediction, "
    "computed through nlgscore's scorer template."
)

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidates.
    references (list of str, or list of list of str: all of a prediction's references at once, as sacreBLEU; lists may differ in length).
    char_order (int), word_order (int: 2 is chrF++), beta (int: 3 is WMT18's chrF): sacreBLEU's settings.
    multiref (str): "joint" (sacreBLEU's multi-reference score, default) or "max" (the best single-reference score).
    device (str), verbose (bool): progress bar.
Returns:
    scores (list of float), score (float: sacreBLEU's corpus statistic, WMT's system score),
    sentence_mean (float: the mean of the scores), signature (str).
Examples:
    The examples load the module by name, as evaluate's own module tests do (they map
    ``evaluate.load("chrf")`` to ``./metrics/chrf``). Outside those tests that name reaches the
    Hub's ``chrf`` module (other code, other outputs), not this one; load this one with
    ``evaluate.load(nlgscore.evaluate_module("chrf"))`` (or a local folder path).

    >>> chrf = evaluate.load("chrf")
    >>> chrf.compute(predictions=["the cat sat"], references=["the cat sat"])["scores"]
    [100.0]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ChrF(OptionChecks, ReferenceListsInputs, evaluate.Metric):
    metric = "chrf"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/mjpost/sacrebleu",
            inputs_description=_KWARGS_DESCRIPTION,
            features=reference_features(),
            codebase_urls=["https://github.com/mjpost/sacrebleu"],
            reference_urls=["https://aclanthology.org/W15-3049"],
        )

    def _compute(
        self,
        predictions,
        references,
        char_order=None,
        word_order=None,
        beta=None,
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
        return registry_scores("chrf", predictions, references, **module_options(locals()))
