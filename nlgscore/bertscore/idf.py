"""Token weights for BERTScore: inverse document frequency over reference sentences, or uniform.

Documents are token-id lists (special tokens included). With M documents,
``idf(t) = log((M + 1) / (df(t) + 1))``; a token never seen gets ``log(M + 1)``. Special tokens
occur in every document, so their idf is 0. Without idf every token weighs 1 except the
tokens in ``zero_ids`` (CLS and SEP), as in bert_score 0.3.13.

>>> table = idf_table([[101, 7, 102], [101, 8, 102]], vocab_size=200)
>>> [round(float(table[i]), 4) for i in (101, 7, 9)]
[0.0, 0.4055, 1.0986]
>>> uniform_table(200, zero_ids=[101, 102])[[7, 101]].tolist()
[1.0, 0.0]
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Iterable, Sequence

from nlgscore.errors import ArgumentError


def idf_table(documents: Sequence[Sequence[int]], vocab_size: int):
    """A float32 tensor indexed by token id holding the smoothed idf of ``documents``."""
    import torch

    m = len(documents)
    if m == 0:
        raise ArgumentError("idf needs at least one reference sentence (idf_sents or references is empty)")
    counts: Counter[int] = Counter()
    for ids in documents:
        counts.update(set(ids))
    size = max(vocab_size, max(counts) + 1)
    # Python floats (double precision) then float32, like the reference package's dict of floats.
    table = torch.full((size,), math.log(m + 1), dtype=torch.float32)
    tokens = torch.tensor(list(counts), dtype=torch.long)
    values = torch.tensor([math.log((m + 1) / (c + 1)) for c in counts.values()], dtype=torch.float32)
    table[tokens] = values
    return table


def uniform_table(vocab_size: int, zero_ids: Iterable[int]):
    """Weight 1 for every token id, 0 for ``zero_ids``."""
    import torch

    table = torch.ones(vocab_size, dtype=torch.float32)
    ids = [i for i in zero_ids if i is not None]
    if ids:
        table[torch.tensor(ids, dtype=torch.long)] = 0.0
    return table


def sentences_digest(sentences: Sequence[str]) -> str:
    """Short content hash of idf sentences, for signatures (order and duplicates matter to idf)."""
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(sentence.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:10]
