"""`wmap describe -f`: the README's first command, golden trees of every example, streams, directories, lists,
the machine formats, and every way an input can be wrong (exit code, message, nothing misleading on stdout).

Golden files live in tests/cli/golden/; regenerate them with
`WMAP_UPDATE_GOLDEN=1 pytest tests/unit/test_cli_describe.py`
and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import EXAMPLES, GOLDEN, REPO, Result, Wmap, invoke, write

EXAMPLE_NAMES = ["pytorchjob", "jobset", "leaderworkerset", "raycluster", "dynamo-graph"]


CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"
SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
FLINK = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: etl}
spec:
  podTemplate:
    spec:
      containers: [{name: flink, image: flink:1.19}]
"""


def example(name: str) -> str:
    return (EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8")


# --- the README's first command ---------------------------------------------------------------------------


def test_pytorchjob_example_shows_tree_phase_and_totals_of_33_gpus_and_5_replicas(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "examples/pytorchjob.yaml")
    assert result.code == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("PyTorchJob/llama-finetune")
    assert "|-- master   replicas: 1   gpu: 1" in lines
    assert "`-- worker   replicas: 4   gpu: 32" in lines
    assert any(line.startswith("Phase: Running") for line in lines)
    assert lines[-1].split() == ["TOTAL", "5", "33", "20", "80Gi"]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_tree_matches_its_golden_file(wmap: Wmap, name: str) -> None:
    result = wmap("describe", "-f", f"examples/{name}.yaml")
    assert result.code == 0, result.stderr
    golden = GOLDEN / f"describe-{name}.txt"
    if os.environ.get("WMAP_UPDATE_GOLDEN"):
        golden.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_tree_fits_in_80_columns_and_has_no_trailing_spaces(wmap: Wmap, name: str) -> None:
    result = wmap("describe", "-f", f"examples/{name}.yaml")
    for line in result.stdout.splitlines():
        assert len(line) <= 80, line
        assert line == line.rstrip(), repr(line)


def test_table_is_accepted_as_an_alias_of_tree(wmap: Wmap) -> None:
    tree = wmap("describe", "-f", "examples/jobset.yaml")
    table = wmap("describe", "-f", "examples/jobset.yaml", "-o", "table")
    assert table.code == 0 and table.stdout == tree.stdout


def test_multi_instance_component_lists_each_instance_and_the_table_counts_them_once(wmap: Wmap) -> None:
    out = wmap("describe", "-f", "examples/jobset.yaml").stdout
    # the lone `replicatedjob` level above the instances adds nothing: the instances are the top level
    assert "replicatedjob" not in out
    assert "|-- driver    replicas: 1" in out
    assert "`-- workers   replicas: 8 (2 x Job of 4 pods)   gpu: 8" in out  # the definition's workloadmap.io/copies
    table = out.split("Resources:\n")[1].splitlines()
    assert [row.split()[0] for row in table] == ["COMPONENT", "driver", "workers", "TOTAL"]
    assert table[-1].split() == ["TOTAL", "9", "8", "17", "66Gi"]


def test_no_colour_when_not_a_terminal_even_with_colour_forced_off_by_no_color(wmap: Wmap) -> None:
    assert "\x1b[" not in wmap("describe", "-f", "examples/pytorchjob.yaml").stdout
    forced = wmap("describe", "-f", "examples/pytorchjob.yaml", env={"FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout
    both = wmap("describe", "-f", "examples/pytorchjob.yaml", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in both.stdout
    flag = wmap("--no-color", "describe", "-f", "examples/pytorchjob.yaml", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in flag.stdout


def test_a_manifest_without_status_says_its_phase_comes_from_no_status(wmap: Wmap, tmp_path: Path) -> None:
    text = example("pytorchjob").split("\nstatus:")[0] + "\n"
    result = wmap("describe", "-f", write(tmp_path / "new.yaml", text))
    assert result.code == 0
    phase = next(line for line in result.stdout.splitlines() if line.startswith("Phase:"))
    assert phase.endswith("(the manifest has no status yet)")


# --- machine formats --------------------------------------------------------------------------------------


def test_json_of_one_document_is_the_bare_view_with_its_schema_version(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "examples/pytorchjob.yaml", "-o", "json")
    assert result.code == 0 and result.stderr == ""
    view = json.loads(result.stdout)
    assert view["schemaVersion"] == "workloadmap.io/view/v1"
    assert view["kind"] == "PyTorchJob" and view["fileMode"] is True
    assert view["resources"]["gpus"] == 33 and view["replicas"]["desired"] == 5
    assert result.stdout.endswith("}\n") and result.stdout.startswith('{\n  "schemaVersion"')


def test_yaml_loads_equal_to_json(wmap: Wmap) -> None:
    as_json = json.loads(wmap("describe", "-f", "examples/dynamo-graph.yaml", "-o", "json").stdout)
    as_yaml = yaml.safe_load(wmap("describe", "-f", "examples/dynamo-graph.yaml", "-o", "yaml").stdout)
    assert as_yaml == as_json


def test_json_output_is_stable_between_runs(wmap: Wmap) -> None:
    first = wmap("describe", "-f", "examples/", "-o", "json").stdout
    assert wmap("describe", "-f", "examples/", "-o", "json").stdout == first


def test_a_directory_prints_a_list_of_every_workload(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "examples", "-o", "json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "WorkloadViewList" and document["schemaVersion"] == "workloadmap.io/view/v1"
    assert document["count"] == 5 == len(document["items"])
    assert sorted(item["kind"] for item in document["items"]) == [
        "DynamoGraphDeployment",
        "JobSet",
        "LeaderWorkerSet",
        "PyTorchJob",
        "RayCluster",
    ]
    assert document["skipped"] == [] and document["errors"] == []


# --- streams: helm template output, directories, lists ----------------------------------------------------


def test_a_helm_style_stream_describes_every_workload_and_lists_what_it_skipped(wmap: Wmap) -> None:
    stream = "---\n".join([CONFIGMAP, example("pytorchjob"), SERVICE, example("jobset"), "# only a comment\n"])
    result = wmap("describe", "-f", "-", stdin=stream)
    assert result.code == 0, result.stderr
    assert "PyTorchJob/llama-finetune" in result.stdout and "JobSet/preprocess" in result.stdout
    assert result.stdout.rstrip().endswith("Total of 2 workloads: 14 replicas, 41 GPUs, CPU 37, memory 146Gi")
    assert result.stderr == "skipped 2 documents: ConfigMap/settings, Service/web\n"


def test_a_stream_under_json_is_a_list_with_the_skipped_documents(wmap: Wmap) -> None:
    stream = "---\n".join([CONFIGMAP, example("pytorchjob")])
    document = json.loads(wmap("describe", "-f", "-", "-o", "json", stdin=stream).stdout)
    assert document["count"] == 1 and document["items"][0]["name"] == "llama-finetune"
    assert document["skipped"] == [
        {
            "source": "<stdin> (document 1)",
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "settings",
            "reason": "not a workload",
        }
    ]


def test_a_kubectl_list_is_unpacked(wmap: Wmap, tmp_path: Path) -> None:
    items = [yaml.safe_load(example("pytorchjob")), yaml.safe_load(example("raycluster"))]
    path = write(tmp_path / "list.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    document = json.loads(wmap("describe", "-f", path, "-o", "json").stdout)
    assert [item["kind"] for item in document["items"]] == ["PyTorchJob", "RayCluster"]


def test_an_uncovered_workload_in_a_stream_is_a_warning_and_the_rest_is_described(wmap: Wmap) -> None:
    stream = "---\n".join([FLINK, example("pytorchjob")])
    result = wmap("describe", "-f", "-", "-o", "json", stdin=stream)
    assert result.code == 0
    document = json.loads(result.stdout)
    assert document["count"] == 1
    assert document["errors"][0]["error"] == "no_definition_for_type"
    assert document["errors"][0]["gvk"] == "flink.apache.org/v1beta1/FlinkDeployment"
    assert "warning: no definition covers flink.apache.org/v1beta1/FlinkDeployment" in result.stderr


def test_the_same_object_twice_is_described_once_with_a_warning(wmap: Wmap, tmp_path: Path) -> None:
    first = write(tmp_path / "in" / "a.yaml", example("pytorchjob"))
    write(tmp_path / "in" / "b.yaml", example("pytorchjob"))
    result = wmap("describe", "-f", str(tmp_path / "in"), "-o", "json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["count"] == 1
    assert [item["resources"]["gpus"] for item in document["items"]] == [33]
    assert result.stderr.count("is the same object as in") == 1
    assert f"same object as in {first}" in result.stderr
    generated = example("pytorchjob").replace("  name: llama-finetune\n", "  generateName: llama-finetune-\n", 1)
    both = wmap("describe", "-f", "-", "-o", "json", stdin="---\n".join([generated, generated]))
    assert json.loads(both.stdout)["count"] == 2, "objects with only a generateName are distinct"


def test_a_generate_name_and_a_missing_namespace_are_spelled_out(wmap: Wmap, tmp_path: Path) -> None:
    text = example("pytorchjob").replace("  name: llama-finetune\n", "  generateName: llama-finetune-\n", 1)
    text = text.replace("  namespace: ml-team\n", "", 1)
    result = wmap("describe", "-f", write(tmp_path / "gen.yaml", text))
    assert result.code == 0, result.stderr
    assert "PyTorchJob/llama-finetune-<suffix>" in result.stdout
    assert "(generateName: the API server adds the suffix)" in result.stdout
    assert "namespace: not set (the context's namespace applies)" in result.stdout
    assert "<none>" not in result.stdout


def test_an_uncovered_custom_resource_is_told_how_to_get_a_definition(wmap: Wmap, tmp_path: Path) -> None:
    text = (
        "apiVersion: pipelines.example.com/v1alpha1\nkind: ServicePipeline\nmetadata:\n  name: pipeline\n"
        "spec:\n  services:\n  - name: llm\n    spec:\n      replicas: 1\n"
    )
    result = wmap("describe", "-f", write(tmp_path / "pipeline.yaml", text))
    assert result.code == 4
    assert 'no definition covers pipelines.example.com/v1alpha1/ServicePipeline "pipeline"' in result.stderr
    assert "does not look like a workload" not in result.stderr  # its pods are nested where we cannot guess
    assert "write a Karta definition for this type" in result.stderr and "--definitions" in result.stderr


def test_the_phase_line_says_why_in_one_line_of_the_terminal_width(wmap: Wmap, tmp_path: Path) -> None:
    fixture = REPO / "tests" / "fixtures" / "status" / "ray-io-rayjob-v1__failed-while-deployment-running.yaml"
    rayjob = yaml.safe_load(fixture.read_text(encoding="utf-8"))["object"]
    result = wmap("describe", "-f", write(tmp_path / "rayjob.yaml", yaml.safe_dump(rayjob)))
    assert result.code == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("Phase:")]
    assert line.startswith("Phase: Failed,Running (jobDeploymentStatus Running; jobStatus FAILED: Job en")
    assert line.endswith("...)") and len(line) <= 80
    whole = json.loads(wmap("describe", "-f", str(tmp_path / "rayjob.yaml"), "-o", "json").stdout)
    assert "No module named 'pendulum'" in whole["reason"]  # the whole reason stays in JSON


def test_unquoted_timestamps_in_a_manifest_are_read_as_kubectl_reads_them(wmap: Wmap, tmp_path: Path) -> None:
    text = example("pytorchjob").replace(
        "  namespace: ml-team\n", "  namespace: ml-team\n  creationTimestamp: 2026-01-02T03:04:05Z\n", 1
    )
    result = wmap("describe", "-f", write(tmp_path / "dated.yaml", text), "-o", "json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["createdAt"] == "2026-01-02T03:04:05Z"


def test_a_newer_version_of_a_covered_kind_resolves_through_the_definition_of_another_version(
    wmap: Wmap, tmp_path: Path
) -> None:
    text = example("jobset").replace("jobset.x-k8s.io/v1alpha2", "jobset.x-k8s.io/v1")
    result = wmap("describe", "-f", write(tmp_path / "v1.yaml", text))
    assert result.code == 0, result.stderr
    assert "definition: jobset-x-k8s-io-jobset-v1alpha2 (catalog, written for v1alpha2)" in result.stdout


# --- local definitions ------------------------------------------------------------------------------------


def local_pytorchjob_definition(tmp_path: Path) -> str:
    """The built-in PyTorchJob definition under another name, as a user would copy and adapt it."""
    exported = invoke(["definitions", "kubeflow-org-pytorchjob-v1", "-o", "yaml"], home=tmp_path)
    text = exported.stdout.replace("name: kubeflow-org-pytorchjob-v1", "name: my-pytorchjob", 1)
    return write(tmp_path / "defs" / "pytorchjob.yaml", text)


def test_a_local_definition_wins_over_the_catalog_for_the_same_kind(wmap: Wmap, tmp_path: Path) -> None:
    path = local_pytorchjob_definition(tmp_path)
    view = json.loads(wmap("describe", "-f", "examples/pytorchjob.yaml", "--definitions", path, "-o", "json").stdout)
    assert (view["definition"], view["origin"]) == ("my-pytorchjob", "local")
    by_dir = wmap("describe", "-f", "examples/pytorchjob.yaml", "--definitions", str(Path(path).parent))
    assert "definition: my-pytorchjob (local)" in by_dir.stdout


def test_a_local_definition_covers_a_type_the_catalog_does_not(wmap: Wmap, tmp_path: Path) -> None:
    definition = """\
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: flink}
spec:
  structureDefinition:
    rootComponent:
      name: flink
      kind: {group: flink.apache.org, version: v1beta1, kind: FlinkDeployment}
      specDefinition: {podTemplateSpecPath: .spec.podTemplate}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: '.status.jobStatus.state == "RUNNING"', expectedResult: "true"}}]
"""
    result = wmap(
        "describe", "-f", write(tmp_path / "flink.yaml", FLINK), "--definitions", write(tmp_path / "k.yaml", definition)
    )
    assert result.code == 0, result.stderr
    assert "FlinkDeployment/etl" in result.stdout and "definition: flink (local)" in result.stdout


# --- bad input: exit code, one-line error, nothing on stdout ----------------------------------------------


def assert_error(result: Result, code: int, *needles: str, stdout: str = "") -> None:
    assert result.code == code, (result.code, result.stderr)
    assert result.stdout == stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_file_is_exit_1(wmap: Wmap) -> None:
    assert_error(wmap("describe", "-f", "no/such.yaml"), 1, "no/such.yaml: no such file or directory")


def test_invalid_yaml_is_exit_2_naming_the_line(wmap: Wmap, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "apiVersion: v1\nkind: [Pod\n")
    assert_error(wmap("describe", "-f", path), 2, "invalid YAML at line 3")


def test_a_document_without_apiversion_and_kind_is_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    path = write(tmp_path / "nokind.yaml", "metadata: {name: x}\nspec: {}\n")
    assert_error(wmap("describe", "-f", path), 2, "declares no apiVersion and kind")


def test_an_uncovered_type_alone_is_exit_4_with_the_machine_payload_under_json(wmap: Wmap, tmp_path: Path) -> None:
    path = write(tmp_path / "flink.yaml", FLINK)
    assert_error(wmap("describe", "-f", path), 4, "no definition covers flink.apache.org/v1beta1/FlinkDeployment")
    result = wmap("describe", "-f", path, "-o", "json")
    payload = json.loads(result.stdout)
    assert payload == {
        "error": "no_definition_for_type",
        "gvk": "flink.apache.org/v1beta1/FlinkDeployment",
        "message": "no Karta definition covers this workload type",
        "hint": payload["hint"],
    }
    assert result.code == 4 and "error: no definition covers" in result.stderr
    assert yaml.safe_load(wmap("describe", "-f", path, "-o", "yaml").stdout) == payload


def test_an_invalid_local_definition_is_exit_1_naming_its_field(wmap: Wmap, tmp_path: Path) -> None:
    definition = write(
        tmp_path / "bad-def.yaml",
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: broken}\nspec:\n  structureDefinition:\n"
        "    rootComponent:\n      name: r\n      kind: {group: a.io, version: v1, kind: Foo}\n",
    )
    result = wmap("describe", "-f", "examples/pytorchjob.yaml", "--definitions", definition)
    assert_error(result, 1, "definition 'broken' is invalid", "spec.structureDefinition.rootComponent", "wmap validate")


def test_a_local_definition_with_a_typo_is_exit_1_with_the_field_meant(wmap: Wmap, tmp_path: Path) -> None:
    path = local_pytorchjob_definition(tmp_path)
    Path(path).write_text(Path(path).read_text().replace("podTemplateSpecPath", "podTemplatePath", 1))
    result = wmap("describe", "-f", "examples/pytorchjob.yaml", "--definitions", path)
    assert_error(result, 1, "podTemplatePath", "did you mean 'podTemplateSpecPath'?")


def test_a_missing_definitions_path_is_exit_2(wmap: Wmap) -> None:
    assert_error(wmap("describe", "-f", "examples/pytorchjob.yaml", "--definitions", "nope/"), 2, "--definitions nope/")


def test_a_directory_with_no_workloads_is_exit_4_and_lists_what_it_skipped(wmap: Wmap, tmp_path: Path) -> None:
    write(tmp_path / "chart" / "cm.yaml", CONFIGMAP)
    write(tmp_path / "chart" / "svc.yaml", SERVICE)
    result = wmap("describe", "-f", str(tmp_path / "chart"))
    assert_error(result, 4, "no workloads in", "skipped 2 documents: ConfigMap/settings, Service/web")


def test_a_directory_with_no_manifests_is_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert_error(wmap("describe", "-f", str(tmp_path / "empty")), 2, "no *.yaml, *.yml or *.json files")


def test_an_empty_file_is_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    assert_error(wmap("describe", "-f", write(tmp_path / "empty.yaml", "# nothing\n")), 2, "no documents")


def test_a_chart_directory_skips_chart_yaml_and_values(wmap: Wmap, tmp_path: Path) -> None:
    write(tmp_path / "chart" / "Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    write(tmp_path / "chart" / "values.yaml", "replicas: 3\n")
    write(tmp_path / "chart" / "templates" / "job.yaml", example("pytorchjob"))
    result = wmap("describe", "-f", str(tmp_path / "chart"))
    assert result.code == 0, result.stderr
    assert "PyTorchJob/llama-finetune" in result.stdout
    assert result.stderr.startswith("skipped 2 documents:")


def test_a_positional_argument_with_a_file_is_exit_2(wmap: Wmap) -> None:
    assert_error(wmap("describe", "jobset", "-f", "examples/jobset.yaml"), 2, "cannot be combined with")


def test_output_wide_is_rejected_at_parse_time(wmap: Wmap) -> None:
    assert_error(wmap("describe", "-f", "examples/jobset.yaml", "-o", "wide"), 2, "must be one of tree, json, yaml")


def test_negative_limits_are_exit_2(wmap: Wmap) -> None:
    assert_error(wmap("describe", "-f", "examples/jobset.yaml", "--pod-limit", "-10"), 2, "must not be negative")
    assert_error(wmap("describe", "-f", "examples/jobset.yaml", "--component-limit", "-1"), 2, "must not be negative")


def test_debug_shows_the_traceback_of_an_error(wmap: Wmap, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "kind: [\n")
    result = wmap("--debug", "describe", "-f", path)
    assert result.code == 2 and "Traceback" in result.stderr and "error: " in result.stderr


def test_other_accelerators_get_their_own_column_and_never_count_as_gpus(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "tests/fixtures/view/deployment-mig.workload.yaml")
    assert result.code == 0, result.stderr
    assert "`-- deployment   replicas: 3   neuroncore: 6, mig-1g.5gb: 3" in result.stdout
    table = result.stdout.split("Resources:\n")[1].splitlines()
    assert table[0].split() == ["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY", "NEURONCORE", "MIG-1G.5GB"]
    assert table[-1].split() == ["TOTAL", "3", "0", "3", "6Gi", "6", "3"]
