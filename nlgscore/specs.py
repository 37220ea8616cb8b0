"""How the built-in metrics' specs name their options: ``bertscore[:MODEL[:L<layer>]]``,
``prism:ref|src[:CHECKPOINT][:LANG]``, ``bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]]``,
``bleu[:moses]``, ``rouge[:1|2|L]``.

Each parser turns the parts after the metric's name (and the caller's options, for defaults that
depend on them) into constructor options; :mod:`nlgscore.registry` names them in its rows, and a
plug-in brings its own (``parse_spec`` on its class). A ``ValueError`` here is reported by the
registry with the whole spec and its syntax.

>>> bertscore_spec(["minilm", "L4"], {})
{'num_layers': 4, 'model_type': 'minilm'}
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

_LAYER = re.compile(r"^[Ll](\d+)$")


def _model_part(parts: List[str], last: str) -> str:
    """``parts`` joined back into one model name or folder, which may hold ':' only after a Windows
    drive letter (``C:/models/x``); any other extra part is a malformed ``last`` part.

    >>> _model_part(["C", "/models/x"], "L<layer>")
    'C:/models/x'
    >>> _model_part(["minilm", "X4"], "L<layer>, e.g. L4")
    Traceback (most recent call last):
    ...
    ValueError: the part after the model must look like L<layer>, e.g. L4, got 'X4'
    """
    drive = len(parts) == 2 and len(parts[0]) == 1 and parts[0].isalpha() and parts[1][:1] in ("\\", "/")
    if len(parts) > 1 and not drive:
        raise ValueError(f"the part after the model must look like {last}, got {parts[-1]!r}")
    return ":".join(parts)


def bertscore_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    named: Dict[str, Any] = {}
    layer = _LAYER.match(parts[-1]) if parts else None
    if layer:
        named["num_layers"] = int(layer.group(1))
        parts = parts[:-1]
    elif parts and re.fullmatch(r"[Ll]-?\d*|[Ll]ayer-?\d+", parts[-1]):
        raise ValueError(
            f"the layer part must look like L<layer> with a layer number >= 0 (e.g. L4), got {parts[-1]!r}"
        )
    if parts:
        named["model_type"] = _model_part(parts, "L<layer> with a layer number >= 0 (e.g. L4)")
    elif options.get("model_type") is None and options.get("lang") is None:
        named["lang"] = "en"
    return named


def prism_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``prism:ref|src[:CHECKPOINT][:LANG]``: the last part is the candidates' language when it is
    a language code after a checkpoint, or one of the m39v1 languages on its own (a checkpoint
    folder named like a language code is written ``./de``).

    >>> prism_spec(["src", "tests/golden/tiny-prism", "de"], {})
    {'mode': 'src', 'lang': 'de', 'checkpoint': 'tests/golden/tiny-prism'}
    >>> prism_spec(["ref", "de"], {})
    {'mode': 'ref', 'lang': 'de'}
    """
    import os

    from nlgscore.backend.tables import table

    mode = parts[0] if parts else options.get("mode") or "ref"
    if mode not in ("ref", "src"):
        raise ValueError(f"prism specs are prism:ref|src[:CHECKPOINT][:LANG], not mode {mode!r}")
    named: Dict[str, Any] = {"mode": mode}
    rest = parts[1:]
    if (
        rest
        and re.fullmatch(r"[a-z]{2,3}", rest[-1])
        and (len(rest) > 1 or (rest[-1] in table("prism")["languages"] and not os.path.exists(rest[-1])))
    ):
        named["lang"] = rest.pop()
    if rest:
        named["checkpoint"] = _model_part(
            rest, "a language code (prism:ref|src[:CHECKPOINT][:LANG], e.g. prism:src:PATH:de)"
        )
    return named


def bartscore_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    from nlgscore.seq2seq.bartscore import DIRECTIONS, variant_table

    named: Dict[str, Any] = {}
    if len(parts) > 1 and parts[-1] in DIRECTIONS:
        named["direction"] = parts[-1]
        parts = parts[:-1]
    elif len(parts) == 1 and parts[0] in DIRECTIONS:
        named["direction"] = parts[0]
        parts = []
    if parts:
        first = _model_part(parts, f"a direction ({', '.join(DIRECTIONS)})")
        named["variant" if first in variant_table() else "checkpoint"] = first
    return named


def bleu_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``bleu`` (sacreBLEU's 13a tokenisation) or ``bleu:moses`` (the BARTScore paper's sentBLEU).

    >>> bleu_spec(["moses"], {}), bleu_spec([], {})
    ({'tokenize': 'moses'}, {})
    """
    if len(parts) > 1 or (parts and parts[0] != "moses"):
        raise ValueError(f"the only part after bleu is 'moses', got {':'.join(parts)!r}")
    return {"tokenize": "moses"} if parts else {}


def rouge_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``rouge:1``, ``rouge:2`` or ``rouge:L`` (default L): the rouge-score type.

    >>> rouge_spec(["1"], {}), rouge_spec(["l"], {})
    ({'rouge_type': 'rouge1'}, {'rouge_type': 'rougeL'})
    """
    if len(parts) > 1 or (parts and parts[0].upper() not in ("1", "2", "L")):
        raise ValueError(f"the part after rouge must be 1, 2 or L, got {':'.join(parts)!r}")
    return {"rouge_type": f"rouge{parts[0].upper()}"} if parts else {}
