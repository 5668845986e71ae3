"""Write-back: paths, assign and assign_each with gojq/jq `setpath` semantics (karta-spec §11.3, §15.1)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import msgspec
import pytest

from workload_map.jq import (
    Document,
    JqParseError,
    JqRuntimeError,
    assign,
    assign_each,
    evaluate,
    paths,
)

ITEMS: dict[str, Any] = {
    "metadata": {"name": "demo"},
    "items": [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}, {"id": 2, "name": "c"}],
    "primary": None,
    "fallback": "old",
}


def fresh() -> dict[str, Any]:
    return copy.deepcopy(ITEMS)


# --- paths ----------------------------------------------------------------------------------------------------


def test_paths_lists_every_selected_location() -> None:
    assert paths(".items[].name", ITEMS) == [["items", 0, "name"], ["items", 1, "name"], ["items", 2, "name"]]
    assert paths(".", ITEMS) == [[]]
    assert paths(".items[] | select(.id == 1) | .name", ITEMS) == [["items", 1, "name"]]


def test_paths_of_a_missing_field_is_its_would_be_location() -> None:
    assert paths(".metadata.labels.app", ITEMS) == [["metadata", "labels", "app"]]


def test_paths_of_the_alternative_operator_picks_the_branch_jq_reads() -> None:
    assert paths(".primary // .fallback", ITEMS) == [["fallback"]]
    assert paths(".fallback // .primary", ITEMS) == [["fallback"]]


@pytest.mark.parametrize(
    "expr", ["to_entries", ".items | map(.name)", ".items | length", ".items[0].id + 1", '"constant"', "keys"]
)
def test_read_only_expressions_are_not_path_expressions(expr: str) -> None:
    with pytest.raises(JqRuntimeError, match="not a path expression") as caught:
        paths(expr, ITEMS, field_path="spec.scaleDefinition.replicasPath")
    assert caught.value.expression == expr
    assert caught.value.field_path == "spec.scaleDefinition.replicasPath"


def test_a_malformed_expression_is_a_parse_error_when_writing_too() -> None:
    with pytest.raises(JqParseError):
        assign(".items[", ITEMS, 1)


# --- assign ---------------------------------------------------------------------------------------------------


def test_assign_sets_a_simple_and_a_nested_field() -> None:
    assert assign(".metadata.name", ITEMS, "renamed")["metadata"]["name"] == "renamed"
    assert assign(".items[0].name", ITEMS, "z")["items"][0] == {"id": 0, "name": "z"}


def test_assign_creates_missing_intermediate_objects() -> None:
    out = assign(".a.b.c.d.e", {}, 1)
    assert out == {"a": {"b": {"c": {"d": {"e": 1}}}}}
    labelled = assign(".metadata.labels.app", {"metadata": {"name": "x"}}, "web")
    assert labelled == {"metadata": {"name": "x", "labels": {"app": "web"}}}
    complex_value = {"limits": {"cpu": "1"}, "list": [1, 2]}
    assert assign(".spec.resources", {}, complex_value) == {"spec": {"resources": complex_value}}


def test_assign_with_alternative_writes_the_primary_when_truthy_else_the_fallback() -> None:
    assert assign(".primary // .fallback", {"primary": "p", "fallback": "f"}, "new") == {
        "primary": "new",
        "fallback": "f",
    }
    assert assign(".primary // .fallback", {"primary": None, "fallback": "f"}, "new") == {
        "primary": None,
        "fallback": "new",
    }


def test_assign_through_a_pipe_into_one_array_element() -> None:
    out = assign(".items[1] | .name", ITEMS, "second")
    assert [item["name"] for item in out["items"]] == ["a", "second", "c"]


def test_assign_to_the_whole_object_replaces_it() -> None:
    assert assign(".", ITEMS, {"fresh": True}) == {"fresh": True}


def test_assign_with_several_paths_sets_each_of_them() -> None:
    out = assign(".items[].name", ITEMS, "same")
    assert [item["name"] for item in out["items"]] == ["same", "same", "same"]


def test_assign_writes_an_independent_copy_at_each_path() -> None:
    out = assign(".items[].meta", ITEMS, {"labels": {}})
    out["items"][0]["meta"]["labels"]["x"] = "y"
    assert out["items"][1]["meta"] == {"labels": {}}


def test_assign_of_typed_values_writes_their_json_form() -> None:
    @dataclasses.dataclass
    class Port:
        name: str
        port: int

    class Resources(msgspec.Struct):
        cpu: str
        gpus: float

    out = assign(".spec", {}, {"port": Port("http", 80), "resources": Resources("1", 2.0)})
    assert out == {"spec": {"port": {"name": "http", "port": 80}, "resources": {"cpu": "1", "gpus": 2}}}
    assert type(out["spec"]["resources"]["gpus"]) is int


# --- assign_each ----------------------------------------------------------------------------------------------


def test_assign_each_writes_one_value_per_path_in_order() -> None:
    out = assign_each(".items[].name", ITEMS, ["x", "y", "z"])
    assert [item["name"] for item in out["items"]] == ["x", "y", "z"]
    whole = assign_each(".items[]", ITEMS, [1, 2, 3])
    assert whole["items"] == [1, 2, 3]


def test_assign_each_through_a_filter_writes_only_the_selected_item() -> None:
    out = assign_each("(.items[] | select(.id == 1)) | .name", ITEMS, ["only"])
    assert [item["name"] for item in out["items"]] == ["a", "only", "c"]


def test_assign_each_writes_none_as_null() -> None:
    out = assign_each(".items[].name", ITEMS, [None, "y", None])
    assert [item["name"] for item in out["items"]] == [None, "y", None]
    assert "name" in out["items"][0]


def test_assign_each_with_the_wrong_number_of_values_is_an_error() -> None:
    with pytest.raises(JqRuntimeError, match="array length mismatch: expected 3 values but got 2"):
        assign_each(".items[].name", ITEMS, ["x", "y"])


def test_assign_each_on_map_values_follows_the_sorted_instance_order() -> None:
    dynamo = {"spec": {"services": {"worker": {"replicas": 4}, "frontend": {"replicas": 1}}}}
    ids = evaluate(".spec.services | to_entries[] | .key", dynamo)
    out = assign_each(".spec.services[] | .replicas", dynamo, [10 * (i + 1) for i in range(len(ids))])
    assert dict(zip(ids, [10, 20], strict=True)) == {"frontend": 10, "worker": 20}
    assert out["spec"]["services"] == {"worker": {"replicas": 20}, "frontend": {"replicas": 10}}


# --- setpath edge cases ---------------------------------------------------------------------------------------


def test_setting_past_the_end_of_an_array_pads_with_nulls() -> None:
    assert assign(".list[4]", {"list": [1]}, 9) == {"list": [1, None, None, None, 9]}
    assert assign(".list[2]", {}, 9) == {"list": [None, None, 9]}


def test_negative_indexes_count_from_the_end() -> None:
    assert assign(".list[-1]", {"list": [1, 2, 3]}, 9) == {"list": [1, 2, 9]}
    with pytest.raises(JqRuntimeError, match="Out of bounds negative array index"):
        assign(".list[-4]", {"list": [1, 2, 3]}, 9)


def test_a_slice_is_replaced_by_an_array() -> None:
    assert assign(".list[1:2]", {"list": [1, 2, 3]}, [7, 8]) == {"list": [1, 7, 8, 3]}
    with pytest.raises(JqRuntimeError, match="A slice of an array can only be assigned another array"):
        assign(".list[1:2]", {"list": [1, 2, 3]}, 7)


def test_a_key_under_a_number_is_an_error_like_jq() -> None:
    with pytest.raises(JqRuntimeError, match="Cannot index number"):
        assign(".a.b", {"a": 5}, 1)


def test_a_huge_index_is_refused_instead_of_allocating() -> None:
    with pytest.raises(JqRuntimeError, match="Array index too large"):
        assign(".list[600000000]", {"list": []}, 1)


# --- who is changed ---------------------------------------------------------------------------------------------


def test_module_level_assign_leaves_the_callers_object_unchanged() -> None:
    original = fresh()
    before = copy.deepcopy(original)
    out = assign_each(".items[].name", original, ["x", "y", "z"])
    assert original == before
    assert out is not original


def test_module_level_assign_copies_only_what_it_writes() -> None:
    original = fresh()
    out = assign(".items[1].name", original, "b2")
    assert out["metadata"] is original["metadata"]  # untouched subtree shared
    assert out["items"][0] is original["items"][0]
    assert out["items"][1] is not original["items"][1]
    assert original["items"][1]["name"] == "b"


def test_document_assign_changes_its_own_object_in_place() -> None:
    obj = fresh()
    doc = Document(obj)
    doc.assign(".metadata.labels.app", "web")
    assert doc.obj is obj
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert doc.evaluate(".metadata.labels.app") == ["web"]


def test_a_failing_document_write_changes_nothing() -> None:
    obj = {"a": {"x": 1}, "b": 5}
    doc = Document(obj)
    with pytest.raises(JqRuntimeError, match="Cannot index number"):
        doc.assign(".a.y, .b.c", 1)  # the first path is fine, the second is not
    assert obj == {"a": {"x": 1}, "b": 5}


def test_document_assign_each_then_read_sees_the_new_values() -> None:
    doc = Document(fresh())
    doc.assign_each(".items[] | .name", ["x", "y", "z"])
    assert doc.evaluate(".items[].name") == ["x", "y", "z"]
    with pytest.raises(JqRuntimeError, match="array length mismatch"):
        doc.assign_each(".items[] | .name", ["x"])


def test_document_assign_of_the_whole_object_replaces_its_object() -> None:
    doc = Document(fresh())
    doc.assign(".", {"kind": "New"})
    assert doc.obj == {"kind": "New"}
    assert doc.evaluate(".kind") == ["New"]
