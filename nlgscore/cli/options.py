"""What every command shares: the input/run-time options, reading text files, and user errors.

One convention across commands: ``-c`` candidates file, ``-r`` references file (repeatable),
``-s`` sources file, ``-`` for stdin; ``--seg``, ``--format text|json|tsv`` (``--json``); ``--device``, ``--batch-size``,
``--max-tokens``, ``--no-progress``, ``--quiet``, ``--debug``, ``--long-inputs auto|truncate|error``.

>>> parser = argparse.ArgumentParser(prog="demo")
>>> add_input_options(parser)
>>> add_output_options(parser)
>>> add_runtime_options(parser)
>>> args = parser.parse_args(["-c", "c.txt", "-r", "r1.txt", "-r", "r2.txt", "--seg", "--no-progress"])
>>> args.cands, args.refs, args.srcs, args.seg, args.progress
('c.txt', ['r1.txt', 'r2.txt'], None, True, False)
"""

from __future__ import annotations

import argparse
import math
import pickle
from pathlib import Path
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, Union

from nlgscore.core.long_inputs import LONG_INPUTS, LongInputError
from nlgscore.core.runtime import DTYPES
from nlgscore.errors import NlgscoreError
from nlgscore.stream.readers import STDIN, text_lines


class UserError(NlgscoreError):
    """A mistake in the command line or its input files: one line on stderr, exit status 2."""


def fail(message: str) -> NoReturn:
    """End the command with one line naming the cause (``nlgscore <command>: error: ...``), exit 2.

    >>> fail("--batch-size must be positive")
    Traceback (most recent call last):
    ...
    nlgscore.cli.options.UserError: --batch-size must be positive
    """
    raise UserError(message)


def read_lines(path: Union[str, Path], what: str = "input") -> List[str]:
    """Lines of a UTF-8 text file (a byte-order mark is dropped); ``-`` reads stdin.

    A missing file is an error, never read as literal text (bert_score #63); so is a file that is
    not UTF-8 (the error names ``file:line`` and the byte). The rule is the streaming reader's
    (:func:`nlgscore.stream.readers.text_lines`): split on ``\\n`` only, since other Unicode line
    separators may sit inside a segment, and a trailing ``\\r`` dropped.

    >>> read_lines("examples/refs.txt", "reference")[0]
    'A cat was sitting on the mat.'
    """
    return list(text_lines(str(path), what))


def check_text(text: str, flag: str) -> str:
    """``text`` given on the command line, refused when it is not valid Unicode (a lone surrogate).

    >>> check_text("hello", "--cand")
    'hello'
    """
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            fail(f"{flag}: character {index} is a lone surrogate ({char!r}), not valid Unicode text")
    return text


def check_aligned(first: Tuple[Any, Sequence[str]], others: Sequence[Tuple[Any, Optional[Sequence[str]]]]) -> None:
    """Every file must have as many lines as the first one; the error names both files."""
    path0, lines0 = first
    for path, lines in others:
        if lines is not None and len(lines) != len(lines0):
            fail(f"{path} has {len(lines)} lines but {path0} has {len(lines0)}")


def read_inputs(
    args: argparse.Namespace,
) -> Tuple[List[str], Optional[Union[List[str], List[List[str]]]], Optional[List[str]]]:
    """Candidates, references (a list of lists with several ``-r``) and sources of ``add_input_options``."""
    ref_paths, src_path = getattr(args, "refs", None) or [], getattr(args, "srcs", None)
    if sum(str(p) == STDIN for p in [args.cands, *ref_paths, src_path]) > 1:
        fail("only one of -c, -r and -s can be '-' (stdin)")
    cands = read_lines(args.cands, "candidate")
    ref_sets = [read_lines(path, "reference") for path in ref_paths]
    srcs = read_lines(src_path, "source") if src_path else None
    check_aligned((args.cands, cands), [*zip(ref_paths, ref_sets, strict=True), (src_path, srcs)])
    args.items_by_line = True  # item i is line i + 1 of each file: an error naming an item names its line
    if not cands:
        fail(empty_input(args.cands))
    refs = (
        [list(group) for group in zip(*ref_sets, strict=True)]
        if len(ref_sets) > 1
        else (ref_sets[0] if ref_sets else None)
    )
    return cands, refs, srcs


def input_line(err: Any, args: argparse.Namespace) -> Any:
    """A :class:`~nlgscore.core.long_inputs.LongInputError` naming its item as the command line
    gave it: ``FILE:LINE`` (1-based) of the -c/-r/-s file, or ``FILE row N`` of an -i table; any
    other error as it is.

    >>> from nlgscore.core.long_inputs import too_long
    >>> args = argparse.Namespace(cands="c.txt", refs=["r1.txt", "r2.txt"], srcs=None, items_by_line=True)
    >>> str(input_line(too_long("references[2][1]", 700, 512, "m"), args)).split(" has ")[0]
    'r2.txt:3'
    """
    item = err.item if isinstance(err, LongInputError) else None
    if item is None or not getattr(args, "items_by_line", False):  # an mbr item, `show --line`: not a corpus row
        return err
    side, index, ref = item
    if getattr(args, "input", None) is not None:
        return err.renamed(f"{args.input} row {index + 1}")
    files = {
        "predictions": [getattr(args, "cands", None)],
        "references": getattr(args, "refs", None) or [],
        "sources": [getattr(args, "srcs", None)],
    }.get(side, [])
    path = files[ref or 0] if (ref or 0) < len(files) else None
    if not isinstance(path, (str, Path)):
        return err
    return err.renamed(f"{'<stdin>' if str(path) == STDIN else path}:{index + 1}")


def empty_input(path: Union[str, Path]) -> str:
    """The message for an input with no lines or rows: an error, never a NaN score with exit 0.

    >>> empty_input("cands.txt")
    'cands.txt is empty: there is nothing to score (no lines or rows)'
    """
    return f"{'<stdin>' if str(path) == STDIN else path} is empty: there is nothing to score (no lines or rows)"


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1.

    >>> positive_int("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_input_options(
    parser: argparse.ArgumentParser,
    *,
    references: bool = True,
    references_required: bool = False,
    sources: bool = True,
    multi_candidates: bool = False,
) -> None:
    """``-c`` candidates file (``dest="cands"``; a list with ``multi_candidates``), ``-r`` references
    file (repeatable, ``dest="refs"``), ``-s`` sources file (``dest="srcs"``); ``-`` reads stdin."""
    if multi_candidates:
        parser.add_argument(
            "-c",
            "--cands",
            action="append",
            required=True,
            metavar="FILE",
            help="candidate (system output) file, one segment a line; repeatable",
        )
    else:
        parser.add_argument(
            "-c", "--cands", required=True, metavar="FILE", help="candidate file, one segment a line ('-' = stdin)"
        )
    if references:
        parser.add_argument(
            "-r",
            "--refs",
            action="append",
            required=references_required,
            default=None,
            metavar="FILE",
            help="reference file, one segment a line; repeat for multiple references",
        )
    if sources:
        parser.add_argument("-s", "--srcs", default=None, metavar="FILE", help="source file, one segment a line")


# What --format accepts, printed by nlgscore.cli.output.emit.
FORMATS = ("text", "json", "tsv")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format text|json|tsv`` (``dest="format"``, default text) and ``--json``, its alias for json.

    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> add_format_option(parser)
    >>> parser.parse_args(["--json"]).format, parser.parse_args(["--format", "tsv"]).format
    ('json', 'tsv')
    """
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json (one object, null where there is no value) or tsv (a header, then one row per line)",
    )
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--seg`` (also every line's scores) and :func:`add_format_option`."""
    parser.add_argument("--seg", action="store_true", help="also print the scores of every line")
    add_format_option(parser)


def add_debug_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """``--quiet`` and ``--debug``, accepted before or after the command name."""
    # A subcommand's default would overwrite the value given before the command: suppress it there.
    default: Dict[str, Any] = {} if top_level else {"default": argparse.SUPPRESS}
    parser.add_argument("--quiet", action="store_true", help="no progress bars and no warnings on stderr", **default)
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error", **default)


def add_runtime_options(
    parser: argparse.ArgumentParser,
    *,
    batch_help: str = "most items per batch (default: token budget only)",
    tokens_help: str = "tokens per batch (default: the library's)",
    dtype: bool = True,
    batching: bool = True,
) -> None:
    """``--device``, ``--batch-size``/``--max-tokens``, ``--dtype``, ``--progress``/``--no-progress``,
    ``--quiet``, ``--debug``, spelled the same in every command."""
    if batching:
        parser.add_argument("-b", "--batch-size", type=positive_int, default=None, help=batch_help)
        parser.add_argument("--max-tokens", type=positive_int, default=None, help=tokens_help)
    parser.add_argument("--device", default=None, help="torch device, e.g. cpu or cuda:0 (default: cuda if available)")
    if dtype:
        parser.add_argument(
            "--dtype",
            default=None,
            choices=DTYPES,
            help="float32 (default: exact parity), bfloat16, float16, or auto (bfloat16 on a GPU, and on a CPU "
            "with native bf16 where a measurement at load shows it faster; else float32)",
        )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="progress bars on stderr, model loading included (default: on)",
    )
    add_long_inputs_option(parser)
    add_debug_options(parser)


def add_long_inputs_option(parser: argparse.ArgumentParser) -> None:
    """``--long-inputs auto|truncate|error`` (``dest="long_inputs"``, default: the metric's, auto).

    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> add_long_inputs_option(parser)
    >>> parser.parse_args(["--long-inputs", "truncate"]).long_inputs, parser.parse_args([]).long_inputs
    ('truncate', None)
    """
    parser.add_argument(
        "--long-inputs",
        dest="long_inputs",
        choices=LONG_INPUTS,
        default=None,
        help="a text longer than the model's limit: auto (default: every token counts, windows or "
        "sentence chunks), truncate (cut at the limit, as the reference implementations) or error",
    )


def long_input_settings(args: argparse.Namespace) -> Dict[str, Any]:
    """The metric option of :func:`add_long_inputs_option` where given (a metric keyword, not a run-time one).

    >>> long_input_settings(argparse.Namespace(long_inputs="error")), long_input_settings(argparse.Namespace())
    ({'long_inputs': 'error'}, {})
    """
    value = getattr(args, "long_inputs", None)
    return {} if value is None else {"long_inputs": value}


def add_metric_option(parser: argparse.ArgumentParser) -> None:
    """``-O/--option NAME=VALUE``, repeatable: any option of the metric's option table
    (:mod:`nlgscore.core.options`), under the name ``nlgscore.load`` takes.

    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> add_metric_option(parser)
    >>> parser.parse_args(["-O", "idf=true", "--option", "num_layers=4"]).option
    ['idf=true', 'num_layers=4']
    """
    parser.add_argument(
        "-O",
        "--option",
        action="append",
        default=None,
        metavar="NAME=VALUE",
        help="any option of the metric, as nlgscore.load takes it (repeatable): e.g. idf=true, "
        "rescale_with_baseline=true, prompt='Such as', prompt_side=decoder, lang=de; "
        "true/false, numbers, @FILE or a JSON list for lists of texts",
    )


def metric_option_settings(args: argparse.Namespace, spec: str, given: Dict[str, Any]) -> Dict[str, Any]:
    """``given`` (the command's own flags) with the ``--option`` values of the metric of ``spec``;
    an option the metric does not take, or one a flag already set to another value, ends the
    command naming it.

    >>> args = argparse.Namespace(option=["idf=true"])
    >>> metric_option_settings(args, "bertscore:minilm", {"device": "cpu"})
    {'device': 'cpu', 'idf': True}
    """
    texts = getattr(args, "option", None)
    if not texts:
        return dict(given)
    from nlgscore import registry
    from nlgscore.core.options import parse_assignments

    if registry.server_row(spec) is not None:
        fail("--option is set when the server starts (nlgscore serve SPEC --option ...), not for a URL")
    cls = registry.metric(registry.parse_spec(spec)[0]).scorer_class()
    try:
        options = parse_assignments(cls, texts)
    except (ValueError, TypeError) as err:
        fail(f"--option: {err}")
    out = dict(given)
    for name, value in options.items():
        # progress is always set by the flags (on unless --no-progress/--quiet): --option wins there
        if name != "progress" and name in out and out[name] is not None and out[name] != value:
            fail(f"--option {name}={value!r} contradicts the flag that set {name}={out[name]!r}")
        out[name] = value
    return out


def progress_enabled(args: argparse.Namespace) -> bool:
    """Whether to draw progress bars: on unless ``--no-progress`` or ``--quiet``.

    >>> progress_enabled(argparse.Namespace(progress=True, quiet=True))
    False
    """
    return bool(getattr(args, "progress", True)) and not getattr(args, "quiet", False)


def runtime_settings(args: argparse.Namespace) -> Dict[str, Any]:
    """The scorer options of ``add_runtime_options``: ``device``, ``batch_size``, ``max_tokens`` and
    ``dtype`` where given, and ``progress`` (:func:`progress_enabled`); and ``long_inputs`` where
    given (:func:`long_input_settings`: a metric option, kept apart so that it can move).

    >>> runtime_settings(argparse.Namespace(device="cpu", batch_size=None, max_tokens=512, dtype=None, progress=True))
    {'device': 'cpu', 'max_tokens': 512, 'progress': True}
    """
    given = {"device": args.device, "batch_size": args.batch_size, "max_tokens": args.max_tokens, "dtype": args.dtype}
    return {
        **{key: value for key, value in given.items() if value is not None},
        "progress": progress_enabled(args),
        **long_input_settings(args),
    }


def check_device(device: Optional[str], flag: str = "--device") -> Optional[str]:
    """Refuse a device this machine does not have, before any model loads (the library's one
    device policy, :func:`nlgscore.core.runtime.resolve_device`, with the message naming ``flag``).

    >>> check_device("cpu")
    'cpu'
    >>> check_device("cuda:7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.cli.options.UserError: --device cuda:7: CUDA is not available on this machine (use --device cpu)
    """
    if device is None:
        return None
    from nlgscore.core.runtime import resolve_device

    try:
        resolve_device(device)
    except NlgscoreError as err:
        fail(f"{flag} {device}: " + str(err).split(": ", 1)[-1].replace("device='cpu'", f"{flag} cpu"))
    return device


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf floats as ``None`` (JSON ``null``) and numpy values as Python ones.

    >>> json_safe({"f1": [0.5, float("nan")], "system": float("inf")})
    {'f1': [0.5, None], 'system': None}
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist"):
        return json_safe(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load_scorer(factory: Callable[[], Any], flags: Dict[str, Any]) -> Any:
    """``factory()`` (which loads a model), with a failure inside a library (a truncated
    ``model.safetensors``, a config field of the wrong type, a corrupt SentencePiece model, a
    refused weights file) reported as one line naming the command-line ``flags`` that chose it.

    Errors raised by nlgscore itself (:class:`NlgscoreError`) already name their argument and pass
    through unchanged, as does any error that did not come out of a model-loading library (a bug,
    or a user file such as a baseline that nlgscore reports itself).
    """
    try:
        return factory()
    except KeyboardInterrupt:
        raise
    except Exception as err:
        if hasattr(err, "for_flag") and flags:  # a model not available offline: name the command-line flag
            fail(str(err.for_flag(next(iter(flags)))))
        if isinstance(err, NlgscoreError) or not _raised_by_model_loader(err):
            raise
        given = " ".join(f"{flag} {value}" for flag, value in flags.items() if value is not None) or "the default model"
        cause = " ".join(str(err).split()) or type(err).__name__
        if isinstance(err, pickle.UnpicklingError):
            # torch's message suggests weights_only=False, which would run the file's code
            cause = "the file holds Python objects besides tensors; nlgscore loads plain weights only (loading it could run code)"
        fail(f"cannot load the model from {given}: {type(err).__name__}: {cause}")


# Libraries that read a model's files: an error inside one of them is about the model chosen.
_MODEL_LOADERS = (
    "/transformers/",
    "/safetensors/",
    "/sentencepiece/",
    "/tokenizers/",
    "/huggingface_hub/",
    "/torch/serialization.py",
    "/google/protobuf/",
)


def _raised_by_model_loader(err: BaseException) -> bool:
    frame = err.__traceback__
    while frame is not None:
        path = frame.tb_frame.f_code.co_filename.replace("\\", "/")
        if any(part in path for part in _MODEL_LOADERS):
            return True
        frame = frame.tb_next
    return False
