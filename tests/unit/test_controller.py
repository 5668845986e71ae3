"""The controller's pure parts (issue 22): flags, the Karta status it writes, the grouping diff, the metrics text.
The process itself is tested against the real API server in tests/e2e/test_controller.py."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.controller import OptionsError, parse_options
from workload_map.controller.grouping import changes, covers
from workload_map.controller.health import Metrics, Probes, parse_bind_address
from workload_map.controller.karta_status import karta_status, merge_conditions
from workload_map.errors import WorkloadMapError


def test_defaults() -> None:
    options = parse_options([])
    assert options.leader_elect is True and options.dry_run is False and options.scheduler == "kai"
    assert options.namespaces == () and options.health_probe_bind_address == ":8081"
    assert options.dashboard_bind_address == "0"  # off unless asked for


@pytest.mark.parametrize(
    ("flags", "leader", "dry"),
    [
        (["--leader-elect=false"], False, False),
        (["--leader-elect", "false"], False, False),
        (["--leader-elect=true", "--dry-run"], True, True),
        (["--dry-run=FALSE"], True, False),
        (["--dry-run=1"], True, True),
    ],
)
def test_boolean_flags_take_a_value(flags: list[str], leader: bool, dry: bool) -> None:
    options = parse_options(flags)
    assert (options.leader_elect, options.dry_run) == (leader, dry)


def test_durations() -> None:
    options = parse_options(["--webhook-cert-validity", "2h", "--webhook-cert-check-interval", "90"])
    assert (options.webhook_cert_validity, options.webhook_cert_check_interval) == (7200.0, 90.0)
    assert parse_options(["--webhook-cert-validity", "1d"]).webhook_cert_validity == 86400.0
    assert parse_options([]).webhook_cert_validity == 365 * 86400.0


def test_namespaces_are_a_sorted_set() -> None:
    assert parse_options(["--namespaces", "b, a,,b"]).namespaces == ("a", "b")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--leader-elect=maybe"], "argument --leader-elect: expected true or false, got 'maybe'"),
        (["--scheduler", "kueue"], "argument --scheduler: invalid choice: 'kueue'"),
        (["--renew-deadline", "20"], "--renew-deadline must be shorter than --lease-duration"),
        (["--retry-period", "0"], "argument --retry-period: expected a positive number of seconds, got '0'"),
        (["--dashboard-bind-address", "8082"], "--dashboard-bind-address: bind address '8082': expected [HOST]:PORT"),
        (["--webhook-cert-validity", "soon"], "argument --webhook-cert-validity: expected a duration such as 8760h"),
        (
            ["--webhook-cert-validity", "30s", "--webhook-cert-check-interval", "10s"],
            "--webhook-cert-check-interval must be well under a third of --webhook-cert-validity",
        ),
        (
            ["--webhook-url", "https://x:1", "--webhook-service-name", "wmap"],
            "--webhook-url and --webhook-service-name: give one",
        ),
    ],
)
def test_bad_flags_are_one_error_naming_the_flag(flags: list[str], message: str) -> None:
    with pytest.raises(OptionsError) as caught:
        parse_options(flags)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, WorkloadMapError)


def test_bind_addresses() -> None:
    assert parse_bind_address(":8080") == ("0.0.0.0", 8080)
    assert parse_bind_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_bind_address("0") is None
    with pytest.raises(ValueError, match="expected \\[HOST\\]:PORT"):
        parse_bind_address("localhost")


def _karta(name: str = "w", *, kind: dict[str, str] | None = None, broken: bool = False) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "w", "statusDefinition": {"statusMappings": {}}}
    if kind is not None:
        root["kind"] = kind
    structure: dict[str, Any] = {"rootComponent": root}
    if broken:
        structure["childComponents"] = [{"name": "c", "ownerRef": "nowhere"}]
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {"structureDefinition": structure},
    }


GVK = {"group": "example.com", "version": "v1", "kind": "Widget"}


def test_a_valid_served_karta_is_ready_with_its_labels() -> None:
    status = karta_status(_karta(kind=GVK), served=lambda g, v, k: (g, v, k) == ("example.com", "v1", "Widget"))
    assert {k: v[:2] for k, v in status.conditions.items()} == {
        "KartaValidated": ("True", "Valid"),
        "CRDExists": ("True", "Served"),
        "Ready": ("True", "Ready"),
    }
    assert status.labels == {
        "run.ai/karta-group": "example.com",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Widget",
    }
    assert status.failures == []


def test_an_invalid_karta_names_the_path_in_its_condition() -> None:
    status = karta_status(_karta(kind=GVK, broken=True), served=lambda *_: True)
    validated = status.conditions["KartaValidated"]
    assert validated[:2] == ("False", "ValidationFailed")
    assert "spec.structureDefinition.childComponents[0].ownerRef: " in validated[2]
    assert status.conditions["Ready"][:2] == ("False", "NotValidated")
    assert [reason for reason, _ in status.failures] == ["ValidationFailed", "NotValidated"]


def test_no_root_kind_removes_the_labels() -> None:
    status = karta_status(_karta(), served=lambda *_: True)
    assert status.conditions["CRDExists"][1] == "NoRootKind"
    assert status.conditions["CRDExists"][2].startswith("spec.structureDefinition.rootComponent.kind: ")
    assert status.labels == dict.fromkeys(("run.ai/karta-group", "run.ai/karta-version", "run.ai/karta-kind"))


def test_two_kartas_of_one_kind_are_not_ready() -> None:
    status = karta_status(_karta("a", kind=GVK), served=lambda *_: True, same_kind=["a", "b"])
    assert status.conditions["Ready"][:2] == ("False", "DuplicateKind")
    assert "Karta(s) b define the same root kind" in status.conditions["Ready"][2]


def test_merge_conditions_keeps_the_transition_time_of_an_unchanged_status() -> None:
    existing = [
        {
            "type": "Ready",
            "status": "True",
            "reason": "Ready",
            "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        },
        {
            "type": "CRDExists",
            "status": "True",
            "reason": "Served",
            "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        },
        {
            "type": "Other",
            "status": "True",
            "reason": "Theirs",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        },
    ]
    wanted = {"Ready": ("True", "Ready", "m2"), "CRDExists": ("False", "NotServed", "gone")}
    merged = {c["type"]: c for c in merge_conditions(existing, wanted, generation=3, stamp="2026-02-02T00:00:00Z")}
    assert merged["Ready"]["lastTransitionTime"] == "2026-01-01T00:00:00Z" and merged["Ready"]["message"] == "m2"
    assert merged["CRDExists"]["lastTransitionTime"] == "2026-02-02T00:00:00Z"
    assert merged["Other"]["reason"] == "Theirs"
    assert merged["Ready"]["observedGeneration"] == 3


def _group(name: str, uid: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/managed-by": "workload-map"}}
    if uid is not None:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": uid, "controller": True}]
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": metadata, "spec": spec}


def test_changes_create_update_delete_and_conflicts() -> None:
    wanted = [_group("a", "u1", {"minMember": 2}), _group("b", "u1", {"minMember": 1}), _group("c", "u1", {})]
    existing = [
        {**_group("a", "u1", {"minMember": 1}), "status": {"phase": "Running"}},  # changed: replaced
        _group("c", "u2", {}),  # someone else's: a conflict
        _group("d", "u1", {"minMember": 1}),  # no longer wanted: deleted
        _group("e", "u2", {"minMember": 1}),  # not ours: left alone
    ]
    creates, updates, deletes, conflicts = changes(wanted, existing, "u1")
    assert [o["metadata"]["name"] for o in creates] == ["b"]
    assert [(o["metadata"]["name"], o["spec"], o["status"]) for o in updates] == [
        ("a", {"minMember": 2}, {"phase": "Running"})
    ]
    assert [o["metadata"]["name"] for o in deletes] == ["d"]
    assert conflicts == ["PodGroup c exists and is not owned by the workload"]


def test_the_servers_defaults_are_no_difference() -> None:
    wanted = [_group("a", "u1", {"templates": [{"name": "t", "gang": {"min": 2}}]})]
    stored = _group("a", "u1", {"templates": [{"name": "t", "gang": {"min": 2}, "extra": None}], "mode": "Pod"})
    assert changes(wanted, [stored], "u1")[:3] == ([], [], [])
    assert covers({"a": [1, 2]}, {"a": [1, 2]}) and not covers({"a": [1]}, {"a": [1, 2]})
    assert not covers({"a": {"b": 1}}, {"a": {"b": 2}})


def test_metrics_text() -> None:
    metrics = Metrics()
    metrics.reconciled("karta", "success", 0.02)
    metrics.wrote("create", "PodGroup")
    metrics.queue_depth["karta"] = lambda: 3
    text = metrics.text()
    assert 'workloadmap_controller_reconciles_total{controller="karta",result="success"} 1' in text
    assert 'workloadmap_controller_reconcile_seconds_bucket{controller="karta",le="0.01"} 0' in text
    assert 'workloadmap_controller_reconcile_seconds_bucket{controller="karta",le="0.025"} 1' in text
    assert 'workloadmap_controller_queue_depth{controller="karta"} 3' in text
    assert 'workloadmap_controller_writes_total{verb="create",kind="PodGroup"} 1' in text
    assert "workloadmap_controller_leader 0" in text


def test_probes() -> None:
    probes = Probes()
    probes.expect("a")
    probes.expect("b")
    probes.ready("a")
    assert probes.not_ready() == ["b"]


def _review(
    obj: dict[str, Any] | None, *, old: dict[str, Any] | None = None, operation: str = "CREATE"
) -> dict[str, Any]:
    request: dict[str, Any] = {"uid": "u-1", "operation": operation, "object": obj}
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def test_the_validating_webhook_lists_every_finding() -> None:
    from workload_map.controller.admission import validate_karta

    answer = validate_karta(_review(_karta(kind=GVK, broken=True)))["response"]
    assert answer["uid"] == "u-1" and answer["allowed"] is False
    assert answer["status"]["code"] == 422
    assert answer["status"]["message"].startswith('Karta "w" is invalid: 1 error(s): ')
    assert "spec.structureDefinition.childComponents[0].ownerRef: " in answer["status"]["message"]
    assert validate_karta(_review(_karta(kind=GVK)))["response"] == {"uid": "u-1", "allowed": True}
    assert validate_karta(_review(None, operation="DELETE"))["response"]["allowed"] is True


def test_the_root_kind_is_immutable() -> None:
    from workload_map.controller.admission import validate_karta

    moved = _karta(kind={**GVK, "kind": "Gadget"})
    answer = validate_karta(_review(moved, old=_karta(kind=GVK), operation="UPDATE"))["response"]
    assert answer["allowed"] is False
    assert (
        "spec.structureDefinition.rootComponent.kind: immutable (was example.com/v1/Widget)"
        in answer["status"]["message"]
    )


def test_the_mutating_webhook_adds_the_labels() -> None:
    import base64
    import json

    from workload_map.controller.admission import mutate_karta

    answer = mutate_karta(_review(_karta(kind=GVK)))["response"]
    assert answer["allowed"] is True and answer["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(answer["patch"])) == [
        {"op": "add", "path": "/metadata/labels", "value": {}},
        {"op": "add", "path": "/metadata/labels/run.ai~1karta-group", "value": "example.com"},
        {"op": "add", "path": "/metadata/labels/run.ai~1karta-version", "value": "v1"},
        {"op": "add", "path": "/metadata/labels/run.ai~1karta-kind", "value": "Widget"},
    ]
    assert "patch" not in mutate_karta(_review(_karta()))["response"]  # no root kind: nothing to stamp


def test_auto_certificates_are_made_once_and_name_the_hosts(tmp_path: Any) -> None:
    pytest.importorskip("cryptography")
    from workload_map.controller.certs import ensure_certificates, read_certificates

    made = ensure_certificates(tmp_path, ["127.0.0.1", "wmap.example"])
    assert made.bundle_changed and made.serving_changed
    assert made.certificate.ca_pem.startswith(b"-----BEGIN CERTIFICATE-----")
    again = ensure_certificates(tmp_path, ["127.0.0.1"])
    assert again.certificate.ca_pem == made.certificate.ca_pem  # fresh and naming the host: kept
    assert not again.bundle_changed and not again.serving_changed
    other = ensure_certificates(tmp_path, ["10.0.0.1"])
    assert other.serving_changed and not other.bundle_changed  # another host: signed again by the same CA
    assert read_certificates(tmp_path).cert_file == tmp_path / "tls.crt"
    for key in ("tls.key", "signer.key"):
        assert oct((tmp_path / key).stat().st_mode & 0o777) == "0o600"


def _served(directory: Any) -> tuple[Any, list[Any]]:
    from cryptography import x509

    serving = x509.load_pem_x509_certificate((directory / "tls.crt").read_bytes())
    bundle = x509.load_pem_x509_certificates((directory / "ca.crt").read_bytes())
    return serving, bundle


def _trusted(serving: Any, bundle: list[Any], at: Any) -> bool:
    """The serving certificate verifies against the bundle at `at` (what the API server checks)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    for ca in bundle:
        if ca.subject != serving.issuer or not ca.not_valid_before_utc <= at <= ca.not_valid_after_utc:
            continue
        ca.public_key().verify(
            serving.signature, serving.tbs_certificate_bytes, ec.ECDSA(serving.signature_hash_algorithm)
        )
        return serving.not_valid_before_utc <= at <= serving.not_valid_after_utc
    return False


def test_auto_certificates_rotate_before_expiry_and_publish_a_new_ca_before_it_signs(tmp_path: Any) -> None:
    """A day's validity, checked every hour for ten days: the certificate served is always trusted by the bundle
    published one check earlier (what the API server holds), serving certificates are renewed with a third left,
    and the CA is replaced (three days' life) after its successor spent a check in the bundle."""
    pytest.importorskip("cryptography")
    import datetime

    from workload_map.controller.certs import ensure_certificates

    day, hour = datetime.timedelta(days=1), datetime.timedelta(hours=1)
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    ensure_certificates(tmp_path, ["127.0.0.1"], validity=day, now=start)
    published = _served(tmp_path)[1]
    serials, issuers, bundle_changes = set(), set(), 0
    for step in range(1, 240):
        now = start + step * hour
        rotated = ensure_certificates(tmp_path, ["127.0.0.1"], validity=day, now=now)
        serving, bundle = _served(tmp_path)
        assert _trusted(serving, published, now), f"at {now}: served a certificate the API server cannot trust"
        assert serving.not_valid_after_utc - now > day / 3 - hour
        serials.add(serving.serial_number)
        issuers.add(serving.issuer.rfc4514_string())
        bundle_changes += rotated.bundle_changed
        assert rotated.certificate.ca_pem == (tmp_path / "ca.crt").read_bytes()
        published = bundle  # registered after the check (keep_certificates writes it before serving anew)
        assert all(ca.not_valid_after_utc > now for ca in bundle)  # expired CAs leave
    assert len(serials) >= 10  # renewed every 16 hours or so
    assert len(issuers) >= 3  # a new CA every 3 days
    assert bundle_changes >= 2 * (len(issuers) - 1)  # each CA published before it signs, each old one dropped


def test_the_manifests_role_reads_every_group_the_catalog_groups() -> None:
    from pathlib import Path

    import yaml

    from workload_map.catalog import builtin_definitions

    manifests = Path(__file__).resolve().parents[2] / "deploy" / "controller" / "workload-map-controller.yaml"
    (role,) = [d for d in yaml.safe_load_all(manifests.read_text()) if d and d["kind"] == "ClusterRole"]
    readable = {
        group
        for rule in role["rules"]
        if rule["resources"] == ["*"] and {"get", "list", "watch"} <= set(rule["verbs"])
        for group in rule["apiGroups"]
    }
    grouped = {
        karta.root_gvk.group
        for karta in builtin_definitions()
        if karta.root_gvk is not None and karta.gang_scheduling is not None and karta.root_gvk.group
    }
    assert grouped - readable == set()


def test_webhook_configurations_point_at_a_url_or_an_in_cluster_service() -> None:
    import base64

    from workload_map.controller.webhook import Registration, ServiceReference, configurations

    service = ServiceReference("workload-map-system", "workload-map-controller")
    assert service.hosts() == [
        "workload-map-controller.workload-map-system.svc",
        "workload-map-controller.workload-map-system.svc.cluster.local",
    ]
    inside = configurations(Registration("wmap", service=service, pods_excluded=("kube-system",)), b"CA")
    validating, mutating = inside
    assert validating["webhooks"][0]["clientConfig"] == {
        "service": {
            "namespace": "workload-map-system",
            "name": "workload-map-controller",
            "path": "/validate-karta",
            "port": 443,
        },
        "caBundle": base64.b64encode(b"CA").decode(),
    }
    assert [h["clientConfig"]["service"]["path"] for h in mutating["webhooks"]] == ["/mutate-karta", "/mutate-pod"]
    outside = configurations(Registration("wmap", url="https://127.0.0.1:9443/"), b"")
    assert outside[0]["webhooks"][0]["clientConfig"] == {"url": "https://127.0.0.1:9443/validate-karta"}
    assert len(outside[1]["webhooks"]) == 1  # no pod webhook without the grouper


def test_a_bundle_keeps_the_other_replicas_live_cas(tmp_path: Any) -> None:
    pytest.importorskip("cryptography")
    import datetime

    from cryptography import x509

    from workload_map.controller.certs import MAX_BUNDLE, ensure_certificates, merge_bundles

    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    ours = ensure_certificates(tmp_path / "a", ["127.0.0.1"], now=now).certificate.ca_pem
    theirs = ensure_certificates(tmp_path / "b", ["127.0.0.1"], now=now).certificate.ca_pem
    subjects = [c.subject for c in x509.load_pem_x509_certificates(merge_bundles(ours, theirs, now=now))]
    assert subjects == [x509.load_pem_x509_certificate(p).subject for p in (ours, theirs)]
    assert merge_bundles(ours, ours, now=now) == ours  # ours only once
    assert merge_bundles(ours, b"not pem", now=now) == ours
    later = now + datetime.timedelta(days=4 * 365)  # theirs expired (3 years): dropped
    assert merge_bundles(ours, theirs, now=later) == ours
    many = b"".join(
        ensure_certificates(tmp_path / f"r{i}", ["127.0.0.1"], now=now).certificate.ca_pem
        for i in range(MAX_BUNDLE + 2)
    )
    assert len(x509.load_pem_x509_certificates(merge_bundles(ours, many, now=now))) == MAX_BUNDLE
