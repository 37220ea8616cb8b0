"""Model loading, serialised and quiet: every loader of the package runs inside :func:`model_loading`.

transformers' loading is not thread-safe: ``from_pretrained`` builds the model on the ``meta``
device by patching torch process-wide, and its lazy module imports race. Four threads building
scorers at once left the process unable to load any other model ("Cannot copy out of meta
tensor"), and in a cold process three of four threads failed with "cannot import name
'AutoConfig'". One process-wide re-entrant lock around every load (imports included) lets
scorers be built from a thread pool or a web server; scoring itself runs outside the lock.

transformers draws a "Loading weights" progress bar; a library call, a meta run or a CLI run
with ``--no-progress`` must not write to the terminal, so the bar is off unless ``progress``, and
off where stderr draws no bars (a pipe or a log file: :func:`nlgscore.backend.progress.draws_bars`).

>>> with model_loading():
...     from transformers import AutoConfig
>>> AutoConfig.__name__
'AutoConfig'
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Any, Iterator

logger = logging.getLogger(__name__)

# Re-entrant: a loader may call another loader (e.g. an encoder inside a wider load).
_LOAD_LOCK = threading.RLock()


@contextmanager
def model_loading(progress: bool = False) -> Iterator[None]:
    """Hold the process-wide model-loading lock; transformers' progress bars on only if ``progress``
    (and stderr draws bars)."""
    from nlgscore.backend.progress import draws_bars

    progress = bool(progress) and draws_bars()
    with _LOAD_LOCK:
        from transformers.utils import logging as hf_logging

        was_on = hf_logging.is_progress_bar_enabled()
        if progress != was_on:
            (hf_logging.enable_progress_bar if progress else hf_logging.disable_progress_bar)()
        try:
            yield
        finally:
            if progress != was_on:
                (hf_logging.enable_progress_bar if was_on else hf_logging.disable_progress_bar)()


def load_with_sdpa(auto_class: Any, path: str, torch_dtype: Any, name: str = "", **kwargs: Any) -> Any:
    """``auto_class.from_pretrained(path, dtype=torch_dtype, **kwargs)`` with SDPA attention where
    the architecture supports it (same numbers, less memory); call it inside :func:`model_loading`."""
    try:
        return auto_class.from_pretrained(path, dtype=torch_dtype, attn_implementation="sdpa", **kwargs)
    except (ValueError, ImportError) as err:  # architectures without SDPA support
        logger.info("SDPA attention unavailable for %s (%s); using the default attention", name or path, err)
        return auto_class.from_pretrained(path, dtype=torch_dtype, **kwargs)
