"""Checks of a model folder's files before and after loading: fail with the folder and the cause.

transformers 5 builds an empty 5-token tokenizer from a folder without tokenizer files instead of
failing, and every word becomes unknown (F1 0.806 → 0.975, no warning); an
interrupted download is a realistic trigger. A corrupt JSON config gets a message naming the file.

>>> read_json("nlgscore/data/aliases.json", "table")["minilm"]["name"]
'all-MiniLM-L6-v2'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Union

from nlgscore.backend.models import ModelNotAvailableError, ResolvedModel

# Any of these makes a folder's tokenizer loadable; vocab.json (byte-level BPE) also needs merges.txt.
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
    "source.spm",
)
SENTENCEPIECE_FILES = {"spiece.model", "sentencepiece.bpe.model", "tokenizer.model", "source.spm"}
JSON_FILES = ("config.json", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json")
# A tokenizer far smaller than the model's embedding table is a broken one. The bound is loose on
# purpose: the benchmark's synthetic models pair a 50k embedding table with a BPE trained on a
# small corpus (a few thousand tokens); a broken tokenizer has 5.
MIN_VOCAB_FRACTION = 0.02


class IncompleteModelError(ModelNotAvailableError):
    """A model folder lacks files it needs (e.g. an interrupted download) or has unreadable ones."""


def read_json(path: Union[str, os.PathLike], what: str = "file") -> Any:
    """Parse a JSON file, or raise an IncompleteModelError naming the file and the cause."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as err:
        raise IncompleteModelError(
            f"{what} {str(path)!r} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from err
    except UnicodeDecodeError as err:
        raise IncompleteModelError(
            f"{what} {str(path)!r} is not UTF-8 text ({err.reason} at byte {err.start})"
        ) from err


def check_model_folder(resolved: ResolvedModel) -> None:
    """Fail early, naming the folder and the cause, if one of ``resolved``'s JSON files is
    unreadable or it has no usable tokenizer files."""
    check_json_files(resolved)
    check_tokenizer_files(resolved)


def check_json_files(resolved: ResolvedModel) -> None:
    """Parse the folder's config and tokenizer JSON files; IncompleteModelError naming a bad one."""
    folder = Path(resolved.path)
    for name in JSON_FILES:
        if (folder / name).is_file():
            read_json(folder / name, "model file")


def check_tokenizer_files(resolved: ResolvedModel) -> None:
    """IncompleteModelError naming the folder and the missing files if no tokenizer can be built."""
    folder = Path(resolved.path)
    present = {entry.name for entry in folder.iterdir()}
    if "tokenizer.json" in present:
        return
    if "vocab.json" in present and "merges.txt" not in present and not present & SENTENCEPIECE_FILES:
        raise IncompleteModelError(
            f"model folder {str(folder)!r} has vocab.json but no merges.txt (a BPE tokenizer needs both); the download may be incomplete"
        )
    if not present & set(TOKENIZER_FILES):
        raise IncompleteModelError(
            f"model folder {str(folder)!r} has no tokenizer files (none of {', '.join(TOKENIZER_FILES)}); "
            "the download may be incomplete: download the model again"
        )


def check_tokenizer(tokenizer: Any, config: Any, resolved: ResolvedModel) -> None:
    """Raise IncompleteModelError when the tokenizer does not fit the model's vocabulary.

    Exact where the tokenizer's size is the file's: a WordPiece ``vocab.txt`` (without a
    ``tokenizer.json``) has one token per line, and token ids are line numbers, so a file with
    fewer (or more) lines than ``config.vocab_size`` is truncated or belongs to another model.
    Otherwise (BPE, SentencePiece, ``tokenizer.json``, whose models may pad their embedding
    table) only a tokenizer far smaller than the table is refused.
    """
    expected = getattr(config, "vocab_size", None)
    folder = Path(resolved.path)
    wordpiece = (folder / "vocab.txt").is_file() and not (folder / "tokenizer.json").is_file()
    if expected and wordpiece and getattr(tokenizer, "vocab_size", expected) != expected:
        raise IncompleteModelError(
            f"model folder {str(folder)!r}: vocab.txt has {tokenizer.vocab_size} tokens but config.json says vocab_size "
            f"{expected}; the file is truncated or belongs to another model: download the model again"
        )
    if expected and len(tokenizer) < MIN_VOCAB_FRACTION * expected:
        raise IncompleteModelError(
            f"the tokenizer of {resolved.name!r} ({resolved.path}) has {len(tokenizer)} tokens but the model has "
            f"{expected} (config.vocab_size): its tokenizer files are missing or wrong"
        )
