"""A tiny stand-in for the Hugging Face Hub, served on 127.0.0.1, for tests of the real client.

It answers the endpoints huggingface_hub 2.x uses for downloads and uploads, with the headers the
client checks (``X-Repo-Commit``, ``ETag``, ``X-Error-Code``), so that ``snapshot_download``,
``hf_hub_download``, ``create_repo`` and ``create_commit``/``upload_folder`` run unchanged:

* ``GET /api/{models,datasets,spaces}/{repo}[/revision/{rev}]`` repo info (commit sha, siblings)
* ``GET /api/{type}s/{repo}/tree/{rev}``                        file listing
* ``HEAD``/``GET /[datasets/|spaces/]{repo}/resolve/{rev}/{path}`` file metadata / content
* ``POST /api/repos/create``, ``/api/validate-yaml``, ``/api/{type}s/{repo}/preupload/{rev}``, ``.../commit/{rev}``

Only 127.0.0.1 is bound, and the server shuts itself down after ``lifetime`` seconds, so a test
that forgets to stop it cannot leave it running.

>>> with HubServer() as hub:
...     hub.add_repo("org/x", {"a.txt": b"hi"})["sha"] == hub.repo("org/x")["sha"]
True
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote, urlsplit

_API = re.compile(r"^/api/(models|datasets|spaces)/(.+?)/(revision|tree|preupload|commit)/([^/]+)(?:/.*)?$")
_INFO = re.compile(r"^/api/(models|datasets|spaces)/([^/]+(?:/[^/]+)?)$")  # repo info at the default branch
_RESOLVE = re.compile(r"^/(?:(datasets|spaces)/)?(.+?)/resolve/([^/]+)/(.+)$")


def git_blob_sha(content: bytes) -> str:
    """The id git (and the Hub's ETag for non-LFS files) gives a file's content."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def folder_files(folder: Path) -> Dict[str, bytes]:
    """Every file under ``folder`` by its posix path relative to it."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class HubServer:
    """In-memory repos served over HTTP; use as a context manager (``endpoint`` is the URL)."""

    def __init__(self, lifetime: float = 120.0) -> None:
        self.repos: Dict[Tuple[str, str], dict] = {}
        self.requests: List[Tuple[str, str]] = []  # (method, path) of every request, for assertions
        self.stall = 0.0  # seconds to wait before each answer: a Hub that accepts but does not reply
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True
        self._stopped = False

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "HubServer":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop answering; later connections are refused (a Hub outage, as the client sees it)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._timer.cancel()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add_repo(self, repo_id: str, files: Dict[str, bytes], repo_type: str = "model") -> dict:
        """Create (or replace) a repo holding ``files``; returns its record (``sha`` is the commit)."""
        repo = {"files": dict(files), "sha": "", "history": []}
        self.repos[(repo_type, repo_id)] = repo
        self._commit(repo)
        return repo

    def repo(self, repo_id: str, repo_type: str = "model") -> dict:
        return self.repos[(repo_type, repo_id)]

    @staticmethod
    def _commit(repo: dict) -> None:
        digest = hashlib.sha1(repr(sorted((k, git_blob_sha(v)) for k, v in repo["files"].items())).encode())
        digest.update(str(len(repo["history"])).encode())
        repo["sha"] = digest.hexdigest()
        repo["history"].append(repo["sha"])

    def lookup(self, repo_type: str, repo_id: str, revision: str) -> Tuple[Optional[dict], Optional[str]]:
        """(repo, error code): error code is None, "RepoNotFound" or "RevisionNotFound"."""
        repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            return None, "RepoNotFound"
        if revision != "main" and revision not in repo["history"]:
            return repo, "RevisionNotFound"
        return repo, None


def _make_handler(hub: HubServer) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep pytest output quiet
            pass

        # -- helpers -----------------------------------------------------------------------
        def _send(self, status: int, body: bytes = b"", headers: Optional[dict] = None, head: bool = False) -> None:
            if hub.stall:
                time.sleep(hub.stall)
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, status: int, payload: object, headers: Optional[dict] = None) -> None:
            self._send(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

        def _error(self, code: str, sha: Optional[str] = None, head: bool = False) -> None:
            headers = {"X-Error-Code": code, "X-Error-Message": code}
            if sha:
                headers["X-Repo-Commit"] = sha
            self._send(404, b"" if head else json.dumps({"error": code}).encode(), headers, head=head)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        # -- verbs -------------------------------------------------------------------------
        def do_HEAD(self) -> None:
            self._resolve(head=True)

        def do_GET(self) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append(("GET", path))
            match = _API.match(path)
            if match:
                return self._api_get(*match.groups())
            match = _INFO.match(path)
            if match:
                return self._api_get(match.group(1), match.group(2), "revision", "main")
            self._resolve(head=False)

        def do_POST(self) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append(("POST", path))
            body = self._body()
            if path == "/api/repos/create":
                return self._create(json.loads(body))
            if path == "/api/validate-yaml":
                return self._validate_yaml(json.loads(body)["content"])
            match = _API.match(path)
            if not match or match.group(3) not in ("preupload", "commit"):
                return self._error("NotFound")
            kind, repo_id, action, revision = match.groups()
            repo, error = hub.lookup(kind[:-1], repo_id, revision)
            if error:
                return self._error(error)
            if action == "preupload":
                files = json.loads(body)["files"]
                modes = [
                    {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None} for f in files
                ]
                return self._json(200, {"files": modes})
            for line in body.decode().splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    repo["files"][item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                elif item["key"] in ("deletedFile",):
                    repo["files"].pop(item["value"]["path"], None)
            hub._commit(repo)
            prefix = "" if kind == "models" else f"/{kind}"
            self._json(
                200, {"commitUrl": f"{hub.endpoint}{prefix}/{repo_id}/commit/{repo['sha']}", "commitOid": repo["sha"]}
            )

        # -- endpoints ---------------------------------------------------------------------
        def _api_get(self, kind: str, repo_id: str, action: str, revision: str) -> None:
            repo, error = hub.lookup(kind[:-1], repo_id, revision)
            if error:
                return self._error(error)
            if action == "revision":
                siblings = [{"rfilename": name} for name in sorted(repo["files"])]
                return self._json(200, {"id": repo_id, "sha": repo["sha"], "siblings": siblings, "private": False})
            tree = [
                {"type": "file", "path": name, "size": len(data), "oid": git_blob_sha(data)}
                for name, data in sorted(repo["files"].items())
            ]
            self._json(200, tree)

        def _resolve(self, head: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            if head:
                hub.requests.append(("HEAD", path))
            match = _RESOLVE.match(path)
            if not match:
                return self._error("NotFound", head=head)
            kind, repo_id, revision, filename = match.groups()
            repo, error = hub.lookup((kind or "models")[:-1], repo_id, revision)
            if error:
                return self._error(error, head=head)
            data = repo["files"].get(filename)
            if data is None:
                return self._error("EntryNotFound", sha=repo["sha"], head=head)
            headers = {
                "X-Repo-Commit": repo["sha"],
                "ETag": f'"{git_blob_sha(data)}"',
                "Content-Type": "application/octet-stream",
            }
            self._send(200, data, headers, head=head)

        def _validate_yaml(self, content: str) -> None:
            """Check a README's YAML header the way the Hub does before a commit that changes it."""
            import yaml

            match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
            try:
                if match:
                    yaml.safe_load(match.group(1))
            except yaml.YAMLError as err:
                return self._json(400, {"errors": [{"message": f"invalid YAML: {err}"}], "warnings": []})
            self._json(200, {"errors": [], "warnings": []})

        def _create(self, payload: dict) -> None:
            repo_type = payload.get("type") or "model"
            repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
            prefix = "" if repo_type == "model" else f"/{repo_type}s"
            if (repo_type, repo_id) in hub.repos:
                return self._json(
                    409, {"error": "You already created this repo", "url": f"{hub.endpoint}{prefix}/{repo_id}"}
                )
            hub.add_repo(repo_id, {}, repo_type=repo_type)
            hub.repos[(repo_type, repo_id)]["sdk"] = payload.get("sdk")
            self._json(200, {"url": f"{hub.endpoint}{prefix}/{repo_id}"})

    return Handler
