"""Build a scorer from a short spec string, as the CLI and the meta-evaluation need.

Specs: ``bertscore`` (default English model), ``bertscore:MODEL`` or ``bertscore:MODEL:L4``;
``prism:ref`` / ``prism:src`` (optionally ``prism:ref:CHECKPOINT``); ``bartscore:VARIANT``
(optionally ``bartscore:VARIANT:DIRECTION``). Keyword options go to the scorer's constructor.

>>> parse_spec("bertscore:minilm:L4")
('bertscore', ['minilm', 'L4'])
"""

from __future__ import annotations

from typing import Any, List, Tuple

from nlgscore.core.base import Scorer

METRICS = ("bertscore", "prism", "bartscore")


def parse_spec(spec: str) -> Tuple[str, List[str]]:
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"metric spec must be a non-empty string, got {spec!r}")
    name, *parts = spec.split(":")
    name = name.strip().lower()
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r} in spec {spec!r}; expected one of {', '.join(METRICS)}")
    return name, [part for part in parts if part]


def load(spec: str, **options: Any) -> Scorer:
    """Return a ready scorer for ``spec`` (see the module docstring)."""
    name, parts = parse_spec(spec)
    if name == "bertscore":
        from nlgscore.bertscore import BERTScorer

        if parts:
            options.setdefault("model_type", parts[0])
        for part in parts[1:]:
            if part.upper().startswith("L") and part[1:].isdigit():
                options.setdefault("num_layers", int(part[1:]))
            else:
                raise ValueError(f"cannot read {part!r} in spec {spec!r}; layers are written L<number>")
        if "model_type" not in options and "lang" not in options:
            options["lang"] = "en"
        return BERTScorer(**options)
    if name == "prism":
        from nlgscore.seq2seq.prism import PrismScorer

        mode = parts[0] if parts else "ref"
        if mode not in ("ref", "src"):
            raise ValueError(f"prism spec must be prism:ref or prism:src, got {spec!r}")
        if len(parts) > 1:
            options.setdefault("checkpoint", ":".join(parts[1:]))
        options.setdefault("mode", mode)
        return PrismScorer(**options)
    from nlgscore.seq2seq.bartscore import BARTScorer

    if parts:
        options.setdefault("variant", parts[0])
    if len(parts) > 1:
        options.setdefault("direction", parts[1])
    return BARTScorer(**options)
