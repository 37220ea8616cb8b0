"""BERTScore settings resolved through the Hub, in a fresh process (used by tests/backend/test_hub_scoring.py).

Prints one JSON object: the signature of a scorer whose model comes from the Hub, and where the
rescale baseline of the embedded MiniLM model was found with and without a copy on the Hub.
usage: hub_scoring.py MODEL_REPO BASELINE_REPO_WITH_FILE BASELINE_REPO_WITHOUT_FILE
"""

import json
import os
import sys


def main(model_repo: str, with_file: str, without_file: str) -> None:
    from nlgscore.backend.hub import ENV_REPO
    from nlgscore.bertscore import BERTScorer
    from nlgscore.bertscore.rescale import find_baseline

    out = {}
    scorer = BERTScorer(model_type=model_repo, num_layers=1)
    out["model_signature"] = dict(scorer.signature)
    out["model_f1"] = float(scorer.score(["a cat"], ["a dog"]).f1[0])

    os.environ[ENV_REPO] = with_file  # read at each look-up; this process only
    rescaled = BERTScorer(model_type="minilm", num_layers=4, lang="en", rescale_with_baseline=True)
    out["hub_source"] = rescaled.baseline_source
    out["hub_baseline"] = [float(v) for v in rescaled.baseline]
    out["hub_signature_rescale"] = rescaled.signature["rescale"]

    os.environ[ENV_REPO] = without_file
    _, out["fallback_source"] = find_baseline("en", rescaled.model_type)
    try:
        find_baseline("xx", rescaled.model_type)
    except ValueError as err:
        out["missing_error"] = str(err)
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:4])
