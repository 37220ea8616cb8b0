"""Corpora read lazily, one row at a time: text files, JSONL, TSV/CSV, Parquet, 🤗 ``datasets``.

Every reader returns an :class:`Inputs`: ``rows()`` yields ``(prediction, reference, source)``
tuples in input order (``reference`` is a string, a list of strings for several references, or
None; ``source`` a string or None) without holding the corpus in memory, and ``identity()``
names the files read with their size and content hash (what a resumable run checks). Named pipes
and process substitution (``<(...)``) are read as streams, once, like stdin: they are not hashed
(a resumable run checks their rows as it reads them, :mod:`nlgscore.stream.to_file`).
A malformed row is a :class:`~nlgscore.errors.DataError` naming ``file:line`` and the column.

>>> corpus = lists(["a cat", "a dog"], references=[["the cat", "cat"], "the dog"])
>>> list(corpus.rows())
[('a cat', ['the cat', 'cat'], None), ('a dog', 'the dog', None)]
>>> next(table_file("examples/cands.txt", format="text", prediction_column="text").rows())[0]
'The cat sat on the mat.'
"""

from __future__ import annotations

import csv
import hashlib
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union, cast

from nlgscore.corpus.outputs.jsonl import json_records
from nlgscore.errors import ArgumentError, DataError

Row = Tuple[str, Union[str, List[str], None], Optional[str]]
STDIN = "-"
FORMATS = ("text", "jsonl", "tsv", "csv", "parquet")
_SUFFIXES = {".txt": "text", ".jsonl": "jsonl", ".ndjson": "jsonl", ".tsv": "tsv", ".csv": "csv", ".parquet": "parquet"}
HASH_BLOCK = 1 << 20
PARQUET_BATCH = 4096  # rows per Arrow record batch read from a Parquet file


class Inputs:
    """A corpus: ``rows()`` (a fresh iterator each call), ``identity()``, and which sides it has.

    The readers (:func:`text_files`, :func:`table_file`, :func:`dataset`, :func:`lists`) make
    one; a corpus of another shape is an ``Inputs`` of its own ``rows`` function.

    Args:
        rows: returns a fresh iterator of ``(prediction, reference, source)`` rows in input
            order (``reference`` a string, a list of strings, or None; ``source`` a string or None).
        files: the ``(role, path)`` pairs read, which :meth:`identity` hashes.
        references: whether the rows hold references.
        sources: whether the rows hold sources.
        label: names the corpus in messages.
        fingerprint: a dataset's content fingerprint, part of :meth:`identity`.

    Example:
        >>> corpus = Inputs(lambda: iter([("a cat", "the cat", None)]), references=True, sources=False)
        >>> list(corpus.rows()), corpus.identity()
        ([('a cat', 'the cat', None)], {})
    """

    def __init__(
        self,
        rows: Callable[[], Iterator[Row]],
        *,
        files: Sequence[Tuple[str, str]] = (),
        references: bool,
        sources: bool,
        label: str = "",
        fingerprint: Optional[str] = None,
    ) -> None:
        self._rows = rows
        self.files = list(files)  # (role, path) pairs
        self.has_references = references
        self.has_sources = sources
        self.label = label
        self.fingerprint = fingerprint

    def rows(self) -> Iterator[Row]:
        """A fresh iterator of the corpus's ``(prediction, reference, source)`` rows, read lazily."""
        return self._rows()

    def identity(self) -> Dict[str, str]:
        """``{"<role> <path>": "size=<bytes> sha256=<hex>"}`` per file (read in blocks, not held);
        a dataset's fingerprint where it has one; stdin has none (rows are hashed as they are read)."""
        out: Dict[str, str] = {}
        for role, path in self.files:
            if path == STDIN:
                out[f"{role} <stdin>"] = "not hashed"
                continue
            if not is_regular_file(path):  # a FIFO, `<(...)`: reading it to hash it would consume it
                out[f"{role} {path}"] = "a pipe: not hashed"
                continue
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(HASH_BLOCK), b""):
                    digest.update(block)
            out[f"{role} {path}"] = f"size={Path(path).stat().st_size} sha256={digest.hexdigest()}"
        if self.fingerprint is not None:
            out[f"dataset {self.label}"] = f"fingerprint={self.fingerprint}"
        return out


def _check_file(path: str, role: str) -> None:
    """A path that can be read as a stream: a file, ``-``, or a named pipe / process substitution
    (``-c <(zcat cands.gz)`` passes ``/dev/fd/63``, a pipe, not a regular file)."""
    if path == STDIN:
        return
    target = Path(path)
    if target.is_dir():
        raise ArgumentError(f"{role} {path} is a folder, not a file")
    if not target.exists():
        raise ArgumentError(f"{role} file not found: {path}")


def is_regular_file(path: str) -> bool:
    """True for a file on disk, False for stdin, a named pipe or a process substitution (read once).

    >>> is_regular_file("examples/cands.txt"), is_regular_file("-")
    (True, False)
    """
    import stat

    try:
        return path != STDIN and stat.S_ISREG(Path(path).stat().st_mode)
    except OSError:
        return False


def _binary_lines(path: str) -> Iterator[bytes]:
    if path == STDIN:
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # a text-only stdin (IDLE, some notebook kernels): back to UTF-8 bytes
            yield from (line.encode("utf-8", "surrogatepass") for line in sys.stdin)
        else:
            yield from buffer
        return
    with open(path, "rb") as handle:
        yield from handle


def text_lines(path: str, role: str = "input") -> Iterator[str]:
    """Lines of a UTF-8 file as they are read (split on ``\\n`` only, ``\\r\\n`` accepted, a BOM
    dropped); ``-`` is stdin. Not UTF-8 (or UTF-16) is an error naming ``file:line``.

    >>> next(text_lines("examples/refs.txt", "reference"))
    'A cat was sitting on the mat.'
    """
    _check_file(path, role)
    name = "<stdin>" if path == STDIN else path
    for number, raw in enumerate(_binary_lines(path), start=1):
        if number == 1:
            if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise DataError(f"{role} file {name} is UTF-16; convert it to UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)")
            raw = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataError(
                f"{role} file {name}:{number} is not UTF-8: byte {err.start} ({raw[err.start : err.start + 1]!r})"
            ) from None
        line = line[:-1] if line.endswith("\n") else line
        yield line[:-1] if line.endswith("\r") else line


def text_files(candidates: str, references: Sequence[str] = (), sources: Optional[str] = None) -> Inputs:
    """Aligned text files, one segment a line; ``-`` is stdin (once).

    Args:
        candidates: the candidates file.
        references: any number of reference files aligned with it (several give each candidate a
            list of references).
        sources: a sources file aligned with it.

    Returns:
        The corpus; reading it raises a ``DataError`` where the files' line counts differ.

    Raises:
        ArgumentError: more than one ``-``, or a file that does not exist.

    Example:
        >>> corpus = text_files("examples/cands.txt", ["examples/refs.txt", "examples/refs2.txt"])
        >>> prediction, refs, source = next(corpus.rows())
        >>> len(refs), source
        (2, None)
    """
    paths = (
        [("candidates", candidates)]
        + [("references", r) for r in references]
        + ([("sources", sources)] if sources else [])
    )
    if sum(path == STDIN for _, path in paths) > 1:
        raise ArgumentError("only one input can be '-' (stdin)")
    for role, path in paths:
        _check_file(path, role)

    def rows() -> Iterator[Row]:
        iterators = [text_lines(path, role) for role, path in paths]
        count = 0
        sentinel = object()
        while True:
            line = [next(it, sentinel) for it in iterators]
            if all(value is sentinel for value in line):
                return
            ended = [paths[k][1] for k, value in enumerate(line) if value is sentinel]
            if ended:
                longer = next(paths[k][1] for k, value in enumerate(line) if value is not sentinel)
                raise DataError(f"{ended[0]} has {count} lines but {longer} has more")
            count += 1
            texts = cast(List[str], line)  # no sentinel left: every iterator gave a line
            refs = texts[1 : 1 + len(references)]
            ref: Union[str, List[str], None] = (refs[0] if len(refs) == 1 else list(refs)) if refs else None
            yield texts[0], ref, (texts[-1] if sources else None)

    return Inputs(rows, files=paths, references=bool(references), sources=bool(sources), label=candidates)


def _text(value: Any, column: str, where: str, allow_list: bool = False) -> Any:
    if isinstance(value, str):
        return value
    if allow_list and isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    wanted = "a string or a non-empty list of strings" if allow_list else "a string"
    raise DataError(f"{where}: column {column!r} must hold {wanted}, got {type(value).__name__} {str(value)[:60]!r}")


def _from_records(
    records: Iterable[Tuple[str, Dict[str, Any]]], prediction: str, references: Sequence[str], source: Optional[str]
) -> Iterator[Row]:
    """Rows from ``(where, record)`` pairs, ``where`` naming the file and line for errors."""
    wanted = [prediction, *references, *([source] if source else [])]
    for where, record in records:
        missing = [c for c in wanted if c not in record]
        if missing:
            raise DataError(f"{where}: no column {missing[0]!r} (columns: {', '.join(map(str, record))})")
        refs = [_text(record[c], c, where, allow_list=len(references) == 1) for c in references]
        ref = (refs[0] if len(refs) == 1 else refs) if refs else None
        yield (
            _text(record[prediction], prediction, where),
            ref,
            (_text(record[source], source, where) if source else None),
        )


def _delimited_records(path: str, delimiter: str) -> Iterator[Tuple[str, Dict[str, Any]]]:
    lines = text_lines(path, "input")
    if delimiter == "\t":  # TSV: no quoting, a tab never occurs inside a field
        split: Callable[[str], List[str]] = lambda line: line.split("\t")  # noqa: E731
        header = split(next(lines, ""))
        numbered: Iterator[Tuple[int, List[str]]] = ((n, split(line)) for n, line in enumerate(lines, start=2))
    else:  # CSV: quoted fields may hold newlines, so the csv module reads from the line stream
        allow_large_csv_fields()
        reader = csv.reader(_joined(lines))
        header = next(reader, [])
        numbered = ((reader.line_num, fields) for fields in reader)
    if not header or header == [""]:
        raise DataError(f"{path}: empty file, expected a header line naming the columns")
    repeated = next((name for k, name in enumerate(header) if name in header[:k]), None)
    if repeated is not None:  # a dict of the row would keep only the last one: the wrong text, silently
        raise DataError(
            f"{path}:1: column {repeated!r} appears {header.count(repeated)} times in the header; column names must be distinct"
        )
    for number, fields in numbered:
        if fields == [""] or not fields:
            continue
        if len(fields) != len(header):
            raise DataError(f"{path}:{number}: {len(fields)} fields but the header has {len(header)}")
        yield f"{path}:{number}", dict(zip(header, fields, strict=True))


def allow_large_csv_fields() -> int:
    """Raise the csv module's field limit (131,072 characters by default, a document or a long
    reference is more) to the largest the platform accepts; returns it.

    >>> allow_large_csv_fields() > 200_000
    True
    """
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return limit
        except OverflowError:  # a C long is 32 bits on some platforms (Windows)
            limit //= 2


def _joined(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        yield line + "\n"


def _parquet_records(path: str, columns: List[str]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    import pyarrow  # a dependency of datasets, so always installed
    import pyarrow.parquet as parquet

    def unreadable(err: Exception) -> DataError:
        cause = " ".join(str(err).split()) or type(err).__name__
        return DataError(f"{path}: not a readable Parquet file ({cause}); an empty, truncated or mis-named file?")

    try:
        handle = parquet.ParquetFile(path)
        names = handle.schema_arrow.names
    except (pyarrow.ArrowException, OSError) as err:  # 0 bytes, no magic bytes (a text file), a cut footer
        raise unreadable(err) from None
    missing = [c for c in columns if c not in names]
    if missing:
        raise DataError(f"{path}: no column {missing[0]!r} (columns: {', '.join(names)})")
    row = 0
    batches = handle.iter_batches(batch_size=PARQUET_BATCH, columns=columns)
    while True:
        try:
            batch = next(batches, None)
        except (pyarrow.ArrowException, OSError) as err:  # a row group cut or corrupted
            raise unreadable(err) from None
        if batch is None:
            return
        data = batch.to_pydict()
        for k in range(batch.num_rows):
            row += 1
            yield f"{path}: row {row}", {c: data[c][k] for c in columns}


def guess_format(path: str) -> str:
    """The format named by the file's extension.

    >>> guess_format("corpus.jsonl"), guess_format("scores.tsv")
    ('jsonl', 'tsv')
    """
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise ArgumentError(f"cannot tell the format of {path} from its extension; give one of {', '.join(FORMATS)}")
    return _SUFFIXES[suffix]


def table_file(
    path: str,
    *,
    format: Optional[str] = None,
    prediction_column: str = "prediction",
    reference_column: Union[str, Sequence[str], None] = "reference",
    source_column: Optional[str] = None,
) -> Inputs:
    """A file of rows: JSONL (one object a line), TSV/CSV (header line), Parquet, or ``text`` (one
    prediction a line; then the references/sources must come from elsewhere).

    Args:
        path: the file (``-``: stdin).
        format: ``text``, ``jsonl``, ``tsv``, ``csv`` or ``parquet``; None: from the extension.
        prediction_column: the column of the predictions.
        reference_column: one column (holding a string or a list of references), several (one
            reference each), or None for a corpus without references.
        source_column: the column of the sources, if any.

    Returns:
        The corpus; a malformed row raises a ``DataError`` naming ``file:line`` and the column
        when it is read.

    Raises:
        ArgumentError: an unknown format, or a file that does not exist.

    Example:
        >>> next(table_file("examples/cands.txt", format="text").rows())
        ('The cat sat on the mat.', None, None)
    """
    fmt = format or guess_format(path)
    if fmt not in FORMATS:
        raise ArgumentError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    _check_file(path, "input")
    if fmt == "text":
        return Inputs(
            lambda: ((line, None, None) for line in text_lines(path, "input")),
            files=[("input", path)],
            references=False,
            sources=False,
            label=path,
        )
    refs = [reference_column] if isinstance(reference_column, str) else list(reference_column or [])
    columns = [prediction_column, *refs, *([source_column] if source_column else [])]
    records: Callable[[], Iterator[Tuple[str, Dict[str, Any]]]] = {
        "jsonl": lambda: json_records(text_lines(path, "input"), path),
        "tsv": lambda: _delimited_records(path, "\t"),
        "csv": lambda: _delimited_records(path, ","),
        "parquet": lambda: _parquet_records(path, columns),
    }[fmt]
    return Inputs(
        lambda: _from_records(records(), prediction_column, refs, source_column),
        files=[("input", path)],
        references=bool(refs),
        sources=bool(source_column),
        label=path,
    )


def dataset(
    data: Any,
    *,
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    batch_size: int = 1000,
) -> Inputs:
    """A 🤗 ``datasets.Dataset`` or ``IterableDataset`` (``streaming=True``), read ``batch_size``
    rows at a time (also any re-iterable of dict rows). Column names are those of ``map_function``.

    Args:
        data: the dataset, or a re-iterable of dict rows.
        prediction_column: the column of the predictions.
        reference_column: the column of the references (a string or a list each); None: none.
        source_column: the column of the sources, if any.
        batch_size: rows read at a time from a dataset.

    Returns:
        The corpus; its identity holds the dataset's fingerprint where it has one.

    Example:
        >>> import datasets
        >>> ds = datasets.Dataset.from_dict({"prediction": ["a cat"], "reference": ["the cat"]})
        >>> list(dataset(ds).rows())
        [('a cat', 'the cat', None)]
    """
    refs = [reference_column] if reference_column else []
    label = getattr(data, "info", None) and getattr(data.info, "dataset_name", None) or type(data).__name__

    def records() -> Iterator[Tuple[str, Dict[str, Any]]]:
        if hasattr(data, "iter"):
            row = 0
            for batch in data.iter(batch_size=batch_size):
                for k in range(len(batch[prediction_column]) if prediction_column in batch else 1):
                    row += 1
                    yield f"{label}: row {row}", {name: values[k] for name, values in batch.items()}
        else:
            for row, record in enumerate(data, start=1):
                yield f"{label}: row {row}", record

    return Inputs(
        lambda: _from_records(records(), prediction_column, refs, source_column),
        references=bool(refs),
        sources=bool(source_column),
        label=str(label),
        fingerprint=getattr(data, "_fingerprint", None),
    )


def lists(
    predictions: Sequence[str], references: Optional[Sequence[Any]] = None, sources: Optional[Sequence[str]] = None
) -> Inputs:
    """In-memory lists, as ``compute`` takes them (for tests and small corpora).

    Args:
        predictions: the predictions.
        references: one reference per prediction (a string or a list), or None.
        sources: one source per prediction, or None.

    Returns:
        The corpus.

    Raises:
        ArgumentError: lists of different lengths.

    Example:
        >>> list(lists(["a cat"], references=[["the cat", "cat"]]).rows())
        [('a cat', ['the cat', 'cat'], None)]
    """
    n = len(predictions)
    for name, values in (("references", references), ("sources", sources)):
        if values is not None and len(values) != n:
            raise ArgumentError(f"{name} has {len(values)} items but predictions has {n}")

    def rows() -> Iterator[Row]:
        for k in range(n):
            ref = references[k] if references is not None else None
            yield (
                predictions[k],
                (list(ref) if isinstance(ref, (list, tuple)) else ref),
                (sources[k] if sources is not None else None),
            )

    return Inputs(rows, references=references is not None, sources=sources is not None, label="lists")
