"""Convert the BARTScore authors' ``bart.pth`` (ParaBank2 fine-tune) to a Hugging Face checkpoint folder.

Input: ``bart.pth``, the state dict of the ``bart-large-cnn-para`` variant (Google Drive file id
``1_7JfF7KOInb7ZrxKHIigTMR4ChVET01m``, linked from github.com/neulab/BARTScore), and the base
model it was fine-tuned from (``--base``, default ``facebook/bart-large-cnn``: its config and
tokenizer). Output: a folder (``config.json``, ``model.safetensors``, tokenizer files,
``bartscore_para.json`` recording the SHA-256 of ``bart.pth``) that scores without ``bart.pth``:

    nlgscore.load("bartscore:OUT")   or   BARTScorer(checkpoint="OUT", variant="bart-large-cnn-para")

The file is read with ``torch.load(weights_only=True)``; keys saved by other transformers versions
are fitted (tied copies left out, ``final_logits_bias``, a training wrapper's ``model.`` prefix),
anything else that does not fit is refused; the saved folder must reproduce the loaded model's
logits exactly (the self-check it prints). The logic is :mod:`nlgscore.seq2seq.bartscore_convert`,
which an installed nlgscore runs as ``python -m nlgscore.seq2seq.bartscore_convert``.

Usage: ``python scripts/convert_bartscore_pth.py bart.pth bart-large-cnn-para-hf [--base facebook/bart-large-cnn]``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's nlgscore, run from anywhere

from nlgscore.seq2seq.bartscore_convert import main

if __name__ == "__main__":
    sys.exit(main())
