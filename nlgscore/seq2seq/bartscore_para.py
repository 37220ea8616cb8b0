"""The BARTScore ``bart-large-cnn-para`` weights: the authors' ParaBank2 fine-tune of ``bart-large-cnn``.

They come in one of three ways:

* ``para_weights=`` the authors' ``bart.pth`` (a file, or a Hub repo holding it), loaded into the
  base model at every start (:func:`load_para_weights`);
* ``checkpoint=`` a folder (or Hub repo) holding the weights already: converted once from
  ``bart.pth`` by :mod:`nlgscore.seq2seq.bartscore_convert`, or written by
  ``scripts/finetune_bartscore_para.py``. Its ``bartscore_para.json`` (:func:`read_para_record`)
  says where the weights came from, and the signature's ``para`` field says it too;
* the variants table (``nlgscore/data/bartscore_variants.json``): ``converted.hub_repo`` names a
  Hub copy of such a folder, ``para_weights.hub_repo`` a Hub repo holding ``bart.pth``.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any, Dict, Optional

from nlgscore.errors import ArgumentError

PARA_VARIANT = "bart-large-cnn-para"
PARA_RECORD = "bartscore_para.json"  # written beside the weights by the converter and the fine-tuning script
RECORD_KINDS = {"bart.pth": "converted", "finetune": "finetuned"}  # weights kind -> signature label prefix
CONVERT_COMMAND = "python -m nlgscore.seq2seq.bartscore_convert"


def file_sha256(path: str) -> str:
    """The SHA-256 of a file's bytes, read in 8 MiB blocks (``bart.pth`` is 1.6 GB).

    Args:
        path: the file.

    Returns:
        The hex digest.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile(delete=False) as handle:
        ...     _ = handle.write(b"abc")
        >>> file_sha256(handle.name)[:16]
        'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 23), b""):
            digest.update(block)
    return digest.hexdigest()


def para_checkpoint(entry: Dict[str, Any], checkpoint: Optional[str], para_weights: Optional[str]) -> str:
    """The checkpoint a BARTScorer loads for a variant's table ``entry``.

    ``checkpoint`` when given; else the table's converted copy (``converted.hub_repo``) unless
    ``para_weights`` asks for the base model plus ``bart.pth``; else the variant's checkpoint.

    Args:
        entry: the variant's entry in ``bartscore_variants.json``.
        checkpoint: the scorer's ``checkpoint=`` (a Hub id or folder), or None.
        para_weights: the scorer's ``para_weights=``, or None.

    Returns:
        A Hub id or folder.

    Example:
        >>> entry = {"checkpoint": "facebook/bart-large-cnn", "converted": {"hub_repo": "me/bart-large-cnn-para"}}
        >>> para_checkpoint(entry, None, None), para_checkpoint(entry, None, "bart.pth")
        ('me/bart-large-cnn-para', 'facebook/bart-large-cnn')
    """
    if checkpoint:
        return checkpoint
    converted = (entry.get("converted") or {}).get("hub_repo")
    return converted if converted and para_weights is None else entry["checkpoint"]


def read_para_record(folder: str) -> Optional[Dict[str, Any]]:
    """The ``bartscore_para.json`` of a checkpoint folder, checked; None when it has none.

    Args:
        folder: a resolved checkpoint folder.

    Returns:
        The record: ``variant``, ``weights`` (``kind``: ``"bart.pth"`` or ``"finetune"``,
        ``file``, ``sha256``) and the details the writer added.

    Raises:
        ArgumentError: the file is there but is not such a record.

    Example:
        >>> read_para_record("tests/golden/tiny-bart") is None
        True
    """
    from nlgscore.backend.model_files import read_json

    path = os.path.join(folder, PARA_RECORD)
    if not os.path.isfile(path):
        return None
    record = read_json(path, "BARTScore para record")
    weights = record.get("weights") if isinstance(record, dict) else None
    if (
        not isinstance(weights, dict)
        or record.get("variant") != PARA_VARIANT
        or weights.get("kind") not in RECORD_KINDS
        or not isinstance(weights.get("file"), str)
        or not re.fullmatch(r"[0-9a-f]{64}", str(weights.get("sha256")))
    ):
        raise ArgumentError(
            f"checkpoint: {path!r} is not a BARTScore para record (it needs variant {PARA_VARIANT!r} and "
            f"weights.kind in {sorted(RECORD_KINDS)}, weights.file and weights.sha256); write the folder again "
            f"with {CONVERT_COMMAND}"
        )
    return record


def record_label(record: Dict[str, Any]) -> str:
    """The signature's ``para`` field for a checkpoint with a para record.

    Args:
        record: a record :func:`read_para_record` accepted.

    Returns:
        ``converted-<file>-sha256-<16 hex>`` (the SHA-256 of the authors' ``bart.pth``) or
        ``finetuned-sha256-<16 hex>`` (the SHA-256 of the fine-tuned weights).

    Example:
        >>> record_label({"weights": {"kind": "bart.pth", "file": "bart.pth", "sha256": "ab" * 32}})
        'converted-bart.pth-sha256-abababababababab'
    """
    weights = record["weights"]
    prefix = RECORD_KINDS[weights["kind"]]
    name = f"-{weights['file']}" if weights["kind"] == "bart.pth" else ""
    return f"{prefix}{name}-sha256-{weights['sha256'][:16]}"


def record_variant(record: Dict[str, Any], variant: str, default: str, checkpoint: str) -> str:
    """The variant a scorer records for a checkpoint holding para weights: the record's.

    The table's default variant gives way to it (``bartscore:<folder>`` names no variant);
    another variant contradicts the weights and is refused.

    Args:
        record: the checkpoint's para record.
        variant: the scorer's ``variant=``.
        default: the table's default variant.
        checkpoint: the checkpoint's name, for the error.

    Returns:
        The variant to record.

    Raises:
        ArgumentError: ``variant`` is neither the default nor the record's.

    Example:
        >>> record_variant({"variant": "bart-large-cnn-para"}, "bart-large-cnn", "bart-large-cnn", "out")
        'bart-large-cnn-para'
    """
    if variant not in (default, record["variant"]):
        raise ArgumentError(
            f"variant={variant!r} contradicts checkpoint {checkpoint!r}, which holds the {record['variant']} "
            f"weights ({PARA_RECORD}); pass variant={record['variant']!r} or leave variant out"
        )
    return record["variant"]


def require_para_weights(entry: Dict[str, Any], checkpoint: str) -> None:
    """Refuse, before any model is loaded, a ``-para`` variant that has no way to its weights.

    Called when no ``para_weights=`` was given and ``checkpoint`` has no para record.

    Args:
        entry: the variant's table entry (one with ``para_weights``).
        checkpoint: the checkpoint about to be loaded.

    Raises:
        ArgumentError: the table configures no Hub repo holding ``bart.pth`` either; the
            message gives the ways that work.

    Example:
        >>> entry = {"checkpoint": "facebook/bart-large-cnn", "para_weights": {"hub_repo": "me/pth"}}
        >>> require_para_weights(entry, "facebook/bart-large-cnn")  # the table's Hub repo will do
    """
    if (entry.get("para_weights") or {}).get("hub_repo"):
        return
    converted = (entry.get("converted") or {}).get("hub_repo")
    if converted and checkpoint == converted:
        raise ArgumentError(
            f"converted.hub_repo {converted!r} (nlgscore/data/bartscore_variants.json) has no {PARA_RECORD}: "
            f"upload a folder written by {CONVERT_COMMAND}, or pass para_weights=<path to bart.pth>"
        )
    raise missing_para_error(entry.get("para_weights") or {})


def missing_para_error(entry: Dict[str, Any]) -> ArgumentError:
    """The error for a ``-para`` variant without weights, giving the three routes that work."""
    filename = entry.get("filename", "bart.pth")
    return ArgumentError(
        f"variant {PARA_VARIANT!r} needs the BARTScore authors' ParaBank2 weights, {filename} (Google Drive "
        f"file id {entry.get('google_drive_id')}, linked from github.com/neulab/BARTScore); no Hub copy is "
        f"configured. Either pass para_weights='path/to/{filename}' (read at every start); or convert it once "
        f"with `{CONVERT_COMMAND} path/to/{filename} bart-large-cnn-para-hf` and pass "
        "checkpoint='bart-large-cnn-para-hf' (the converted folder; the .pth is then not needed); or name a Hub "
        "copy in nlgscore/data/bartscore_variants.json (converted.hub_repo for a converted folder, "
        f"para_weights.hub_repo for {filename})"
    )


def load_para_weights(model: Any, source: Optional[str], entry: Dict[str, Any]) -> str:
    """Load the ParaBank2 state dict (``bart.pth``) into ``model``; return its signature label.

    The file is read with ``weights_only=True`` (no pickled code runs) and fitted to the model
    by :func:`nlgscore.seq2seq.bart_state_dict.fit_state_dict` (tied copies and untrained
    buffers of other transformers versions; every other key and shape must match).

    Args:
        model: the loaded base model.
        source: a file, or a Hub repo id holding ``entry["filename"]``; None uses the table's
            ``hub_repo``.
        entry: the variant's ``para_weights`` table entry.

    Returns:
        ``file-<name>-<bytes>`` or ``<repo>@<commit>``.

    Raises:
        ArgumentError: nothing to load, or the file does not fit the model.
        ArgumentTypeError: the file is not a state dict of tensors.
        pickle.UnpicklingError: the file holds objects besides tensors (refused unread).
        FileNotFoundError: ``source`` is neither a file nor a Hub repo id.

    Example:
        >>> from transformers import AutoModelForSeq2SeqLM
        >>> model = AutoModelForSeq2SeqLM.from_pretrained("tests/golden/tiny-bart")
        >>> load_para_weights(model, "nope.pth", {})
        Traceback (most recent call last):
        ...
        FileNotFoundError: para_weights 'nope.pth' is not a file nor a Hub repo id (owner/name)
    """
    import torch

    from nlgscore.seq2seq.bart_state_dict import fit_state_dict

    source = source if source is not None else entry.get("hub_repo")
    filename = entry.get("filename", "bart.pth")
    if not source:
        raise missing_para_error(entry)
    if os.path.isfile(source):
        path, label = source, f"file-{os.path.basename(source)}-{os.path.getsize(source)}"
    elif os.path.exists(source) or source.endswith((".pth", ".pt", ".bin")) or source.count("/") != 1:
        raise FileNotFoundError(f"para_weights {source!r} is not a file nor a Hub repo id (owner/name)")
    else:
        path = _hub_file(source, filename)
        label = f"{source}@{os.path.basename(os.path.dirname(path))}"
    # torch's own error for a file that is no torch file, or holds objects besides tensors: the
    # command line reports it naming --para-weights (nlgscore.cli.options.load_scorer).
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(fit_state_dict(model, state, f"para_weights {source!r}").state)
    return label


def _hub_file(repo: str, filename: str) -> str:
    from huggingface_hub import hf_hub_download

    from nlgscore.backend.models import ModelNotAvailableError

    try:
        return hf_hub_download(repo, filename)
    except Exception as err:
        raise ModelNotAvailableError(
            f"para_weights: {filename} from the Hub repo {repo!r} is not cached and cannot be downloaded "
            f"({type(err).__name__}: {err}); pass a local file instead"
        ) from err
