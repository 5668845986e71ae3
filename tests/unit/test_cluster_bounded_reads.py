"""The cluster layer reads through bounds (issue 16): a kubeconfig and the discovery cache through the one bounded
reader (`workload_map._io`, 64 MiB), an API server's answer counted as it arrives (`MAX_RESPONSE_BYTES`), each
limit a one-line error naming the file or the URL.

The oversized answers come from a small HTTP server on 127.0.0.1 started by the test: it stands in for the API
server only to send more bytes than the client's limit (lowered on the client instance so the test sends 2 MiB,
not 256); every other cluster behaviour is tested against a real kube-apiserver (docs/testing.md).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from workload_map._limits import MAX_INPUT_BYTES, MAX_RESPONSE_BYTES
from workload_map.cluster import ClusterError, ConnectionSettings, KubeconfigError, ResponseTooLarge, load_context
from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.client import ApiClient
from workload_map.cluster.discovery import read_cache
from workload_map.cluster.kubeconfig import merge_kubeconfigs

BODY_BYTES = 2 * 1024 * 1024
LIMIT = 1024 * 1024


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_kubeconfig_that_never_ends_is_refused_at_the_input_limit() -> None:
    with pytest.raises(KubeconfigError) as info:
        merge_kubeconfigs([Path("/dev/zero")])
    assert str(info.value) == (
        "kubeconfig /dev/zero cannot be read: input is larger than the 64 MiB limit; inputs over it are refused"
    )


def test_a_huge_kubeconfig_file_is_refused_naming_it(tmp_path: Path) -> None:
    huge = tmp_path / "config"
    with huge.open("wb") as handle:  # sparse: past the limit without writing 64 MiB
        handle.truncate(MAX_INPUT_BYTES + 1)
    env = {"KUBECONFIG": str(huge), "HOME": str(tmp_path)}
    with pytest.raises(KubeconfigError, match=rf"^kubeconfig {huge} cannot be read: input is larger than the 64 MiB"):
        load_context(ConnectionSettings(), env)


def test_an_oversized_discovery_cache_is_ignored_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "discovery.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)
    assert read_cache(path, "https://example:6443", ttl=600) is None  # fetched again, as a missing cache is


class _Huge(BaseHTTPRequestHandler):
    """Answers every GET with BODY_BYTES of JSON-looking text; `/chunked` without a Content-Length."""

    def do_GET(self) -> None:
        chunked = self.path.startswith("/chunked")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(BODY_BYTES))
        self.end_headers()
        piece = b" " * 65536
        try:
            for _ in range(BODY_BYTES // len(piece)):
                if chunked:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                else:
                    self.wfile.write(piece)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its limit

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def huge_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Huge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _context(tmp_path: Path, server: str) -> object:
    config = tmp_path / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": {"server": server}}],
                "users": [{"name": "me", "user": {}}],
                "contexts": [{"name": "local", "context": {"cluster": "local", "user": "me"}}],
                "current-context": "local",
            }
        )
    )
    return load_context(ConnectionSettings(), {"KUBECONFIG": str(config), "HOME": str(tmp_path)})


def test_the_default_response_limit_is_the_documented_one() -> None:
    assert ApiClient.max_response_bytes == MAX_RESPONSE_BYTES == 256 * 1024 * 1024


@pytest.mark.parametrize("path", ["/api", "/chunked/api"], ids=["content-length", "chunked"])
def test_an_answer_over_the_limit_is_refused_naming_the_url(tmp_path: Path, huge_server: str, path: str) -> None:
    client = ApiClient(_context(tmp_path, huge_server))  # type: ignore[arg-type]
    client.max_response_bytes = LIMIT
    with client, pytest.raises(ResponseTooLarge) as info:
        client.get(path)
    assert str(info.value) == (
        f"GET {huge_server}{path}: the API server's answer is larger than the 1 MiB limit; answers over it are refused"
    )
    (record,) = client.requests
    assert record.error == "too large"
    if path.startswith("/chunked"):  # counted as it arrived: stopped just past the limit, not at the end
        assert LIMIT < record.size < BODY_BYTES
    else:  # refused from the Content-Length, before reading
        assert record.size == BODY_BYTES


@pytest.mark.parametrize("path", ["/api", "/chunked/api"], ids=["content-length", "chunked"])
def test_the_async_client_refuses_it_too(tmp_path: Path, huge_server: str, path: str) -> None:
    async def fetch() -> None:
        client = AsyncApiClient(_context(tmp_path, huge_server))  # type: ignore[arg-type]
        client.max_response_bytes = LIMIT
        try:
            await client.get(path)
        finally:
            await client.aclose()

    with pytest.raises(ResponseTooLarge, match=r"the API server's answer is larger than the 1 MiB limit"):
        asyncio.run(fetch())


def test_an_answer_within_the_limit_is_read_whole(tmp_path: Path, huge_server: str) -> None:
    client = ApiClient(_context(tmp_path, huge_server))  # type: ignore[arg-type]
    client.max_response_bytes = BODY_BYTES
    with client, pytest.raises(ClusterError) as info:  # read whole: 2 MiB of spaces, which is not JSON
        client.get("/api")
    assert not isinstance(info.value, ResponseTooLarge)
    assert client.requests[0].size == BODY_BYTES
