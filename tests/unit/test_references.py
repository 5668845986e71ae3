"""Cross-object references (`workloadmap.io/references`, docs/definitions.md "Cross-object references"): the
annotation read and validated, its jq checked like the definition's other fields, the references a workload names,
the followed object the definition reads, and the TrainJob definition over Kubeflow Trainer's runtimes (the
trainer overrides applied as the Trainer controller applies them)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import yaml

from workload_map import builtin_registry, validate
from workload_map.model import Karta, jq_fields
from workload_map.model.references import REFERENCES, reference_problems, reference_rules
from workload_map.resolve import resolve
from workload_map.resolve.references import ObjectReference, follow, references_of, without_reference
from workload_map.view import build_view

REPO = Path(__file__).resolve().parents[2]
REFERENCES_DIR = REPO / "tests" / "fixtures" / "references"
TRAINJOB = REPO / "tests" / "fixtures" / "catalog" / "trainer-kubeflow-org-trainjob-v1alpha1" / "workload.yaml"


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def trainjob_karta() -> Karta:
    chosen = builtin_registry().for_object(load(TRAINJOB))
    assert chosen is not None
    return chosen.karta


def with_annotation(karta: Karta, text: str) -> Karta:
    assert karta.metadata is not None
    annotations = {**(karta.metadata.annotations or {}), REFERENCES: text}
    metadata = msgspec.structs.replace(karta.metadata, annotations=annotations)
    return msgspec.structs.replace(karta, metadata=metadata)


# --- the annotation --------------------------------------------------------------------------------------------


def test_the_annotation_is_read_and_its_problems_named() -> None:
    good = {REFERENCES: "runtime:\n  apiVersion: '\"v1\"'\n  kind: '\"ConfigMap\"'\n  name: .spec.config\n"}
    (rule,) = reference_rules(good)
    assert (rule.name, rule.api_version, rule.kind, rule.object_name, rule.namespaced, rule.content) == (
        "runtime",
        '"v1"',
        '"ConfigMap"',
        ".spec.config",
        None,
        None,
    )
    assert reference_problems(good) == []
    assert reference_problems({REFERENCES: "[1, 2]"}) == [
        "not a YAML mapping of reference name to {apiVersion, kind, name, namespaced?, content?}"
    ]
    assert reference_problems({REFERENCES: "r:\n  kind: x\n"}) == ["r: apiVersion, name missing"]
    assert reference_problems({REFERENCES: "r:\n  apiVersion: a\n  kind: k\n  name: n\n  path: p\n"}) == [
        "r: unknown key path (known: apiVersion, kind, name, namespaced, content)"
    ]
    assert reference_problems({REFERENCES: "'a b':\n  apiVersion: a\n  kind: k\n  name: n\n"}) == [
        "reference name 'a b': letters, digits, - and _ only, at most 63"
    ]
    assert reference_problems({REFERENCES: "r:\n  apiVersion: a\n  kind: k\n  name: 5\n"}) == [
        "r: name must be a non-empty jq expression (a string)"
    ]
    many = "".join(f"r{i}:\n  apiVersion: a\n  kind: k\n  name: n\n" for i in range(9))
    assert reference_problems({REFERENCES: many}) == ["9 references; at most 8"]
    assert reference_rules({REFERENCES: many}) == ()


def test_the_annotations_jq_is_a_jq_field_and_passes_the_safety_check() -> None:
    karta = trainjob_karta()
    fields = dict(jq_fields(karta))
    where = f'metadata.annotations["{REFERENCES}"].runtime'
    assert fields[f"{where}.name"] == ".spec.runtimeRef.name"
    assert fields[f"{where}.content"] == ".spec"
    assert [f for f in validate(karta) if f.severity == "error"] == []
    unsafe = with_annotation(karta, "runtime:\n  apiVersion: input\n  kind: '\"K\"'\n  name: .a\n")
    findings = [f for f in validate(unsafe) if f.severity == "error"]
    assert any(f.path == f"{where}.apiVersion" for f in findings), findings
    malformed = with_annotation(karta, "runtime: 5")
    rules = {f.rule for f in validate(malformed) if f.severity == "error"}
    assert "references" in rules


# --- which objects, and the followed workload -----------------------------------------------------------------


def test_a_trainjob_names_its_runtime_with_the_controllers_defaults() -> None:
    karta = trainjob_karta()
    trainjob = load(TRAINJOB)
    wanted, problems = references_of(karta, trainjob)
    assert problems == ()
    assert wanted == (
        ObjectReference("runtime", "trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", "torch-distributed", ""),
    )
    namespaced = copy.deepcopy(trainjob)
    namespaced["spec"]["runtimeRef"] = {"name": "mine", "kind": "TrainingRuntime"}
    assert references_of(karta, namespaced)[0] == (
        ObjectReference("runtime", "trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "mine", "ml-team"),
    )
    unnamed = copy.deepcopy(trainjob)
    del unnamed["spec"]["runtimeRef"]
    assert references_of(karta, unnamed) == ((), ())  # nothing to follow, nothing to say


def test_follow_offers_the_content_and_matches_namespace_kind_and_name() -> None:
    karta = trainjob_karta()
    trainjob = load(TRAINJOB)
    runtime = load(REFERENCES_DIR / "torch-distributed.yaml")
    other_kind = {**runtime, "kind": "TrainingRuntime"}
    followed = follow(karta, trainjob, [other_kind, runtime])
    assert followed.found and not followed.missing and followed.problems == ()
    assert followed.object["workloadmap.io/references"] == {"runtime": runtime["spec"]}  # content: .spec
    assert "workloadmap.io/references" not in trainjob  # the caller's object is untouched
    nothing = follow(karta, trainjob, [other_kind])
    assert nothing.object == trainjob and nothing.found == ()
    assert [ref.describe() for ref in nothing.missing] == ["ClusterTrainingRuntime torch-distributed"]

    ref = ObjectReference("runtime", "trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "ds", "ml-team")
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "ds"}}
    assert ref.matches(body)  # a file's object without a namespace counts as any
    assert ref.matches({**body, "metadata": {"name": "ds", "namespace": "ml-team"}})
    assert not ref.matches({**body, "metadata": {"name": "ds", "namespace": "other"}})
    assert ref.describe() == "TrainingRuntime ds in namespace ml-team"


def test_an_expression_that_fails_is_a_problem_and_the_rest_still_resolves() -> None:
    karta = with_annotation(
        trainjob_karta(),
        "runtime:\n  apiVersion: '\"v1\"'\n  kind: '\"ConfigMap\"'\n  name: '.spec.trainer.args[]'\n",
    )
    trainjob = load(TRAINJOB)
    trainjob["spec"]["trainer"]["args"] = ["a", "b"]
    wanted, problems = references_of(karta, trainjob)
    assert wanted == ()
    assert problems == ("reference runtime: name: '.spec.trainer.args[]' gave 2 outputs, not one",)


# --- the TrainJob definition over the runtimes ------------------------------------------------------------------


def roles(obj: dict[str, Any], related: list[dict[str, Any]]) -> dict[str, Any]:
    """{replicated job: (desired pods, the trainer container)} of a TrainJob resolved with `related`."""
    karta = trainjob_karta()
    resolution = resolve(karta, follow(karta, obj, related).object)
    out: dict[str, Any] = {}
    component = resolution.component("replicatedjob")
    for instance_id, instance in component.instances.items():
        template = instance.pod_template or {}
        containers = {c["name"]: c for c in template.get("spec", {}).get("containers", [])}
        out[instance_id] = (instance.desired_replicas, containers.get("node"))
    view = build_view(resolution, origin="catalog").to_dict()
    out["gpus"] = view["resources"]["gpus"]
    return out


def test_without_its_runtime_a_trainjob_shows_what_it_says() -> None:
    found = roles(load(TRAINJOB), [])
    assert set(found) == {"node", "gpus"}
    desired, node = found["node"]
    assert desired == 2 and node["image"] == "ghcr.io/example/llama-ft:1.4" and found["gpus"] == 8


def test_torch_runtime_trainer_overrides_applied_as_the_controller_does() -> None:
    found = roles(load(TRAINJOB), [load(REFERENCES_DIR / "torch-distributed.yaml")])
    assert found["dataset-initializer"] == (1, None)  # not the trainer: parallelism (default 1), untouched
    desired, node = found["node"]
    assert desired == 2  # the TrainJob's numNodes over the runtime's mlPolicy.numNodes (1)
    assert node["image"] == "ghcr.io/example/llama-ft:1.4"
    assert node["command"] == ["torchrun", "/workspace/train.py"]
    assert node["env"] == [{"name": "NCCL_DEBUG", "value": "WARN"}]  # the runtime's; the TrainJob sets none
    # resourcesPerNode merged over the runtime's, resource by resource
    assert node["resources"] == {
        "requests": {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "4"},
        "limits": {"memory": "128Gi", "nvidia.com/gpu": "4"},
    }
    assert found["gpus"] == 8


def test_numnodes_left_to_the_runtime_and_env_upserted_by_name() -> None:
    trainjob = load(TRAINJOB)
    del trainjob["spec"]["trainer"]["numNodes"]
    trainjob["spec"]["trainer"]["env"] = [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "X", "value": "1"}]
    runtime = load(REFERENCES_DIR / "torch-distributed.yaml")
    runtime["spec"]["mlPolicy"]["numNodes"] = 3
    desired, node = roles(trainjob, [runtime])["node"]
    assert desired == 3
    assert node["env"] == [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "X", "value": "1"}]


def test_mpi_runtime_with_the_launcher_as_a_node() -> None:
    found = roles(
        load(REFERENCES_DIR / "deepspeed-trainjob.yaml"), [load(REFERENCES_DIR / "deepspeed-distributed.yaml")]
    )
    launcher_pods, launcher = found["launcher"]
    node_pods, node = found["node"]
    assert (launcher_pods, node_pods) == (1, 3)  # numNodes 4: the launcher is one of them
    assert launcher["image"] == "ghcr.io/example/ds-ft:2.0"  # the trainer ancestor takes the image
    assert node["image"] == "ghcr.io/kubeflow/trainer/deepspeed-runtime"  # the node job keeps the runtime's
    assert node["command"] == ["/usr/sbin/sshd"]
    for container in (launcher, node):  # both take the env and the resources
        assert container["env"] == [{"name": "OMPI_MCA_btl", "value": "tcp"}]
        assert container["resources"] == {"limits": {"nvidia.com/gpu": "8"}}
    assert found["gpus"] == 32


def test_what_a_missing_reference_leaves_out_is_read_from_the_parts_that_read_it() -> None:
    registry = builtin_registry()

    def message(name: str, reference: str, kind: str) -> str:
        chosen = registry.by_name(name)
        assert chosen is not None
        return without_reference(chosen.karta, ObjectReference(reference, "x/v1", kind, "o"))

    # a TrainJob's runtime gives its roles; a MiniCluster's Job only its status; a ScheduledWorkflow's run the
    # pods counted per step
    assert message("trainer-kubeflow-org-trainjob-v1alpha1", "runtime", "ClusterTrainingRuntime") == (
        "its roles are not shown, only what the workload says"
    )
    assert message("flux-framework-org-minicluster-v1alpha2", "job", "Job") == (
        "its status is read from the workload alone, without the Job's"
    )
    assert message("kubeflow-org-scheduledworkflow-v1beta1", "run", "Workflow") == (
        "its replica counts are read from the workload alone, without the Workflow's"
    )
    # a name no expression reads after the key (another reference's, or a word inside a longer name)
    assert message("flux-framework-org-minicluster-v1alpha2", "jo", "Job") == (
        "the workload is read without the Job's content"
    )
