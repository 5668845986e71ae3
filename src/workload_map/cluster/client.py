"""The one place that sends HTTP requests to the API server.

`ApiClient` is a thin layer over an HTTP client set up from the kubeconfig (TLS, client certificates, tokens:
`cluster.credentials`): JSON in and out as plain dicts (decoded by msgspec), paged LISTs (`limit` + `continue`),
metadata-only LISTs, merge patches, and every failure turned into one `ClusterError` with a message a person can
act on.

Every request is recorded in `ApiClient.requests` (method, path, status, seconds, bytes): `--debug` prints each one
on stderr and tests count them. No typed Kubernetes client is used: our layers want plain dicts, the metadata-only
LIST needs its own `Accept` header, and decoding 1,000 pods into typed models would cost more than the request.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from workload_map._limits import MAX_RESPONSE_BYTES
from workload_map._version import __version__
from workload_map.cluster.core import (
    DEFAULT_CHUNK_SIZE,
    JSON,
    MERGE_PATCH,
    METADATA_LIST,
    Call,
    Gather,
    ListResult,
    Op,
    Operation,
    drive,
    interpret,
    list_op,
    list_pages_op,
    merge_patch_op,
    one_line,
    status_message,
    transport_errors,
    transport_failure,
    transport_reason,
)
from workload_map.cluster.errors import ClusterError, KubeconfigError, ResponseTooLarge
from workload_map.cluster.http11 import ERRORS, Http11, direct

T = TypeVar("T")

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "JSON",
    "MERGE_PATCH",
    "METADATA_LIST",
    "USER_AGENT",
    "ApiClient",
    "ListResult",
    "Operation",
    "RequestRecord",
]

if TYPE_CHECKING:
    import httpx2 as http

    from workload_map.cluster.credentials import Credentials
    from workload_map.cluster.kubeconfig import KubeContext, UserExec

USER_AGENT = f"wmap/{__version__}"
_EXEC_API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
# the sans-I/O core's names, kept importable from here
_one_line = one_line
_status_message = status_message
_transport_reason = transport_reason


class RequestRecord(msgspec.Struct, frozen=True):
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


def http_settings(context: KubeContext, user_agent: str) -> tuple[Any, dict[str, Any]]:
    """httpx's module and the keyword arguments of its `Client` / `AsyncClient` for `context` (TLS, credentials,
    timeout, user agent): one recipe for the sync and the async shell. `auth` is a `CredentialAuth` (None without
    credentials), whose `credentials` the async shell reads in a thread when they may run a plugin."""
    import httpx2 as http_mod

    from workload_map.cluster.credentials import credentials, tls_context

    verify = tls_context(context)
    found = credentials(context)
    return http_mod, {
        "base_url": context.server,
        "verify": verify,
        "auth": None if found is None else credential_auth(found, http_mod),
        "timeout": http_mod.Timeout(context.request_timeout),
        "headers": [("User-Agent", user_agent), *context.extra_headers],
        "trust_env": True,
        **({"proxy": context.proxy_url} if context.proxy_url else {}),
    }


def credential_auth(found: Credentials, http_mod: Any) -> Any:
    """An httpx `Auth` sending `found`'s `Authorization` header, asking again once after a 401 when that may help
    (a rotated token file, an expired plugin token)."""

    class CredentialAuth(http_mod.Auth):  # type: ignore[misc]
        credentials = found

        def auth_flow(self, request: Any) -> Any:  # both clients' (the async shell wraps a plugin's)
            request.headers["Authorization"] = found.authorization()
            response = yield request
            if response.status_code == 401 and found.renewable:
                request.headers["Authorization"] = found.authorization(renew=True)
                yield request

    return CredentialAuth()


def invalid_server(context: KubeContext, exc: BaseException) -> KubeconfigError:
    return KubeconfigError(
        f"the server URL {context.server!r} is not valid: {one_line(exc)}",
        hint=f"the server comes from {context.server_source}",
    )


class Recorder:
    """The request log both shells keep (`requests`, and `log` for `--debug`), and the bound on what one answer
    may hold (`max_response_bytes`, counted as the body arrives). Thread-safe."""

    max_response_bytes: int = MAX_RESPONSE_BYTES
    """Bytes one answer may have; past it the request fails with `ResponseTooLarge` naming the URL (a class
    default: a program or a test may set its own on an instance)."""

    def __init__(self, context: KubeContext, log: Callable[[str], None] | None) -> None:
        self.context = context
        self.server = context.server
        self.log = log
        self.requests: list[RequestRecord] = []
        self._lock = threading.Lock()

    def _record(self, record: RequestRecord) -> None:
        with self._lock:
            self.requests.append(record)
        if self.log is not None:
            self.log(record.line)

    def _failed(self, call: Call, exc: BaseException, http_mod: Any, start: float) -> ClusterError:
        reason, error = transport_failure(self.context, call, exc, http_mod)
        self._record(RequestRecord(call.method, call.path, call.query, None, time.perf_counter() - start, 0, reason))
        return error

    def _too_large(self, call: Call, status: int, size: int, start: float) -> ResponseTooLarge:
        """The error for an answer past `max_response_bytes` (recorded; what was read is dropped)."""
        limit = self.max_response_bytes
        self._record(
            RequestRecord(call.method, call.path, call.query, status, time.perf_counter() - start, size, "too large")
        )
        target = self.server.rstrip("/") + call.path + (f"?{call.query}" if call.query else "")
        shown = f"{limit // (1 << 20)} MiB" if limit >= 1 << 20 else f"{limit} bytes"
        return ResponseTooLarge(
            f"{call.method} {target}: the API server's answer is larger than the {shown} limit; answers over it "
            "are refused"
        )

    def _declared_too_large(self, call: Call, status: int, length: str | None, start: float) -> None:
        """Refuse an answer whose Content-Length already says it is past the limit, before reading it."""
        if length is not None and length.isdigit() and int(length) > self.max_response_bytes:
            raise self._too_large(call, status, int(length), start)

    def _collect(self, call: Call, status: int, chunks: Iterable[bytes], start: float) -> bytes:
        """The chunks of an answer joined, counted as they arrive: never more than the limit is held."""
        parts: list[bytes] = []
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > self.max_response_bytes:
                raise self._too_large(call, status, size, start)
            parts.append(chunk)
        return b"".join(parts)

    def _answered(self, call: Call, status: int, content: bytes, content_type: str | None, start: float) -> Any:
        self._record(
            RequestRecord(call.method, call.path, call.query, status, time.perf_counter() - start, len(content))
        )
        return interpret(self.context, call, status, content, content_type)


class ApiClient(Recorder):
    """Requests to one API server as one user (see the module docstring). Thread-safe; close it when done.

    The blocking shell over the sans-I/O core (`workload_map.cluster.core`): `send(call)` is its only I/O, `run(op)`
    drives an operation (`Gather`: a thread pool)."""

    def __init__(
        self,
        context: KubeContext,
        *,
        log: Callable[[str], None] | None = None,
        user_agent: str = USER_AGENT,
        transport: Any = None,
    ) -> None:
        super().__init__(context, log)
        self._timeout = context.request_timeout
        self._direct: Http11 | None = None
        self._http: http.Client | None = None
        if transport is None and direct(context):
            self._http_errors: Any = ERRORS
            try:
                self._direct = Http11(context, user_agent)
            except (ERRORS.InvalidURL, ERRORS.UnsupportedProtocol) as exc:
                raise invalid_server(context, exc) from None
            return
        http_mod, settings = http_settings(context, user_agent)  # a proxy, or a test's transport: httpx
        self._http_errors = http_mod
        try:
            self._http = http_mod.Client(**settings, transport=transport)
        except (http_mod.InvalidURL, ValueError) as exc:
            raise invalid_server(context, exc) from None

    # --- lifecycle --------------------------------------------------------------------------------------------

    def close(self) -> None:
        if self._direct is not None:
            self._direct.close()
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests ---------------------------------------------------------------------------------------------

    def send(self, call: Call) -> Any:
        """Send one request and return the decoded JSON body; raise a `ClusterError` for any failure."""
        start = time.perf_counter()
        try:
            with self._open(call) as (status, headers, chunks):
                self._declared_too_large(call, status, headers.get("content-length"), start)
                content = self._collect(call, status, chunks, start)
                content_type = headers.get("content-type")
        except transport_errors(self._http_errors) as exc:
            raise self._failed(call, exc, self._http_errors, start) from None
        return self._answered(call, status, content, content_type, start)

    @contextmanager
    def _open(self, call: Call) -> Iterator[tuple[int, Mapping[str, str], Iterator[bytes]]]:
        """(status, headers, body chunks) of `call`, from whichever transport this client has."""
        if self._direct is not None:
            with self._direct.open(call) as answer:
                yield answer
            return
        assert self._http is not None
        with self._http.stream(
            call.method,
            call.path,
            params=dict(call.params or {}),
            headers=call.headers,
            content=call.body,
            extensions=self.context.request_extensions,
        ) as response:
            yield response.status_code, response.headers, response.iter_bytes()

    def handle(self, need: Any) -> Any:
        """Answer one need of an operation: a `Call` (sent), a `Gather` (sent from a thread pool)."""
        if isinstance(need, Call):
            return self.send(need)
        if isinstance(need, Gather):
            from concurrent.futures import ThreadPoolExecutor

            def one(call: Call) -> Any:
                try:
                    return self.send(call)
                except ClusterError as exc:
                    return exc

            with ThreadPoolExecutor(max_workers=max(1, need.limit)) as pool:
                return list(pool.map(one, need.calls))
        raise TypeError(f"ApiClient cannot answer {type(need).__name__}")

    def run(self, op: Op[T]) -> T:
        """Drive an operation of the core to its result."""
        return drive(op, self.handle)

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
        return self.send(Call(method, path, op=op, params=params, accept=accept, body=body, content_type=content_type))

    def get(
        self,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        accept: str = JSON,
    ) -> Any:
        return self.send(Call("GET", path, op=op, params=params, accept=accept))

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
        pages: list[dict[str, Any]] = []
        steps = list_pages_op(path, op=op, params=params, chunk_size=chunk_size, accept=accept, page=pages.append)
        value: Any = None
        while True:  # lazily: a page is yielded before the next is requested
            try:
                call = steps.send(value)
            except StopIteration:
                yield from pages
                return
            yield from pages
            pages.clear()
            value = self.send(call)

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
        return self.run(list_op(path, op=op, params=params, chunk_size=chunk_size, accept=accept))

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
        return self.run(merge_patch_op(path, patch, op=op, dry_run=dry_run, field_manager=field_manager))


# --- exec credential plugins ------------------------------------------------------------------------------------


def run_exec_plugin(spec: UserExec) -> str:
    """Run an exec credential plugin and return its token."""
    return run_exec_plugin_with_expiry(spec)[0]


_EXEC_OUTPUT_LIMIT = 1024 * 1024  # what a credential plugin may print; more is a broken or hostile plugin


def _run_bounded(command: list[str], env: dict[str, str], *, timeout: float, limit: int) -> tuple[int, bytes, bytes]:
    """Run a plugin and read at most `limit` (+1) bytes of each of its streams: past that it is killed, so a plugin
    printing without end cannot fill the caller's memory (the kubeconfig's plugin is the user's own, yet bounded
    like every other input, docs/security.md)."""
    import subprocess  # only with an exec plugin: a plain request imports no subprocess machinery (issue 19)

    with subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        buffers = (bytearray(), bytearray())

        def pump(stream: Any, buffer: bytearray) -> None:
            while chunk := stream.read(65536):
                if len(buffer) <= limit:
                    buffer.extend(chunk[: limit + 1 - len(buffer)])
                if len(buffer) > limit:
                    process.kill()

        readers = [
            threading.Thread(target=pump, args=(stream, buffer), daemon=True)
            for stream, buffer in zip((process.stdout, process.stderr), buffers, strict=True)
        ]
        for reader in readers:
            reader.start()
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        for reader in readers:
            reader.join(timeout=5)
    return returncode, bytes(buffers[0]), bytes(buffers[1])


def run_exec_plugin_with_expiry(spec: UserExec) -> tuple[str, float | None]:
    """Run an exec credential plugin: (token, expiry as a UNIX time or None)."""
    import datetime
    import os
    import shutil
    import subprocess

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
        returncode, stdout, stderr = _run_bounded(command, env, timeout=120, limit=_EXEC_OUTPUT_LIMIT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KubeconfigError(f"exec credential plugin {spec.command!r} failed: {one_line(exc)}") from None
    if len(stdout) > _EXEC_OUTPUT_LIMIT:
        raise KubeconfigError(
            f"exec credential plugin {spec.command!r} printed more than {_EXEC_OUTPUT_LIMIT // 1024} KiB "
            "(an ExecCredential is a few hundred bytes); it was stopped"
        )
    if returncode != 0:
        err = _one_line(stderr.decode("utf-8", "replace"))[:300]
        raise KubeconfigError(f"exec credential plugin {spec.command!r} exited with {returncode}: {err}")
    try:
        credential = json.loads(stdout)
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
