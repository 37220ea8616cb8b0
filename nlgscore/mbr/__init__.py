"""Minimum-Bayes-risk (MBR) selection and best-of-N reranking with any registry metric.

:func:`decode` chooses, per item, the candidate with the highest expected utility against the
item's samples (its pseudo-references, or the other candidates), the utilities coming from
``scorer.matrix``; a source-based metric (``prism:src``) reranks by quality estimation instead.
:mod:`nlgscore.mbr.files` reads and writes the JSONL/``.npz`` files of ``nlgscore mbr``.

>>> from nlgscore.mbr import Item, decode
>>> [choice] = decode("bertscore:minilm:L4", [Item(["The cat sat.", "A cat sat.", "Rain."], id="s1")])
>>> choice.to_dict()["best"]
'The cat sat.'
"""

from nlgscore.mbr.decode import Choice, best_index, decode, expected_utility, is_source_based
from nlgscore.mbr.items import Item, as_items

__all__ = ["Choice", "Item", "as_items", "best_index", "decode", "expected_utility", "is_source_based"]
