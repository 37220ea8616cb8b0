"""Run one Hub look-up in a fresh process and print the outcome as JSON (used by tests/backend/test_hub.py).

huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when it is imported, so each
scenario runs in its own process with its own environment.

usage: hub_client.py model REPO_ID [REVISION] | baseline LANG MODEL [REPO_ID] | rescale LANG

``rescale`` builds a rescaling MiniLM BERTScorer and prints where its baseline came from (the
signature's ``rescale:`` field) and its layer-4 row, so a test can tell a Hub copy from the shipped one.
"""

import json
import sys
import time


def main(argv: list) -> int:
    kind, *args = argv
    start = time.monotonic()
    out: dict = {}
    try:
        if kind == "model":
            from nlgscore.backend.models import resolve

            resolved = resolve(args[0], revision=args[1] if len(args) > 1 else None)
            out.update(path=resolved.path, name=resolved.name, revision=resolved.revision)
        elif kind == "rescale":
            from nlgscore.bertscore import BERTScorer

            scorer = BERTScorer(model_type="minilm", num_layers=4, lang=args[0], rescale_with_baseline=True)
            out.update(rescale=scorer.signature["rescale"], baseline=[float(v) for v in scorer.baseline])
        else:
            from nlgscore.backend.hub import fetch_baseline

            found = fetch_baseline(args[0], args[1], repo_id=args[2] if len(args) > 2 else None)
            out.update(found=found)
    except Exception as err:
        out.update(error=type(err).__name__, message=str(err))
    out["seconds"] = time.monotonic() - start
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
