"""`wmap describe -f` with cross-object references (docs/definitions.md, "Cross-object references"): a TrainJob's
runtime found in the same input or given with `--with`, the runtime itself not described nor warned about, and
a runtime that is not there named in a warning (the TrainJob still shown from what it says, exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import REPO, invoke

TRAINJOB = REPO / "tests" / "fixtures" / "catalog" / "trainer-kubeflow-org-trainjob-v1alpha1" / "workload.yaml"
RUNTIME = REPO / "tests" / "fixtures" / "references" / "torch-distributed.yaml"

WITH_RUNTIME = """\
|-- dataset-initializer   replicas: 1
`-- node                  replicas: 2   gpu: 8
"""
TABLE = """\
COMPONENT             REPLICAS   GPU   CPU   MEMORY
dataset-initializer   1          0     2     4Gi
node                  2          8     32    256Gi
TOTAL                 3          8     34    260Gi
"""


def test_with_file_shows_the_runtimes_roles(tmp_path: Path) -> None:
    result = invoke(["describe", "-f", str(TRAINJOB), "--with", str(RUNTIME)], home=tmp_path)
    assert result.code == 0, result.stderr
    assert result.stderr == ""
    assert WITH_RUNTIME in result.stdout
    assert TABLE in result.stdout


def test_the_runtime_in_the_same_stream_is_read_not_described(tmp_path: Path) -> None:
    both = tmp_path / "both.yaml"
    both.write_text(TRAINJOB.read_text() + "\n---\n" + RUNTIME.read_text())
    result = invoke(["describe", "-f", str(both), "-o", "json"], home=tmp_path)
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["count"] == 1
    (view,) = document["items"]
    (jobset,) = view["components"]
    (replicated,) = jobset["children"]
    assert [(c["name"], c["replicas"]["desired"]) for c in replicated["children"]] == [
        ("dataset-initializer", 1),
        ("node", 2),
    ]
    assert "warning" not in result.stderr and "no definition covers" not in result.stderr
    text = invoke(["describe", "-f", str(both)], home=tmp_path)
    assert text.code == 0
    assert "skipped 1 document: ClusterTrainingRuntime/torch-distributed" in text.stderr


def test_a_runtime_not_given_is_a_warning_and_the_trainjob_is_shown_alone(tmp_path: Path) -> None:
    result = invoke(["describe", "-f", str(TRAINJOB)], home=tmp_path)
    assert result.code == 0, result.stderr
    assert "`-- jobset/replicatedjob/node   replicas: 2   gpu: 8" in result.stdout
    assert result.stderr == (
        f"warning: TrainJob/llama-ft ({TRAINJOB}): reference runtime: ClusterTrainingRuntime "
        "torch-distributed is not in the input (give it with --with FILE): its roles are not shown, only what the "
        "workload says\n"
    )
    gang = invoke(["gang", "-f", str(TRAINJOB), "-f", str(RUNTIME)], home=tmp_path)
    assert gang.code == 0, gang.stderr
    assert "no definition covers" not in gang.stderr


def test_gang_and_place_take_the_runtime_with_with_too(tmp_path: Path) -> None:
    missing = invoke(["gang", "-f", str(TRAINJOB)], home=tmp_path)
    assert missing.code == 0, missing.stderr
    assert "reference runtime: ClusterTrainingRuntime torch-distributed is not in the input" in missing.stderr
    given = invoke(["gang", "-f", str(TRAINJOB), "--with", str(RUNTIME)], home=tmp_path)
    assert given.code == 0, given.stderr
    assert "reference runtime" not in given.stderr
    gone = ("--server", "https://127.0.0.1:9", "--token", "x", "--request-timeout", "5s")
    place = invoke(["place", "-f", str(TRAINJOB), "--with", str(RUNTIME), *gone], home=tmp_path)
    assert place.code == 1  # the only cluster cannot be reached; the workload was read with its runtime
    assert "reference runtime" not in place.stderr
    assert "error: no cluster could be read" in place.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: [\n")
    unreadable = invoke(["describe", "-f", str(TRAINJOB), "--with", str(bad)], home=tmp_path)
    assert unreadable.code == 2  # read as -f is: a file none of whose documents is YAML
    assert f"error: {bad} (document 1): invalid YAML at line 3" in unreadable.stderr


MINICLUSTER = REPO / "tests" / "fixtures" / "catalog" / "flux-framework-org-minicluster-v1alpha2" / "workload.yaml"
SCHEDULED = REPO / "tests" / "fixtures" / "catalog" / "kubeflow-org-scheduledworkflow-v1beta1" / "workload.yaml"


def test_a_reference_that_feeds_only_status_says_so_and_the_roles_are_shown(tmp_path: Path) -> None:
    # a MiniCluster's Job gives its status (the Job's conditions and ready count), not its roles
    result = invoke(["describe", "-f", str(MINICLUSTER)], home=tmp_path)
    assert result.code == 0, result.stderr
    assert "`-- broker   replicas: 4   gpu: 4" in result.stdout
    assert result.stderr == (
        f"warning: MiniCluster/lammps ({MINICLUSTER}): reference job: Job lammps in namespace hpc is not in the input "
        "(give it with --with FILE): its status is read from the workload alone, without the Job's\n"
    )


def test_a_reference_that_feeds_replica_counts_names_them(tmp_path: Path) -> None:
    # a ScheduledWorkflow's run (an Argo Workflow) gives the pods counted per step
    result = invoke(["describe", "-f", str(SCHEDULED)], home=tmp_path)
    assert result.code == 0, result.stderr
    assert result.stderr.endswith(
        "is not in the input (give it with --with FILE): its replica counts are read from the workload alone, "
        "without the Workflow's\n"
    )
