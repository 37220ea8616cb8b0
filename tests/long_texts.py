"""Long texts for the tiny seq2seq checkpoints, shared by the long-input tests of several rooms.

The tiny checkpoints make a text "long" cheaply: :func:`short_prism` copies the Prism checkpoint
with ``LIMIT`` positions, and BARTScore takes ``max_length=LIMIT``. ``TAIL_A`` and ``TAIL_B`` differ
after the limit only: cutting a text at the limit loses the difference.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
TINY_BART = str(GOLDEN / "tiny-bart")
LIMIT = 48
SENTS = [
    "The cat sat on the mat.",
    "It was a sunny day in the park.",
    "Dogs barked at the passing cars.",
    "Nobody knew why the bell rang.",
    "She opened the window and smiled.",
    "Rain fell on the old roof.",
    "A train left the station at noon.",
    "The children sang in the hall.",
    "Her brother fixed the red bicycle.",
    "We ate soup by the fire.",
    "The river was cold and fast.",
    "Birds flew over the quiet town.",
    "He wrote a letter to his aunt.",
    "The market closed early on Friday.",
]
SHORT = "A cat sat on the mat."
LONG = " ".join(SENTS)  # ~200 tokens: 5 chunks of a 48-position model
TAIL_A, TAIL_B = (
    LONG + " Then the bell rang twice.",
    LONG + " The last bus was late again.",
)  # differ after the limit only
# Each target sentence takes its best chunk, so a tail changes a score where some sentence's best
# chunk is the tail's: this target's first sentence is TAIL_A's last (the models are random).
TARGET = "Then the bell rang twice. The cat sat on the mat. It rained."


def short_prism(folder: Path) -> Path:
    """A copy of the tiny Prism checkpoint with ``LIMIT`` positions."""
    shutil.copytree(GOLDEN / "tiny-prism", folder)
    config = json.loads((folder / "config.json").read_text())
    config["max_position_embeddings"] = LIMIT
    (folder / "config.json").write_text(json.dumps(config))
    return folder
