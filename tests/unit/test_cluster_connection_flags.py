"""kubectl's connection flags beyond the basics (issue 21): impersonation, a CA, a client certificate, the TLS
server name, compression, as the cluster layer turns them into the connection every request uses. They are
proven against the real API server in tests/e2e/test_live_connection_flags.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workload_map.cluster import ConnectionSettings, KubeconfigError, load_context
from workload_map.cluster.client import http_settings


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "users": [{"name": "u", "user": {"token": "secret"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_impersonation_headers(config: Path) -> None:
    context = load_context(
        ConnectionSettings(
            kubeconfig=str(config), impersonate="jane", impersonate_groups=("devs", "ops"), impersonate_uid="42"
        )
    )
    assert context.extra_headers == [
        ("Impersonate-User", "jane"),
        ("Impersonate-Group", "devs"),
        ("Impersonate-Group", "ops"),
        ("Impersonate-Uid", "42"),
    ]
    _, settings = http_settings(context, "wmap/test")
    assert settings["headers"][0] == ("User-Agent", "wmap/test")
    assert ("Impersonate-Group", "ops") in settings["headers"]


def test_groups_or_uid_without_a_user_is_an_error(config: Path) -> None:
    with pytest.raises(KubeconfigError, match="need --as"):
        load_context(ConnectionSettings(kubeconfig=str(config), impersonate_groups=("devs",)))
    with pytest.raises(KubeconfigError, match="need --as"):
        load_context(ConnectionSettings(kubeconfig=str(config), impersonate_uid="42"))


def test_compression_and_server_name(config: Path) -> None:
    plain = load_context(ConnectionSettings(kubeconfig=str(config)))
    assert plain.extra_headers == []
    assert plain.request_extensions == {}
    context = load_context(
        ConnectionSettings(kubeconfig=str(config), disable_compression=True, tls_server_name="kubernetes")
    )
    assert context.extra_headers == [("Accept-Encoding", "identity")]
    assert context.request_extensions == {"sni_hostname": "kubernetes"}


def test_certificate_authority_replaces_the_clusters(config: Path, tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("not read until a request is made\n")
    context = load_context(ConnectionSettings(kubeconfig=str(config), certificate_authority=str(ca)))
    assert context.config.cluster.certificate_auth == str(ca.resolve())
    assert context.config.cluster.certificate_auth_data is None
    with pytest.raises(KubeconfigError, match=r"--certificate-authority .*missing.crt: no such file"):
        load_context(ConnectionSettings(kubeconfig=str(config), certificate_authority=str(tmp_path / "missing.crt")))
    with pytest.raises(KubeconfigError, match="cannot be combined with --insecure-skip-tls-verify"):
        load_context(
            ConnectionSettings(kubeconfig=str(config), certificate_authority=str(ca), insecure_skip_tls_verify=True)
        )


def test_a_client_certificate_replaces_the_users_credentials(config: Path, tmp_path: Path) -> None:
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    cert.write_text("cert\n")
    key.write_text("key\n")
    context = load_context(
        ConnectionSettings(kubeconfig=str(config), client_certificate=str(cert), client_key=str(key))
    )
    user = context.config.user
    assert (user.client_cert, user.client_key, user.token) == (str(cert.resolve()), str(key.resolve()), None)
    with pytest.raises(KubeconfigError, match="go together"):
        load_context(ConnectionSettings(kubeconfig=str(config), client_certificate=str(cert)))


def test_a_clusters_proxy_url(config: Path) -> None:
    document = yaml.safe_load(config.read_text())
    document["clusters"][0]["cluster"]["proxy-url"] = "http://127.0.0.1:3128"
    config.write_text(yaml.safe_dump(document))
    context = load_context(ConnectionSettings(kubeconfig=str(config)))
    assert context.proxy_url == "http://127.0.0.1:3128"
    _, settings = http_settings(context, "wmap/test")
    assert settings["proxy"] == "http://127.0.0.1:3128"
    document["clusters"][0]["cluster"]["proxy-url"] = 5
    config.write_text(yaml.safe_dump(document))
    with pytest.raises(KubeconfigError, match=r'cluster "c": proxy-url 5 is not an http or https URL'):
        load_context(ConnectionSettings(kubeconfig=str(config)))


def test_no_proxy_url_no_proxy_setting(config: Path) -> None:
    _, settings = http_settings(load_context(ConnectionSettings(kubeconfig=str(config))), "wmap/test")
    assert "proxy" not in settings
