"""The tree's shape rules (cli/render/shape.py, docs/cli.md "Tree names") on hand-built views, and the notes and
`?` cells of cli/render/hints.py: each rule alone, so a change to one shows which."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import yaml
from msgspec.structs import replace

from tests.cli.helpers import REPO, invoke, write
from workload_map import GVK, load_definitions, validate
from workload_map.cli.render.shape import Row, merged_name, shape, table_names
from workload_map.cli.render.text import plain
from workload_map.cli.render.tree import Origin, render_workload
from workload_map.resolve import Scale
from workload_map.view import ComponentView, Replicas, Resources, WorkloadView

GPU = Resources.of({"nvidia.com/gpu": Fraction(1)})


def node(
    name: str,
    *children: ComponentView,
    desired: int = 0,
    scale: int | None = None,
    component: str | None = None,
    instance: str | None = None,
    own: bool = False,
) -> ComponentView:
    """A node; `own` gives it `desired` pods of its own (a leaf always has its pods as its own)."""
    total = desired or sum(child.replicas.desired for child in children)
    mine = own or not children
    return ComponentView(
        name=name,
        component=component or name,
        kind=None,
        instance=instance,
        pod_bearing=mine,
        scale=Scale(replicas=scale) if scale is not None else None,
        replicas=Replicas(desired=total),
        resources=GPU,
        own_replicas=Replicas(desired=total if mine else 0),
        own_resources=GPU if mine else Resources(),
        children=children,
    )


def view(*components: ComponentView, phase: str = "Running") -> WorkloadView:
    return WorkloadView(
        name="w",
        namespace="ns",
        kind="Thing",
        api_version="example.com/v1",
        definition="example-com-thing-v1",
        origin="local",
        phase=phase,
        phases=(phase,),
        file_mode=True,
        replicas=Replicas(desired=sum(c.replicas.desired for c in components)),
        resources=GPU,
        components=components,
    )


def names(rows: tuple[Row, ...], depth: int = 0) -> list[str]:
    out: list[str] = []
    for row in rows:
        out.append("  " * depth + row.name + (f" ({row.multiplicity})" if row.multiplicity else ""))
        out += names(row.children, depth + 1)
    return out


def test_a_chain_of_single_children_is_one_row_with_the_most_specific_name() -> None:
    # LLMInferenceService: prefill > prefill > prefill-main > prefill
    leaf = node("prefill", component="prefill-main", instance="prefill", desired=1)
    chain = node("prefill", node("prefill", node("prefill-main", leaf), component="prefill", instance="prefill"))
    other = node("scheduler", desired=1)
    assert names(shape(view(chain, other))) == ["prefill-main", "scheduler"]


def test_names_with_nothing_in_common_are_both_kept() -> None:
    assert merged_name("worker", "gpu") == "worker/gpu"
    assert merged_name("worker", "gpu-workers") == "gpu-workers"  # plural words match their singular
    assert merged_name("workload-worker", "worker") == "workload-worker"
    assert merged_name("explainer", "explainer") == "explainer"


def test_a_lone_grouping_level_is_replaced_by_its_children() -> None:
    # Milvus/Dynamo: one `component` level above the instances
    group = node("component", node("proxy", desired=2), node("querynode", desired=2))
    assert names(shape(view(group))) == ["proxy", "querynode"]


def test_a_grouping_level_with_a_sibling_is_kept_it_tells_roles_apart() -> None:
    # RayCluster: head, worker > (cpu-workers, gpu-workers)
    workers = node("worker", node("cpu-workers", desired=1), node("gpu-workers", desired=2))
    assert names(shape(view(node("head", desired=1), workers))) == ["head", "worker", "  cpu-workers", "  gpu-workers"]


def test_a_repeated_group_is_kept_and_every_row_says_its_multiplicity() -> None:
    # LeaderWorkerSet: 2 groups of a leader and 3 workers
    group = node("group", node("leader", desired=2, scale=1), node("worker", desired=6, scale=3), scale=2)
    assert names(shape(view(group))) == ["group (2 x 4 pods)", "  leader (2 x 1 pod)", "  worker (2 x 3 pods)"]


def test_a_merged_repeated_level_carries_its_multiplicity_to_the_row() -> None:
    assert names(shape(view(node("workload", node("workload-main", desired=4, scale=2), scale=2)))) == [
        "workload-main (2 x 2 pods)"
    ]


def test_a_node_with_pods_of_its_own_is_never_folded() -> None:
    parent = node("launcher", node("launcher-sidecar", desired=1), desired=2, own=True)
    assert names(shape(view(parent))) == ["launcher", "  launcher-sidecar"]


def test_table_names_are_the_tree_names_qualified_by_the_parent_when_two_read_the_same() -> None:
    decode = node("decode", node("worker", desired=2), node("leader", desired=1))
    prefill = node("prefill", node("worker", desired=3), node("leader", desired=1))
    rows = shape(view(decode, prefill))
    by_node = table_names(rows)
    assert [by_node[id(row.node)] for row in rows[0].children + rows[1].children] == [
        "decode/worker",
        "decode/leader",
        "prefill/worker",
        "prefill/leader",
    ]
    assert [by_node[id(row.node)] for row in rows] == ["decode", "prefill"]


def test_the_rendered_tree_and_table_use_the_same_names() -> None:
    leaf = node("gpu", component="worker", instance="gpu", desired=2)
    lines = [plain(line) for line in render_workload(view(node("head", desired=1), node("worker", leaf)))]
    assert any(line.startswith("`-- worker/gpu ") for line in lines)
    table = lines[lines.index("Resources:") + 1 :]
    assert [line.split()[0] for line in table] == ["COMPONENT", "head", "worker/gpu", "TOTAL"]


# --- notes and unknown requests ------------------------------------------------------------------------------


def test_an_empty_workload_says_why_there_is_nothing_to_run() -> None:
    empty = view(phase="Undefined")
    lines = [plain(line) for line in render_workload(empty, origin=Origin(empty_components=("replicatedjob",)))]
    assert "Note: nothing to run: the workload declares no replicatedjob" in lines
    assert "Note: no status mapping of example-com-thing-v1 matches this status, so the phase is Undefined" in lines
    no_status = Origin(manifest_status=False)
    lines = [plain(line) for line in render_workload(empty, origin=no_status)]
    assert "Note: nothing to run: the definition finds no component in this workload" in lines
    assert not any("no status mapping" in line for line in lines)  # the phase line already says why


def test_a_workload_of_zero_replicas_says_nothing_runs() -> None:
    lines = [plain(line) for line in render_workload(view(node("agent", desired=0)))]
    assert "Note: nothing to run: every component asks for 0 replicas" in lines


def test_a_component_without_a_pod_template_reads_question_marks_not_zero() -> None:
    scheduler = node("scheduler", desired=1)
    lines = [
        plain(line).rstrip()
        for line in render_workload(view(scheduler), origin=Origin(no_pod_template=frozenset({("scheduler", "")})))
    ]
    assert "`-- scheduler   replicas: 1   requests: not read" in lines
    assert "scheduler   1          ?     ?     ?" in lines
    assert lines[-2:] == [
        "? scheduler: requests unknown, not in TOTAL:",
        "  no containers at the definition's pod path (the controller may add them)",
    ]


BAD_PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: bad, namespace: x}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: {spec: {containers: [{name: a, resources: {requests: {cpu: 1}}}]}}
    Worker:
      replicas: 2
      template: oops
"""


def test_a_component_whose_pod_template_fails_says_so_in_the_tree_and_table(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", BAD_PYTORCHJOB)
    result = invoke(["describe", "-f", path], home=tmp_path)
    lines = result.stdout.splitlines()
    assert "`-- worker   replicas: 2   requests: not read" in lines
    assert "worker      2          ?     ?     ?" in lines
    assert lines[-2:] == [
        "? worker: requests unknown, not in TOTAL:",
        "  specDefinition.podTemplateSpecPath failed (see the warning)",
    ]
    assert "specDefinition.podTemplateSpecPath" in result.stderr  # the warning the note points at


# --- display names (workloadmap.io/display-names) -------------------------------------------------------------


def test_display_names_name_component_nodes_before_the_levels_are_folded() -> None:
    worker = node("worker", component="workload-worker", instance="worker", desired=1)
    tree = view(node("workload", node("workload-main", desired=1), node("workload-worker", worker)))
    display = {"workload-worker": "decode-worker", "workload-main": "decode-leader"}
    assert names(shape(tree, display)) == ["decode-leader", "decode-worker"]
    assert names(shape(tree)) == ["workload-main", "workload-worker"]


LLM = REPO / "tests" / "fixtures" / "catalog" / "serving-kserve-io-llminferenceservice-v1alpha1"
LLM_DEFINITION = REPO / "src" / "workload_map" / "catalog" / "definitions" / f"{LLM.name}.yaml"


def _with_display_names(tmp_path: Path, value: str) -> str:
    definition = yaml.safe_load(LLM_DEFINITION.read_text(encoding="utf-8"))
    definition["metadata"].setdefault("annotations", {})["workloadmap.io/display-names"] = value
    return write(tmp_path / "definition.yaml", yaml.safe_dump(definition, sort_keys=False))


def test_a_definitions_display_names_change_the_text_and_not_the_json(tmp_path: Path) -> None:
    local = _with_display_names(tmp_path, '{"workload-worker": "decode-worker", "workload-main": "decode-leader"}')
    manifest = str(LLM / "workload.yaml")
    text = invoke(["describe", "-f", manifest, "--definitions", local], home=tmp_path)
    assert text.code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert [line.split()[1] for line in lines if line.startswith(("|-- ", "`-- "))] == [
        "decode-leader",
        "decode-worker",
    ]
    table = lines[lines.index("Resources:") + 2 :]
    assert [row.split()[0] for row in table] == ["decode-leader", "decode-worker", "TOTAL"]
    plain_json = invoke(["describe", "-f", manifest, "-o", "json"], home=tmp_path).stdout
    named_json = invoke(["describe", "-f", manifest, "-o", "json", "--definitions", local], home=tmp_path).stdout
    assert json.loads(named_json)["components"] == json.loads(plain_json)["components"]


def test_malformed_display_names_are_a_validation_error_and_unknown_components_a_warning(tmp_path: Path) -> None:
    bad = load_definitions(_with_display_names(tmp_path, '["worker"]'))[0]
    assert [(f.severity, f.rule) for f in validate(bad) if f.rule.startswith("display-name")] == [
        ("error", "display-names")
    ]
    unknown = load_definitions(_with_display_names(tmp_path, '{"nope": "x", "workload-main": ""}'))[0]
    found = sorted((f.severity, f.rule, f.message) for f in validate(unknown) if f.rule.startswith("display-name"))
    assert found == [
        ("error", "display-names", "'workload-main': the display name must be a non-empty string"),
        ("warning", "display-name-component", "'nope' is not a component of this definition"),
    ]


# --- objects per instance (workloadmap.io/copies) ----------------------------------------------------------------


def test_copies_say_how_many_objects_of_the_kind_a_row_stands_for() -> None:
    job = GVK(group="batch", version="v1", kind="Job")
    workers = replace(node("workers", component="replicatedjob", instance="workers", desired=8), kind=job)
    driver = replace(node("driver", component="replicatedjob", instance="driver", desired=1), kind=job)
    tree = view(node("replicatedjob", driver, workers))
    copies = {("replicatedjob", "workers"): 2, ("replicatedjob", "driver"): 1}
    assert names(shape(tree, copies=copies)) == ["driver", "workers (2 x Job of 4 pods)"]
    assert names(shape(tree)) == ["driver", "workers"]


JOBSET_DEFINITION = REPO / "src" / "workload_map" / "catalog" / "definitions" / "jobset-x-k8s-io-jobset-v1alpha2.yaml"


def _jobset_with_copies(tmp_path: Path, value: str) -> str:
    definition = yaml.safe_load(JOBSET_DEFINITION.read_text(encoding="utf-8"))
    definition["metadata"]["annotations"]["workloadmap.io/copies"] = value
    return write(tmp_path / "jobset.yaml", yaml.safe_dump(definition, sort_keys=False))


def test_the_jobset_example_reads_two_jobs_of_four_pods(tmp_path: Path) -> None:
    result = invoke(["describe", "-f", str(REPO / "examples" / "jobset.yaml")], home=tmp_path)
    assert "`-- workers   replicas: 8 (2 x Job of 4 pods)   gpu: 8" in result.stdout.splitlines()


def test_copies_that_do_not_give_one_number_per_instance_are_a_warning_and_show_nothing(tmp_path: Path) -> None:
    local = _jobset_with_copies(tmp_path, '{"replicatedjob": ".spec.replicatedJobs[0].replicas"}')
    result = invoke(["describe", "-f", str(REPO / "examples" / "jobset.yaml"), "--definitions", local], home=tmp_path)
    assert result.code == 0
    assert "x Job of" not in result.stdout
    assert (
        'metadata.annotations["workloadmap.io/copies"].replicatedjob gave 1 values for 2 instances, not one '
        "positive whole number each; the tree shows no copies of replicatedjob" in result.stderr
    )
    failing = _jobset_with_copies(tmp_path, '{"replicatedjob": ".spec.replicatedJobs[] | error(\\"no\\")"}')
    result = invoke(["describe", "-f", str(REPO / "examples" / "jobset.yaml"), "--definitions", failing], home=tmp_path)
    assert "x Job of" not in result.stdout
    assert 'metadata.annotations["workloadmap.io/copies"].replicatedjob: ' in result.stderr
    assert "the tree shows no copies of replicatedjob" in result.stderr


def test_malformed_copies_are_validation_errors(tmp_path: Path) -> None:
    cases = {
        "[1]": ("error", "copies"),
        '{"replicatedjob": ".spec | ("}': ("error", "copies"),
        '{"nope": ".spec.replicas"}': ("warning", "copies-component"),
    }
    for value, wanted in cases.items():
        karta = load_definitions(_jobset_with_copies(tmp_path, value))[0]
        assert [(f.severity, f.rule) for f in validate(karta) if f.rule.startswith("copies")] == [wanted], value
