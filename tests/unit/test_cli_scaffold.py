"""`wmap scaffold --crd FILE [--kind K] [--version V]`: the draft on stdout (which `wmap validate` accepts), a
summary on stderr, and exit codes 0/1/2 with one-line messages."""

from __future__ import annotations

import gzip
from pathlib import Path

import yaml

from tests.cli.helpers import REPO, Wmap

CRDS = REPO / "tests" / "fixtures" / "scaffold" / "crds"
MINIMAL_CRDS = REPO / "tests" / "e2e" / "crds"


def crd_file(tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(gzip.decompress((CRDS / f"{name}.yaml.gz").read_bytes()))
    return str(path)


def test_the_draft_goes_to_stdout_and_validates(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("scaffold", "--crd", crd_file(tmp_path, "jobs.batch.volcano.sh"))
    assert result.code == 0, result.stderr
    assert yaml.safe_load(result.stdout)["spec"]["structureDefinition"]["rootComponent"]["kind"] == {
        "group": "batch.volcano.sh",
        "version": "v1alpha1",
        "kind": "Job",
    }
    assert result.stderr.startswith("drafted Job v1alpha1 with 1 pod-bearing component (tasks); ")
    assert "TODO comments to settle" in result.stderr
    checked = wmap("validate", "-", stdin=result.stdout)
    assert checked.code == 0 and checked.stdout == "OK: batch-volcano-sh-job-v1alpha1\n", checked.output


def test_stdin_is_read_with_a_dash(wmap: Wmap, tmp_path: Path) -> None:
    text = Path(crd_file(tmp_path, "leaderworkersets.leaderworkerset.x-k8s.io")).read_text()
    result = wmap("scaffold", "--crd", "-", stdin=text)
    assert result.code == 0, result.stderr
    assert "podTemplateSpecPath: '.spec.leaderWorkerTemplate.workerTemplate'" in result.stdout


def test_a_crd_serving_several_versions_needs_version(wmap: Wmap, tmp_path: Path) -> None:
    path = crd_file(tmp_path, "rayclusters.ray.io")
    result = wmap("scaffold", "--crd", path)
    assert result.code == 2 and result.stdout == ""
    assert "error: CRD 'rayclusters.ray.io' serves 2 versions: choose one with --version" in result.stderr
    assert "hint: its versions: v1, v1alpha1" in result.stderr
    chosen = wmap("scaffold", "--crd", path, "--version", "v1")
    assert chosen.code == 0 and "version: 'v1', kind: 'RayCluster'" in chosen.stdout
    unknown = wmap("scaffold", "--crd", path, "--version", "v9")
    assert unknown.code == 2 and "has no version 'v9'" in unknown.stderr


def test_kind_picks_one_crd_of_a_file_with_several(wmap: Wmap, tmp_path: Path) -> None:
    both = tmp_path / "both.yaml"
    both.write_text(
        Path(crd_file(tmp_path, "jobsets.jobset.x-k8s.io")).read_text()
        + "---\n"
        + Path(crd_file(tmp_path, "jobs.batch.volcano.sh")).read_text()
    )
    several = wmap("scaffold", "--crd", str(both))
    assert several.code == 2 and "holds 2 CRDs: choose one with --kind" in several.stderr
    assert "hint: its kinds: JobSet, Job" in several.stderr
    picked = wmap("scaffold", "--crd", str(both), "--kind", "jobset")
    assert picked.code == 0 and "kind: 'JobSet'" in picked.stdout
    missing = wmap("scaffold", "--crd", str(both), "--kind", "RayJob")
    assert missing.code == 2 and "has no CRD of kind 'RayJob'" in missing.stderr


def test_a_schema_without_a_pod_template_is_exit_1_with_a_clear_message(wmap: Wmap) -> None:
    result = wmap("scaffold", "--crd", str(MINIMAL_CRDS / "pytorchjobs.kubeflow.org.yaml"))
    assert result.code == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: no pod template found in the schema of pytorchjobs.kubeflow.org v1: write its components by hand "
        "(docs/scaffold.md)",
        "hint: these fields keep unknown fields, so their shape is not in the schema: .spec",
    ]


def test_a_file_that_cannot_be_read_or_is_not_a_crd_is_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    missing = wmap("scaffold", "--crd", str(tmp_path / "nope.yaml"))
    assert missing.code == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec: [1, 2\n")
    broken = wmap("scaffold", "--crd", str(bad))
    assert broken.code == 2 and "invalid YAML at line" in broken.stderr
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    not_crd = wmap("scaffold", "--crd", str(pod))
    assert not_crd.code == 2 and f"error: {pod} holds no CustomResourceDefinition" in not_crd.stderr


def test_crd_is_required(wmap: Wmap) -> None:
    result = wmap("scaffold")
    assert result.code == 2 and "--crd" in result.stderr
