"""Kubeconfig handling of the cluster layer: which files, which context, which namespace, kubectl's durations, and
exec credential plugins (run for real: a small script prints an ExecCredential)."""

from __future__ import annotations

import datetime
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.cluster import ConnectionSettings, KubeconfigError, load_context, parse_duration
from workload_map.cluster.client import run_exec_plugin_with_expiry
from workload_map.cluster.kubeconfig import kubeconfig_files, merge_kubeconfigs


def kubeconfig(
    path: Path,
    *,
    clusters: dict[str, dict[str, Any]],
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, dict[str, Any]],
    current: str | None = None,
) -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in (users or {}).items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
    }
    if current:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = kubeconfig(
        tmp_path / "a" / "config",
        clusters={"prod": {"server": "https://prod.example:6443", "certificate-authority": "ca.crt"}},
        users={"alice": {"token": "t-alice"}},
        contexts={"prod": {"cluster": "prod", "user": "alice", "namespace": "ml"}},
        current="prod",
    )
    second = kubeconfig(
        tmp_path / "b" / "config",
        clusters={
            "prod": {"server": "https://shadowed.example:6443"},
            "dev": {"server": "https://dev.example:6443"},
        },
        users={"bob": {"token": "t-bob", "client-certificate": "certs/bob.crt"}},
        contexts={"dev": {"cluster": "dev", "user": "bob"}},
        current="dev",
    )
    return first, second


def test_durations_follow_kubectl() -> None:
    assert parse_duration("30s") == 30
    assert parse_duration("1m") == 60
    assert parse_duration("1m30s") == 90
    assert parse_duration("500ms") == 0.5
    assert parse_duration("2h") == 7200
    assert parse_duration("5") == 5  # a bare number is seconds
    assert parse_duration("0") is None  # no timeout
    for bad in ("soon", "5x", "", "1m 30s", "-1s"):
        with pytest.raises(KubeconfigError, match="is not a duration"):
            parse_duration(bad)


def test_kubeconfig_list_merges_first_definition_wins(two_files: tuple[Path, Path]) -> None:
    first, second = two_files
    merged = merge_kubeconfigs([first, second])
    clusters = {c["name"]: c["cluster"] for c in merged["clusters"]}
    assert clusters["prod"]["server"] == "https://prod.example:6443"  # the first file's, not the shadow
    assert clusters["dev"]["server"] == "https://dev.example:6443"
    assert merged["current-context"] == "prod"
    # Relative paths are relative to the file that holds them.
    assert clusters["prod"]["certificate-authority"] == str(first.parent.resolve() / "ca.crt")
    users = {u["name"]: u["user"] for u in merged["users"]}
    assert users["bob"]["client-certificate"] == str(second.parent.resolve() / "certs/bob.crt")


def test_kubeconfig_env_list_and_context_selection(two_files: tuple[Path, Path]) -> None:
    first, second = two_files
    env = {"KUBECONFIG": f"{first}{os.pathsep}{tmp_missing(first)}{os.pathsep}{second}"}
    assert kubeconfig_files(None, env) == [first, second]  # a missing file in the list is skipped
    context = load_context(ConnectionSettings(), env)
    assert (context.server, context.namespace, context.user_name) == ("https://prod.example:6443", "ml", "alice")
    dev = load_context(ConnectionSettings(context="dev"), env)
    assert (dev.server, dev.namespace, dev.context_name) == ("https://dev.example:6443", "default", "dev")
    assert load_context(ConnectionSettings(context="dev", namespace="team"), env).namespace == "team"


def tmp_missing(path: Path) -> Path:
    return path.parent / "does-not-exist"


def test_flags_override_the_kubeconfig(two_files: tuple[Path, Path]) -> None:
    first, _ = two_files
    settings = ConnectionSettings(
        kubeconfig=str(first), server="https://other:443", token="flag-token", insecure_skip_tls_verify=True
    )
    context = load_context(settings, {})
    assert context.server == "https://other:443"
    assert context.config.user is not None and context.config.user.token == "flag-token"
    assert context.config.cluster.insecure and context.config.cluster.certificate_auth is None


def test_kubeconfig_errors_name_what_to_fix(two_files: tuple[Path, Path], tmp_path: Path) -> None:
    first, _ = two_files
    with pytest.raises(KubeconfigError, match=r"kubeconfig .*nope does not exist"):
        load_context(ConnectionSettings(kubeconfig=str(tmp_path / "nope")), {})
    with pytest.raises(KubeconfigError, match=r'context "staging" is not in the kubeconfig \(contexts: prod\)'):
        load_context(ConnectionSettings(kubeconfig=str(first), context="staging"), {})
    with pytest.raises(KubeconfigError, match="none of the files in \\$KUBECONFIG exists"):
        load_context(ConnectionSettings(), {"KUBECONFIG": str(tmp_path / "x")})
    with pytest.raises(KubeconfigError, match=r'user "carol" is not in the kubeconfig'):
        load_context(ConnectionSettings(kubeconfig=str(first), user="carol"), {})


def test_no_kubeconfig_at_all_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(KubeconfigError, match="no kubeconfig"):
        load_context(ConnectionSettings(), {})


# --- exec credential plugins ----------------------------------------------------------------------------------


def plugin(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "plugin.py"
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def exec_spec(command: Path, api_version: str = "client.authentication.k8s.io/v1") -> Any:
    from workload_map.cluster.kubeconfig import NameValue, UserExec

    return UserExec(
        apiVersion=api_version, command=str(command), args=["--flag"], env=[NameValue(name="WHO", value="e2e")]
    )


def test_an_exec_plugin_gives_a_token_and_its_expiry(tmp_path: Path) -> None:
    script = plugin(
        tmp_path,
        "import json, os, sys\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential', 'status': {\n"
        "  'token': os.environ['WHO'] + '-' + sys.argv[1] + '-' + str(info['spec']['interactive']),\n"
        "  'expirationTimestamp': '2030-01-01T00:00:00Z'}}))\n",
    )
    token, expiry = run_exec_plugin_with_expiry(exec_spec(script))
    assert token == "e2e---flag-False"
    assert expiry == datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc).timestamp()


def test_exec_plugin_failures_are_one_line_errors(tmp_path: Path) -> None:
    failing = plugin(tmp_path, "import sys\nsys.stderr.write('login required\\n')\nsys.exit(3)\n")
    with pytest.raises(KubeconfigError, match="exited with 3: login required"):
        run_exec_plugin_with_expiry(exec_spec(failing))
    with pytest.raises(KubeconfigError, match="not found"):
        run_exec_plugin_with_expiry(exec_spec(tmp_path / "missing-plugin"))
    certs = plugin(tmp_path, "import json\nprint(json.dumps({'status': {'clientCertificateData': 'x'}}))\n")
    with pytest.raises(KubeconfigError, match="only tokens are supported"):
        run_exec_plugin_with_expiry(exec_spec(certs))
    with pytest.raises(KubeconfigError, match=r"apiVersion 'client\.authentication\.k8s\.io/v2' is not supported"):
        run_exec_plugin_with_expiry(exec_spec(certs, "client.authentication.k8s.io/v2"))
    garbage = plugin(tmp_path, "print('hello')\n")
    with pytest.raises(KubeconfigError, match="did not print an ExecCredential"):
        run_exec_plugin_with_expiry(exec_spec(garbage))


def test_a_plugin_printing_without_end_is_stopped_at_the_limit(tmp_path: Path) -> None:
    endless = plugin(tmp_path, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    with pytest.raises(KubeconfigError, match=r"printed more than 1024 KiB .* it was stopped"):
        run_exec_plugin_with_expiry(exec_spec(endless))


def test_kubeconfigs_outside_the_fast_yaml_subset_read_the_same(tmp_path: Path) -> None:
    """The fast reader takes the usual kubeconfig; one it declines (an anchor, a flow mapping over lines) is read
    by PyYAML to the same context, and broken YAML is one line naming the file."""
    plain = tmp_path / "plain"
    plain.write_text(
        "clusters:\n- name: c\n  cluster:\n    server: https://one.example:6443\n"
        "users:\n- name: u\n  user:\n    token: abc\n"
        "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: ml\n"
        "current-context: x\n"
    )
    fancy = tmp_path / "fancy"
    fancy.write_text(
        "clusters:\n- name: c\n  cluster: &c {server: 'https://one.example:6443',\n"
        "    insecure-skip-tls-verify: false}\n"
        "users:\n- name: u\n  user:\n    token: abc\n"
        "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: ml\n"
        "current-context: x\n"
    )
    from workload_map.model.yaml_subset import safe_load

    assert safe_load(plain.read_text()) is not None and safe_load(fancy.read_text()) is None
    for path in (plain, fancy):
        context = load_context(ConnectionSettings(kubeconfig=str(path)), {})
        assert (context.server, context.namespace, context.config.user.token) == (
            "https://one.example:6443",
            "ml",
            "abc",
        )
    broken = tmp_path / "broken"
    broken.write_text("clusters: [\n")
    with pytest.raises(KubeconfigError, match=r"kubeconfig .*broken cannot be read: "):
        load_context(ConnectionSettings(kubeconfig=str(broken)), {})
