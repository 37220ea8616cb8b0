"""Publish a metric as a Hugging Face Space: its card (hub_cards/<name>/) and its module (metrics/<name>/).

A metric without its own ``hub_cards/<name>/`` file uses the shared one: its module's card
``metrics/<name>/README.md`` as the Space's README, and ``hub_cards/_space/app.py`` and
``requirements.txt`` (the same for every Space), so that a new metric needs one card.

A Space for an ``evaluate`` metric holds README.md (the card, with the Space YAML header), app.py
(the Gradio widget), requirements.txt and the module script ``<name>.py``; ``evaluate.load(
"<namespace>/<name>")`` then loads the module from it. The module imports the installed nlgscore,
and nlgscore is not on PyPI, so the nlgscore wheel is uploaded into the Space too and its
requirements.txt installs that file (``./nlgscore-<version>-py3-none-any.whl``) in place of the
card's bare ``nlgscore`` line; ``--wheel none`` keeps the bare line (for an index that has it).

``baselines`` publishes the rescale baselines instead: every ``<lang>/<model>.tsv`` of ``baselines/``
(or ``--folder``) and the READMEs beside them (the licence notice of the files taken from
bert_score) as the dataset repo ``<namespace>/rescale-baselines`` (the name in
``nlgscore/data/hub.json``). It prints the commit: nlgscore reads a Hub repo only where it is
configured, so the commit is what to pin (``NLGSCORE_BASELINE_REPO=<repo>@<commit>``, or
``baseline_commit`` in hub.json for the project's own repo).

usage:
    python scripts/push_to_hub.py bertscore --dry-run          # list what would be uploaded
    python scripts/push_to_hub.py all --namespace nlgscore     # build the wheel, create/update every metric's Space
    python scripts/push_to_hub.py all --wheel dist/nlgscore-0.4.0-py3-none-any.whl
    python scripts/push_to_hub.py baselines --namespace nlgscore   # the rescale baselines dataset repo

The token comes from ``--token``, ``HF_TOKEN`` or ``hf auth login``; ``HF_ENDPOINT`` selects the
Hub (the tests point it at a local server).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's registry, even where another nlgscore is installed
from nlgscore.registry import metric_names  # noqa: E402  (the table only: imports no metric)

METRICS = tuple(metric_names(builtin=True))
CARD_FILES = ("README.md", "app.py", "requirements.txt")
BASELINES = "baselines"  # the target publishing the rescale baselines, not a metric


def space_files(name: str, root: Path = ROOT) -> Dict[str, Path]:
    """Path in the Space → local file, for metric ``name``; raises if a piece is missing."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; expected one of {', '.join(METRICS)}")
    shared = {
        "README.md": root / "metrics" / name / "README.md",
        "app.py": root / "hub_cards" / "_space" / "app.py",
        "requirements.txt": root / "hub_cards" / "_space" / "requirements.txt",
    }
    own = {filename: root / "hub_cards" / name / filename for filename in CARD_FILES}
    files = {filename: own[filename] if own[filename].is_file() else shared[filename] for filename in CARD_FILES}
    module_dir = root / "metrics" / name
    # The module plus any helper it imports relatively (evaluate copies those along).
    files.update({path.name: path for path in sorted(module_dir.glob("*.py"))})
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing or f"{name}.py" not in files:
        raise FileNotFoundError(f"cannot publish {name}: missing {missing or [str(module_dir / (name + '.py'))]}")
    return files


def build_wheel(folder: Path) -> Path:
    """Build the nlgscore wheel from this checkout into ``folder`` with ``build`` (the test extra).

    ``python -m build`` makes the sdist and builds the wheel from it, so files left in the
    checkout's build/ folder by an earlier build cannot slip into the uploaded wheel.
    """
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(folder), str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return next(Path(folder).glob("nlgscore-*.whl"))


def requirements(name: str, wheel: Optional[Path]) -> bytes:
    """The card's requirements.txt with its ``nlgscore`` line pointing at the uploaded wheel."""
    lines = space_files(name)["requirements.txt"].read_text(encoding="utf-8").splitlines()
    if wheel is not None:
        lines = [f"./{wheel.name}" if line.split("#")[0].strip() == "nlgscore" else line for line in lines]
    return ("\n".join(lines) + "\n").encode()


def push(
    name: str,
    namespace: str,
    token: Optional[str] = None,
    private: bool = False,
    dry_run: bool = False,
    wheel: Optional[Path] = None,
) -> List[str]:
    """Upload one metric's Space (with ``wheel``, when given); returns the lines describing what was (or would be) done."""
    files: Dict[str, Union[Path, bytes]] = dict(space_files(name))
    if wheel is not None:
        files[wheel.name] = wheel
    files["requirements.txt"] = requirements(name, wheel)
    repo_id = f"{namespace}/{name}"
    where = {
        target: (str(source) if source.is_file() else "(built from this checkout)")
        if source == wheel
        else source.relative_to(ROOT)
        if isinstance(source, Path)
        else f"{space_files(name)['requirements.txt'].relative_to(ROOT)} (nlgscore line: {'./' + wheel.name if wheel else 'as is'})"
        for target, source in files.items()
    }
    lines = [f"space {repo_id}:"] + [f"  {target} <- {where[target]}" for target in sorted(files)]
    if dry_run:
        return lines + ["  (dry run: nothing uploaded)"]
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    operations = [
        CommitOperationAdd(path_in_repo=target, path_or_fileobj=source if isinstance(source, bytes) else str(source))
        for target, source in sorted(files.items())
    ]
    commit = api.create_commit(
        repo_id, operations, commit_message=f"Update {name} metric (nlgscore)", repo_type="space"
    )
    return lines + [f"  committed {commit.oid}"]


def baseline_files(folder: Path = ROOT / "baselines") -> Dict[str, Path]:
    """Path in the dataset repo → local file: every ``<lang>/<model>.tsv`` under ``folder`` and
    the READMEs (the package's ``__init__.py`` stays out); raises if there is no baseline.

    Args:
        folder: The baselines folder, in the reference package's ``<lang>/<model>.tsv`` layout.

    Returns:
        The files to upload, by their posix path in the repo.

    Raises:
        FileNotFoundError: ``folder`` holds no ``.tsv`` file.
    """
    files = {
        path.relative_to(folder).as_posix(): path
        for path in sorted(Path(folder).rglob("*"))
        if path.is_file() and (path.suffix == ".tsv" or path.name == "README.md")
    }
    if not any(name.endswith(".tsv") for name in files):
        raise FileNotFoundError(f"--folder: no <lang>/<model>.tsv baseline under {folder}")
    return files


def baseline_repo_name(root: Path = ROOT) -> str:
    """The dataset repo's name (after the namespace) in nlgscore/data/hub.json, read without importing nlgscore."""
    table = json.loads((root / "nlgscore" / "data" / "hub.json").read_text(encoding="utf-8"))
    return table["baseline_repo_id"].split("/", 1)[1]


def push_baselines(
    namespace: str,
    token: Optional[str] = None,
    private: bool = False,
    dry_run: bool = False,
    folder: Path = ROOT / "baselines",
) -> List[str]:
    """Upload the baselines dataset repo; returns the lines describing what was (or would be) done,
    the last one the commit to pin.

    Args:
        namespace: User or organisation owning the repo.
        token: Hub token (default: HF_TOKEN or the stored login).
        private: Create the repo as private.
        dry_run: List the files, upload nothing.
        folder: The baselines folder to publish.

    Returns:
        One line per file, then the commit and how to pin it.
    """
    files = baseline_files(folder)
    repo_id = f"{namespace}/{baseline_repo_name()}"
    lines = [f"dataset {repo_id}: {sum(name.endswith('.tsv') for name in files)} baselines"]
    lines += [f"  {target} <- {_shown(source)}" for target, source in files.items()]
    if dry_run:
        return lines + ["  (dry run: nothing uploaded)"]
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    operations = [
        CommitOperationAdd(path_in_repo=target, path_or_fileobj=str(source)) for target, source in files.items()
    ]
    commit = api.create_commit(
        repo_id, operations, commit_message="Update rescale baselines (nlgscore)", repo_type="dataset"
    )
    return lines + [
        f"  committed {commit.oid}",
        f"  pin it: NLGSCORE_BASELINE_REPO={repo_id}@{commit.oid} (or baseline_commit in nlgscore/data/hub.json)",
    ]


def _shown(path: Path) -> str:
    """A file's path relative to the checkout where it is inside it."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _version() -> str:
    """The package version, read from nlgscore/version.py without importing the package."""
    for line in (ROOT / "nlgscore" / "version.py").read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise ValueError("no __version__ in nlgscore/version.py")


def chosen_wheel(option: str, dry_run: bool, folder: Path) -> Optional[Path]:
    """The wheel of ``--wheel``: none, the file given, or (``build``) one built into ``folder``
    (a dry run only names the file it would build)."""
    if option == "none":
        return None
    if option == "build":
        return Path(f"nlgscore-{_version()}-py3-none-any.whl") if dry_run else build_wheel(folder)
    if not dry_run and not Path(option).is_file():
        raise FileNotFoundError(f"--wheel: no such file {option}")
    return Path(option)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Publish nlgscore metric cards and modules as Hugging Face Spaces, or the rescale baselines."
    )
    parser.add_argument(
        "metric",
        choices=METRICS + ("all", BASELINES),
        help="which metric's Space to publish (all: every one; baselines: the rescale baselines dataset repo)",
    )
    parser.add_argument(
        "--namespace", default="nlgscore", help="user or organisation owning the repos (default: nlgscore)"
    )
    parser.add_argument(
        "--folder",
        type=Path,
        default=ROOT / "baselines",
        help="with baselines: the <lang>/<model>.tsv folder to publish (default: this checkout's baselines/)",
    )
    parser.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the stored login)")
    parser.add_argument("--private", action="store_true", help="create the Spaces as private")
    parser.add_argument("--dry-run", action="store_true", help="list the files that would be uploaded, upload nothing")
    parser.add_argument(
        "--wheel",
        default="build",
        metavar="PATH|build|none",
        help="nlgscore wheel to upload with each Space (default: build one from this checkout; none: upload no wheel)",
    )
    args = parser.parse_args(argv)
    names = METRICS if args.metric == "all" else (args.metric,)
    try:
        if args.metric == BASELINES:
            print("\n".join(push_baselines(args.namespace, args.token, args.private, args.dry_run, args.folder)))
            return 0
        with tempfile.TemporaryDirectory() as folder:
            wheel = chosen_wheel(args.wheel, args.dry_run, Path(folder))
            for name in names:
                print("\n".join(push(name, args.namespace, args.token, args.private, args.dry_run, wheel)))
    except (OSError, ValueError, subprocess.CalledProcessError) as err:
        print(f"push_to_hub: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
