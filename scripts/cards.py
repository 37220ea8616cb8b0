"""The option tables of the metric cards, made from the code: ``python scripts/cards.py --write``.

Each card (``metrics/<name>/README.md``, and ``hub_cards/<name>/README.md`` where a metric has its
own Hub card) carries, inside its "Inputs" section, a table of every option of the metric's option
table (``nlgscore.core.options``): the name every door takes, whether a call may give it (per
``compute`` call, per ``/v1/score`` request) or only the scorer, the default, and what it does.
The table sits between two markers and is written by this script, never by hand;
tests/test_cards.py checks that every card's table is the one the code makes now, so a new or
changed option cannot leave a card behind.

usage:
    python scripts/cards.py --check    # exit 1 and name the cards whose table is stale
    python scripts/cards.py --write    # rewrite the tables in place
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, even where another nlgscore is installed
from nlgscore import registry  # noqa: E402
from nlgscore.core.options import default_text, option_rows, where_set  # noqa: E402

BEGIN = "<!-- options: made from the option table by scripts/cards.py; edit the code, not this table -->"
END = "<!-- options: end -->"
BLOCK = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)


def card_paths(name: str) -> List[Path]:
    """The cards of metric ``name``: its module's card and its own Hub card, where it has one."""
    paths = [ROOT / "metrics" / name / "README.md", ROOT / "hub_cards" / name / "README.md"]
    return [path for path in paths if path.is_file()]


def options_table(name: str) -> str:
    """The Markdown table of metric ``name``'s options, between the markers.

    >>> print(options_table("rouge").splitlines()[3])
    | `rouge_type` | scorer | `'rougeL'` | rouge1, rouge2 or rougeL |
    """
    cls = registry.metric(name).scorer_class()
    lines = [BEGIN, "| option | set on | default | what it does |", "|---|---|---|---|"]
    for row in option_rows(cls):
        lines.append(f"| `{row.name}` | {where_set(row)} | {default_text(cls, row)} | {row.help} |")
    lines += [
        "",
        "Every option has the same name in `nlgscore.load`, `map_function`, `compute_metrics`,",
        "`MetricCallback`, this module's `compute`, and `nlgscore score|serve --option NAME=VALUE`;",
        "a call option may also be a field of a `/v1/score` request.",
        END,
    ]
    return "\n".join(lines)


def updated(text: str, name: str) -> str:
    """``text`` (a card) with its options table made anew: replaced between the markers, or, in a
    card that has none yet, put at the end of its "### Inputs" section."""
    table = options_table(name)
    if BEGIN in text:
        return BLOCK.sub(lambda _: table, text)
    heading = re.search(r"^### Inputs\n", text, re.M)
    if heading is None:
        raise ValueError(f"the {name} card has no '### Inputs' section for its options table")
    following = re.search(r"^#{2,3} ", text[heading.end() :], re.M)
    end = heading.end() + following.start() if following else len(text)
    while end > heading.end() and text[end - 1] == "\n":
        end -= 1
    end_marker = text.rfind("<!-- Inputs: end. -->", heading.end(), end + 30)
    at = end_marker if end_marker != -1 else end
    return text[:at] + "\n\n" + table + "\n" + text[at:]


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="name the cards whose options table is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the options tables")
    args = parser.parse_args(argv)
    stale = []
    for name in registry.metric_names(builtin=True):
        for path in card_paths(name):
            text = path.read_text(encoding="utf-8")
            new = updated(text, name)
            if new != text:
                stale.append(path)
                if args.write:
                    path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{'rewrote' if args.write else 'stale'}: {path.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
