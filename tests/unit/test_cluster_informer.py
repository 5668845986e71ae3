"""The informer's state machine (issue 21): events in, actions and changes out, no network. The async shell that
sends what it asks is proven against the real API server (tests/e2e/test_live_watch.py)."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.cluster.errors import ApiError, Forbidden, Unreachable
from workload_map.cluster.informer import (
    METADATA_WATCH,
    Backoff,
    Change,
    Fail,
    InformerCore,
    Send,
    Synced,
    Wait,
    Watch,
    WatchedResource,
    WatchWarning,
)

PODS = WatchedResource(path="/api/v1/namespaces/ml/pods", kind="Pod", api_version="v1", resource="pods", namespace="ml")


def pod(name: str, rv: str, uid: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ml", "resourceVersion": rv, "uid": uid or f"uid-{name}"}}


def page(items: list[dict[str, Any]], rv: str = "", token: str = "") -> dict[str, Any]:
    return {"kind": "PodList", "metadata": {"resourceVersion": rv, "continue": token}, "items": items}


def core(**kwargs: Any) -> InformerCore:
    return InformerCore(PODS, chunk_size=2, rand=lambda: 0.0, backoff=Backoff(rand=lambda: 1.0), **kwargs)


def synced(informer: InformerCore, items: list[dict[str, Any]], rv: str = "10") -> Watch:
    assert isinstance(informer.start(), Send)
    action = informer.page(page(items, rv))
    assert isinstance(action, Watch)
    return action


def changes(informer: InformerCore) -> list[tuple[str, str]]:
    return [(n.type, n.key) for n in informer.drain() if isinstance(n, Change)]


def test_paged_list_then_watch_from_the_lists_resource_version() -> None:
    informer = core()
    first = informer.start()
    assert isinstance(first, Send)
    assert first.call.params == {"limit": "2"}
    second = informer.page(page([pod("a", "1"), pod("b", "2")], token="tok"))
    assert isinstance(second, Send)
    assert second.call.params == {"limit": "2", "continue": "tok"}
    assert informer.drain() == []  # nothing reported before the list is complete
    watch = informer.page(page([pod("c", "3")], rv="42"))
    assert isinstance(watch, Watch)
    params = dict(watch.call.params or {})
    assert params["watch"] == "true"
    assert params["resourceVersion"] == "42"
    assert params["allowWatchBookmarks"] == "true"
    assert params["timeoutSeconds"] == "300"  # rand 0: the base timeout; the stream may be silent 30 s longer
    assert watch.read_timeout == 330
    notices = informer.drain()
    assert [(n.type, n.key) for n in notices if isinstance(n, Change)] == [
        ("ADDED", "ml/a"),
        ("ADDED", "ml/b"),
        ("ADDED", "ml/c"),
    ]
    assert notices[-1] == Synced(relist=False)
    stored = informer.store.get("ml/a")
    assert stored is not None
    assert stored["kind"] == "Pod"  # items of a built-in list get their kind
    assert informer.store.by_uid("uid-c") is not None


def test_events_update_the_store_and_bookmarks_move_the_resource_version() -> None:
    informer = core()
    synced(informer, [pod("a", "1")])
    informer.drain()
    assert informer.event({"type": "ADDED", "object": pod("b", "11")}) is None
    assert informer.event({"type": "MODIFIED", "object": pod("a", "12")}) is None
    assert informer.event({"type": "MODIFIED", "object": pod("a", "12")}) is None  # same version: no change
    assert informer.event({"type": "DELETED", "object": pod("b", "13")}) is None
    assert changes(informer) == [("ADDED", "ml/b"), ("MODIFIED", "ml/a"), ("DELETED", "ml/b")]
    assert informer.store.resource_version == "13"
    assert informer.event({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "99"}}}) is None
    assert informer.drain() == []
    assert informer.store.resource_version == "99"
    again = informer.ended()  # the server closed the watch at its timeout
    assert isinstance(again, Watch)
    assert dict(again.call.params or {})["resourceVersion"] == "99"
    assert informer.watches == 2


def test_error_event_410_relists_and_reports_only_the_differences() -> None:
    informer = core()
    synced(informer, [pod("a", "1"), pod("b", "2"), pod("c", "3")])
    informer.drain()
    action = informer.event({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
    assert isinstance(action, Send)
    assert "resourceVersion" not in dict(action.call.params or {})
    # while it was gone: a modified, b deleted, d added, c unchanged
    watch = informer.page(page([pod("a", "5"), pod("c", "3"), pod("d", "6")], rv="50"))
    assert isinstance(watch, Watch)
    notices = informer.drain()
    assert sorted((n.type, n.key) for n in notices if isinstance(n, Change)) == [
        ("ADDED", "ml/d"),
        ("DELETED", "ml/b"),
        ("MODIFIED", "ml/a"),
    ]
    assert Synced(relist=True) in notices
    assert sorted(informer.store.keys()) == ["ml/a", "ml/c", "ml/d"]
    assert informer.lists == 2


def test_http_410_on_the_watch_request_relists() -> None:
    informer = core()
    synced(informer, [pod("a", "1")])
    action = informer.failed(ApiError("too old resource version", status=410))
    assert isinstance(action, Send)
    assert informer.state == "listing"


def test_expired_continue_token_restarts_the_list_from_the_first_page() -> None:
    informer = core()
    informer.start()
    informer.page(page([pod("a", "1"), pod("b", "2")], token="tok"))
    action = informer.failed(ApiError("the continue token expired", status=410))
    assert isinstance(action, Send)
    assert dict(action.call.params or {}) == {"limit": "2"}
    informer.page(page([pod("b", "2")], rv="9"))
    assert changes(informer) == [("ADDED", "ml/b")]  # a's page was dropped with its token


def test_failures_back_off_exponentially_with_jitter_and_resume_the_watch() -> None:
    informer = core()
    synced(informer, [pod("a", "1")], rv="10")
    informer.drain()
    delays = []
    for _ in range(8):
        wait = informer.failed(Unreachable("cannot reach the server: connection refused"))
        assert isinstance(wait, Wait)
        delays.append(wait.seconds)
        resumed = informer.woke()
        assert isinstance(resumed, Watch)
        assert dict(resumed.call.params or {})["resourceVersion"] == "10"
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    warnings = [n for n in informer.drain() if isinstance(n, WatchWarning)]
    assert len(warnings) == 1  # once per run of failures
    assert "connection refused" in warnings[0].message
    informer.event({"type": "ADDED", "object": pod("b", "11")})  # a success resets the backoff
    wait = informer.failed(Unreachable("down"))
    assert isinstance(wait, Wait)
    assert wait.seconds == 0.8


def test_backoff_jitter_draws_from_the_upper_half() -> None:
    low = Backoff(rand=lambda: 0.0)
    high = Backoff(rand=lambda: 1.0)
    assert [low.next_delay() for _ in range(3)] == [0.4, 0.8, 1.6]
    assert [high.next_delay() for _ in range(3)] == [0.8, 1.6, 3.2]


def test_a_failed_relist_backs_off_then_lists_again() -> None:
    informer = core()
    synced(informer, [pod("a", "1")])
    informer.failed(ApiError("gone", status=410))
    wait = informer.failed(ApiError("the API server answered 503", status=503))
    assert isinstance(wait, Wait)
    assert isinstance(informer.woke(), Send)


def test_the_first_list_failing_is_fatal() -> None:
    informer = core()
    informer.start()
    error = Forbidden("not allowed to list pods", verb="list", resource="pods")
    action = informer.failed(error)
    assert action == Fail(error)


def test_watch_forbidden_falls_back_to_polling_with_one_warning() -> None:
    informer = core(poll_interval=5.0)
    synced(informer, [pod("a", "1")])
    informer.drain()
    wait = informer.failed(Forbidden("not allowed to watch pods", verb="watch", resource="pods"))
    assert wait == Wait(5.0, "poll")
    (warning,) = informer.drain()
    assert isinstance(warning, WatchWarning)
    assert "polling" in warning.message
    poll = informer.woke()
    assert isinstance(poll, Send)
    after = informer.page(page([pod("a", "2")], rv="20"))
    assert after == Wait(5.0, "poll")  # never a watch again
    assert changes(informer) == [("MODIFIED", "ml/a")]


def test_other_watch_errors_back_off_and_watch_again() -> None:
    informer = core()
    synced(informer, [pod("a", "1")])
    action = informer.event({"type": "ERROR", "object": {"kind": "Status", "code": 500, "message": "boom"}})
    assert isinstance(action, Wait)
    assert isinstance(informer.woke(), Watch)


def test_metadata_only_asks_for_partial_object_metadata_and_types_items() -> None:
    owners = WatchedResource(
        path="/apis/apps/v1/namespaces/ml/replicasets",
        kind="ReplicaSet",
        api_version="apps/v1",
        resource="replicasets.apps",
        namespace="ml",
        metadata_only=True,
    )
    informer = InformerCore(owners, rand=lambda: 0.0)
    listing = informer.start()
    assert isinstance(listing, Send)
    assert listing.call.accept.startswith("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
    item = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "web-1"}}
    watch = informer.page({"kind": "PartialObjectMetadataList", "metadata": {"resourceVersion": "3"}, "items": [item]})
    assert isinstance(watch, Watch)
    assert watch.call.accept == METADATA_WATCH
    stored = informer.store.get("web-1")
    assert stored is not None
    assert (stored["kind"], stored["apiVersion"]) == ("ReplicaSet", "apps/v1")


def test_selectors_go_to_the_list_and_the_watch() -> None:
    one = WatchedResource(
        path="/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets",
        kind="JobSet",
        api_version="jobset.x-k8s.io/v1alpha2",
        resource="jobsets.jobset.x-k8s.io",
        namespace="ml",
        field_selector="metadata.name=train",
        label_selector="team=a",
    )
    informer = InformerCore(one, chunk_size=0, rand=lambda: 0.5)
    listing = informer.start()
    assert isinstance(listing, Send)
    assert dict(listing.call.params or {}) == {"labelSelector": "team=a", "fieldSelector": "metadata.name=train"}
    watch = informer.page(page([], rv="1"))
    assert isinstance(watch, Watch)
    params = dict(watch.call.params or {})
    assert params["fieldSelector"] == "metadata.name=train"
    assert params["timeoutSeconds"] == "450"  # jittered: 300 * (1 + 0.5)


def test_resume_from_a_saved_resource_version_watches_first_and_lists_on_410() -> None:
    informer = core(resume_from="1")
    watch = informer.start()
    assert isinstance(watch, Watch)
    assert dict(watch.call.params or {})["resourceVersion"] == "1"
    action = informer.event({"type": "ERROR", "object": {"code": 410, "reason": "Expired", "message": "too old"}})
    assert isinstance(action, Send)
    informer.page(page([pod("a", "7")], rv="7"))
    assert changes(informer) == [("ADDED", "ml/a")]


@pytest.mark.parametrize("event", [None, "text", {"type": "ADDED"}, {"type": "ADDED", "object": []}])
def test_malformed_events_are_failures_not_crashes(event: Any) -> None:
    informer = core()
    synced(informer, [])
    assert isinstance(informer.event(event), Wait)


def test_unknown_event_types_are_skipped() -> None:
    informer = core()
    synced(informer, [])
    informer.drain()
    assert informer.event({"type": "SOMETHING", "object": pod("a", "2")}) is None
    assert informer.drain() == []


def _with_fields(name: str, rv: str, image: str) -> dict[str, Any]:
    obj = pod(name, rv)
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    # equal strings that are separate objects, as a JSON decoder makes them
    args = ["".join(["--", "port"]), "".join(["80", "80"])]
    obj["spec"] = {"containers": [{"name": "main", "image": "".join(list(image)), "args": args}]}
    return obj


def test_the_store_keeps_objects_without_managed_fields_and_with_shared_strings() -> None:
    informer = core()
    watch = synced(informer, [_with_fields("a", "1", "nvcr.io/x:1"), _with_fields("b", "2", "nvcr.io/x:1")])
    assert watch is not None
    a, b = informer.store.get("ml/a"), informer.store.get("ml/b")
    assert a is not None and b is not None
    assert "managedFields" not in a["metadata"] and "managedFields" not in b["metadata"]
    image_a, image_b = a["spec"]["containers"][0]["image"], b["spec"]["containers"][0]["image"]
    assert image_a == image_b == "nvcr.io/x:1"
    assert image_a is image_b  # one copy for both objects
    assert a["spec"]["containers"][0]["args"][1] is b["spec"]["containers"][0]["args"][1]  # in lists too
    # watch events are kept the same way
    informer.event({"type": "MODIFIED", "object": _with_fields("a", "3", "nvcr.io/x:1")})
    changed = informer.store.get("ml/a")
    assert changed is not None and "managedFields" not in changed["metadata"]
    assert changed["spec"]["containers"][0]["image"] is image_b
