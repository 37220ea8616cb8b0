"""Prism as a Hugging Face ``evaluate`` module (configs ``ref`` and ``src``), computed by nlgscore."""

import datasets
import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    ReferenceListsInputs,
    config_inputs,
    module_options,
    reference_features,
    table_compute,
)

_CITATION = """@inproceedings{thompson-post-2020-automatic,
  title={Automatic Machine Translation Evaluation in Many Languages via Zero-Shot Paraphrasing},
  author={Thompson, Brian and Post, Matt},
  booktitle={Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year={2020},
  url={https://aclanthology.org/2020.emnlp-main.8}
}"""

_DESCRIPTION = """Prism scores a candidate by how probable a multilingual NMT model, used as a zero-shot
paraphraser, finds it: H(y|x) is the mean natural-log probability of the target tokens (EOS included,
language tag excluded). Prism-ref (config "ref") = 0.5 H(cand|ref) + 0.5 H(ref|cand); Prism-src
(config "src", quality estimation) = H(cand|src). Same token layout and numbers as the original."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidates.
    references (list of str, or list of list of str: mean over references): config "ref" (a plain
        string among lists counts as one reference).
    sources (list of str): config "src".
    lang (str): language of the candidates, one of the 39 m39v1 languages (default "en").
    temperature (float > 0): softmax temperature (default 1.0; COMET's WMT scripts used 0.95).
    batch_size (int), max_tokens (int), device (str), dtype (str), verbose (bool): progress bar.
    context (int), doc_ids (list, one document id per prediction): read each sentence after the
        previous `context` sentences of its document, only its own tokens scored (Vernikos et al., WMT 2022);
        default 0 (sentence level).
    long_inputs (str): "auto" (default: a text over the model's positions is scored in sentence
        chunks), "truncate" (cut, as the original) or "error".
    kernel (str): the CPU linear kernel, "onednn" or "mkl"; forward (str): "tokens" (packed tokens) or
        "padded"; both default to "auto", what NLGSCORE_ONEDNN / NLGSCORE_TOKEN_FORWARD say, and
        are recorded in the signature.
    checkpoint (str: Hub id or folder; default dariast/prism, the m39v1 weights), revision (str):
        at load time (evaluate.load(..., checkpoint=...)) or per compute; mode (str): the config's.
    progress (bool), accelerator, shard (bool): as nlgscore.load takes them.
Returns:
    scores (list of float, <= 0), mean (float: the system score), signature (str).
Examples:
    >>> import nlgscore
    >>> prism = evaluate.load(nlgscore.evaluate_module("prism"), "ref", checkpoint="tests/golden/tiny-prism")
    >>> results = prism.compute(predictions=["Hi world."], references=["Hello world."])
    >>> len(results["scores"]), results["mean"] == results["scores"][0], "|mode:ref|" in results["signature"]
    (1, True, True)
    >>> qe = evaluate.load(nlgscore.evaluate_module("prism"), "src", checkpoint="tests/golden/tiny-prism")
    >>> qe.compute(predictions=["Hi world."], sources=["Bonjour le monde."])["scores"][0] < 0
    True
"""

_TEXT = datasets.Value("string", id="sequence")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Prism(OptionChecks, ReferenceListsInputs, evaluate.Metric):
    metric = "prism"

    def __init__(self, *args, checkpoint=None, revision=None, **kwargs):
        self.checkpoint, self.revision = checkpoint, revision
        super().__init__(*args, **kwargs)

    def _info(self):
        if self.config_name not in ("ref", "src", "default"):
            raise ValueError(f"config_name must be 'ref' (default) or 'src', got {self.config_name!r}")
        if self.config_name == "src":
            features = datasets.Features({"predictions": _TEXT, "sources": _TEXT})
        else:
            features = reference_features()
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/thompsonb/prism",
            inputs_description=_KWARGS_DESCRIPTION,
            features=features,
            codebase_urls=["https://github.com/thompsonb/prism"],
            reference_urls=["https://aclanthology.org/2020.emnlp-main.8"],
        )

    def compute(self, *, predictions=None, references=None, sources=None, **kwargs):
        """As ``evaluate``'s compute, after checking that the inputs are the ones this config reads."""
        config = "src" if self.config_name == "src" else "ref"
        inputs = config_inputs(
            "prism",
            config,
            "sources" if config == "src" else "references",
            predictions,
            references=references,
            sources=sources,
        )
        return super().compute(predictions=predictions, **inputs, **kwargs)

    def _compute(
        self,
        predictions,
        references=None,
        sources=None,
        checkpoint=None,
        lang=None,
        temperature=None,
        mode=None,
        revision=None,
        long_inputs=None,
        kernel=None,
        forward=None,
        context=None,
        doc_ids=None,
        verbose=False,
        device=None,
        dtype=None,
        batch_size=None,
        max_tokens=None,
        progress=None,
        accelerator=None,
        shard=None,
    ):
        given = module_options(locals())
        config = "src" if self.config_name == "src" else "ref"
        if mode is not None and mode != config:  # the config chose the inputs (its features) already
            raise ValueError(f"mode={mode!r} contradicts the module's config {config!r}: load the config {mode!r}")
        given.update(checkpoint=checkpoint or self.checkpoint, mode=config, revision=revision or self.revision)
        self._scorer, result = table_compute("prism", predictions, references, sources, **given)
        return {"scores": result.scores, "mean": result.score, "signature": str(result.signature)}
