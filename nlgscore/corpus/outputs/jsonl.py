"""JSON Lines records with errors that name ``file:line`` (one parser for every JSONL reader).

>>> [(where, record) for where, record in json_records(['{"a": 1}', "", '{"b": 2}'], "x.jsonl")]
[('x.jsonl:1', {'a': 1}), ('x.jsonl:3', {'b': 2})]
>>> list(json_records(["[1, 2]"], "x.jsonl"))
Traceback (most recent call last):
...
nlgscore.errors.DataError: x.jsonl:1: each line must be a JSON object, got list
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, Iterator, Tuple

from nlgscore.errors import DataError


def json_records(lines: Iterable[str], name: str) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """``(where, record)`` per non-blank line of ``lines`` (the file ``name``), ``where`` being
    ``name:line``; a line that is not a JSON object is a :class:`DataError` naming it."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
        if not isinstance(record, dict):
            raise DataError(f"{where}: each line must be a JSON object, got {type(record).__name__}")
        yield where, record
