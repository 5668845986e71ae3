"""The kubeconfig's ways to authenticate and to trust the server, against the real API server (issue 19 replaced
lightkube's kubeconfig models and httpx auth by `cluster.kubeconfig` and `cluster.credentials`): a bearer token
file, an exec credential plugin, a client certificate embedded as data, a CA file named relative to the
kubeconfig, a cluster's `tls-server-name`, and a refused `auth-provider`. Every case runs through the sync and the
async cluster API (`cluster_api`); the audit log names who acted."""

from __future__ import annotations

import base64
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ApiServer
from .test_live_support import Wmap, wmap_requests

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]


def _config(api_server: ApiServer) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(api_server.kubeconfig.read_text())
    return config


def _user(config: dict[str, Any]) -> dict[str, Any]:
    current = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    user: dict[str, Any] = next(u for u in config["users"] if u["name"] == current["context"]["user"])["user"]
    return user


def _cluster(config: dict[str, Any]) -> dict[str, Any]:
    current = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    cluster: dict[str, Any] = next(c for c in config["clusters"] if c["name"] == current["context"]["cluster"])
    return cluster["cluster"]  # type: ignore[no-any-return]


def _write(config: dict[str, Any], path: Path) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


def _listed_as(api_server: ApiServer, mark: int, namespace: str) -> set[str]:
    """Who listed the test's namespace's Deployments since `mark`."""
    return {
        event["user"]["username"]
        for event in wmap_requests(api_server, mark)
        if event["verb"] == "list"
        and (event.get("objectRef") or {}).get("resource") == "deployments"
        and (event.get("objectRef") or {}).get("namespace") == namespace
    }


def _shown(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()[1:]]


def test_a_token_file(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    config = _config(api_server)
    user = _user(config)
    (tmp_path / "token").write_text(user.pop("token") + "\n")
    user["tokenFile"] = "token"  # relative to the kubeconfig's directory
    kubeconfig = _write(config, tmp_path / "token-file.kubeconfig")
    mark = api_server.audit_mark()
    result = wmap.run("get", "deployments", namespace=web, kubeconfig=kubeconfig)
    assert result.code == 0, result.stderr
    assert _shown(result.stdout) == ["web"]
    assert _listed_as(api_server, mark, web) == {"wmap-admin"}
    (tmp_path / "token").write_text("not-a-token\n")
    refused = wmap.run("get", "deployments", namespace=web, kubeconfig=kubeconfig)
    assert refused.code == 1
    assert "does not accept the credentials" in refused.stderr
    (tmp_path / "token").unlink()
    missing = wmap.run("get", "deployments", namespace=web, kubeconfig=kubeconfig)
    assert missing.code == 1
    assert "the token file" in missing.stderr and "cannot be read" in missing.stderr


def test_an_exec_plugin(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    config = _config(api_server)
    user = _user(config)
    token = user.pop("token")
    runs = tmp_path / "runs"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"open({str(runs)!r}, 'a').write('run\\n')\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',\n"
        "                  'status': {'token': os.environ['PLUGIN_TOKEN']}}))\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    user["exec"] = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": str(plugin),
        "env": [{"name": "PLUGIN_TOKEN", "value": token}],
        "interactiveMode": "Never",
    }
    kubeconfig = _write(config, tmp_path / "exec.kubeconfig")
    mark = api_server.audit_mark()
    result = wmap.run("get", "deployments", namespace=web, kubeconfig=kubeconfig)
    assert result.code == 0, result.stderr
    assert _shown(result.stdout) == ["web"]
    assert _listed_as(api_server, mark, web) == {"wmap-admin"}
    assert runs.read_text().count("run") == 1  # one run for all the command's requests (cached)


def test_a_client_certificate_as_data_and_a_ca_file_beside_the_kubeconfig(
    api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    authority = api_server.kubeconfig.parent / "pki"
    if not (authority / "ca.key").is_file():
        pytest.skip("the test CA's key is not available (a server not started by scripts/test-cluster.sh)")
    key, csr, cert = tmp_path / "user.key", tmp_path / "user.csr", tmp_path / "user.crt"
    subject = "/CN=wmap-data-user/O=system:masters"
    for command in (
        ["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-subj", subject, "-out", csr],
        [
            "openssl", "x509", "-req", "-in", csr, "-CA", authority / "ca.crt", "-CAkey", authority / "ca.key",
            "-CAcreateserial", "-CAserial", tmp_path / "ca.srl", "-days", "1", "-out", cert,
        ],
    ):  # fmt: skip
        subprocess.run([str(part) for part in command], check=True, capture_output=True, timeout=60)
    config = _config(api_server)
    user = _user(config)
    user.clear()
    user["client-certificate-data"] = base64.b64encode(cert.read_bytes()).decode()
    user["client-key-data"] = base64.b64encode(key.read_bytes()).decode()
    cluster = _cluster(config)
    cluster.pop("certificate-authority-data", None)
    (tmp_path / "trust").mkdir()
    shutil.copy(authority / "ca.crt", tmp_path / "trust" / "ca.crt")
    cluster["certificate-authority"] = "trust/ca.crt"  # relative to the kubeconfig's directory
    kubeconfig = _write(config, tmp_path / "cert-data.kubeconfig")
    mark = api_server.audit_mark()
    result = wmap.run("get", "deployments", namespace=web, kubeconfig=kubeconfig)
    assert result.code == 0, result.stderr
    assert _listed_as(api_server, mark, web) == {"wmap-data-user"}
    assert not list(Path(tmp_path).glob("wmap-*.pem"))
    user["client-key-data"] = base64.b64encode(b"not a key").decode()
    broken = wmap.run("get", "deployments", namespace=web, kubeconfig=_write(config, tmp_path / "broken.kubeconfig"))
    assert broken.code == 1
    assert broken.stderr.startswith("error: context ") and "cannot be used" in broken.stderr


def test_a_clusters_tls_server_name(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    config = _config(api_server)
    _cluster(config)["tls-server-name"] = "kubernetes"  # a name in the serving certificate's SANs
    named = wmap.run("get", "deployments", namespace=web, kubeconfig=_write(config, tmp_path / "named.kubeconfig"))
    assert named.code == 0, named.stderr
    _cluster(config)["tls-server-name"] = "wrong.example"
    other = wmap.run("get", "deployments", namespace=web, kubeconfig=_write(config, tmp_path / "other.kubeconfig"))
    assert other.code == 1
    assert "certificate is not valid for 'wrong.example'" in other.stderr


def test_an_auth_provider_is_refused_with_a_hint(api_server: ApiServer, wmap: Wmap, web: str, tmp_path: Path) -> None:
    config = _config(api_server)
    user = _user(config)
    user.clear()
    user["auth-provider"] = {"name": "oidc", "config": {"id-token": "x"}}
    result = wmap.run("get", "deployments", namespace=web, kubeconfig=_write(config, tmp_path / "oidc.kubeconfig"))
    assert result.code == 1
    assert "auth-provider is not supported" in result.stderr
    assert "hint: use an exec credential plugin" in result.stderr
