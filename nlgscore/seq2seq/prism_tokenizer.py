"""Prism's token layout, built from a SentencePiece model and a fairseq-ordered vocabulary.

The original (fairseq) Prism encodes a text as SentencePiece pieces joined by spaces and looked up
in a fairseq dictionary; the **source** is ``pieces + </s>`` with no language tag and the
**target** is ``<lang> + pieces + </s>`` (the tag is force-decoded and not scored). Stock
``M2M100Tokenizer`` (and the unmerged ``PrismTokenizer`` of transformers PR #35281) put a language
tag in front of the source as well, which changes every score, so the ids are built here.

Text that spells a special token (``"</s>"``, ``"<pad>"``) is ordinary text, exactly as in the
original: SentencePiece splits it into characters, which are then looked up like any other piece
(usually ``<unk>``). Nothing a user writes can end a sequence early.

>>> tok = PrismTokenizer.from_folder("tests/golden/tiny-prism")
>>> tok.lang_id("en")
819
>>> ids = tok.encode(["Hi!"])[0]
>>> tok.source(ids)[0] == ids + [tok.eos_id], tok.target(ids, "en")[0] == [819] + ids + [tok.eos_id]
(True, True)
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from nlgscore.backend.model_files import IncompleteModelError, read_json
from nlgscore.backend.tables import table
from nlgscore.errors import ArgumentError, DataError

# Spellings of a language tag inside a vocabulary file: fairseq Prism's dictionary (and the
# prism_vocab.json of the transformers port) writes "<en>"; M2M100-style vocabularies "__en__".
TAG_SPELLINGS = ("<{}>", "__{}__")


def _known_codes() -> List[str]:
    """Every language code a Prism or M2M100 vocabulary may carry a tag for."""
    from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

    codes = list(table("prism")["languages"])
    for group in FAIRSEQ_LANGUAGE_CODES.values():
        codes.extend(code for code in group if code not in codes)
    return codes


def language_ids(vocab: Mapping[str, int], tokenizer_config: Optional[Mapping] = None) -> Dict[str, int]:
    """Language code → id of its target-side tag.

    Tags written in the vocabulary (``<en>`` or ``__en__``) win. Otherwise the folder uses the
    stock M2M100 layout, where the tags are not in ``vocab.json`` but follow it, in the order of
    M2M100's language list: id = ``len(vocab) + index of the code``.

    >>> language_ids({"<s>": 0, "<en>": 1})
    {'en': 1}
    >>> language_ids({"<s>": 0, "a": 1}, {"tokenizer_class": "M2M100Tokenizer"})["en"]
    20
    """
    found: Dict[str, int] = {}
    for code in _known_codes():
        for spelling in TAG_SPELLINGS:
            if spelling.format(code) in vocab:
                found[code] = int(vocab[spelling.format(code)])
                break
    if found:
        return found
    config = dict(tokenizer_config or {})
    if str(config.get("tokenizer_class", "")).startswith("M2M100"):
        from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

        codes = FAIRSEQ_LANGUAGE_CODES.get(config.get("language_codes", "m2m100"))
        if codes is None:
            raise DataError(f"unknown M2M100 language_codes {config.get('language_codes')!r} in tokenizer_config.json")
        return {code: len(vocab) + i for i, code in enumerate(codes)}
    return {}


def _first_file(folder: str, names: Iterable[str], what: str) -> str:
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"checkpoint folder {folder!r} has no {what} (looked for {', '.join(names)})")


class PrismTokenizer:
    """Token ids in the original Prism layout; ``max_positions`` bounds every sequence.

    ``encode`` gives the piece ids of texts; ``source``/``target`` add the special tokens and
    truncate to ``max_positions`` (returning whether they had to).
    """

    def __init__(
        self, spm_path: str, vocab: Mapping[str, int], lang_ids: Mapping[str, int], max_positions: Optional[int] = None
    ) -> None:
        import sentencepiece

        self.spm = sentencepiece.SentencePieceProcessor()
        self.spm.Load(str(spm_path))
        self.vocab = dict(vocab)
        self.lang_ids = dict(lang_ids)
        for special in ("<pad>", "</s>", "<unk>"):
            if special not in self.vocab:
                raise DataError(f"vocabulary has no {special!r} entry; it is not a fairseq-ordered vocabulary")
        self.pad_id = self.vocab["<pad>"]
        self.eos_id = self.vocab["</s>"]
        self.unk_id = self.vocab["<unk>"]
        self.max_positions = max_positions

    @classmethod
    def from_folder(cls, folder: str, max_positions: Optional[int] = None) -> "PrismTokenizer":
        """Read ``spm.model``/``sentencepiece.bpe.model`` and ``prism_vocab.json``/``vocab.json``."""
        names = table("prism")
        spm_path = _first_file(folder, names["spm_files"], "SentencePiece model")
        vocab_path = _first_file(folder, names["vocab_files"], "vocabulary")
        vocab = read_json(vocab_path, "Prism vocabulary")
        if not isinstance(vocab, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()):
            raise IncompleteModelError(
                f"Prism vocabulary {vocab_path!r} must be a JSON object mapping tokens to ids, got a {type(vocab).__name__}"
            )
        config_path = os.path.join(folder, "tokenizer_config.json")
        tokenizer_config = read_json(config_path, "tokenizer config") if os.path.isfile(config_path) else {}
        if not isinstance(tokenizer_config, dict):
            raise IncompleteModelError(
                f"tokenizer config {config_path!r} must be a JSON object, got a {type(tokenizer_config).__name__}"
            )
        return cls(spm_path, vocab, language_ids(vocab, tokenizer_config), max_positions)

    def lang_id(self, lang: str) -> int:
        """Id of the target-side tag of ``lang``; a ValueError naming ``lang`` if there is none."""
        if lang not in self.lang_ids:
            supported = ", ".join(sorted(self.lang_ids)) or "none"
            raise ArgumentError(f"lang {lang!r} is not supported by this Prism checkpoint; supported: {supported}")
        return self.lang_ids[lang]

    def pieces(self, text: str) -> List[str]:
        """SentencePiece pieces as fairseq sees them: joined by spaces, then split on whitespace."""
        return " ".join(self.spm.encode(text, out_type=str)).split()

    def encode(self, texts: Sequence[str]) -> List[List[int]]:
        """Piece ids (no special tokens) of each text; pieces missing from the vocabulary → ``<unk>``."""
        get = self.vocab.get
        return [[get(piece, self.unk_id) for piece in self.pieces(text)] for text in texts]

    def encode_with_offsets(self, text: str) -> Tuple[List[int], List[Tuple[int, int]]]:
        """:meth:`encode` of one text, with each id's character span in ``text`` (from
        SentencePiece's byte offsets; a piece that fairseq's whitespace split cuts in two gives
        both parts its span)."""
        proto = self.spm.encode(text, return_type="proto")
        char_at = [i for i, ch in enumerate(text) for _ in ch.encode("utf-8")] + [len(text)]
        get = self.vocab.get
        ids: List[int] = []
        offsets: List[Tuple[int, int]] = []
        for piece in proto.pieces:
            span = (char_at[min(piece.begin, len(char_at) - 1)], char_at[min(piece.end, len(char_at) - 1)])
            for part in piece.piece.split():
                ids.append(get(part, self.unk_id))
                offsets.append(span)
        return ids, offsets

    def source(self, ids: List[int]) -> Tuple[List[int], bool]:
        """``ids + [</s>]``, cut to ``max_positions``; second item: whether it was cut."""
        keep = len(ids) if self.max_positions is None else max(0, self.max_positions - 1)
        return ids[:keep] + [self.eos_id], len(ids) > keep

    def target(self, ids: List[int], lang: str) -> Tuple[List[int], bool]:
        """``[<lang>] + ids + [</s>]``, cut to ``max_positions``; second item: whether it was cut."""
        keep = len(ids) if self.max_positions is None else max(0, self.max_positions - 2)
        return [self.lang_id(lang)] + ids[:keep] + [self.eos_id], len(ids) > keep
