"""``make demo``: BERTScore (the embedded MiniLM) of a candidate file against reference files.

Prints a header, every line's P, R and F1, the system P/R/F1 on its own labelled line, and the
signature (what produced the numbers) last.

    python scripts/demo.py examples/cands.txt examples/refs.txt examples/refs2.txt
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List


def lines(path: str) -> List[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def main(argv: List[str]) -> int:
    if len(argv) < 2:
        print("usage: python scripts/demo.py CANDS REFS [REFS ...]", file=sys.stderr)
        return 2
    import nlgscore

    candidates = lines(argv[0])
    references = [list(refs) for refs in zip(*(lines(path) for path in argv[1:]), strict=True)]
    result = nlgscore.load("bertscore:minilm").compute(candidates, references)
    columns = result.columns()
    print("P\tR\tF1")
    for p, r, f in zip(columns["precision"], columns["recall"], columns["f1"], strict=True):
        print(f"{p:.6f}\t{r:.6f}\t{f:.6f}")
    system = result.system
    print(f"System P/R/F1: {system['precision']:.6f} {system['recall']:.6f} {system['f1']:.6f}")
    print(f"Signature: {result.signature}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
