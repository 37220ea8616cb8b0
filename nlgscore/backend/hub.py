"""Files the package reads from the Hugging Face Hub: rescale baselines (models: see models.py).

Baselines live in a dataset repo in the reference package's ``<lang>/<model>.tsv`` layout
(repo id in ``nlgscore/data/hub.json``). Downloads go through ``hf_hub_download``, so the
Hub cache, ``HF_HUB_OFFLINE`` and ``HF_ENDPOINT`` apply.
"""

from __future__ import annotations

import logging
from pathlib import PurePath
from typing import Optional, Tuple

from nlgscore.backend.tables import table

logger = logging.getLogger(__name__)


def baseline_filename(lang: str, model_name: str) -> str:
    """Path of a baseline inside the repo; model ids with '/' become sub-folders as in bert_score."""
    return f"{lang}/{model_name}.tsv"


def fetch_baseline(
    lang: str, model_name: str, repo_id: Optional[str] = None, revision: Optional[str] = None
) -> Optional[Tuple[str, str]]:
    """Local path of the baseline file for (lang, model) from the Hub repo, or None if unavailable.

    Returns ``(path, source)`` where ``source`` is ``hub:<repo>@<commit>`` for the signature: the
    commit of the cached snapshot, so a moving branch such as ``main`` is pinned in the record.
    Unavailable (offline and not cached, no such file, Hub unreachable) gives None so that the
    caller can fall back to the copies shipped with the package; the reason is logged.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    hub = table("hub")
    repo_id = repo_id or hub["baseline_repo_id"]
    revision = revision or hub["baseline_revision"]
    filename = baseline_filename(lang, model_name)
    where = dict(repo_type=hub["baseline_repo_type"], revision=revision)
    try:
        # hf_hub_download retries an unreachable Hub for ~25 s when nothing is cached; one quick
        # probe first lets a down Hub fall straight through to the cache or the shipped copy.
        local_only = not hub_reachable(repo_id, filename=filename, **where)
        path = hf_hub_download(repo_id, filename, local_files_only=local_only, **where)
    except (
        EntryNotFoundError,
        RepositoryNotFoundError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        HfHubHTTPError,
        OSError,
        ValueError,
    ) as err:
        logger.info(
            "baseline %s not available from %s@%s: %s: %s", filename, repo_id, revision, type(err).__name__, err
        )
        return None
    return path, f"hub:{repo_id}@{snapshot_commit(path, filename) or revision}"


def hub_reachable(
    repo_id: str, repo_type: str = "model", revision: Optional[str] = None, filename: Optional[str] = None
) -> bool:
    """One request with a short timeout and no retries: False when the Hub cannot answer now.

    huggingface_hub's own calls either retry for ~25 s (``hf_hub_download`` with nothing cached)
    or have no timeout at all (the repo listing in ``snapshot_download``), so a Hub that is down
    or stalls would hold a scoring run; probing first lets callers go straight to the cache.
    The timeout is ``HF_HUB_ETAG_TIMEOUT`` (10 s unless set). "Not found" answers are raised:
    the Hub is up and says the repo, revision or file is not there.
    """
    from huggingface_hub import HfApi, constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    timeout = constants.HF_HUB_ETAG_TIMEOUT
    try:
        if filename is not None:
            get_hf_file_metadata(hf_hub_url(repo_id, filename, repo_type=repo_type, revision=revision), timeout=timeout)
        else:
            HfApi().repo_info(repo_id, repo_type=repo_type, revision=revision, timeout=timeout)
    except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
        raise
    except Exception as err:
        logger.info("Hub not reachable for %s (%s: %s); using the local cache only", repo_id, type(err).__name__, err)
        return False
    return True


def snapshot_commit(path: str, filename: str) -> Optional[str]:
    """Commit hash of a file in the Hub cache layout ``.../snapshots/<commit>/<filename>``.

    >>> snapshot_commit("/c/datasets--o--r/snapshots/0123abc/en/m.tsv", "en/m.tsv")
    '0123abc'
    >>> snapshot_commit("/elsewhere/en/m.tsv", "en/m.tsv") is None
    True
    """
    parts = PurePath(path).parts
    depth = len(PurePath(filename).parts)
    if len(parts) > depth + 1 and parts[-depth - 2] == "snapshots":
        return parts[-depth - 1]
    return None
