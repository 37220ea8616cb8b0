"""How the built-in metrics' specs name their options: ``bertscore[:MODEL[:L<layer>]]``,
``prism:ref|src[:CHECKPOINT][:LANG]``, ``bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]]``,
``bleu[:TOKENIZE][:NAME=VALUE...]``, ``chrf[:NAME=VALUE...]``, ``ter[:NAME=VALUE...]``,
``rouge[:1|2|L]``.

A string metric's settings can be parts of its spec, ``NAME=VALUE`` with the option table's names
and spellings (``chrf:beta=3:word_order=1``, ``bleu:intl:lowercase=true``), so that one spec names
a WMT baseline wherever a spec is taken (``nlgscore meta ... --metric``, ``nlgscore score``).

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


def option_parts(scorer: str, parts: List[str], metric: str) -> Dict[str, Any]:
    """``NAME=VALUE`` spec parts as the options of scorer class ``scorer`` (``module:Class``), each
    read by its option-table row (``Option.parse``); an option given twice or a part without ``=``
    is a ValueError naming it.

    >>> option_parts("nlgscore.strings.scorers:ChrFScorer", ["beta=3", "word_order=1"], "chrf")
    {'beta': 3, 'word_order': 1}
    """
    from importlib import import_module

    from nlgscore.core.options import find_option

    module, _, name = scorer.partition(":")
    cls = getattr(import_module(module), name)
    named: Dict[str, Any] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ValueError(f"a {metric} spec part is NAME=VALUE (e.g. {_EXAMPLES[metric]}), got {part!r}")
        key = key.strip().replace("-", "_")
        if key in named:
            raise ValueError(f"option {key} is given twice")
        named[key] = find_option(cls, key).parse(value)
    return named


_EXAMPLES = {"chrf": "chrf:beta=3", "bleu": "bleu:intl:lowercase=true", "ter": "ter:case_sensitive=true"}


def bleu_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``bleu`` (sacreBLEU's 13a tokenisation), ``bleu:moses`` (the BARTScore paper's sentBLEU),
    ``bleu:intl`` and the other sacreBLEU tokenisers, then ``NAME=VALUE`` options.

    >>> bleu_spec(["moses"], {}), bleu_spec([], {}), bleu_spec(["zh", "lowercase=yes"], {})
    ({'tokenize': 'moses'}, {}, {'tokenize': 'zh', 'lowercase': True})
    """
    from nlgscore.strings.scorers import BLEU_TOKENIZE

    named: Dict[str, Any] = {}
    if parts and "=" not in parts[0]:
        if parts[0] not in BLEU_TOKENIZE:
            raise ValueError(
                f"the part after bleu is a tokeniser ({', '.join(BLEU_TOKENIZE)}) or NAME=VALUE, got {parts[0]!r}"
            )
        named["tokenize"] = parts[0]
        parts = parts[1:]
    given = option_parts("nlgscore.strings.scorers:BLEUScorer", parts, "bleu")
    if "tokenize" in named and "tokenize" in given:
        raise ValueError("option tokenize is given twice")
    return {**named, **given}


def chrf_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``chrf[:NAME=VALUE...]``: sacreBLEU's chrF settings (``chrf:beta=3`` is WMT18's chrF).

    >>> chrf_spec(["beta=3", "word_order=2"], {})
    {'beta': 3, 'word_order': 2}
    """
    return option_parts("nlgscore.strings.scorers:ChrFScorer", parts, "chrf")


def ter_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``ter[:NAME=VALUE...]``: sacreBLEU's TER settings.

    >>> ter_spec(["case_sensitive=true"], {})
    {'case_sensitive': True}
    """
    return option_parts("nlgscore.strings.scorers:TERScorer", parts, "ter")


def rouge_spec(parts: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``rouge:1``, ``rouge:2`` or ``rouge:L`` (default L): the rouge-score type.

    >>> rouge_spec(["1"], {}), rouge_spec(["l"], {})
    ({'rouge_type': 'rouge1'}, {'rouge_type': 'rougeL'})
    """
    if len(parts) > 1 or (parts and parts[0].upper() not in ("1", "2", "L")):
        raise ValueError(f"the part after rouge must be 1, 2 or L, got {':'.join(parts)!r}")
    return {"rouge_type": f"rouge{parts[0].upper()}"} if parts else {}
