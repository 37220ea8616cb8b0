"""Files the package reads from the Hugging Face Hub: rescale baselines (models: see models.py).

Baselines live in a dataset repo in the reference package's ``<lang>/<model>.tsv`` layout
(repo id in ``nlgscore/data/hub.json``). Downloads go through ``hf_hub_download``, so the
Hub cache, ``HF_HUB_OFFLINE`` and ``HF_ENDPOINT`` apply.
"""

from __future__ import annotations

import logging
from typing import Optional, Tuple

from nlgscore.tables import table

logger = logging.getLogger(__name__)


def baseline_filename(lang: str, model_name: str) -> str:
    """Path of a baseline inside the repo; model ids with '/' become sub-folders as in bert_score."""
    return f"{lang}/{model_name}.tsv"


def fetch_baseline(
    lang: str, model_name: str, repo_id: Optional[str] = None, revision: Optional[str] = None
) -> Optional[Tuple[str, str]]:
    """Local path of the baseline file for (lang, model) from the Hub repo, or None if unavailable.

    Returns ``(path, source)`` where ``source`` is ``hub:<repo>@<revision>`` for the signature.
    Unavailable (offline and not cached, no such file, Hub unreachable) gives None so that the
    caller can fall back to the copies shipped with the package; the reason is logged.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled, RepositoryNotFoundError

    hub = table("hub")
    repo_id = repo_id or hub["baseline_repo_id"]
    revision = revision or hub["baseline_revision"]
    filename = baseline_filename(lang, model_name)
    try:
        path = hf_hub_download(repo_id, filename, repo_type=hub["baseline_repo_type"], revision=revision)
    except (EntryNotFoundError, RepositoryNotFoundError, LocalEntryNotFoundError, OfflineModeIsEnabled, HfHubHTTPError, OSError, ValueError) as err:
        logger.info("baseline %s not available from %s@%s: %s: %s", filename, repo_id, revision, type(err).__name__, err)
        return None
    return path, f"hub:{repo_id}@{revision}"
