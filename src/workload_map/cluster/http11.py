"""The sync shell's HTTP/1.1 client for a direct connection to the API server, on the standard library
(`http.client` over `ssl`), so a command that only reads (`get`, `describe TYPE/NAME`) never imports httpx (issue
19: httpx, httpcore and h11 are ~40 ms of imports, and their per-request machinery more than the requests take).

What it does is what `ApiClient` needs and no more: one kept-alive connection per thread (a `Gather` sends from a
thread pool), the TLS context and `Authorization` header of `cluster.credentials` (asked again once after a 401
when that may help), the TLS server name of `--tls-server-name` or the kubeconfig, the headers of the context
(user agent, impersonation, `Accept-Encoding`: gzip unless `--disable-compression`), the request timeout per socket
operation, gzip answers decoded as they arrive, and a request on a kept-alive connection the server has closed
sent once more on a new one. Proxies are not its business: `direct(context)` says whether a context has none (no
kubeconfig `proxy-url`, no `*_PROXY` variable), and `ApiClient` uses httpx otherwise.

Failures are the standard library's exceptions; `ERRORS` names them in the form `core.transport_failure` reads
(`TimeoutException`, `InvalidURL`, `UnsupportedProtocol`, `TransportError`), so both transports fail alike.
"""

from __future__ import annotations

import http.client
import os
import ssl
import threading
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

from workload_map.cluster.credentials import credentials, tls_context

if TYPE_CHECKING:
    from workload_map.cluster.core import Call
    from workload_map.cluster.kubeconfig import KubeContext

_PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")
_READ_SIZE = 1 << 20  # bytes read at a time: the caller counts them against its limit as they arrive


class InvalidServerURLError(ValueError):
    """The server URL cannot be connected to (no host, a bad port)."""


class UnsupportedSchemeError(ValueError):
    """The server URL is neither http:// nor https://."""


class ERRORS:
    """The exception classes of this transport, named as `core.transport_failure` and `transport_errors` read
    them (httpx's names)."""

    TimeoutException = TimeoutError
    InvalidURL = InvalidServerURLError
    UnsupportedProtocol = UnsupportedSchemeError
    TransportError = (OSError, http.client.HTTPException)


def direct(context: KubeContext, environ: Mapping[str, str] | None = None) -> bool:
    """Whether requests of `context` go straight to the server: no kubeconfig `proxy-url` and no proxy variable
    (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, any case) that httpx would honour."""
    if context.proxy_url:
        return False
    env = os.environ if environ is None else environ
    return not any(env.get(name) or env.get(name.upper()) for name in _PROXY_VARIABLES)


class _Connection(http.client.HTTPSConnection):
    """An HTTPS connection checking `server_name` (when given) instead of the URL's host."""

    def __init__(
        self, host: str, port: int | None, *, timeout: float | None, context: ssl.SSLContext, server_name: str | None
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._server_name = server_name
        self._tls = context

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._tls.wrap_socket(self.sock, server_hostname=self._server_name or self.host)


class Http11:
    """Requests to the server of one context (see the module docstring). Thread-safe: each thread has its own
    connection; `close()` closes them all."""

    def __init__(self, context: KubeContext, user_agent: str) -> None:
        url = urlsplit(context.server)
        if url.scheme not in ("http", "https"):
            raise UnsupportedSchemeError(f"the scheme {url.scheme!r} is not http or https")
        try:
            self._port = url.port
        except ValueError as exc:
            raise InvalidServerURLError(str(exc)) from None
        if not url.hostname:
            raise InvalidServerURLError("no host")
        self._host = url.hostname
        self._prefix = url.path.rstrip("/")
        self._tls = tls_context(context) if url.scheme == "https" else None
        self._server_name = context.server_name
        self._timeout = context.request_timeout
        self._credentials = credentials(context)
        self._headers: list[tuple[str, str]] = [("User-Agent", user_agent), *context.extra_headers]
        if not any(name.lower() == "accept-encoding" for name, _ in self._headers):
            self._headers.append(("Accept-Encoding", "gzip"))
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()

    def _connection(self, *, fresh: bool = False) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is not None and not fresh:
            return connection
        if connection is not None:
            connection.close()
        if self._tls is not None:
            connection = _Connection(
                self._host, self._port, timeout=self._timeout, context=self._tls, server_name=self._server_name
            )
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        self._local.connection = connection
        with self._lock:
            self._opened.append(connection)
        return connection

    def _send(self, call: Call, target: str, authorization: str | None) -> http.client.HTTPResponse:
        """Send the request and read the answer's head; once more on a new connection when a kept-alive one turns
        out closed by the server before it answered."""
        for attempt in (0, 1):
            connection = self._connection(fresh=attempt == 1)
            reused = connection.sock is not None
            try:
                connection.putrequest(call.method, target, skip_accept_encoding=True)
                for name, value in self._headers:
                    connection.putheader(name, value)
                for name, value in call.headers.items():
                    connection.putheader(name, value)
                if authorization is not None:
                    connection.putheader("Authorization", authorization)
                if call.body is not None:
                    connection.putheader("Content-Length", str(len(call.body)))
                connection.endheaders(call.body)
                return connection.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                connection.close()
                if not reused or attempt == 1:
                    raise
            except BaseException:
                connection.close()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def open(self, call: Call) -> Iterator[tuple[int, Mapping[str, str], Iterator[bytes]]]:
        """Send `call`; yield (status, headers with lower-case names, the body's chunks decoded)."""
        target = self._prefix + call.path
        if call.params:
            target += "?" + urlencode(dict(call.params))
        found = self._credentials
        response = self._send(call, target, None if found is None else found.authorization())
        if response.status == 401 and found is not None and found.renewable:
            response.read()
            response = self._send(call, target, found.authorization(renew=True))
        headers = {name.lower(): value for name, value in response.getheaders()}
        finished = False
        try:
            yield response.status, headers, _body(response, headers.get("content-encoding", ""))
            finished = response.isclosed()
        finally:
            if not finished:  # an answer not read to its end leaves the connection unusable
                self._connection_closed()

    def _connection_closed(self) -> None:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None


def _body(response: http.client.HTTPResponse, encoding: str) -> Iterator[bytes]:
    decoder = zlib.decompressobj(31) if encoding.strip().lower() == "gzip" else None
    while chunk := response.read(_READ_SIZE):
        if decoder is None:
            yield chunk
            continue
        try:
            # at most _READ_SIZE out per step, so the caller's limit is checked before more is inflated
            data = decoder.decompress(chunk, _READ_SIZE)
            while data:
                yield data
                data = decoder.decompress(decoder.unconsumed_tail, _READ_SIZE)
        except zlib.error as exc:
            raise http.client.HTTPException(f"the answer is not valid gzip: {exc}") from None
    if decoder is not None:
        rest = decoder.flush()
        if rest:
            yield rest
