"""kubectl's connection flags beyond the basics against the real API server (issue 21): `--as`, `--as-group`,
`--as-uid` (the audit log names who acted), `--certificate-authority`, `--client-certificate` / `--client-key` (a
certificate signed here by the test CA), `--tls-server-name`, `--disable-compression`, and a kubeconfig cluster's
`proxy-url` (a CONNECT proxy run by the test). Every case runs through the sync and the async cluster API."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ApiServer
from .test_live_support import Wmap, wmap_requests

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]


def pki(api_server: ApiServer) -> Path:
    """The test CA (scripts/test-cluster.sh keeps it in pki/ beside the kubeconfigs)."""
    state = api_server.kubeconfig.parent
    if not (state / "pki" / "ca.crt").is_file():
        pytest.skip(f"no pki/ next to {api_server.kubeconfig} (a server not started by scripts/test-cluster.sh)")
    return state / "pki"


def deployments_listed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["verb"] == "list" and (e.get("objectRef") or {}).get("resource") == "deployments"]


def test_as_acts_as_another_user(api_server: ApiServer, wmap: Wmap, web: str) -> None:
    refused = wmap.run("get", "deployments", "--as", "wmap-restricted", namespace=web)
    assert refused.code == 1
    assert f"error: not allowed to list deployments.apps in namespace {web} (as user wmap-restricted)" in (
        refused.stderr
    )
    mark = api_server.audit_mark()
    allowed = wmap.run(
        "get", "deployments", "--as", "jane", "--as-group", "system:masters", "--as-uid", "u-42", namespace=web
    )
    assert allowed.code == 0, allowed.stderr
    assert allowed.stdout.split()[3] == "web"
    (event,) = deployments_listed(wmap_requests(api_server, mark))
    assert event["user"]["username"] == "wmap-admin"
    impersonated = event["impersonatedUser"]
    assert impersonated["username"] == "jane"
    assert "system:masters" in impersonated["groups"]
    assert impersonated.get("uid") == "u-42"


def test_as_group_without_as_is_an_error(wmap: Wmap, web: str) -> None:
    result = wmap.run("get", "deployments", "--as-group", "system:masters", namespace=web)
    assert result.code == 1
    assert result.stderr.splitlines()[0] == "error: --as-group and --as-uid need --as (the user to act as)"


def test_certificate_authority(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    ca = pki(api_server) / "ca.crt"
    bare = yaml.safe_load(api_server.kubeconfig.read_text())
    for entry in bare["clusters"]:
        entry["cluster"].pop("certificate-authority-data", None)
        entry["cluster"].pop("certificate-authority", None)
    without_ca = tmp_path / "no-ca.kubeconfig"
    without_ca.write_text(yaml.safe_dump(bare))
    unknown = wmap.run("get", "deployments", namespace=web, kubeconfig=without_ca)
    assert unknown.code == 1
    assert "TLS certificate verify failed" in unknown.stderr
    trusted = wmap.run("get", "deployments", "--certificate-authority", str(ca), namespace=web, kubeconfig=without_ca)
    assert trusted.code == 0, trusted.stderr
    wrong = wmap.run("get", "deployments", "--certificate-authority", str(ca.parent / "apiserver.crt"), namespace=web)
    assert wrong.code == 1  # the flag replaces the kubeconfig's CA, which alone would have worked
    assert "TLS certificate verify failed" in wrong.stderr


def test_client_certificate_and_key(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    authority = pki(api_server)
    if not (authority / "ca.key").is_file():
        pytest.skip("the test CA's key is not available")
    key, csr, cert = tmp_path / "user.key", tmp_path / "user.csr", tmp_path / "user.crt"
    subject = "/CN=wmap-cert-user/O=system:masters"
    for command in (
        ["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-subj", subject, "-out", csr],
        [
            "openssl", "x509", "-req", "-in", csr, "-CA", authority / "ca.crt", "-CAkey", authority / "ca.key",
            "-CAcreateserial", "-CAserial", tmp_path / "ca.srl", "-days", "1", "-out", cert,
        ],
    ):  # fmt: skip
        subprocess.run([str(part) for part in command], check=True, capture_output=True, timeout=60)
    mark = api_server.audit_mark()
    result = wmap.run("get", "deployments", "--client-certificate", str(cert), "--client-key", str(key), namespace=web)
    assert result.code == 0, result.stderr
    (event,) = deployments_listed(wmap_requests(api_server, mark))
    assert event["user"]["username"] == "wmap-cert-user"  # the certificate, not the kubeconfig's token
    alone = wmap.run("get", "deployments", "--client-certificate", str(cert), namespace=web)
    assert alone.code == 1
    assert "--client-certificate and --client-key go together" in alone.stderr


def test_tls_server_name(wmap: Wmap, web: str) -> None:
    named = wmap.run("get", "deployments", "--tls-server-name", "kubernetes", namespace=web)  # a name in its SANs
    assert named.code == 0, named.stderr
    other = wmap.run("get", "deployments", "--tls-server-name", "wrong.example", namespace=web)
    assert other.code == 1
    assert "certificate is not valid for 'wrong.example'" in other.stderr


def test_disable_compression(wmap: Wmap, web: str) -> None:
    result = wmap.run("get", "deployments", "--disable-compression", "-o", "json", namespace=web)
    assert result.code == 0, result.stderr
    assert [item["name"] for item in yaml.safe_load(result.stdout)["items"]] == ["web"]


class ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1 that tunnels to the API server and records each CONNECT target."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.targets: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed: the test is over
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
            if method != "CONNECT":
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                return
            self.targets.append(target)
            host, _, port = target.rpartition(":")
            with socket.create_connection((host, int(port)), timeout=30) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                pump = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
                pump.start()
                self._pump(client, upstream)
                pump.join(timeout=30)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()


def test_a_clusters_proxy_url_is_honoured(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    proxy = ConnectProxy()
    try:
        config = yaml.safe_load(api_server.kubeconfig.read_text())
        for entry in config["clusters"]:
            entry["cluster"]["proxy-url"] = f"http://127.0.0.1:{proxy.port}"
        through_proxy = tmp_path / "proxy.kubeconfig"
        through_proxy.write_text(yaml.safe_dump(config))
        result = wmap.run("get", "deployments", namespace=web, kubeconfig=through_proxy)
        assert result.code == 0, result.stderr
        assert result.stdout.split()[3] == "web"
        server = api_server.url.removeprefix("https://").rstrip("/")
        assert proxy.targets  # every connection went through the proxy
        assert set(proxy.targets) == {server}
    finally:
        proxy.close()
    for entry in config["clusters"]:
        entry["cluster"]["proxy-url"] = "ftp://127.0.0.1:1"
    through_proxy.write_text(yaml.safe_dump(config))
    bad = wmap.run("get", "deployments", namespace=web, kubeconfig=through_proxy)
    assert bad.code == 1
    assert "proxy-url 'ftp://127.0.0.1:1' is not an http or https URL" in bad.stderr
