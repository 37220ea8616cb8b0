"""How each registered metric runs offline in the tests: the one table of stand-ins.

Metrics whose default models live on the Hub run on tiny checkpoints (``tests/golden``) or the
packaged MiniLM, through their own commands; any other registered metric (one added by
CONTRIBUTING's recipe) runs as ``nlgscore.load(name)``, its evaluate module ``metrics/<name>`` and
``nlgscore score <name>``, with no entry here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, NamedTuple, Optional, Tuple

from nlgscore import registry

GOLDEN = Path(__file__).parent / "golden"
TINY_PRISM, TINY_BART = str(GOLDEN / "tiny-prism"), str(GOLDEN / "tiny-bart")


class Entry(NamedTuple):
    """How one metric (``label``: e.g. prism:src) is run through the API, its evaluate module and the CLI."""

    metric: str
    spec: str
    config: Optional[str] = None  # the evaluate module's configuration name
    load: Dict[str, Any] = {}  # evaluate.load options
    compute: Dict[str, Any] = {}  # module.compute options (the Hub's bertscore takes its model there)
    key: str = "scores"  # the module's and the CLI's per-item output
    cli: Tuple[str, ...] = ()  # argv before -c (default: nlgscore score SPEC)


OFFLINE = {
    "bertscore": {
        "bertscore": Entry(
            "bertscore",
            "bertscore:minilm:L4",
            compute={"model_type": "minilm", "num_layers": 4},
            key="f1",
            cli=("bertscore", "--model", "minilm", "-l", "4"),
        )
    },
    "prism": {
        f"prism:{mode}": Entry(
            "prism",
            f"prism:{mode}:{TINY_PRISM}",
            mode,
            {"checkpoint": TINY_PRISM},
            cli=("prism", "--checkpoint", TINY_PRISM),
        )
        for mode in ("ref", "src")
    },
    "bartscore": {
        "bartscore": Entry(
            "bartscore",
            f"bartscore:{TINY_BART}",
            "bart-large-cnn",
            {"checkpoint": TINY_BART},
            cli=("bartscore", "--checkpoint", TINY_BART),
        )
    },
}
# label -> Entry for every built-in metric of the registry (a new metric appears with no edit)
ENTRY_POINTS = {
    label: entry
    for name in registry.metric_names(builtin=True)
    for label, entry in OFFLINE.get(name, {name: Entry(name, name)}).items()
}
