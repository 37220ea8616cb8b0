"""Minimum-Bayes-risk (MBR) selection and best-of-N reranking with any registry metric.

:func:`decode` chooses, per item, the candidate with the highest expected utility against the
item's samples (its pseudo-references, or the other candidates), the utilities coming from
``scorer.matrix`` (with the item's source, for a metric that scores with references and
sources); a source-only metric (``prism:src``) reranks by quality estimation instead.
:func:`decode_to_file` decodes a JSONL file (or a list of items) into a file, chunk by chunk and
resumably, as ``nlgscore mbr -o`` does; :mod:`nlgscore.mbr.files` reads and writes the
JSONL/``.npz`` files.

>>> from nlgscore.mbr import MBRItem, decode
>>> [choice] = decode("bertscore:minilm:L4", [MBRItem(["The cat sat.", "A cat sat.", "Rain."], id="s1")])
>>> choice.to_dict()["best"]
'The cat sat.'
"""

from nlgscore.mbr.decode import Choice, best_index, decode, expected_utility, is_source_based, uses_sources
from nlgscore.mbr.items import MBRItem, as_items
from nlgscore.mbr.to_file import DecodeSummary, decode_to_file

__all__ = [
    "Choice",
    "DecodeSummary",
    "MBRItem",
    "as_items",
    "best_index",
    "decode",
    "decode_to_file",
    "expected_utility",
    "is_source_based",
    "uses_sources",
]
