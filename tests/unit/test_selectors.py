"""Pod selectors (karta-spec §5, §12.1, §15.7): type matching, instance ids, replica keys, group keys, filters.

Test design: one realistic pod; each behaviour of upstream's PodQuerier catalogue is one test. The Python fast path
for plain paths is checked against libjq on the same expressions (differential test), including the cases where
it must hand over to jq (indexing a string, `//` hiding an error).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from workload_map.jq import JqError
from workload_map.model import ComponentInstanceSelector, ComponentTypeSelector, ReplicaSelector
from workload_map.pods import InstanceNotFound, PodQuerier, SelectorError, go_string, matches_component_type

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "llama-worker-3",
        "namespace": "ml-team",
        "labels": {
            "training.kubeflow.org/replica-type": "worker",
            "training.kubeflow.org/replica-index": "3",
            "app": "llama",
            "empty": "",
        },
        "annotations": {"example.com/role": 'say "hi"', "example.com/shard": "7"},
    },
    "spec": {
        "containers": [
            {"name": "pytorch", "env": [{"name": "RANK", "value": "3"}, {"name": "ROLE", "value": "trainer"}]}
        ]
    },
    "status": {"phase": "Running"},
}


def query() -> PodQuerier:
    return PodQuerier(copy.deepcopy(POD))


def type_selector(**kwargs: Any) -> ComponentTypeSelector:
    return ComponentTypeSelector(**kwargs)


# --- componentTypeSelector -----------------------------------------------------------------------------------


def test_no_selector_or_an_empty_one_matches_nothing() -> None:
    assert query().matches_component_type(None) is False
    assert query().matches_component_type(type_selector()) is False


@pytest.mark.parametrize(
    "key_path",
    [
        '.metadata.labels["training.kubeflow.org/replica-type"]',
        '.metadata.annotations["example.com/role"]',
        ".spec.containers[0].env[1].value",
        ".metadata.labels.empty",  # "" exists
        '.status.phase == "Failed"',  # false exists too
    ],
)
def test_key_path_alone_is_an_existence_check(key_path: str) -> None:
    assert query().matches_component_type(type_selector(key_path=key_path)) is True


def test_a_missing_key_does_not_exist() -> None:
    assert query().matches_component_type(type_selector(key_path='.metadata.labels["nope"]')) is False
    assert query().matches_component_type(type_selector(key_path='.metadata.labels["nope"]', value="x")) is False


@pytest.mark.parametrize(
    ("key_path", "value", "expected"),
    [
        ('.metadata.labels["training.kubeflow.org/replica-type"]', "worker", True),
        ('.metadata.labels["training.kubeflow.org/replica-type"]', "master", False),
        ('.metadata.annotations["example.com/role"]', 'say "hi"', True),  # embedded quotes are safe
        ('.metadata.annotations["example.com/shard"]', "7", True),
        ('.metadata.annotations["example.com/shard"] | tonumber', "7", False),  # a number never equals a string
        (".spec.containers[] | .env[] | .value", "trainer", True),  # any output may match
    ],
)
def test_key_path_with_value_compares_each_output_with_the_string(key_path: str, value: str, expected: bool) -> None:
    assert query().matches_component_type(type_selector(key_path=key_path, value=value)) is expected


def test_equality_is_compared_in_python_so_an_alternative_operator_keeps_its_meaning() -> None:
    # Upstream concatenates `.x // "0" == "0"`, which jq reads as `.x // ("0" == "0")`.
    selector = type_selector(key_path='.metadata.labels.x // "0"', value="0")
    assert query().matches_component_type(selector) is True  # label missing: the default "0" equals "0"
    pod = copy.deepcopy(POD)
    pod["metadata"]["labels"]["x"] = "5"
    assert PodQuerier(pod).matches_component_type(selector) is False  # upstream says true here


@pytest.mark.parametrize(
    ("match_labels", "key_path", "value", "expected"),
    [
        ({"app": "llama"}, None, None, True),
        ({"app": "llama", "training.kubeflow.org/replica-type": "worker"}, None, None, True),
        ({"app": "llama", "training.kubeflow.org/replica-type": "master"}, None, None, False),
        ({"app": "llama", "missing": "x"}, None, None, False),
        ({"missing": ""}, None, None, False),  # an empty value does not match a missing label
        ({"empty": ""}, None, None, True),
        ({"app": "llama"}, ".metadata.annotations", None, True),
        ({"app": "llama"}, '.metadata.annotations["example.com/shard"]', "7", True),
        ({"app": "llama"}, '.metadata.annotations["example.com/shard"]', "8", False),
        ({"app": "other"}, '.metadata.annotations["example.com/shard"]', "7", False),
    ],
)
def test_match_labels_and_key_path_must_all_hold(
    match_labels: dict[str, str], key_path: str | None, value: str | None, expected: bool
) -> None:
    selector = type_selector(match_labels=match_labels, key_path=key_path, value=value)
    assert query().matches_component_type(selector) is expected


def test_match_labels_never_runs_jq_even_on_a_pod_without_labels() -> None:
    assert matches_component_type({"metadata": {}}, type_selector(match_labels={"app": "x"})) is False


def test_an_invalid_key_path_is_an_error_naming_the_path() -> None:
    with pytest.raises(SelectorError, match=r"componentTypeSelector.keyPath \"\.\[\""):
        query().matches_component_type(type_selector(key_path=".["))


def test_labels_are_checked_before_the_key_path_runs() -> None:
    # A broken keyPath is never evaluated when the labels already rule the pod out.
    assert query().matches_component_type(type_selector(match_labels={"app": "other"}, key_path=".[")) is False


# --- instance ids and replica keys ------------------------------------------------------------------------------


def test_no_instance_or_replica_selector_means_not_found() -> None:
    assert query().extract_instance_id(None) is None
    assert query().extract_instance_id(ComponentInstanceSelector(id_path="")) is None
    assert query().extract_replica_key(None) is None
    assert query().extract_replica_key(ReplicaSelector(key_path="")) is None


def test_instance_id_and_replica_key_from_a_label_or_an_annotation() -> None:
    pod = query()
    assert pod.extract_instance_id(ComponentInstanceSelector(id_path=".metadata.labels.app")) == "llama"
    assert pod.extract_replica_key(ReplicaSelector(key_path='.metadata.annotations["example.com/shard"]')) == "7"


def test_a_missing_path_is_an_empty_result() -> None:
    with pytest.raises(
        SelectorError, match=re.escape('failed to extract replica key from path ".metadata.labels.nope": query')
    ):
        query().extract_replica_key(ReplicaSelector(key_path=".metadata.labels.nope"))
    with pytest.raises(SelectorError, match="query result is empty"):
        query().extract_instance_id(ComponentInstanceSelector(id_path=".metadata.labels.empty"))


def test_several_outputs_are_an_error() -> None:
    with pytest.raises(SelectorError, match="expected single query result, got 2"):
        query().extract_instance_id(ComponentInstanceSelector(id_path=".spec.containers[0].env[].value"))
    with pytest.raises(SelectorError, match="expected single query result, got 0"):
        query().extract_replica_key(ReplicaSelector(key_path="empty"))


def test_invalid_jq_in_an_id_path_is_an_error() -> None:
    with pytest.raises(SelectorError, match="failed to extract instance id"):
        query().extract_instance_id(ComponentInstanceSelector(id_path=".metadata.labels["))


def test_numbers_and_booleans_read_as_go_prints_them() -> None:
    pod = query()
    shard = ComponentInstanceSelector(id_path='.metadata.annotations["example.com/shard"] | tonumber')
    assert pod.extract_instance_id(shard) == "7"
    assert pod.extract_instance_id(ComponentInstanceSelector(id_path="1.5")) == "1.5"
    assert pod.extract_instance_id(ComponentInstanceSelector(id_path='.status.phase == "Running"')) == "true"
    assert go_string(3.0) == "3"
    assert go_string([1, "a"]) == "[1 a]"
    assert go_string({"b": 1, "a": True}) == "map[a:true b:1]"


# --- matching_instance_id -----------------------------------------------------------------------------------------


def test_matching_instance_id_from_a_label_an_annotation_or_an_env_var() -> None:
    pod = query()
    ids = ["llama", "7", "3"]
    assert pod.matching_instance_id(ComponentInstanceSelector(id_path=".metadata.labels.app"), ids) == "llama"
    annotation = ComponentInstanceSelector(id_path='.metadata.annotations["example.com/shard"]')
    assert pod.matching_instance_id(annotation, ids) == "7"
    env = ComponentInstanceSelector(id_path='.spec.containers[0].env[] | select(.name == "RANK") | .value')
    assert pod.matching_instance_id(env, ids) == "3"


def test_an_id_that_is_not_an_instance_is_instance_not_found() -> None:
    with pytest.raises(InstanceNotFound, match=r'could not match instance id "llama". existing instance ids \[a b\]'):
        query().matching_instance_id(ComponentInstanceSelector(id_path=".metadata.labels.app"), ["a", "b"])


def test_without_a_selector_only_a_single_instance_component_matches() -> None:
    assert query().matching_instance_id(None, [""]) == ""
    with pytest.raises(SelectorError, match="no instance selector provided but instance ids are not empty"):
        query().matching_instance_id(None, ["a", "b"])
    with pytest.raises(SelectorError, match="no instance selector provided"):
        query().matching_instance_id(None, ["a"])


def test_matching_instance_id_errors_for_invalid_multiple_or_no_results() -> None:
    pod = query()
    with pytest.raises(SelectorError, match="failed to extract instance id"):
        pod.matching_instance_id(ComponentInstanceSelector(id_path=".["), ["a"])
    with pytest.raises(SelectorError, match="expected single query result, got 2"):
        pod.matching_instance_id(ComponentInstanceSelector(id_path=".spec.containers[0].env[].name"), ["a"])
    with pytest.raises(SelectorError, match="query result is empty"):
        pod.matching_instance_id(ComponentInstanceSelector(id_path=".metadata.labels.nope"), ["a"])


# --- group keys and filters ----------------------------------------------------------------------------------------


def test_group_keys_one_per_path() -> None:
    pod = query()
    assert pod.group_keys([".metadata.labels.app"]) == ["llama"]
    assert pod.group_keys([".metadata.labels.app", '.metadata.labels["training.kubeflow.org/replica-index"]']) == [
        "llama",
        "3",
    ]
    assert pod.group_keys([]) == []
    assert pod.group_keys(None) == []


def test_group_keys_missing_or_multiple_values_are_errors() -> None:
    with pytest.raises(SelectorError, match=re.escape('failed to extract group key from path ".metadata.labels.nope"')):
        query().group_keys([".metadata.labels.nope"])
    with pytest.raises(SelectorError, match="expected single query result, got 2"):
        query().group_keys([".spec.containers[0].env[].name"])


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([], True),
        (None, True),
        (['.metadata.labels.app == "llama"'], True),
        (['.metadata.labels.app == "llama"', '.status.phase == "Running"'], True),
        (['.metadata.labels.app == "other"'], False),
        (['.metadata.labels.app == "llama"', '.status.phase == "Failed"'], False),
        ([".metadata.labels.app"], False),  # a string is not true: false, not an error
        (['.metadata.labels["training.kubeflow.org/replica-index"] | tonumber'], False),
        (['.metadata.labels.nope == "x"'], False),  # comparing a nonexistent field
    ],
)
def test_filters_pass_only_when_every_one_is_exactly_true(filters: list[str] | None, expected: bool) -> None:
    assert query().passes_filters(filters) is expected


def test_filter_errors_name_the_filter() -> None:
    with pytest.raises(SelectorError, match=r'failed to evaluate filter "\.\["'):
        query().passes_filters([".["])
    with pytest.raises(SelectorError, match="expected single query result, got 2"):
        query().passes_filters(['.spec.containers[0].env[] | .name == "RANK"'])


# --- the fast path -------------------------------------------------------------------------------------------------

EXPRESSIONS = [
    ".metadata.name",
    '.metadata.labels["training.kubeflow.org/replica-type"]',
    '.metadata."labels".app',
    '.["metadata"]["labels"]["app"]',
    ".metadata.labels.nope",
    ".spec.containers[0].env[1].value",
    ".spec.containers[-1].name",
    ".spec.containers[5]",
    ".nothing.at.all[3]",
    '"worker"',
    "7",
    '.metadata.labels.nope // .metadata.labels.app // "z"',
    '.metadata.labels.empty // "fallback"',  # "" is truthy in jq
    ".spec.containers[] | .env[] | .value",
    '.metadata.labels["a"]?',
    ".metadata.name.first",  # indexing a string: an error
    ".spec.containers.name",  # indexing an array with a string
    ".metadata[0]",  # indexing an object with a number
    '.metadata.labels.app | select(. == "llama")',
    ".metadata.labels | keys",
]


def _outcome(expr: str, *, fast: bool) -> list[Any] | str:
    try:
        return PodQuerier(copy.deepcopy(POD), fast=fast).evaluate(expr)
    except JqError as error:
        return f"error: {error.message}"


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_the_fast_path_answers_as_jq_does(expr: str) -> None:
    assert _outcome(expr, fast=True) == _outcome(expr, fast=False)


def test_a_pod_is_only_converted_for_jq_when_an_expression_needs_it() -> None:
    pod = query()
    pod.evaluate('.metadata.labels["app"]')
    pod.evaluate('.metadata.labels.nope // "x"')
    assert pod._document is None
    pod.evaluate('.metadata.labels | to_entries | map(select(.value == "llama")) | length')
    assert pod._document is not None
