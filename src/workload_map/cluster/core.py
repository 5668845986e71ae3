"""The sans-I/O core the sync (`ApiClient`, `Cluster`) and async (`workload_map.cluster.aio`) shells share.

Everything that decides *what* to send and *what an answer means* is written once, here and in the modules that use
it, without doing I/O:

* `Call`: one request (method, path, query, headers, body, and the `Operation` error messages name);
* `Gather`: several calls the shell may send concurrently (a thread pool in sync code, `asyncio.gather` in async
  code); each answer comes back as its value or its `ClusterError`, never raised;
* `interpret(...)`: a status code and a body -> the decoded JSON or the `ClusterError` to raise (401, 403, 404, 409,
  other statuses, a body that is not JSON), and `transport_failure(...)`: a transport exception -> the error;
* operations (`Op`): generators that yield `Call` / `Gather` (or a shell-specific need, such as an owner lookup) and
  receive the answer, e.g. `list_op` (the paging state machine: `limit` + `continue`), `discovery.fetch_op`,
  `definitions.definitions_op`, `owners.walk_op`. A `ClusterError` of a call is thrown into the generator, so
  `try/except` around a `yield` handles it exactly as it would around a blocking call.

A shell only sends: `drive(op, handle)` (here, blocking) and `workload_map.cluster.aio.adrive` (awaiting) run an
operation by handing each need to the shell's `handle`. This module imports neither an HTTP client nor an event loop.
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

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
    from workload_map.cluster.kubeconfig import KubeContext

T = TypeVar("T")

JSON = "application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
MERGE_PATCH = "application/merge-patch+json"
DEFAULT_CHUNK_SIZE = 500


class Operation(msgspec.Struct, frozen=True):
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


class Call(msgspec.Struct, frozen=True):
    """One request to send (what a shell's `handle` receives); the answer is the decoded JSON body."""

    method: str
    path: str
    op: Operation | None = None
    params: Mapping[str, str] | None = None
    accept: str = JSON
    body: bytes | None = None
    content_type: str | None = None
    # a LIST page: its items decoded one by one, each checked for nesting (`listdecode`); `lean`: without their
    # managedFields (what informers keep)
    list_page: bool = False
    lean: bool = False

    @property
    def headers(self) -> dict[str, str]:
        headers = {"Accept": self.accept}
        if self.content_type:
            headers["Content-Type"] = self.content_type
        return headers

    @property
    def query(self) -> str:
        return "&".join(f"{k}={v}" for k, v in (self.params or {}).items())


class Gather(msgspec.Struct, frozen=True):
    """Calls that may be sent concurrently, at most `limit` at a time; answered with a list of values or
    `ClusterError`s (in order)."""

    calls: tuple[Call, ...]
    limit: int = 6


Need = Any
"""What an operation yields: a `Call`, a `Gather`, or a need only a richer shell handles (an owner lookup)."""
Op = Generator[Need, Any, T]


class ListResult(msgspec.Struct):
    """The items of a (possibly paged) LIST, the list's kind and resourceVersion, and how many pages it took."""

    items: list[dict[str, Any]] = msgspec.field(default_factory=list)
    kind: str = ""
    resource_version: str = ""
    pages: int = 0


# --- driving an operation (the blocking shell) --------------------------------------------------------------------


def drive(op: Op[T], handle: Callable[[Need], Any]) -> T:
    """Run `op`, answering each need with `handle(need)`; a `ClusterError` it raises is thrown into `op`."""
    value: Any = None
    error: ClusterError | None = None
    while True:
        try:
            need = op.send(value) if error is None else op.throw(error)
        except StopIteration as stop:
            result: T = stop.value
            return result
        try:
            value, error = handle(need), None
        except ClusterError as exc:
            value, error = None, exc


# --- operations ---------------------------------------------------------------------------------------------------


def get_op(
    path: str, *, op: Operation | None = None, params: Mapping[str, str] | None = None, accept: str = JSON
) -> Op[Any]:
    return (yield Call("GET", path, op=op, params=params, accept=accept))


def list_pages_op(
    path: str,
    *,
    op: Operation | None = None,
    params: Mapping[str, str] | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    accept: str = JSON,
    page: Callable[[dict[str, Any]], None],
) -> Op[None]:
    """The paging state machine: `limit=chunk_size`, following `continue` until it runs out (0: one request);
    each page (an object) is handed to `page`."""
    query = dict(params or {})
    if chunk_size > 0:
        query["limit"] = str(chunk_size)
    while True:
        answer = yield Call("GET", path, op=op, params=dict(query), accept=accept, list_page=True)
        if not isinstance(answer, dict):
            raise ApiError(f"GET {path}: the server answered a list that is not an object", status=200)
        page(answer)
        token = (answer.get("metadata") or {}).get("continue")
        if not token or chunk_size <= 0:
            return
        query["continue"] = token


def list_op(
    path: str,
    *,
    op: Operation | None = None,
    params: Mapping[str, str] | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    accept: str = JSON,
) -> Op[ListResult]:
    """Every item of a paged LIST."""
    result = ListResult()

    def collect(page: dict[str, Any]) -> None:
        result.pages += 1
        items = page.get("items") or []
        result.items.extend(item for item in items if isinstance(item, dict))
        result.kind = str(page.get("kind") or result.kind)
        result.resource_version = str((page.get("metadata") or {}).get("resourceVersion") or "")

    yield from list_pages_op(path, op=op, params=params, chunk_size=chunk_size, accept=accept, page=collect)
    return result


def merge_patch_call(
    path: str,
    patch: Mapping[str, Any],
    *,
    op: Operation | None = None,
    dry_run: bool = False,
    field_manager: str = "wmap",
) -> Call:
    """PATCH with `application/merge-patch+json`; `dry_run` sends `dryRun=All` (validated, not stored)."""
    params = {"fieldManager": field_manager}
    if dry_run:
        params["dryRun"] = "All"
    return Call("PATCH", path, op=op, params=params, body=json.dumps(patch).encode(), content_type=MERGE_PATCH)


def merge_patch_op(
    path: str,
    patch: Mapping[str, Any],
    *,
    op: Operation | None = None,
    dry_run: bool = False,
    field_manager: str = "wmap",
) -> Op[dict[str, Any]]:
    result = yield merge_patch_call(path, patch, op=op, dry_run=dry_run, field_manager=field_manager)
    return result if isinstance(result, dict) else {}


# --- answers ------------------------------------------------------------------------------------------------------


def interpret(context: KubeContext, call: Call, status: int, content: bytes, content_type: str | None) -> Any:
    """The decoded JSON body of an answer; raises the `ClusterError` a status of 400 or more means."""
    from workload_map.cluster.listdecode import NestedTooDeepError, decode_list_page

    if status >= 400:
        raise status_error(context, status, content, call.op, call.method, call.path)
    if not content:
        return {}
    try:
        with gc_paused():
            if call.list_page:
                return decode_list_page(content, lean=call.lean)
            return msgspec.json.decode(content)
    except NestedTooDeepError as exc:
        raise ApiError(f"{call.method} {call.path}: {exc}", status=status) from None
    except msgspec.DecodeError:
        raise ApiError(
            f"{call.method} {call.path}: the server answered {status} with something that is not JSON "
            f"({content_type or 'no content type'})",
            status=status,
        ) from None


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block (a JSON decode). Decoding makes only new containers, none
    in a cycle, yet each counts towards a collection, and every full collection walks all that is already held
    (the earlier pages of a LIST): for the 20 pages of 10,000 pods (25 MB) the collector took 0.57 s of a 0.69 s
    decode (0.12 s paused; benchmarks/RESULTS.md). Nested and concurrent blocks (threads) share one pause: the
    collector runs again when the last ends, and only if it ran before the first began."""
    global _gc_pauses, _gc_resume
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


def transport_failure(context: KubeContext, call: Call, exc: BaseException, http_mod: Any) -> tuple[str, ClusterError]:
    """(what to record, the error to raise) for an exception of the HTTP client (httpx's classes, sync or async)."""
    server = context.server
    if isinstance(exc, http_mod.TimeoutException):
        timeout = context.request_timeout
        limit = f"{timeout:g}s" if timeout else "the timeout"
        return "timeout", Unreachable(
            f"no answer from {server} within {limit} ({call.method} {call.path})",
            hint="check that the cluster is up and reachable, or raise --request-timeout",
        )
    if isinstance(exc, (http_mod.InvalidURL, http_mod.UnsupportedProtocol)):
        return "invalid URL", KubeconfigError(
            f"the server URL {server!r} is not valid: {one_line(exc)}",
            hint=f"the server comes from {context.server_source}",
        )
    reason = transport_reason(exc)
    return reason, Unreachable(
        f"cannot reach {server}: {reason} (check --context/--kubeconfig)",
        hint=f"the server comes from {context.server_source}",
    )


def transport_errors(http_mod: Any) -> tuple[type[BaseException], ...]:
    """The exception classes `transport_failure` maps (a name may hold a tuple of classes: the stdlib transport's
    `TransportError`)."""
    named = (http_mod.TimeoutException, http_mod.InvalidURL, http_mod.UnsupportedProtocol, http_mod.TransportError)
    return tuple(kind for entry in named for kind in (entry if isinstance(entry, tuple) else (entry,)))


def status_error(  # noqa: PLR0917 - the parts of one answer
    context: KubeContext, status: int, content: bytes, op: Operation | None, method: str, path: str
) -> ApiError:
    message, reason = status_message(content)
    if status == 401:
        who = f'user "{context.user_name}"' if context.user_name else "these credentials"
        return Unauthorized(
            f"{context.server} does not accept the credentials of {who} (401 Unauthorized)",
            status=401,
            reason="Unauthorized",
            hint=f"log in again, or check {context.where}",
        )
    if status == 403:
        user_match = re.search(r'User "([^"]*)"', message)
        user = user_match.group(1) if user_match else context.user_name
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


def status_message(content: bytes) -> tuple[str, str]:
    """The `message` and `reason` of a `Status` body ("" when the body is not one)."""
    try:
        body = json.loads(content)
    except ValueError:
        text = content.decode("utf-8", "replace").strip()
        return one_line(text)[:300], ""
    if isinstance(body, dict):
        return one_line(str(body.get("message") or "")), str(body.get("reason") or "")
    return "", ""


def one_line(value: object) -> str:
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


def transport_reason(exc: BaseException) -> str:
    """`connection refused`, `certificate verify failed: ...`: the cause of a transport error, in words. The async
    transport wraps the OS error in `All connection attempts failed`: the errno of the chain's innermost cause wins."""
    cause: BaseException | None = exc
    seen = 0
    while cause is not None and seen < 10:
        errno = getattr(cause, "errno", None)
        if isinstance(errno, int) and str(errno) in _ERRNO_TEXT:
            return _ERRNO_TEXT[str(errno)]
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    text = one_line(exc)
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
