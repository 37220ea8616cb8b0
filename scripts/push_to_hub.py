"""Publish a metric as a Hugging Face Space: its card (hub_cards/<name>/) and its module (metrics/<name>/).

A Space for an ``evaluate`` metric holds README.md (the card, with the Space YAML header), app.py
(the Gradio widget), requirements.txt and the module script ``<name>.py``; ``evaluate.load(
"<namespace>/<name>")`` then loads the module from it.

usage:
    python scripts/push_to_hub.py bertscore --dry-run          # list what would be uploaded
    python scripts/push_to_hub.py all --namespace nlgscore     # create/update the three Spaces

The token comes from ``--token``, ``HF_TOKEN`` or ``hf auth login``; ``HF_ENDPOINT`` selects the
Hub (the tests point it at a local server).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("bertscore", "prism", "bartscore")
CARD_FILES = ("README.md", "app.py", "requirements.txt")


def space_files(name: str, root: Path = ROOT) -> Dict[str, Path]:
    """Path in the Space → local file, for metric ``name``; raises if a piece is missing."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; expected one of {', '.join(METRICS)}")
    files = {filename: root / "hub_cards" / name / filename for filename in CARD_FILES}
    module_dir = root / "metrics" / name
    # The module plus any helper it imports relatively (evaluate copies those along).
    files.update({path.name: path for path in sorted(module_dir.glob("*.py"))})
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing or f"{name}.py" not in files:
        raise FileNotFoundError(f"cannot publish {name}: missing {missing or [str(module_dir / (name + '.py'))]}")
    return files


def push(name: str, namespace: str, token: Optional[str] = None, private: bool = False, dry_run: bool = False) -> List[str]:
    """Upload one metric's Space; returns the lines describing what was (or would be) done."""
    files = space_files(name)
    repo_id = f"{namespace}/{name}"
    lines = [f"space {repo_id}:"] + [f"  {target} <- {source.relative_to(ROOT)}" for target, source in sorted(files.items())]
    if dry_run:
        return lines + ["  (dry run: nothing uploaded)"]
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    operations = [CommitOperationAdd(path_in_repo=target, path_or_fileobj=str(source)) for target, source in sorted(files.items())]
    commit = api.create_commit(repo_id, operations, commit_message=f"Update {name} metric (nlgscore)", repo_type="space")
    return lines + [f"  committed {commit.oid}"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Publish nlgscore metric cards and modules as Hugging Face Spaces.")
    parser.add_argument("metric", choices=METRICS + ("all",), help="which metric's Space to publish")
    parser.add_argument("--namespace", default="nlgscore", help="user or organisation owning the Spaces (default: nlgscore)")
    parser.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the stored login)")
    parser.add_argument("--private", action="store_true", help="create the Spaces as private")
    parser.add_argument("--dry-run", action="store_true", help="list the files that would be uploaded, upload nothing")
    args = parser.parse_args(argv)
    names = METRICS if args.metric == "all" else (args.metric,)
    try:
        for name in names:
            print("\n".join(push(name, args.namespace, args.token, args.private, args.dry_run)))
    except (OSError, ValueError) as err:
        print(f"push_to_hub: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
