"""The sync shell's HTTP/1.1 client for a direct connection to the API server, on the standard library (a socket,
`ssl`, `zlib`), so a command that only reads (`get`, `describe TYPE/NAME`) never imports httpx (issue 19: httpx,
httpcore and h11 are ~40 ms of imports, and their per-request machinery more than the requests take) nor
`http.client` (which imports the `email` package to parse headers, ~5-8 ms).

What it does is what `ApiClient` needs and no more: one kept-alive connection per thread (a `Gather` sends from a
thread pool), the TLS context and `Authorization` header of `cluster.credentials` (asked again once after a 401
when that may help), the TLS server name of `--tls-server-name` or the kubeconfig, the headers of the context
(user agent, impersonation, `Accept-Encoding`: gzip unless `--disable-compression`), the request timeout per socket
operation, answers with a `Content-Length`, chunked or up to the connection's end, gzip decoded as it arrives, and
a request on a kept-alive connection the server has closed sent once more on a new one. An answer's head is
bounded (100 header lines of at most 64 KiB). Proxies are not its business: `direct(context)` says whether a
context has none (no kubeconfig `proxy-url`, no `*_PROXY` variable), and `ApiClient` uses httpx otherwise.

Failures are the standard library's exceptions (`OSError`s: a socket's, `ssl`'s, and `ProtocolError` for an answer
that is not HTTP/1.1); `ERRORS` names them in the form `core.transport_failure` reads (`TimeoutException`,
`InvalidURL`, `UnsupportedProtocol`, `TransportError`), so both transports fail alike.
"""

from __future__ import annotations

import os
import socket
import threading
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING
from urllib.parse import quote, urlencode, urlsplit

from workload_map.cluster.credentials import credentials, tls_context
from workload_map.cluster.errors import KubeconfigError
from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from workload_map.cluster.core import Call
    from workload_map.cluster.kubeconfig import KubeContext

_PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")
_READ_SIZE = 1 << 20  # bytes read at a time: the caller counts them against its limit as they arrive
_MAX_LINE = 1 << 16
_MAX_HEADERS = 100


class InvalidServerURLError(WorkloadMapError, ValueError):
    """The server URL cannot be connected to (no host, a bad port)."""


class UnsupportedSchemeError(WorkloadMapError, ValueError):
    """The server URL is neither http:// nor https://."""


class ProtocolError(WorkloadMapError, OSError):
    """The server's answer is not well-formed HTTP/1.1 (or not gzip when it says it is)."""


class _ClosedBeforeAnswerError(WorkloadMapError, ConnectionResetError):
    """A kept-alive connection the server closed: nothing was answered, the request may be sent again."""


class ERRORS:
    """The exception classes of this transport, named as `core.transport_failure` and `transport_errors` read
    them (httpx's names)."""

    TimeoutException = TimeoutError
    InvalidURL = InvalidServerURLError
    UnsupportedProtocol = UnsupportedSchemeError
    TransportError = OSError


def direct(context: KubeContext, environ: Mapping[str, str] | None = None) -> bool:
    """Whether requests of `context` go straight to the server: no kubeconfig `proxy-url` and no proxy variable
    (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, any case) that httpx would honour."""
    if context.proxy_url:
        return False
    env = os.environ if environ is None else environ
    return not any(env.get(name) or env.get(name.upper()) for name in _PROXY_VARIABLES)


class _Connection:
    """One socket to the server and its buffered reader."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader: IO[bytes] = sock.makefile("rb")
        self.used = False  # an answer was read on it: the server may since have closed it

    def close(self) -> None:
        try:
            self.reader.close()
        finally:
            self.sock.close()


class _Answer:
    """An answer's head, and how its body is framed."""

    def __init__(self, status: int, headers: dict[str, str], *, keep_alive: bool) -> None:
        self.status = status
        self.headers = headers
        self.keep_alive = keep_alive


class Http11:
    """Requests to the server of one context (see the module docstring). Thread-safe: each thread has its own
    connection; `close()` closes them all."""

    def __init__(self, context: KubeContext, user_agent: str) -> None:
        try:
            url = urlsplit(context.server)
        except ValueError as exc:  # an unclosed [IPv6 address
            raise InvalidServerURLError(str(exc)) from None
        if url.scheme not in ("http", "https"):
            raise UnsupportedSchemeError(f"the scheme {url.scheme!r} is not http or https")
        try:
            port = url.port
        except ValueError as exc:
            raise InvalidServerURLError(str(exc)) from None
        if not url.hostname:
            raise InvalidServerURLError("no host")
        self._host = url.hostname
        self._port = port or (443 if url.scheme == "https" else 80)
        shown = f"[{self._host}]" if ":" in self._host else self._host
        self._authority = shown if port is None else f"{shown}:{port}"
        self._prefix = url.path.rstrip("/")
        self._tls = tls_context(context) if url.scheme == "https" else None
        self._server_name = context.server_name or self._host
        self._timeout = context.request_timeout
        self._credentials = credentials(context)
        headers = [("Host", self._authority), ("User-Agent", user_agent), *context.extra_headers]
        if not any(name.lower() == "accept-encoding" for name, _ in headers):
            headers.append(("Accept-Encoding", "gzip"))
        for name, value in headers:  # from the kubeconfig and the flags
            if "\r" in value or "\n" in value:
                raise KubeconfigError(f"the {name} header would not be one line: {value!r}")
        self._head = "".join(f"{name}: {value}\r\n" for name, value in headers)
        self._local = threading.local()
        self._opened: list[_Connection] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()

    # --- connections ----------------------------------------------------------------------------------------------

    def _connection(self) -> _Connection:
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            return connection
        sock = socket.create_connection((self._host, self._port), timeout=self._timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self._server_name)
        except BaseException:
            sock.close()
            raise
        connection = _Connection(sock)
        self._local.connection = connection
        with self._lock:
            self._opened.append(connection)
        return connection

    def _drop(self) -> None:
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            self._local.connection = None
            with self._lock:
                if connection in self._opened:
                    self._opened.remove(connection)
            connection.close()

    # --- requests -------------------------------------------------------------------------------------------------

    def _request(self, call: Call, target: str, authorization: str | None) -> bytes:
        extra = list(call.headers.items())
        if authorization is not None:
            extra.append(("Authorization", authorization))
        if call.body is not None:
            extra.append(("Content-Length", str(len(call.body))))
        for name, value in extra:
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
                raise ProtocolError(f"the request's {name} header is not one line")
        head = "".join([f"{call.method} {target} HTTP/1.1\r\n", self._head, *(f"{n}: {v}\r\n" for n, v in extra)])
        return (head + "\r\n").encode("latin-1", "replace") + (call.body or b"")

    def _send(self, call: Call, target: str, authorization: str | None) -> tuple[_Connection, _Answer]:
        """Send the request and read the answer's head; once more on a new connection when a kept-alive one turns
        out closed by the server before it answered."""
        data = self._request(call, target, authorization)
        for attempt in (0, 1):
            connection = self._connection()
            reused = connection.used
            try:
                connection.sock.sendall(data)
                answer = _read_head(connection.reader)
            except (_ClosedBeforeAnswerError, BrokenPipeError, ConnectionResetError):
                self._drop()
                if not reused or attempt == 1:
                    raise
                continue
            except BaseException:
                self._drop()
                raise
            connection.used = True
            return connection, answer
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def open(self, call: Call) -> Iterator[tuple[int, Mapping[str, str], Iterator[bytes]]]:
        """Send `call`; yield (status, headers with lower-case names, the body's chunks decoded)."""
        target = quote(self._prefix + call.path, safe="/%:@!$&'()*+,;=-._~")
        if call.params:
            target += "?" + urlencode(dict(call.params))
        found = self._credentials
        connection, answer = self._send(call, target, None if found is None else found.authorization())
        if answer.status == 401 and found is not None and found.renewable:
            try:
                for _ in _Body(connection.reader, answer, call.method).chunks():
                    pass
            except BaseException:
                self._drop()
                raise
            if not answer.keep_alive:
                self._drop()
            connection, answer = self._send(call, target, found.authorization(renew=True))
        body = _Body(connection.reader, answer, call.method)
        try:
            yield answer.status, answer.headers, _decoded(body.chunks(), answer.headers.get("content-encoding", ""))
        finally:
            if not body.finished or not answer.keep_alive:  # a body not read to its end leaves the connection unusable
                self._drop()


def _read_line(reader: IO[bytes]) -> bytes:
    line = reader.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise ProtocolError("a line of the answer's head is longer than 64 KiB")
    return line


def _read_head(reader: IO[bytes]) -> _Answer:
    """The status line and headers (1xx answers skipped)."""
    while True:
        line = _read_line(reader)
        if not line:
            raise _ClosedBeforeAnswerError("the server closed the connection without an answer")
        parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise ProtocolError(f"not an HTTP/1.1 status line: {line[:80]!r}")
        version, status = parts[0], int(parts[1])
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS + 1):
            line = _read_line(reader)
            if line in (b"\r\n", b"\n", b""):
                break
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon:
                raise ProtocolError(f"not a header line: {line[:80]!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        else:
            raise ProtocolError(f"the answer has more than {_MAX_HEADERS} header lines")
        if 100 <= status < 200:
            continue
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        return _Answer(status, headers, keep_alive=keep_alive)


class _Body:
    """An answer's body as it arrives (`Content-Length`, chunked, or up to the connection's end); `finished` once
    it was read to its end (then the connection may carry the next request)."""

    def __init__(self, reader: IO[bytes], answer: _Answer, method: str) -> None:
        self.reader, self.answer, self.method = reader, answer, method
        self.finished = False

    def chunks(self) -> Iterator[bytes]:
        yield from self._frames()
        self.finished = True

    def _frames(self) -> Iterator[bytes]:
        reader, answer = self.reader, self.answer
        if self.method == "HEAD" or answer.status in (204, 304):
            return
        if "chunked" in answer.headers.get("transfer-encoding", "").lower():
            while True:
                size_line = _read_line(reader).split(b";", 1)[0].strip()
                try:
                    size = int(size_line, 16)
                except ValueError:
                    raise ProtocolError(f"not a chunk size: {size_line[:40]!r}") from None
                if size == 0:
                    while _read_line(reader) not in (b"\r\n", b"\n", b""):  # trailers
                        pass
                    return
                yield from _exactly(reader, size)
                if _read_line(reader) not in (b"\r\n", b"\n"):
                    raise ProtocolError("a chunk is not followed by a line end")
        length = answer.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise ProtocolError(f"not a Content-Length: {length[:40]!r}")
            yield from _exactly(reader, int(length))
            return
        answer.keep_alive = False  # the body ends with the connection
        while chunk := reader.read(_READ_SIZE):
            yield chunk


def _exactly(reader: IO[bytes], size: int) -> Iterator[bytes]:
    left = size
    while left > 0:
        chunk = reader.read(min(left, _READ_SIZE))
        if not chunk:
            raise ProtocolError(f"the connection ended {left} bytes before the end of the answer")
        left -= len(chunk)
        yield chunk


def _decoded(raw: Iterator[bytes], encoding: str) -> Iterator[bytes]:
    """`raw` with gzip undone (at most `_READ_SIZE` out per step, so the caller's limit is checked before more
    is inflated)."""
    decoder = zlib.decompressobj(31) if encoding.strip().lower() == "gzip" else None
    for chunk in raw:
        if decoder is None:
            yield chunk
            continue
        try:
            data = decoder.decompress(chunk, _READ_SIZE)
            while data:
                yield data
                data = decoder.decompress(decoder.unconsumed_tail, _READ_SIZE)
        except zlib.error as exc:
            raise ProtocolError(f"the answer is not valid gzip: {exc}") from None
    if decoder is not None:
        rest = decoder.flush()
        if rest:
            yield rest
