"""Convert the BARTScore authors' ``bart.pth`` (their ParaBank2 fine-tune) to a checkpoint folder.

``bart.pth`` is ``torch.save(model.state_dict())`` of a ``BartForConditionalGeneration`` built
from ``facebook/bart-large-cnn``; the authors' ``BARTScorer.load`` reads it back into that model.
The conversion does the same once, and saves the result as a Hugging Face folder (``config.json``,
``model.safetensors``, the base's tokenizer) that ``BARTScorer(checkpoint=OUT)`` and
``nlgscore.load("bartscore:OUT")`` load directly, without ``bart.pth``:

* the base (``--base``: a Hub id or folder, default ``facebook/bart-large-cnn``) gives the
  config and the tokenizer;
* the file is read with ``torch.load(weights_only=True)`` (no pickled code runs) and fitted by
  :func:`nlgscore.seq2seq.bart_state_dict.fit_state_dict` (tied copies left out, a
  ``final_logits_bias`` more or less, a training wrapper's ``model.`` prefix); any other
  difference of keys or shapes is refused, naming ``bart_pth``;
* self-check: the saved folder is loaded again and must give the same logits, bit for bit, as the
  base model with the state dict loaded, on probe sentence pairs (printed, and an error if not);
* ``bartscore_para.json`` records what the folder was converted from (the SHA-256 of
  ``bart.pth``, the base and its revision, what the fitting changed); the scorer's signature
  reads it (``para:converted-bart.pth-sha256-…``). It is written last, so a folder without it is
  not a finished conversion.

Usage: ``python -m nlgscore.seq2seq.bartscore_convert bart.pth bart-large-cnn-para-hf`` (in a checkout,
``python scripts/convert_bartscore_pth.py`` is the same command).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
import zipfile
from typing import Any, Dict, Optional, Sequence

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.seq2seq.bartscore_para import PARA_RECORD, PARA_VARIANT, file_sha256

DEFAULT_BASE = "facebook/bart-large-cnn"
# Source/target pairs the self-check scores (any text works: the check compares two models).
PROBES = (
    ("The cat sat on the mat all day long.", "A cat was sitting on the mat."),
    ("Stocks fell sharply on Monday after the report.", "Markets dropped on Monday."),
)


def read_state_dict(path: str) -> Any:
    """``torch.load(path, weights_only=True)``, with errors that name ``bart_pth``.

    Args:
        path: the authors' ``bart.pth`` (or any saved state dict).

    Returns:
        What the file holds (checked by the caller).

    Raises:
        FileNotFoundError: there is no such file.
        ArgumentTypeError: the file is no torch file, or holds Python objects besides tensors.

    Example:
        >>> read_state_dict("tests/golden/tiny-bart/config.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentTypeError: bart_pth 'tests/golden/tiny-bart/config.json' is not a file torch.save wrote; ...
    """
    import torch

    if not os.path.isfile(path):
        raise FileNotFoundError(f"bart_pth {path!r} is not a file")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:  # torch's message suggests weights_only=False: running the file's code
        what = "holds Python objects besides tensors" if zipfile.is_zipfile(path) else "is not a file torch.save wrote"
        raise ArgumentTypeError(
            f"bart_pth {path!r} {what}; only plain weights are read (loading it could run code)"
        ) from err
    except Exception as err:  # a truncated download, another archive
        detail = " ".join(str(err).split())[:160]
        raise ArgumentTypeError(
            f"bart_pth {path!r} is not a file torch.save wrote ({type(err).__name__}: {detail})"
        ) from err


def convert_pth(
    bart_pth: str, out_dir: str, base: str = DEFAULT_BASE, revision: Optional[str] = None, log: Any = print
) -> Dict[str, Any]:
    """Write the checkpoint folder for the state dict ``bart_pth`` into ``out_dir``.

    Args:
        bart_pth: the authors' ``bart.pth``.
        out_dir: the folder to write (created; a folder holding anything but an earlier
            conversion is refused).
        base: Hub id or folder of the model the state dict is for (its config and tokenizer).
        revision: the base's Hub revision.
        log: where progress lines go (``print``; ``None`` for none).

    Returns:
        The record written to ``out_dir/bartscore_para.json``.

    Raises:
        FileNotFoundError: ``bart_pth`` is not a file.
        ArgumentTypeError: ``bart_pth`` is not a state dict of tensors.
        ArgumentError: its keys or shapes do not fit ``base``, or ``out_dir`` holds another model.
        IncompleteModelError: the self-check failed: the saved folder does not give the loaded
            model's weights and logits.

    Example:
        >>> import tempfile, torch
        >>> from transformers import AutoModelForSeq2SeqLM
        >>> folder = tempfile.mkdtemp()
        >>> model = AutoModelForSeq2SeqLM.from_pretrained("tests/golden/tiny-bart")
        >>> torch.save(model.state_dict(), f"{folder}/bart.pth")
        >>> record = convert_pth(f"{folder}/bart.pth", f"{folder}/out", base="tests/golden/tiny-bart", log=None)
        >>> record["weights"]["kind"], record["self_check"]["logits_equal"]
        ('bart.pth', True)
    """
    import torch
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

    from nlgscore.backend.models import resolve
    from nlgscore.seq2seq.bart_state_dict import fit_state_dict

    say = log or (lambda *_: None)
    _check_out_dir(out_dir)
    started = time.perf_counter()
    state = read_state_dict(bart_pth)
    resolved = resolve(base, revision, flag="--base", family="seq2seq")
    if not getattr(AutoConfig.from_pretrained(resolved.path), "is_encoder_decoder", False):
        raise ArgumentTypeError(f"--base {base!r} is not an encoder–decoder model such as facebook/bart-large-cnn")
    model = AutoModelForSeq2SeqLM.from_pretrained(resolved.path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    inputs = _probe_inputs(tokenizer)
    before = _token_logprobs(model, inputs)
    fitted = fit_state_dict(model, state, f"bart_pth {bart_pth!r}")
    model.load_state_dict(fitted.state)
    del state, fitted.state
    if fitted.untied:
        say(f"warning: stored tied copies that differ, overridden as a strict load_state_dict does: {fitted.untied}")
    logits, after = _logits(model, inputs), _token_logprobs(model, inputs)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    say(f"loaded {bart_pth} into {resolved.name} and saved {out_dir} in {time.perf_counter() - started:.1f} s")
    check = _self_check(model, out_dir, inputs, logits)
    check["max_abs_logprob_change_from_base"] = float((after - before).abs().max())
    say(
        f"self-check: {out_dir} reproduces the loaded model's logits exactly on {check['probe_pairs']} pairs "
        f"({check['target_tokens']} target tokens); largest change of a token log-prob from the base: "
        f"{check['max_abs_logprob_change_from_base']:.4g}"
    )
    record = _record(bart_pth, base, resolved, fitted.notes(), check)
    with open(os.path.join(out_dir, PARA_RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2)
    say(
        f"wrote {out_dir} (para:converted, sha256 {record['weights']['sha256'][:16]}…) in {time.perf_counter() - started:.1f} s"
    )
    return record


def _check_out_dir(out_dir: str) -> None:
    if os.path.isfile(out_dir):
        raise ArgumentError(f"out_dir {out_dir!r} is a file, not a folder")
    if os.path.isdir(out_dir) and os.listdir(out_dir) and not os.path.isfile(os.path.join(out_dir, PARA_RECORD)):
        raise ArgumentError(
            f"out_dir {out_dir!r} already holds files and no {PARA_RECORD} (not an earlier conversion); "
            "choose a new folder"
        )


def _probe_inputs(tokenizer: Any) -> Dict[str, Any]:
    sources, targets = zip(*PROBES)
    batch = tokenizer(list(sources), padding=True, return_tensors="pt")
    labels = tokenizer(list(targets), padding=True, return_tensors="pt")
    return {
        "input_ids": batch["input_ids"],
        "attention_mask": batch["attention_mask"],
        "labels": labels["input_ids"],
        "label_mask": labels["attention_mask"],
    }


def _logits(model: Any, inputs: Dict[str, Any]) -> Any:
    import torch

    with torch.no_grad():
        return model(
            input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], labels=inputs["labels"]
        ).logits


def _token_logprobs(model: Any, inputs: Dict[str, Any]) -> Any:
    """log p(target token | source, previous tokens) at the real target positions: what BARTScore averages."""
    logprobs = _logits(model, inputs).log_softmax(-1).gather(-1, inputs["labels"].unsqueeze(-1)).squeeze(-1)
    return logprobs[inputs["label_mask"].bool()]


def _self_check(model: Any, out_dir: str, inputs: Dict[str, Any], logits: Any) -> Dict[str, Any]:
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from nlgscore.backend.model_files import IncompleteModelError

    again = AutoModelForSeq2SeqLM.from_pretrained(out_dir, dtype=torch.float32).eval()
    reloaded = _logits(again, inputs)
    ours, theirs = model.state_dict(), again.state_dict()
    differ = [k for k in ours if k not in theirs or not ours[k].equal(theirs[k])]
    if differ or not torch.equal(reloaded, logits):
        raise IncompleteModelError(
            f"self-check failed: the saved folder {out_dir!r} does not reproduce the loaded model: weights differ at {differ[:5]}, "
            f"largest logit difference {float((reloaded - logits).abs().max()):.3g}"
        )
    return {"probe_pairs": len(PROBES), "target_tokens": int(inputs["label_mask"].sum()), "logits_equal": True}


def _record(bart_pth: str, base: str, resolved: Any, notes: Dict[str, Any], check: Dict[str, Any]) -> Dict[str, Any]:
    from nlgscore.core.signature import library_versions

    versions = library_versions()
    return {
        "variant": PARA_VARIANT,
        "weights": {
            "kind": "bart.pth",
            "file": os.path.basename(bart_pth),
            "bytes": os.path.getsize(bart_pth),
            "sha256": file_sha256(bart_pth),
        },
        "base": {"checkpoint": base, "name": resolved.name, "revision": resolved.revision},
        "state_dict": notes,
        "self_check": check,
        "converted_with": {
            "tool": "nlgscore.seq2seq.bartscore_convert",
            "nlgscore": versions["version"],
            "transformers": versions["transformers"],
            "torch": versions["torch"],
        },
    }


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="convert_bartscore_pth", description=(__doc__ or "").split("\n\n")[0].strip())
    parser.add_argument(
        "bart_pth", help="the BARTScore authors' bart.pth (a state dict of BartForConditionalGeneration)"
    )
    parser.add_argument("out_dir", help="output folder for the Hugging Face checkpoint")
    parser.add_argument(
        "--base", default=DEFAULT_BASE, help=f"Hub id or folder of the base model (default {DEFAULT_BASE})"
    )
    parser.add_argument("--revision", default=None, help="the base's Hub revision")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: convert, print progress and the self-check; 1 and one error line on failure.

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).

    Returns:
        The exit status.

    Example:
        >>> main(["missing.pth", "out"])
        1
    """
    args = parse_args(argv)
    try:
        convert_pth(args.bart_pth, args.out_dir, base=args.base, revision=args.revision)
    except (ValueError, TypeError, OSError) as err:  # nlgscore's errors name the argument
        print(f"convert_bartscore_pth: error: {err}", file=sys.stderr)
        return 1
    return 0


__all__ = ["convert_pth", "read_state_dict", "main"]

if __name__ == "__main__":
    sys.exit(main())
