"""A tiny MQM human-scores folder (4 systems x 4 segments, every output distinct) for the meta
tests that need a real run of a model metric in seconds."""

from __future__ import annotations

from pathlib import Path


def mqm_folder(folder: Path) -> Path:
    """Write the folder (nlgscore.meta.data.ratings layout) at ``folder`` and return it."""
    folder.mkdir()
    refs = ["the cat sat on the mat", "a dog ran in the park", "it is raining today", "she reads a book"]
    outputs = {
        "good": ["the cat sat on a mat", "a dog ran in the park", "it is raining today", "she reads a book"],
        "mid": ["the cat sat", "a dog ran", "it rains today", "she reads books"],
        "bad": ["cat", "dog", "rain", "book"],
        "worst": ["x", "y", "z", "w"],
    }
    (folder / "src.xx").write_text("".join(f"s{i}\n" for i in range(4)), encoding="utf-8")
    (folder / "ref.A.en").write_text("\n".join(refs) + "\n", encoding="utf-8")
    quality = {"good": -0.5, "mid": -2.0, "bad": -5.0, "worst": -9.0}
    for system, lines in outputs.items():
        (folder / f"hyp.{system}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [f"{s}\t{line}\t{quality[s] - 0.1 * line}" for s in outputs for line in (1, 2, 3, 4)]
    (folder / "mqm-seg-scores.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder
