"""TER as a Hugging Face ``evaluate`` module, computed by nlgscore's ``ter`` scorer."""

import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    ReferenceListsInputs,
    module_options,
    reference_features,
    registry_scores,
)

_CITATION = """@inproceedings{snover-etal-2006-study,
  title={A Study of Translation Edit Rate with Targeted Human Annotation},
  author={Snover, Matthew and Dorr, Bonnie and Schwartz, Rich and Micciulla, Linnea and Makhoul, John},
  booktitle={Proceedings of the 7th Conference of the Association for Machine Translation in the Americas},
  year={2006},
  url={https://aclanthology.org/2006.amta-papers.25}
}"""

_DESCRIPTION = (
    "TER (Snover et al., 2006): the translation edit rate, the fewest edits (shifts included) that turn a prediction "
    "into a reference over the reference length, x100; sacreBLEU's TER per prediction (lower is better), computed "
    "through nlgscore's scorer template."
)

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidates.
    references (list of str, or list of list of str: all of a prediction's references at once, as sacreBLEU; lists may differ in length).
    case_sensitive (bool): keep case (default False: lowercased, as WMT18's TER baseline).
    normalized (bool), no_punct (bool), asian_support (bool): sacreBLEU's TER settings.
    device (str), verbose (bool): progress bar.
Returns:
    scores (list of float: lower is better), score (float: sacreBLEU's corpus TER, WMT's system score),
    sentence_mean (float: the mean of the scores), signature (str).
Examples:
    The examples load the module by name, as evaluate's own module tests do (they map
    ``evaluate.load("ter")`` to ``./metrics/ter``). Outside those tests that name reaches the
    Hub's ``ter`` module (other code, other outputs), not this one; load this one with
    ``evaluate.load(nlgscore.evaluate_module("ter"))`` (or a local folder path).

    >>> ter = evaluate.load("ter")
    >>> ter.compute(predictions=["the cat sat"], references=["the cat sat on the mat"])["scores"]
    [50.0]
    >>> out = ter.compute(predictions=["the cat sat", "a dog"], references=[["the cat sat on the mat", "the cat sat"], ["a dog ran"]])
    >>> out["scores"], round(out["score"], 4), out["signature"].split("|")[1]
    ([0.0, 33.33333333333333], 13.3333, 'nrefs:var')
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TER(OptionChecks, ReferenceListsInputs, evaluate.Metric):
    metric = "ter"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/mjpost/sacrebleu",
            inputs_description=_KWARGS_DESCRIPTION,
            features=reference_features(),
            codebase_urls=["https://github.com/mjpost/sacrebleu"],
            reference_urls=["https://aclanthology.org/2006.amta-papers.25"],
        )

    def _compute(
        self,
        predictions,
        references,
        case_sensitive=None,
        normalized=None,
        no_punct=None,
        asian_support=None,
        verbose=False,
        device=None,
        dtype=None,
        batch_size=None,
        max_tokens=None,
        progress=None,
        accelerator=None,
        shard=None,
    ):
        return registry_scores("ter", predictions, references, **module_options(locals()))
