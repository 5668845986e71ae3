"""`cluster.http11`, the sync client's own HTTP/1.1 transport, against a small local HTTP server (real sockets; the
API server itself is in the e2e tests): gzip answers, kept-alive connections the server closed, a 401 cured by
reading the token file again, the limits and failures every transport shares, and when httpx is used instead."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from workload_map.cluster import ApiClient, ConnectionSettings, ResponseTooLarge, Unreachable, load_context
from workload_map.cluster.http11 import direct


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[dict[str, Any]]] = []
    close_after: ClassVar[set[str]] = set()

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        type(self).seen.append({"path": self.path, "headers": dict(self.headers.items())})
        if self.path.startswith("/secret") and self.headers.get("Authorization") != "Bearer rotated":
            self._answer(401, b'{"kind":"Status","reason":"Unauthorized"}')
            return
        body = json.dumps({"path": self.path, "items": [{"n": i} for i in range(200)]}).encode()
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), 700):
                part = body[start : start + 700]
                self.wfile.write(f"{len(part):x};ext=1\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\nX-Trailer: 1\r\n\r\n")
            return
        if self.path.startswith("/until-close"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if self.path.startswith("/garbage"):
            self.wfile.write(b"SSH-2.0-OpenSSH\r\n\r\n")
            self.close_connection = True
            return
        if "gzip" in (self.headers.get("Accept-Encoding") or ""):
            self._answer(200, gzip.compress(body), encoding="gzip")
        else:
            self._answer(200, body)
        if self.path in type(self).close_after:
            self.close_connection = True  # and says nothing: the client finds out on its next request

    def _answer(self, status: int, body: bytes, encoding: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.seen.clear()
    _Handler.close_after.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _client(tmp_path: Path, server: str, user: dict[str, Any], **settings: Any) -> ApiClient:
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    context = load_context(ConnectionSettings(kubeconfig=str(config), **settings), {})
    return ApiClient(context, user_agent="wmap/test")


def test_gzip_answers_and_the_headers_sent(tmp_path: Path, server: str) -> None:
    with _client(tmp_path, server, {"token": "t"}, impersonate="jane", impersonate_groups=("a", "b")) as client:
        assert client._direct is not None  # which transport is the point
        answer = client.get("/apis/x", params={"labelSelector": "team=web,tier!=db"})
    assert answer["path"] == "/apis/x?labelSelector=team%3Dweb%2Ctier%21%3Ddb"
    assert len(answer["items"]) == 200
    headers = _Handler.seen[0]["headers"]
    assert headers["Authorization"] == "Bearer t"
    assert headers["User-Agent"] == "wmap/test"
    assert headers["Accept-Encoding"] == "gzip"
    assert headers["Impersonate-User"] == "jane"
    (record,) = client.requests
    assert record.status == 200 and record.size == len(json.dumps(answer).encode())


def test_disable_compression_asks_for_identity(tmp_path: Path, server: str) -> None:
    with _client(tmp_path, server, {"token": "t"}, disable_compression=True) as client:
        client.get("/plain")
    assert _Handler.seen[0]["headers"]["Accept-Encoding"] == "identity"


def test_a_connection_the_server_closed_is_opened_again(tmp_path: Path, server: str) -> None:
    _Handler.close_after.add("/first")
    with _client(tmp_path, server, {"token": "t"}) as client:
        assert client.get("/first")["path"] == "/first"
        assert client.get("/second")["path"] == "/second"
        assert client.get("/third")["path"] == "/third"
    assert [seen["path"] for seen in _Handler.seen] == ["/first", "/second", "/third"]


def test_a_401_reads_the_token_file_again(tmp_path: Path, server: str) -> None:
    (tmp_path / "token").write_text("old\n")
    with _client(tmp_path, server, {"tokenFile": str(tmp_path / "token")}) as client:
        client.get("/open")  # reads the file
        (tmp_path / "token").write_text("rotated\n")
        assert client.get("/secret")["path"] == "/secret"
    sent = [seen["headers"]["Authorization"] for seen in _Handler.seen]
    assert sent == ["Bearer old", "Bearer old", "Bearer rotated"]


def test_the_answer_limit_counts_decoded_bytes(tmp_path: Path, server: str) -> None:
    with _client(tmp_path, server, {"token": "t"}) as client:
        client.max_response_bytes = 1000  # the gzip body is smaller, the JSON larger
        with pytest.raises(ResponseTooLarge, match="larger than the 1000 bytes limit"):
            client.get("/big")
        client.max_response_bytes = 1 << 20
        assert client.get("/big-again")["path"] == "/big-again"  # a half-read answer left no broken connection


def test_a_refused_connection_is_one_line(tmp_path: Path) -> None:
    with (
        _client(tmp_path, "http://127.0.0.1:9", {"token": "t"}) as client,
        pytest.raises(Unreachable, match=r"cannot reach http://127\.0\.0\.1:9: connection refused"),
    ):
        client.get("/x")


def test_proxies_go_through_httpx(tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with _client(tmp_path, server, {"token": "t"}) as client:
        assert direct(client.context, {})
        assert not direct(client.context, {"HTTPS_PROXY": "http://proxy:3128"})
        assert not direct(client.context, {"all_proxy": "http://proxy:3128"})
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with _client(tmp_path, server, {"token": "t"}) as proxied:
        assert proxied._direct is None


def test_chunked_answers_answers_up_to_the_close_and_garbage(tmp_path: Path, server: str) -> None:
    with _client(tmp_path, server, {"token": "t"}) as client:
        assert client.get("/chunked")["path"] == "/chunked"
        assert client.get("/until-close")["path"] == "/until-close"
        assert client.get("/after")["path"] == "/after"  # on a new connection
        with pytest.raises(Unreachable, match=r"not an HTTP/1\.1 status line"):
            client.get("/garbage")
        assert client.get("/after-garbage")["path"] == "/after-garbage"
    assert [seen["path"] for seen in _Handler.seen] == [
        "/chunked",
        "/until-close",
        "/after",
        "/garbage",
        "/after-garbage",
    ]


def test_a_header_that_is_not_one_line_is_refused(tmp_path: Path, server: str) -> None:
    from workload_map.cluster import KubeconfigError

    with pytest.raises(KubeconfigError, match="the Impersonate-User header would not be one line"):
        _client(tmp_path, server, {"token": "t"}, impersonate="jane\r\nX-Evil: 1")
