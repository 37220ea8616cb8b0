"""BERTScore as a Hugging Face ``evaluate`` module: a drop-in for the Hub's ``bertscore`` on nlgscore.

It returns what the Hub's module returns, ``hashcode`` included in bert_score's own format (as
``bert_score.utils.get_hash`` writes it for the same arguments, so that code parsing it keeps
working), plus ``signature``: nlgscore's full record of the settings (model commit, tokenizer,
``long_inputs``, context ...). Two results are comparable when their signatures are equal.
"""

import evaluate

from nlgscore.evaluate_modules import (
    OptionChecks,
    ReferenceListsInputs,
    bert_score_hashcode,
    module_options,
    reference_features,
    require_inputs,
    table_compute,
)

_CITATION = """@inproceedings{bert-score,
  title={BERTScore: Evaluating Text Generation with BERT},
  author={Tianyi Zhang* and Varsha Kishore* and Felix Wu* and Kilian Q. Weinberger and Yoav Artzi},
  booktitle={International Conference on Learning Representations},
  year={2020},
  url={https://openreview.net/forum?id=SkeHuCVFDr}
}"""

_DESCRIPTION = """BERTScore matches each candidate token to its most similar reference token by cosine
similarity of contextual embeddings and reports precision, recall and F1 (bert_score 0.3.13
semantics, computed by nlgscore: faster, offline-aware, signature instead of a bare hash)."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidates.
    references (list of str or list of list of str): one or more references per candidate (a plain
        string among lists counts as one reference).
    lang (str): language code, picks the default model (en: roberta-large) and baseline.
    model_type (str): model id, folder or alias ("minilm"); num_layers (int): layer used.
    idf (bool), idf_sents (list of str): idf weights from the references or from idf_sents (idf_sents
        alone switches idf on; with idf=False it is an error).
    rescale_with_baseline (bool), baseline_path (str): baseline rescaling.
    all_layers (bool), device (str), batch_size (int: most sentences per batch; default: token budget only),
    max_length (int), verbose (bool): progress bar.
    context (int), doc_ids (list, one document id per prediction): read each sentence after the
        previous `context` sentences of its document, only its own tokens scored (Vernikos et al., WMT 2022);
        default 0 (sentence level).
    long_inputs (str): "auto" (default: a text over max_length is encoded in overlapping windows,
        every token counts), "truncate" (bert_score's cut at max_length) or "error";
        window_stride (int): content tokens between windows (default: half a window).
    kernel (str): the CPU linear kernel, "onednn" or "mkl"; forward (str): "tokens" (packed tokens) or
        "padded"; both default to "auto", what NLGSCORE_ONEDNN / NLGSCORE_TOKEN_FORWARD say, and
        are recorded in the signature.
    nthreads (int), use_fast_tokenizer (bool): accepted as in the Hub module, no effect on the numbers:
        tokenisation is always the fast (Rust) tokenizer, recorded as tok:fast in the signature;
        use_fast_tokenizer=True adds "_fast-tokenizer" to the hashcode, as in bert_score.
Returns:
    precision, recall, f1 (lists of float);
    hashcode (str): bert_score's format, e.g. "roberta-large_L17_no-idf_version=0.3.12(hug_trans=4.57.6)"
        with "-rescaled" ("-custom-rescaled" for a baseline other than the shipped copies) and
        "_fast-tokenizer" suffixes (bert_score 0.3.13 reports its version as 0.3.12). It names only
        bert_score's settings: with long_inputs="auto" (the default) a text over max_length is
        windowed where bert_score truncates, so for such texts the numbers are bert_score's only
        with long_inputs="truncate";
    signature (str): the nlgscore signature, every setting that changes a number.
Examples:
    >>> import nlgscore
    >>> bertscore = evaluate.load(nlgscore.evaluate_module("bertscore"))
    >>> results = bertscore.compute(predictions=["hello there", "general kenobi"],
    ...     references=["hello there", "general kenobi"], model_type="minilm", num_layers=4)
    >>> [round(v, 2) for v in results["f1"]]
    [1.0, 1.0]
    >>> results = bertscore.compute(predictions=["the cat sat"], references=[["a cat sat", "dogs bark"]],
    ...     model_type="minilm")
    >>> round(results["f1"][0], 2), "|model:all-MiniLM-L6-v2|" in results["signature"]
    (0.92, True)
    >>> results["hashcode"].split("(hug_trans=")[0]
    'all-MiniLM-L6-v2_L4_no-idf_version=0.3.12'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BERTScore(OptionChecks, ReferenceListsInputs, evaluate.Metric):
    metric = "bertscore"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/Tiiiger/bert_score",
            inputs_description=_KWARGS_DESCRIPTION,
            features=reference_features(),
            codebase_urls=["https://github.com/Tiiiger/bert_score"],
            reference_urls=["https://github.com/Tiiiger/bert_score", "https://arxiv.org/abs/1904.09675"],
        )

    def add_batch(self, **inputs):
        """As ``evaluate``'s add_batch; a plain-string reference among lists counts as one reference."""
        require_inputs(
            "bertscore", "default", {"predictions": inputs.get("predictions"), "references": inputs.get("references")}
        )
        super().add_batch(**inputs)

    def _compute(
        self,
        predictions,
        references,
        lang=None,
        model_type=None,
        num_layers=None,
        verbose=False,
        idf=None,
        idf_sents=None,
        device=None,
        batch_size=None,
        nthreads=None,
        all_layers=None,
        rescale_with_baseline=None,
        baseline_path=None,
        use_fast_tokenizer=None,
        max_length=None,
        max_tokens=None,
        dtype=None,
        revision=None,
        long_inputs=None,
        window_stride=None,
        context=None,
        doc_ids=None,
        cache_references=None,
        reference_cache_size=None,
        cache_candidates=None,
        calibration=None,
        reference_cache_bytes=None,
        kernel=None,
        forward=None,
        progress=None,
        accelerator=None,
        shard=None,
    ):
        given = module_options(locals())
        for unused in ("nthreads", "use_fast_tokenizer"):  # the Hub module's; no number depends on them
            given.pop(unused)
        if lang is None and model_type is None:  # as the Hub module: no silent default language
            raise ValueError("either lang or model_type must be given (e.g. lang='en' or model_type='minilm')")
        # The scorer cache keys every option by content, idf sentences included (the Hub module
        # reused the idf of its first call for later references); the options of a call
        # (batch_size, max_tokens, verbose) go to this call only, so they never leak into the next.
        scorer, result = table_compute("bertscore", predictions, references, **given)
        self._scorer = scorer
        columns = result.columns()
        # As the Hub module: the layer, model and idf resolved; a baseline not shipped with the
        # package (baseline_path=, a configured Hub repo) is bert_score's "custom" one.
        hashcode = bert_score_hashcode(
            scorer.model_type,
            scorer.num_layers,
            scorer.idf,
            bool(rescale_with_baseline),
            not scorer.baseline_source.startswith("package:"),
            bool(use_fast_tokenizer),
        )
        return {
            "precision": columns["precision"],
            "recall": columns["recall"],
            "f1": columns["f1"],
            "hashcode": hashcode,
            "signature": str(result.signature),
        }
