"""The Helm chart (charts/workload-map, issue 22): its copies of the Karta CRD and of the ClusterRole's rules are
the project's, and, when a helm binary is at hand (scripts/helm.sh builds the pinned one from the Go module proxy
into ~/.cache/workload-map), it lints and renders with the objects docs/controller.md names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "workload-map"
MANIFESTS = REPO / "deploy" / "controller" / "workload-map-controller.yaml"
HELM_VERSION = "v3.17.3"


def _helm() -> str | None:
    """The pinned helm scripts/helm.sh builds (in the cache scripts/test-cluster.sh uses), else one on PATH."""
    root = os.environ.get("WMAP_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workload-map"
    )
    cached = Path(root) / f"helm-{HELM_VERSION}" / "helm"
    return str(cached) if cached.is_file() else shutil.which("helm")


def _manifest_role() -> dict[str, Any]:
    (role,) = [d for d in yaml.safe_load_all(MANIFESTS.read_text()) if d and d["kind"] == "ClusterRole"]
    return role


def test_the_chart_carries_the_projects_crd() -> None:
    assert (CHART / "files" / "kartas.run.ai.yaml").read_text() == (
        REPO / "deploy" / "crds" / "kartas.run.ai.yaml"
    ).read_text()


def test_the_manifests_carry_the_charts_rules() -> None:
    """Without helm too: the rendered manifests' ClusterRole has the rules file's rules (the one place to edit)."""
    assert yaml.safe_load((CHART / "files" / "clusterrole-rules.yaml").read_text()) == _manifest_role()["rules"]


def test_the_manifests_are_the_charts_rendering() -> None:
    """deploy/controller/workload-map-controller.yaml is what scripts/render_deploy.py renders from the chart now
    (byte for byte): an edit of the chart (its rules file) without rendering again, or an edit of the manifests by
    hand, fails here with the diff."""
    helm = _helm()
    if helm is None:
        pytest.skip(f"no helm (scripts/helm.sh builds helm {HELM_VERSION})")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "render_deploy.py"), "--check", "--helm", helm],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _render(*values: str) -> list[dict[str, Any]]:
    helm = _helm()
    if helm is None:
        pytest.skip(f"no helm (scripts/helm.sh builds helm {HELM_VERSION})")
    args = [helm, "template", "wmap", str(CHART), "--namespace", "workload-map-system"]
    for value in values:
        args += ["--set", value]
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def test_the_chart_lints() -> None:
    helm = _helm()
    if helm is None:
        pytest.skip(f"no helm (scripts/helm.sh builds helm {HELM_VERSION})")
    done = subprocess.run([helm, "lint", str(CHART)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_chart_renders_the_controller() -> None:
    objects = _render()
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in objects)
    assert kinds == [
        ("Certificate", "workload-map-controller"),
        ("ClusterRole", "workload-map-controller"),
        ("ClusterRoleBinding", "workload-map-controller"),
        ("CustomResourceDefinition", "kartas.run.ai"),
        ("Deployment", "workload-map-controller"),
        ("Issuer", "workload-map-controller-selfsigned"),
        ("MutatingWebhookConfiguration", "workload-map-controller"),
        ("PodDisruptionBudget", "workload-map-controller"),
        ("Service", "workload-map-controller"),
        ("ServiceAccount", "workload-map-controller"),
        ("ValidatingWebhookConfiguration", "workload-map-controller"),
    ]
    by_kind = {o["kind"]: o for o in objects}
    assert by_kind["ClusterRole"]["rules"] == _manifest_role()["rules"]
    assert by_kind["CustomResourceDefinition"]["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    (container,) = by_kind["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert "--scheduler=kai" in container["args"] and "--webhook-cert-mode=manual" in container["args"]
    pods = by_kind["MutatingWebhookConfiguration"]["webhooks"][1]
    assert pods["name"] == "pods.mutate.workloadmap.io" and pods["failurePolicy"] == "Ignore"
    assert pods["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "workload-map-system"]
    assert pods["clientConfig"]["service"] == {
        "name": "workload-map-controller",
        "namespace": "workload-map-system",
        "path": "/mutate-pod",
        "port": 443,
    }


def test_the_chart_values_reach_the_flags() -> None:
    objects = _render(
        "scheduler=volcano", "namespaces={ml,research}", "webhook.enabled=false", "karta.installCRD=false"
    )
    kinds = {o["kind"] for o in objects}
    assert "CustomResourceDefinition" not in kinds and "MutatingWebhookConfiguration" not in kinds
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--scheduler=volcano" in args and "--namespaces=ml,research" in args and "--enable-webhook=false" in args


def test_the_dashboard_value_serves_it_with_the_review_rules() -> None:
    """dashboard.enabled: the flag, a container and Service port, and the two review rules the token checks need
    (absent by default: least privilege)."""
    reviews = [
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    ]
    default = {o["kind"]: o for o in _render()}
    assert not any(rule in default["ClusterRole"]["rules"] for rule in reviews)
    objects = {o["kind"]: o for o in _render("dashboard.enabled=true", "dashboard.port=9400")}
    assert objects["ClusterRole"]["rules"] == _manifest_role()["rules"] + reviews
    (container,) = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert "--dashboard-bind-address=:9400" in container["args"]
    assert {"name": "dashboard", "containerPort": 9400} in container["ports"]
    assert {"name": "dashboard", "port": 9400, "targetPort": "dashboard"} in objects["Service"]["spec"]["ports"]


def test_the_auto_cert_mode_lets_the_controller_register_its_service() -> None:
    """webhook.certMode=auto: the controller makes and rotates its certificates and writes the configurations
    for the chart's Service (flags), so the chart renders neither them nor cert-manager's objects, and mounts no
    Secret."""
    objects = _render("webhook.certMode=auto")
    kinds = {o["kind"] for o in objects}
    assert not kinds & {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Certificate", "Issuer"}
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert {
        "--webhook-cert-mode=auto",
        "--webhook-service-name=workload-map-controller",
        "--webhook-service-namespace=workload-map-system",
        "--webhook-service-port=443",
    } <= set(container["args"])
    assert [v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]] == ["tmp"]
    from workload_map.controller import parse_options

    options = parse_options(container["args"])  # the rendered flags are the controller's
    assert (options.webhook_cert_mode, options.webhook_service_name) == ("auto", "workload-map-controller")
    (service,) = [o for o in objects if o["kind"] == "Service"]
    assert {"name": "webhook", "port": 443, "targetPort": "webhook"} in service["spec"]["ports"]


def test_the_helm_pin_is_one_version() -> None:
    script = (REPO / "scripts" / "helm.sh").read_text()
    assert f'VERSION="{HELM_VERSION}"' in script
