"""Small pure parts of the live commands: label selectors checked before any request, the TYPE/NAME arguments,
`--phase` values, cluster Kartas loaded leniently, and one-line messages for transport and API errors (a refused
connection is made for real, to a closed port)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from workload_map.catalog import builtin_definitions
from workload_map.cli.commands.get import parse_phases
from workload_map.cli.errors import UsageError
from workload_map.cli.live import parse_target
from workload_map.cluster import ApiClient, ConnectionSettings, Unreachable, load_context, parse_cluster_kartas
from workload_map.cluster.client import RequestRecord, _status_message, _transport_reason
from workload_map.cluster.labels import selector_problem
from workload_map.model import dump_yaml


@pytest.mark.parametrize(
    "selector",
    [
        "",
        "app",
        "!app",
        "app=web",
        "app==web",
        "app!=web",
        "tier in (a, b)",
        "tier notin (a)",
        "x>3",
        "x<-1",
        "team=web,tier!=db",
        "example.com/role=worker",
        "app=",
        "a.b-c_d=E.f-9",
    ],
)
def test_valid_label_selectors(selector: str) -> None:
    assert selector_problem(selector) is None


@pytest.mark.parametrize(
    ("selector", "problem"),
    [
        ("a b c", "invalid label key"),
        ("app=web,", "empty requirement"),
        ("tier in (a, b", "unbalanced parentheses"),
        ("x>three", "needs an integer"),
        ("app=-web", "invalid label value"),
        ("-app", "invalid label key"),
    ],
)
def test_invalid_label_selectors_say_why(selector: str, problem: str) -> None:
    found = selector_problem(selector)
    assert found is not None and problem in found


def test_type_and_name_arguments() -> None:
    assert parse_target(("jobset",), name_required=False, command="get") == ("jobset", None)
    assert parse_target(("jobset/train",), name_required=True, command="get") == ("jobset", "train")
    assert parse_target(("jobset", "train"), name_required=True, command="get") == ("jobset", "train")
    for args, message in [
        (("jobset/",), 'NAME is empty in "jobset/"'),
        (("/x",), 'TYPE is empty in "/x"'),
        (("jobset", ""), "NAME is empty"),
        (("jobset/a", "b"), 'NAME given twice: as "jobset/a" and as "b"'),
        (("jobset/a/b",), 'NAME must not contain "/": "a/b"'),
        (("jobset", "a/b"), 'NAME must not contain "/": "a/b"'),
        (("a", "b", "c"), "too many arguments"),
    ]:
        with pytest.raises(UsageError) as info:
            parse_target(args, name_required=False, command="get")
        assert message in info.value.message
    with pytest.raises(UsageError, match="a NAME is required: give it as TYPE/NAME or as TYPE NAME"):
        parse_target(("jobset",), name_required=True, command="describe")


def test_phase_values_any_case_and_comma_lists() -> None:
    assert parse_phases(["running", "Failed,completed", " "]) == {"Running", "Failed", "Completed"}
    with pytest.raises(UsageError, match="invalid value: must be one of Failed, Completed"):
        parse_phases(["Bogus"])


def test_cluster_kartas_are_loaded_and_bad_ones_skipped_by_name() -> None:
    good = yaml.safe_load(dump_yaml(builtin_definitions()[0]))
    good["metadata"].update({"uid": "1", "resourceVersion": "5", "managedFields": [{"manager": "kubectl"}]})
    unknown_field = {**good, "metadata": {"name": "typo"}, "spec": {**good["spec"], "structureDefinitions": {}}}
    bad_jq = yaml.safe_load(dump_yaml(builtin_definitions()[0]))
    bad_jq["metadata"] = {"name": "bad-jq"}
    bad_jq["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"] = {
        "statusMappings": {"running": [{"byExpression": {"expression": ".a |||", "expectedResult": "true"}}]}
    }
    found = parse_cluster_kartas([good, unknown_field, bad_jq])
    assert [k.name for k in found.definitions] == [good["metadata"]["name"]]
    assert len(found.warnings) == 2
    assert found.warnings[0].startswith('skipping Karta definition "typo" from the cluster')
    assert found.warnings[1].startswith('skipping Karta definition "bad-jq" from the cluster: ')


def test_transport_and_status_messages() -> None:
    assert _transport_reason(OSError("[Errno 111] Connection refused")) == "connection refused"
    assert _transport_reason(OSError("[Errno -2] Name or service not known")) == "name or service not known"
    assert _transport_reason(
        OSError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate (_ssl.c:1006)")
    ) == ("TLS certificate verify failed: self-signed certificate")
    body = b'{"kind":"Status","message":"jobsets.jobset.x-k8s.io \\"x\\" not found","reason":"NotFound"}'
    assert _status_message(body) == ('jobsets.jobset.x-k8s.io "x" not found', "NotFound")
    assert _status_message(b"<html>bad gateway</html>") == ("<html>bad gateway</html>", "")
    line = RequestRecord("GET", "/api/v1/pods", "limit=500", 200, 0.0123, 2048).line
    assert line == "GET /api/v1/pods?limit=500 -> 200 (12 ms, 2.0 KiB)"


def test_a_closed_port_is_unreachable_with_a_clear_message(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    with ApiClient(load_context(ConnectionSettings(kubeconfig=str(config)), {})) as client:
        with pytest.raises(Unreachable) as info:
            client.get("/api")
        assert info.value.message == (
            f"cannot reach https://127.0.0.1:{port}: connection refused (check --context/--kubeconfig)"
        )
        assert [r.error for r in client.requests] == ["connection refused"]


@pytest.mark.parametrize("server", ["foo", "http://[::1"])
def test_a_malformed_server_url_is_a_clear_error(server: str, tmp_path: Path) -> None:
    from workload_map.cluster import KubeconfigError

    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c"}}],
                "current-context": "x",
            }
        )
    )
    context = load_context(ConnectionSettings(kubeconfig=str(config), server=server), {})
    with pytest.raises(KubeconfigError) as info, ApiClient(context) as client:
        client.get("/api")
    assert info.value.message.startswith(f"the server URL {server!r} is not valid")
    assert info.value.hint == "the server comes from --server"
