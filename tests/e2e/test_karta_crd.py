"""The project's Karta CRD (deploy/crds/kartas.run.ai.yaml) on a real API server.

It must accept every built-in catalog definition (without pruning a field) and reject structurally invalid
Kartas. The tests skip, with a reason, only while the CRD file or the catalog does not exist yet.
"""

from __future__ import annotations

import copy
import os
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from .conftest import REPO_ROOT, expect

pytestmark = pytest.mark.e2e

# WMAP_TEST_CATALOG_DIR points the tests at another directory of definitions.
CATALOG_DIR = Path(
    os.environ.get("WMAP_TEST_CATALOG_DIR") or REPO_ROOT / "src" / "workload_map" / "catalog" / "definitions"
)
KARTAS = "/apis/run.ai/v1alpha1/kartas"
# dryRun: nothing is stored (Kartas are cluster-scoped; reruns on a reused server must not collide).
# fieldValidation=Strict: an unknown (would-be pruned) field is an error, not a silent drop.
CREATE_PARAMS = {"dryRun": "All", "fieldValidation": "Strict"}

CATALOG_FILES = sorted(CATALOG_DIR.glob("*.yaml")) + sorted(CATALOG_DIR.glob("*.yml"))

MINIMAL: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "minimal"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "minimal",
                "kind": {"group": "minimal.org", "version": "v1", "kind": "Minimal"},
                "statusDefinition": {
                    "statusMappings": {"running": [{"byConditions": [{"type": "Running", "status": "True"}]}]}
                },
            }
        }
    },
}


def _create(kube: httpx.Client, obj: dict[str, Any]) -> httpx.Response:
    return kube.post(KARTAS, json=obj, params=CREATE_PARAMS)


def _missing(sent: Any, got: Any, path: str = "") -> list[str]:
    """Paths of what was sent but is not in what the server returned (pruned or changed)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [f"{path or '.'}: sent an object, got {got!r}"]
        out = []
        for k, v in sent.items():
            if k not in got:
                out.append(f"{path}.{k}: pruned")
            else:
                out += _missing(v, got[k], f"{path}.{k}")
        return out
    if isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return [f"{path}: sent {sent!r}, got {got!r}"]
        out = []
        for i, (a, b) in enumerate(zip(sent, got, strict=True)):
            out += _missing(a, b, f"{path}[{i}]")
        return out
    return [] if sent == got else [f"{path}: sent {sent!r}, got {got!r}"]


def test_karta_crd_is_established(karta_crd: dict[str, Any]) -> None:
    spec = karta_crd["spec"]
    assert spec["group"] == "run.ai"
    assert spec["names"]["kind"] == "Karta"
    assert spec["names"]["plural"] == "kartas"
    assert spec["scope"] == "Cluster"
    served = {v["name"]: v for v in spec["versions"] if v.get("served")}
    assert "v1alpha1" in served
    assert "status" in (served["v1alpha1"].get("subresources") or {})


def test_minimal_karta_is_accepted(karta_crd: dict[str, Any], kube: httpx.Client) -> None:
    got = expect(_create(kube, MINIMAL), 200, 201)
    assert _missing(MINIMAL["spec"], got["spec"]) == []


def test_karta_round_trip_with_status(karta_crd: dict[str, Any], kube: httpx.Client) -> None:
    """Really store one (random name), set its status conditions, read it back."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    obj = copy.deepcopy(MINIMAL)
    obj["metadata"]["name"] = name
    expect(kube.post(KARTAS, json=obj, params={"fieldValidation": "Strict"}), 201)
    try:
        cond = {
            "type": "Ready",
            "status": "True",
            "reason": "Test",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        expect(
            kube.patch(
                f"{KARTAS}/{name}/status",
                json={"status": {"conditions": [cond]}},
                headers={"Content-Type": "application/merge-patch+json"},
            )
        )
        got = expect(kube.get(f"{KARTAS}/{name}"))
        assert got["status"]["conditions"][0]["type"] == "Ready"
    finally:
        kube.delete(f"{KARTAS}/{name}")


def _catalog_documents(path: Path) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    out = []
    for i, raw in enumerate(docs):
        assert isinstance(raw, dict), f"{path.name} document {i}: not a mapping"
        assert raw.get("kind", "Karta") == "Karta", f"{path.name} document {i}: kind {raw.get('kind')}"
        doc = copy.deepcopy(raw)
        doc.setdefault("apiVersion", "run.ai/v1alpha1")
        doc.setdefault("kind", "Karta")
        doc.setdefault("metadata", {}).setdefault("name", path.stem if len(docs) == 1 else f"{path.stem}-{i}")
        out.append(doc)
    return out


@pytest.mark.parametrize(
    "definition_file",
    CATALOG_FILES or [pytest.param(None, marks=pytest.mark.skip(reason=f"no catalog yet in {CATALOG_DIR}"))],
    ids=[p.stem for p in CATALOG_FILES] or ["no-catalog"],
)
def test_catalog_definition_is_accepted(definition_file: Path, karta_crd: dict[str, Any], kube: httpx.Client) -> None:
    docs = _catalog_documents(definition_file)
    assert docs, f"{definition_file} holds no definition"
    for doc in docs:
        resp = _create(kube, doc)
        got = expect(resp, 200, 201)
        # Nothing the definition says may be dropped by the schema (defaults may be added).
        assert _missing(doc["spec"], got["spec"]) == [], f"{definition_file.name} {doc['metadata']['name']}"


def test_catalog_is_not_empty_once_it_exists() -> None:
    if not CATALOG_DIR.is_dir():
        pytest.skip(f"no catalog yet ({CATALOG_DIR})")
    assert CATALOG_FILES, f"{CATALOG_DIR} exists but holds no *.yaml definition"


def _mutate(path: list[str | int], value: Any = ..., *, delete: bool = False) -> dict[str, Any]:
    obj = copy.deepcopy(MINIMAL)
    target: Any = obj
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return obj


SD = ["spec", "structureDefinition"]
ROOT = [*SD, "rootComponent"]
CHILD = {
    "name": "workers",
    "ownerRef": "minimal",
    "kind": {"group": "", "version": "v1", "kind": "Pod"},
}

# case -> (object, the field path the server's error must name)
INVALID: dict[str, tuple[dict[str, Any], str]] = {
    "empty-spec": (_mutate(["spec"], {}), "spec.structureDefinition"),
    "no-structureDefinition": (_mutate(SD, delete=True), "spec.structureDefinition"),
    "structureDefinition-not-an-object": (_mutate(SD, "JobSet"), "spec.structureDefinition"),
    "no-rootComponent": (_mutate([*ROOT], delete=True), "spec.structureDefinition.rootComponent"),
    "root-without-name": (_mutate([*ROOT, "name"], delete=True), "spec.structureDefinition.rootComponent.name"),
    "root-name-not-a-string": (_mutate([*ROOT, "name"], 42), "spec.structureDefinition.rootComponent.name"),
    "gvk-without-version": (
        _mutate([*ROOT, "kind", "version"], delete=True),
        "spec.structureDefinition.rootComponent.kind.version",
    ),
    "gvk-not-an-object": (_mutate([*ROOT, "kind"], "batch/v1/Job"), "spec.structureDefinition.rootComponent.kind"),
    "statusMappings-missing": (
        _mutate([*ROOT, "statusDefinition", "statusMappings"], delete=True),
        "spec.structureDefinition.rootComponent.statusDefinition.statusMappings",
    ),
    "childComponents-not-a-list": (
        _mutate([*SD, "childComponents"], "workers"),
        "spec.structureDefinition.childComponents",
    ),
    "duplicate-child-names": (
        _mutate([*SD, "childComponents"], [CHILD, dict(CHILD)]),
        "spec.structureDefinition.childComponents[1]",
    ),
    "unknown-spec-field": (_mutate(["spec", "notAField"], True), "spec.notAField"),
    "unknown-component-field": (
        _mutate([*ROOT, "podTemplate"], ".spec.template"),
        "spec.structureDefinition.rootComponent.podTemplate",
    ),
}


@pytest.mark.parametrize("case", list(INVALID), ids=list(INVALID))
def test_structurally_invalid_karta_is_rejected(case: str, karta_crd: dict[str, Any], kube: httpx.Client) -> None:
    obj, field = INVALID[case]
    obj = copy.deepcopy(obj)
    obj["metadata"]["name"] = f"invalid-{case.lower()}"
    resp = _create(kube, obj)
    assert resp.status_code in (400, 422), f"{case}: accepted ({resp.status_code}): {resp.text[:500]}"
    status = resp.json()
    assert status["reason"] in ("Invalid", "BadRequest"), resp.text[:500]
    # Rejected for the mutated field, not for something else (e.g. an invalid metadata.name).
    assert field in status["message"], f"{case}: expected an error about {field}: {status['message'][:500]}"
    assert "metadata.name" not in status["message"]
