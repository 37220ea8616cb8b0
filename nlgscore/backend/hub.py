"""Files the package reads from the Hugging Face Hub: rescale baselines (models: see models.py).

Rescale baselines come from the copies shipped in the wheel (``nlgscore.baselines``) unless a Hub
dataset repo of baselines is configured, because whoever controls a repo read at a moving branch
could change every rescaled number. A repo is read only when

* ``NLGSCORE_BASELINE_REPO=owner/name[@revision]`` names one (``@revision``: a commit, tag or
  branch; without it the repo's default branch, whose commit the signature then records), or
* ``nlgscore/data/hub.json`` records ``baseline_commit``: a 40-hex commit of the project's repo
  ``baseline_repo_id`` (published by ``scripts/push_to_hub.py baselines``), never a branch.

``NLGSCORE_BASELINE_REPO=none`` turns a recorded commit off again. The repo has the reference
package's ``<lang>/<model>.tsv`` layout. Downloads go through ``hf_hub_download``, so the Hub
cache, ``HF_HUB_OFFLINE`` and ``HF_ENDPOINT`` apply; with nothing configured no Hub request is made.

>>> configured_baseline_repo({}, {"baseline_repo_id": "nlgscore/rescale-baselines", "baseline_commit": None}) is None
True
>>> configured_baseline_repo({ENV_REPO: "me/baselines@v2"})
('me/baselines', 'v2')
"""

from __future__ import annotations

import logging
import re
from pathlib import PurePath
from typing import Any, Mapping, Optional, Tuple

from nlgscore import envs
from nlgscore.backend.tables import table
from nlgscore.errors import ArgumentError, DataError

logger = logging.getLogger(__name__)

ENV_REPO = envs.BASELINE_REPO.name
# owner/name as the Hub spells repo ids; the revision after '@' is passed to the Hub as is.
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_BRANCH = "main"


def baseline_filename(lang: str, model_name: str) -> str:
    """Path of a baseline inside the repo; model ids with '/' become sub-folders as in bert_score."""
    return f"{lang}/{model_name}.tsv"


def configured_baseline_repo(
    environ: Optional[Mapping[str, str]] = None, hub: Optional[Mapping[str, Any]] = None
) -> Optional[Tuple[str, str]]:
    """The Hub repo of rescale baselines to read, as ``(repo_id, revision)``, or None: shipped copies only.

    The one place ``NLGSCORE_BASELINE_REPO`` (:data:`nlgscore.envs.BASELINE_REPO`) is parsed; it is
    read at each look-up, so a process can switch sources between scorers.

    Args:
        environ: The environment to read (default: this process's).
        hub: The ``hub`` data table (default: ``nlgscore/data/hub.json``).

    Returns:
        ``(repo_id, revision)`` from the environment variable, else the project's repo at the
        commit recorded in ``hub.json``, else None.

    Raises:
        ArgumentError: ``NLGSCORE_BASELINE_REPO`` is not ``owner/name[@revision]`` (or ``none``).
        DataError: ``hub.json``'s ``baseline_commit`` is set but is not a 40-hex commit.

    Example:
        >>> configured_baseline_repo({ENV_REPO: "none"}, {"baseline_repo_id": "o/r", "baseline_commit": "0" * 40})
        >>> configured_baseline_repo({}, {"baseline_repo_id": "o/r", "baseline_commit": "0" * 40})[0]
        'o/r'
    """
    value = envs.BASELINE_REPO.get(environ) or ""
    if value.lower() == "none":
        return None
    if value:
        repo_id, at, revision = value.partition("@")
        if not REPO_ID.match(repo_id) or (at and not revision.strip()):
            raise ArgumentError(
                f"{ENV_REPO} must be owner/name or owner/name@revision (a Hub dataset repo of rescale "
                f"baselines), or none; got {value!r}"
            )
        return repo_id, revision.strip() or DEFAULT_BRANCH
    hub = table("hub") if hub is None else hub
    commit = hub.get("baseline_commit")
    if commit is None:
        return None
    if not isinstance(commit, str) or not COMMIT.match(commit):
        raise DataError(
            f"nlgscore/data/hub.json: baseline_commit must be a 40-hex commit of {hub['baseline_repo_id']} "
            f"(a branch would let the repo change rescaled numbers), got {commit!r}"
        )
    return hub["baseline_repo_id"], commit


def describe_baseline_repo(where: Optional[Tuple[str, str]]) -> str:
    """Where baselines were looked for on the Hub, in words, for an error listing the places searched.

    Args:
        where: What :func:`configured_baseline_repo` returned.

    Returns:
        The repo and revision, or that the Hub was not consulted and why.

    Example:
        >>> describe_baseline_repo(None)
        'the Hub (not consulted: NLGSCORE_BASELINE_REPO is not set)'
        >>> describe_baseline_repo(("me/baselines", "main"))
        "the Hub dataset 'me/baselines' at 'main'"
    """
    if where is None:
        return f"the Hub (not consulted: {ENV_REPO} is not set)"
    return f"the Hub dataset {where[0]!r} at {where[1]!r}"


def fetch_baseline(
    lang: str, model_name: str, repo_id: Optional[str] = None, revision: Optional[str] = None
) -> Optional[Tuple[str, str]]:
    """Local path of the baseline file for (lang, model) from the Hub repo, or None if unavailable.

    Args:
        lang: Language folder of the repo.
        model_name: Model name (a '/' in it is a sub-folder).
        repo_id: Repo to read; default: :func:`configured_baseline_repo` (none configured: None,
            without any Hub request).
        revision: Commit, tag or branch of ``repo_id`` (default: the default branch).

    Returns:
        ``(path, source)`` where ``source`` is ``hub:<repo>@<commit>`` for the signature: the
        commit of the cached snapshot, so a moving branch such as ``main`` is pinned in the
        record. None when no repo is configured or the file is unavailable (offline and not
        cached, no such file, Hub unreachable), so that the caller falls back to the copies
        shipped with the package; the reason is logged.
    """
    if repo_id is None:
        configured = configured_baseline_repo()
        if configured is None:
            return None
        repo_id, revision = configured[0], revision or configured[1]
    revision = revision or DEFAULT_BRANCH

    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    filename = baseline_filename(lang, model_name)
    where = dict(repo_type=table("hub")["baseline_repo_type"], revision=revision)
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
