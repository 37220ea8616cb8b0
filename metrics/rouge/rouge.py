"""ROUGE as a Hugging Face ``evaluate`` module, computed by nlgscore's ``rouge`` scorer."""

import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    ReferenceListsInputs,
    module_options,
    reference_features,
    registry_scores,
)

_CITATION = """@inproceedings{lin-2004-rouge,
  title={{ROUGE}: A Package for Automatic Evaluation of Summaries},
  author={Lin, Chin-Yew},
  booktitle={Text Summarization Branches Out},
  year={2004},
  url={https://aclanthology.org/W04-1013}
}"""

_DESCRIPTION = (
    "ROUGE (Lin, 2004) F-measure per prediction, from Google's rouge-score package with Porter stemming: "
    "the summarisation baselines of SummEval and BARTScore, computed through nlgscore's scorer template."
)

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidates.
    references (list of str, or list of list of str: the best score over references).
    rouge_type (str): "rouge1", "rouge2" or "rougeL" (default).
    device (str), verbose (bool): progress bar.
Returns:
    scores (list of float), score (float: the mean of the scores), signature (str).
Examples:
    The examples load the module by name, as evaluate's own module tests do (they map
    ``evaluate.load("rouge")`` to ``./metrics/rouge``). Outside those tests that name reaches the
    Hub's ``rouge`` module (other code, other outputs), not this one; load this one with
    ``evaluate.load(nlgscore.evaluate_module("rouge"))`` (or a local folder path).

    >>> rouge = evaluate.load("rouge")
    >>> round(rouge.compute(predictions=["the cat sat"], references=["the cat"], rouge_type="rouge1")["scores"][0], 3)
    0.8
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rouge(OptionChecks, ReferenceListsInputs, evaluate.Metric):
    metric = "rouge"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/google-research/google-research/tree/master/rouge",
            inputs_description=_KWARGS_DESCRIPTION,
            features=reference_features(),
            codebase_urls=["https://github.com/google-research/google-research/tree/master/rouge"],
            reference_urls=["https://aclanthology.org/W04-1013"],
        )

    def _compute(
        self,
        predictions,
        references,
        rouge_type=None,
        verbose=False,
        device=None,
        dtype=None,
        batch_size=None,
        max_tokens=None,
        progress=None,
        accelerator=None,
        shard=None,
    ):
        return registry_scores("rouge", predictions, references, **module_options(locals()))
