"""`wmap definitions`: the table, filters (kli-cli §5), NAME, machine output that loads back, local definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import Result, Wmap
from workload_map.catalog import builtin_definitions
from workload_map.model import load_definitions


def names(result: Result) -> list[str]:
    return [line.split()[0] for line in result.stdout.splitlines()[1:]]


def test_lists_the_whole_catalog_sorted_by_name_with_every_column(wmap: Wmap) -> None:
    result = wmap("definitions")
    assert result.code == 0 and result.stderr == ""
    header = result.stdout.splitlines()[0].split()
    assert header == ["NAME", "GROUP/VERSION/KIND", "COMPONENTS", "STATUSES", "SUSPEND", "GANG", "ORIGIN"]
    assert names(result) == sorted(karta.name for karta in builtin_definitions())
    pytorch = next(line for line in result.stdout.splitlines() if line.startswith("kubeflow-org-pytorchjob-v1 "))
    assert "kubeflow.org/v1/PyTorchJob" in pytorch and "pytorchjob, master, worker" in pytorch
    assert pytorch.split()[-4:] == ["yes", "2", "sub-groups", "catalog"]
    core = next(line for line in result.stdout.splitlines() if line.startswith("core-pod-v1 "))
    assert " v1/Pod " in core


def test_components_are_cut_after_three_children_unless_asked(wmap: Wmap) -> None:
    kserve = "serving-kserve-io-inferenceservice-v1beta1"
    short = next(line for line in wmap("definitions").stdout.splitlines() if line.startswith(kserve))
    assert "inferenceservice, predictor, predictor-worker, transformer, +1 more" in short
    full = next(
        line for line in wmap("definitions", "--component-limit", "0").stdout.splitlines() if line.startswith(kserve)
    )
    assert "transformer, explainer" in full


def test_group_and_kind_filter_ignoring_case_and_core_is_the_empty_group(wmap: Wmap) -> None:
    assert names(wmap("definitions", "--group", "kubeflow.org")) == [
        "kubeflow-org-jaxjob-v1",
        "kubeflow-org-mpijob-v1",
        "kubeflow-org-mpijob-v2beta1",
        "kubeflow-org-notebook-v1",
        "kubeflow-org-paddlejob-v1",
        "kubeflow-org-pytorchjob-v1",
        "kubeflow-org-scheduledworkflow-v1beta1",
        "kubeflow-org-tfjob-v1",
        "kubeflow-org-xgboostjob-v1",
    ]
    assert names(wmap("definitions", "--group", "kubeflow.org", "--kind", "pytorchjob")) == [
        "kubeflow-org-pytorchjob-v1"
    ]
    assert names(wmap("definitions", "--group", "", "--kind", "Pod")) == ["core-pod-v1"]
    both = wmap("definitions", "--group", "nvidia.com", "--kind", "DynamoGraphDeployment")
    assert len(names(both)) == 2
    one = wmap("definitions", "--group", "nvidia.com", "--kind", "DynamoGraphDeployment", "--version", "v1beta1")
    assert names(one) == ["nvidia-com-dynamographdeployment-v1beta1"]


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--kind", "Pod"], 2, "--kind needs --group"),
        (["--group", "apps", "--version", "v1"], 2, "--version needs --kind"),
        (["apps-deployment-v1", "--group", "apps"], 2, "a NAME and --group"),
        (["--group", "nosuch.io"], 1, 'no Karta definition covers "nosuch.io"'),
        (["--group", "nvidia.com", "--kind", "DynamoGraphDeployment", "--version", "v9"], 1, "nvidia.com/v9/Dynamo"),
        (["no-such-definition"], 1, 'no Karta definition named "no-such-definition"'),
        (["a", "b"], 2, "unexpected extra argument"),
        (["-o", "wide"], 2, "must be one of table, json, yaml"),
    ],
)
def test_bad_filters_and_names_fail_with_upstreams_exit_codes(
    wmap: Wmap, args: list[str], code: int, needle: str
) -> None:
    result = wmap("definitions", *args)
    assert result.code == code and result.stdout == ""
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_a_name_in_yaml_is_the_bare_karta_and_validates(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml")
    karta = yaml.safe_load(result.stdout)
    assert (karta["apiVersion"], karta["kind"], karta["metadata"]["name"]) == (
        "run.ai/v1alpha1",
        "Karta",
        "jobset-x-k8s-io-jobset-v1alpha2",
    )
    check = wmap("validate", "-", stdin=result.stdout)
    assert check.code == 0 and check.stdout == "OK: jobset-x-k8s-io-jobset-v1alpha2\n"
    assert json.loads(wmap("definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "json").stdout) == karta


def test_the_whole_list_in_json_loads_back_as_definitions(wmap: Wmap, tmp_path: Path) -> None:
    text = wmap("definitions", "-o", "json").stdout
    document = json.loads(text)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    path = tmp_path / "all.json"
    path.write_text(text)
    assert [k.name for k in load_definitions(path)] == sorted(k.name for k in builtin_definitions())


def test_a_local_definition_replaces_the_catalog_one_for_its_kind(wmap: Wmap, tmp_path: Path) -> None:
    exported = wmap("definitions", "kubeflow-org-pytorchjob-v1", "-o", "yaml").stdout
    path = tmp_path / "mine.yaml"
    path.write_text(exported.replace("name: kubeflow-org-pytorchjob-v1", "name: my-pytorchjob", 1))
    result = wmap("definitions", "--definitions", str(path), "--group", "kubeflow.org")
    assert names(result) == [
        "kubeflow-org-jaxjob-v1",
        "kubeflow-org-mpijob-v1",
        "kubeflow-org-mpijob-v2beta1",
        "kubeflow-org-notebook-v1",
        "kubeflow-org-paddlejob-v1",
        "kubeflow-org-scheduledworkflow-v1beta1",
        "kubeflow-org-tfjob-v1",
        "kubeflow-org-xgboostjob-v1",
        "my-pytorchjob",
    ]
    mine = next(line for line in result.stdout.splitlines() if line.startswith("my-pytorchjob"))
    assert mine.split()[-1] == "local"
