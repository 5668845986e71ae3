"""A LIST page decoded item by item (cluster/listdecode.py): the same objects as a decode in one piece, each item's
nesting checked against MAX_DEPTH, `managedFields` dropped when asked (the informers' pages)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_map._limits import MAX_DEPTH
from workload_map.cluster.core import Call, interpret
from workload_map.cluster.errors import ApiError
from workload_map.cluster.listdecode import _ALL_BUT_OPENING, NestedTooDeepError, decode_list_page

if TYPE_CHECKING:
    from workload_map.cluster.kubeconfig import KubeContext


def _deployment(index: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"web-{index}",
            "namespace": "ml",
            "labels": {"app": "web", "n": str(index)},
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
        },
        "spec": {"replicas": index, "ratio": 1.5, "big": 10**30, "flags": [True, False, None], "empty": {}},
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }


def _page(items: list[Any], **extra: Any) -> bytes:
    body = {"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {"resourceVersion": "7", **extra}}
    return json.dumps({**body, "items": items}).encode()


def test_a_page_decodes_to_what_one_decode_gives() -> None:
    content = _page([_deployment(index) for index in range(5)], **{"continue": "abc"})
    got = decode_list_page(content)
    assert got == msgspec.json.decode(content)
    assert list(got) == ["apiVersion", "kind", "metadata", "items"]
    assert all(type(item) is dict for item in got["items"])


def test_lean_drops_managed_fields_and_nothing_else() -> None:
    content = _page([_deployment(index) for index in range(3)])
    expected = msgspec.json.decode(content)
    for item in expected["items"]:
        del item["metadata"]["managedFields"]
    assert decode_list_page(content, lean=True) == expected


def test_an_item_nested_past_the_limit_is_named() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    at_limit: Any = "leaf"
    for _ in range(MAX_DEPTH - 3):  # the item itself and spec are two levels more
        at_limit = [at_limit]
    fine = _deployment(0)
    fine["spec"]["deep"] = at_limit
    assert decode_list_page(_page([fine]))["items"][0]["spec"]["deep"] == at_limit
    bad = _deployment(1)
    bad["spec"]["deep"] = deep
    with pytest.raises(NestedTooDeepError, match=rf"item 1 \(web-1\) nests more than {MAX_DEPTH} levels deep"):
        decode_list_page(_page([fine, bad]))


def test_many_containers_shallow_is_not_too_deep() -> None:
    wide = _deployment(0)
    wide["spec"]["many"] = [{"a": [1]} for _ in range(2 * MAX_DEPTH)]  # past the bracket count, two levels deep
    assert decode_list_page(_page([wide]))["items"][0] == wide


@pytest.mark.parametrize(
    "content",
    [b'{"kind": "Status", "status": "Success"}', b'{"items": 3, "kind": "X"}', b"[1, 2]", b'{"items": null}'],
)
def test_an_answer_not_shaped_as_a_list_decodes_as_it_stands(content: bytes) -> None:
    assert decode_list_page(content) == msgspec.json.decode(content)


def test_non_object_items_stay_for_the_caller_to_skip() -> None:
    content = _page([1, "x", None, _deployment(0)])
    assert decode_list_page(content) == msgspec.json.decode(content)


def test_interpret_names_the_call_for_a_too_deep_item_and_for_text_that_is_not_json() -> None:
    context = cast("KubeContext", None)  # read only for a status of 400 or more
    deep: Any = {}
    for _ in range(MAX_DEPTH + 2):
        deep = {"x": deep}
    call = Call("GET", "/apis/apps/v1/deployments", list_page=True)
    with pytest.raises(ApiError, match=r"GET /apis/apps/v1/deployments: item 0 nests more than 500 levels deep"):
        interpret(context, call, 200, _page([deep]), "application/json")
    with pytest.raises(ApiError, match="not JSON"):
        interpret(context, call, 200, b'{"items": [1,', "application/json")
    assert (
        interpret(context, call, 200, _page([_deployment(0)]), "application/json")["items"][0]["spec"]["replicas"] == 0
    )


@given(st.binary(max_size=300))
def test_the_opening_brackets_are_counted_in_one_pass(data: bytes) -> None:
    assert len(data.translate(None, _ALL_BUT_OPENING)) == data.count(b"[") + data.count(b"{")
