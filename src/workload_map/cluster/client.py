"""The one place that sends HTTP requests to the API server.

`ApiClient` is a thin layer over the HTTP client lightkube builds from a kubeconfig (TLS, client certificates,
tokens): JSON in and out as plain dicts (decoded by msgspec), paged LISTs (`limit` + `continue`), metadata-only
LISTs, merge patches, and every failure turned into one `ClusterError` with a message a person can act on.

Every request is recorded in `ApiClient.requests` (method, path, status, seconds, bytes): `--debug` prints each one
on stderr and tests count them. lightkube's own typed `Client` is not used: our layers want plain dicts, the
metadata-only LIST needs its own `Accept` header, and decoding 1,000 pods into typed models would cost more than
the request.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map._version import __version__
from workload_map.cluster.errors import (
    ApiError,
    ClusterError,
    Conflict,
    Forbidden,
    KubeconfigError,
    NotFound,
    Unauthorized,
    Unreachable,
)

if TYPE_CHECKING:
    import httpx2 as http
    from lightkube.config.models import UserExec

    from workload_map.cluster.kubeconfig import KubeContext

USER_AGENT = f"wmap/{__version__}"
JSON = "application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
MERGE_PATCH = "application/merge-patch+json"
DEFAULT_CHUNK_SIZE = 500
_EXEC_API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)


@dataclass(frozen=True)
class RequestRecord:
    """One request sent: what `--debug` prints and what tests count."""

    method: str
    path: str
    query: str
    status: int | None
    seconds: float
    size: int
    error: str = ""

    @property
    def line(self) -> str:
        target = self.path + (f"?{self.query}" if self.query else "")
        ms = f"{self.seconds * 1000:.0f} ms"
        if self.status is None:
            return f"{self.method} {target} -> {self.error} ({ms})"
        return f"{self.method} {target} -> {self.status} ({ms}, {_size_text(self.size)})"


def _size_text(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.1f} KiB"
    return f"{size} B"


@dataclass(frozen=True)
class Operation:
    """What a request does, in words, for error messages: `list`, `pytorchjobs.kubeflow.org`, namespace `x`."""

    verb: str
    resource: str
    namespace: str | None = None
    name: str | None = None

    @property
    def target(self) -> str:
        what = f"{self.resource} {self.name}" if self.name else self.resource
        if self.namespace:
            return f"{what} in namespace {self.namespace}"
        return what


@dataclass
class ListResult:
    """The items of a (possibly paged) LIST, the list's kind and resourceVersion, and how many pages it took."""

    items: list[dict[str, Any]]
    kind: str = ""
    resource_version: str = ""
    pages: int = 0


class ApiClient:
    """Requests to one API server as one user (see the module docstring). Thread-safe; close it when done."""

    def __init__(
        self,
        context: KubeContext,
        *,
        log: Callable[[str], None] | None = None,
        user_agent: str = USER_AGENT,
        transport: Any = None,
    ) -> None:
        from lightkube.config import client_adapter

        http_mod: Any = getattr(client_adapter, "httpx")  # httpx2 for lightkube >= 1.0, httpx before  # noqa: B009
        self.context = context
        self.server = context.server
        self.log = log
        self.requests: list[RequestRecord] = []
        self._lock = threading.Lock()
        self._http_errors = http_mod
        from lightkube.config.models import User

        config = context.config
        user = config.user or User()
        try:
            verify = client_adapter.verify_cluster(config.cluster, user, config.abs_file, trust_env=True)
            if user.exec is not None:
                auth: Any = exec_credential_auth(user.exec, http_mod)
            else:
                auth = client_adapter.user_auth(user)
        except ClusterError:
            raise
        except Exception as exc:  # lightkube's ConfigError, ssl errors from bad CA or key data
            raise KubeconfigError(f"{context.where} cannot be used: {_one_line(exc)}") from None
        timeout = context.request_timeout
        self._timeout = timeout
        try:
            self._http: http.Client = http_mod.Client(
                base_url=self.server,
                verify=verify,
                auth=auth,
                timeout=http_mod.Timeout(timeout),
                headers={"User-Agent": user_agent},
                trust_env=True,
                transport=transport,
            )
        except (http_mod.InvalidURL, ValueError) as exc:
            raise KubeconfigError(
                f"the server URL {self.server!r} is not valid: {_one_line(exc)}",
                hint=f"the server comes from {context.server_source}",
            ) from None

    # --- lifecycle --------------------------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests ---------------------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        accept: str = JSON,
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> Any:
        """Send one request and return the decoded JSON body; raise a `ClusterError` for any failure."""
        import msgspec

        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        query = "&".join(f"{k}={v}" for k, v in (params or {}).items())
        start = time.perf_counter()
        http_mod = self._http_errors
        try:
            response = self._http.request(method, path, params=dict(params or {}), headers=headers, content=body)
        except http_mod.TimeoutException:
            self._record(RequestRecord(method, path, query, None, time.perf_counter() - start, 0, "timeout"))
            limit = f"{self._timeout:g}s" if self._timeout else "the timeout"
            raise Unreachable(
                f"no answer from {self.server} within {limit} ({method} {path})",
                hint="check that the cluster is up and reachable, or raise --request-timeout",
            ) from None
        except (http_mod.InvalidURL, http_mod.UnsupportedProtocol) as exc:
            self._record(RequestRecord(method, path, query, None, time.perf_counter() - start, 0, "invalid URL"))
            raise KubeconfigError(
                f"the server URL {self.server!r} is not valid: {_one_line(exc)}",
                hint=f"the server comes from {self.context.server_source}",
            ) from None
        except http_mod.TransportError as exc:
            reason = _transport_reason(exc)
            self._record(RequestRecord(method, path, query, None, time.perf_counter() - start, 0, reason))
            raise Unreachable(
                f"cannot reach {self.server}: {reason} (check --context/--kubeconfig)",
                hint=f"the server comes from {self.context.server_source}",
            ) from None
        content = response.content
        self._record(
            RequestRecord(method, path, query, response.status_code, time.perf_counter() - start, len(content))
        )
        if response.status_code >= 400:
            raise self._status_error(response.status_code, content, op, method, path)
        if not content:
            return {}
        try:
            return msgspec.json.decode(content)
        except msgspec.DecodeError:
            raise ApiError(
                f"{method} {path}: the server answered {response.status_code} with something that is not JSON "
                f"({response.headers.get('content-type', 'no content type')})",
                status=response.status_code,
            ) from None

    def get(
        self,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        accept: str = JSON,
    ) -> Any:
        return self.request("GET", path, op=op, params=params, accept=accept)

    def list_pages(
        self,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        accept: str = JSON,
    ) -> Iterator[dict[str, Any]]:
        """Each page of a LIST (`limit=chunk_size`, following `continue` until it runs out; 0: one request)."""
        query = dict(params or {})
        if chunk_size > 0:
            query["limit"] = str(chunk_size)
        while True:
            page = self.get(path, op=op, params=query, accept=accept)
            if not isinstance(page, dict):
                raise ApiError(f"GET {path}: the server answered a list that is not an object", status=200)
            yield page
            token = (page.get("metadata") or {}).get("continue")
            if not token or chunk_size <= 0:
                return
            query["continue"] = token

    def list(
        self,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        accept: str = JSON,
    ) -> ListResult:
        """Every item of a paged LIST."""
        result = ListResult(items=[])
        for page in self.list_pages(path, op=op, params=params, chunk_size=chunk_size, accept=accept):
            result.pages += 1
            items = page.get("items") or []
            result.items.extend(item for item in items if isinstance(item, dict))
            result.kind = str(page.get("kind") or result.kind)
            result.resource_version = str((page.get("metadata") or {}).get("resourceVersion") or "")
        return result

    def merge_patch(
        self,
        path: str,
        patch: Mapping[str, Any],
        *,
        op: Operation | None = None,
        dry_run: bool = False,
        field_manager: str = "wmap",
    ) -> dict[str, Any]:
        """PATCH with `application/merge-patch+json`; `dry_run` sends `dryRun=All` (validated, not stored)."""
        params = {"fieldManager": field_manager}
        if dry_run:
            params["dryRun"] = "All"
        body = json.dumps(patch).encode()
        result = self.request("PATCH", path, op=op, params=params, body=body, content_type=MERGE_PATCH)
        return result if isinstance(result, dict) else {}

    # --- bookkeeping ------------------------------------------------------------------------------------------

    def _record(self, record: RequestRecord) -> None:
        with self._lock:
            self.requests.append(record)
        if self.log is not None:
            self.log(record.line)

    def _status_error(self, status: int, content: bytes, op: Operation | None, method: str, path: str) -> ApiError:
        message, reason = _status_message(content)
        if status == 401:
            who = f'user "{self.context.user_name}"' if self.context.user_name else "these credentials"
            return Unauthorized(
                f"{self.server} does not accept the credentials of {who} (401 Unauthorized)",
                status=401,
                reason="Unauthorized",
                hint=f"log in again, or check {self.context.where}",
            )
        if status == 403:
            user_match = re.search(r'User "([^"]*)"', message)
            user = user_match.group(1) if user_match else self.context.user_name
            text = f"not allowed to {op.verb} {op.target}" if op is not None else f"not allowed: {method} {path}"
            if user:
                text += f" (as user {user})"
            return Forbidden(
                text,
                verb=op.verb if op else method.lower(),
                resource=op.resource if op else path,
                namespace=op.namespace if op else None,
                user=user,
                hint="ask a cluster administrator for that permission (RBAC)",
            )
        if status == 404:
            return NotFound(message or f"{method} {path}: not found")
        if status == 409:
            return Conflict(message or f"{method} {path}: conflict")
        what = f" to {op.verb} {op.target}" if op else f" to {method} {path}"
        detail = f": {message}" if message else ""
        return ApiError(
            f"the API server answered {status}{' ' + reason if reason else ''}{what}{detail}",
            status=status,
            reason=reason,
        )


def _status_message(content: bytes) -> tuple[str, str]:
    """The `message` and `reason` of a `Status` body ("" when the body is not one)."""
    try:
        body = json.loads(content)
    except ValueError:
        text = content.decode("utf-8", "replace").strip()
        return _one_line(text)[:300], ""
    if isinstance(body, dict):
        return _one_line(str(body.get("message") or "")), str(body.get("reason") or "")
    return "", ""


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


_ERRNO_TEXT = {
    "111": "connection refused",
    "113": "no route to host",
    "101": "network is unreachable",
    "110": "connection timed out",
    "104": "connection reset by peer",
    "-2": "name or service not known",
    "-3": "temporary failure in name resolution",
    "-5": "no address associated with hostname",
}


def _transport_reason(exc: BaseException) -> str:
    """`connection refused`, `certificate verify failed: ...`: the cause of a transport error, in words."""
    text = _one_line(exc)
    match = re.search(r"\[Errno (-?\d+)\]\s*(.*)", text)
    if match:
        return _ERRNO_TEXT.get(match.group(1), match.group(2).lower() or text)
    lowered = text.lower()
    if "certificate verify failed" in lowered:
        detail = re.search(r"certificate verify failed: ([^(]*)", text)
        return "TLS certificate verify failed" + (f": {detail.group(1).strip()}" if detail else "")
    if "ssl" in lowered or "tls" in lowered:
        return f"TLS handshake failed: {text}"
    if "connection refused" in lowered:
        return "connection refused"
    return text or type(exc).__name__


# --- exec credential plugins ------------------------------------------------------------------------------------


def exec_credential_auth(spec: UserExec, http_mod: Any) -> Any:
    """An httpx `Auth` that runs a kubeconfig `exec` plugin for a bearer token (cached until it expires, run again
    on a 401). Plugins that return a client certificate are not supported (a clear error says so)."""

    class ExecCredentialAuth(http_mod.Auth):  # type: ignore[misc]
        def __init__(self) -> None:
            self._token: str | None = None
            self._expires: float | None = None
            self._lock = threading.Lock()

        def token(self, *, force: bool = False) -> str:
            with self._lock:
                fresh = self._expires is None or time.time() < self._expires - 10
                if force or self._token is None or not fresh:
                    self._token, self._expires = run_exec_plugin_with_expiry(spec)
                return self._token

        def sync_auth_flow(self, request: Any) -> Any:
            request.headers["Authorization"] = f"Bearer {self.token()}"
            response = yield request
            if response.status_code == 401:
                request.headers["Authorization"] = f"Bearer {self.token(force=True)}"
                yield request

    return ExecCredentialAuth()


def run_exec_plugin(spec: UserExec) -> str:
    """Run an exec credential plugin and return its token."""
    return run_exec_plugin_with_expiry(spec)[0]


def run_exec_plugin_with_expiry(spec: UserExec) -> tuple[str, float | None]:
    """Run an exec credential plugin: (token, expiry as a UNIX time or None)."""
    import datetime
    import os

    if spec.apiVersion not in _EXEC_API_VERSIONS:
        raise KubeconfigError(
            f"exec credential plugin {spec.command!r}: apiVersion {spec.apiVersion!r} is not supported",
            hint=f"use one of {', '.join(_EXEC_API_VERSIONS)}",
        )
    env = dict(os.environ)
    for item in spec.env or []:
        env[item.name] = item.value
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": spec.apiVersion, "kind": "ExecCredential", "spec": {"interactive": False}}
    )
    command = [spec.command, *(spec.args or [])]
    if shutil.which(spec.command, path=env.get("PATH")) is None and not os.path.isfile(spec.command):
        hint = spec.installHint.strip() if spec.installHint else "install it or fix users[].user.exec.command"
        raise KubeconfigError(f"exec credential plugin {spec.command!r} not found", hint=_one_line(hint))
    try:
        done = subprocess.run(command, env=env, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KubeconfigError(f"exec credential plugin {spec.command!r} failed: {_one_line(exc)}") from None
    if done.returncode != 0:
        err = _one_line(done.stderr.decode("utf-8", "replace"))[:300]
        raise KubeconfigError(f"exec credential plugin {spec.command!r} exited with {done.returncode}: {err}")
    try:
        credential = json.loads(done.stdout)
        status = credential["status"]
    except (ValueError, KeyError, TypeError):
        raise KubeconfigError(
            f"exec credential plugin {spec.command!r} did not print an ExecCredential with a status"
        ) from None
    token = status.get("token") if isinstance(status, dict) else None
    if not isinstance(token, str) or not token:
        if isinstance(status, dict) and status.get("clientCertificateData"):
            raise KubeconfigError(
                f"exec credential plugin {spec.command!r} returned a client certificate; only tokens are supported"
            )
        raise KubeconfigError(f"exec credential plugin {spec.command!r} returned no token")
    expiry: float | None = None
    stamp = status.get("expirationTimestamp")
    if isinstance(stamp, str) and stamp:
        try:
            expiry = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            expiry = None
    return token, expiry
