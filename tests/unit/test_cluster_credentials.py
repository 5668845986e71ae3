"""`cluster.credentials`: the Authorization header and the TLS context a kubeconfig user and cluster give (the real
API server proves them in tests/e2e/test_live_credentials.py)."""

from __future__ import annotations

import base64
import ssl
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.cluster import ConnectionSettings, KubeconfigError, load_context
from workload_map.cluster.credentials import credentials, tls_context


def _context(tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any] | None = None) -> Any:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443", **(cluster or {})}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return load_context(ConnectionSettings(kubeconfig=str(path)), {})


def test_a_token_and_basic_auth(tmp_path: Path) -> None:
    token = credentials(_context(tmp_path, {"token": "abc"}))
    assert token is not None and token.authorization() == "Bearer abc" and not token.renewable
    basic = credentials(_context(tmp_path, {"username": "jane", "password": "pw"}))
    assert basic is not None and basic.authorization() == "Basic " + base64.b64encode(b"jane:pw").decode()
    assert credentials(_context(tmp_path, {})) is None


def test_a_token_file_is_read_again_on_renew(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("first\n")
    found = credentials(_context(tmp_path, {"tokenFile": "token"}))  # relative to the kubeconfig
    assert found is not None and found.renewable
    assert found.authorization() == "Bearer first"
    (tmp_path / "token").write_text("rotated\n")
    assert found.authorization() == "Bearer first"  # cached until a 401 asks again
    assert found.authorization(renew=True) == "Bearer rotated"
    (tmp_path / "token").unlink()
    with pytest.raises(KubeconfigError, match=r"the token file .*token cannot be read"):
        found.authorization(renew=True)


def test_an_exec_plugin_runs_once_until_renewed(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    script = tmp_path / "plugin.py"
    script.write_text(
        f"#!{sys.executable}\nimport json\nopen({str(runs)!r}, 'a').write('x')\n"
        "n = len(open(" + repr(str(runs)) + ").read())\n"
        "print(json.dumps({'status': {'token': f'token-{n}'}}))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    found = credentials(
        _context(tmp_path, {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(script)}})
    )
    assert found is not None and found.renewable and found.runs_plugin
    assert [found.authorization(), found.authorization()] == ["Bearer token-1", "Bearer token-1"]
    assert found.authorization(renew=True) == "Bearer token-2"


def test_an_auth_provider_is_refused(tmp_path: Path) -> None:
    context = _context(tmp_path, {"auth-provider": {"name": "gcp"}})
    with pytest.raises(KubeconfigError, match="auth-provider is not supported") as refused:
        credentials(context)
    assert refused.value.hint is not None and "exec credential plugin" in refused.value.hint


def test_tls_contexts(tmp_path: Path) -> None:
    insecure = tls_context(_context(tmp_path, {}, {"insecure-skip-tls-verify": True}))
    assert insecure.verify_mode == ssl.CERT_NONE and not insecure.check_hostname
    checked = tls_context(_context(tmp_path, {}))
    assert checked.verify_mode == ssl.CERT_REQUIRED and checked.check_hostname
    bad = _context(tmp_path, {}, {"certificate-authority-data": base64.b64encode(b"not a certificate").decode()})
    with pytest.raises(KubeconfigError, match=r'context "x" of .* cannot be used'):
        tls_context(bad)
    missing = _context(tmp_path, {}, {"certificate-authority": str(tmp_path / "missing.crt")})
    with pytest.raises(KubeconfigError, match="cannot be used"):
        tls_context(missing)


def test_kubeconfig_models_refuse_a_wrong_type_naming_the_entry(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match=r"cannot be used: users 'u': .*token"):
        _context(tmp_path, {"token": ["not", "a", "string"]})


def test_a_clusters_tls_server_name_is_the_name_checked(tmp_path: Path) -> None:
    context = _context(tmp_path, {}, {"tls-server-name": "kubernetes"})
    assert context.server_name == "kubernetes"
    assert context.request_extensions == {"sni_hostname": "kubernetes"}
    flag = load_context(ConnectionSettings(kubeconfig=str(tmp_path / "config"), tls_server_name="other"), {})
    assert flag.server_name == "other"  # the flag wins over the kubeconfig's
