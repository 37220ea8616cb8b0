"""Constants of the package, stored once as JSON data under ``nlgscore/data/``.

>>> table("bertscore_lang2model")["en"]
'roberta-large'
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

DATA_PACKAGE = "nlgscore.data"


@lru_cache(maxsize=None)
def table(name: str) -> Any:
    """The parsed content of ``nlgscore/data/<name>.json``: cached, so treat it as read-only.

    Args:
        name: the table's file name, without ``.json``.

    Returns:
        The JSON value (a dict or list).

    Raises:
        KeyError: no table of that name.

    Example:
        >>> table("bertscore_lang2model")["en"]
        'roberta-large'
    """
    path = resources.files(DATA_PACKAGE).joinpath(f"{name}.json")
    if not path.is_file():
        raise KeyError(f"no data table named {name!r} in {DATA_PACKAGE}")
    with path.open("r", encoding="utf-8") as handle:
        return json.load(handle)


def text_lines(name: str) -> list[str]:
    """Return the non-empty lines of ``nlgscore/data/<name>.txt`` (prompt lists and the like)."""
    path = resources.files(DATA_PACKAGE).joinpath(f"{name}.txt")
    if not path.is_file():
        raise KeyError(f"no text table named {name!r} in {DATA_PACKAGE}")
    return [line.rstrip("\n") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
