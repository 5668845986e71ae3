"""What bench_controller.py and bench_controller_load.py share: the test API server from the environment, a catalog
fixture's workload and owners installed with a pod template owned as its pods are, a watch of a namespace's pods
into a queue, and a percentile.

Imported as `import _controller` (this directory is on `sys.path`, as for `_common`). It imports the e2e helpers
(`tests.e2e`), so it puts the repository's root on `sys.path` first.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _common import REPO

NO_SERVER = 'no test API server (eval "$(scripts/test-cluster.sh env)")'
"""The note of every row when no test API server is running."""

Events = queue.Queue[tuple[float, dict[str, Any]]]
"""Watch events of pods, each with the `time.perf_counter()` at which it was read."""


def test_server() -> Any:
    """The running test API server named by the `WMAP_TEST_*` variables (`tests.e2e.conftest.ApiServer`), or None
    when `WMAP_TEST_KUBECONFIG` names no file."""
    kubeconfig = os.environ.get("WMAP_TEST_KUBECONFIG")
    if not kubeconfig or not Path(kubeconfig).is_file():
        return None
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.e2e.conftest import _server_from_env

    env = {k: v for k, v in os.environ.items() if k.startswith("WMAP_TEST_")}
    return _server_from_env(env, started_here=False)


def install_owners(server: Any, namespace: str, fixture: str, *, scheduler_name: str | None = None) -> dict[str, Any]:
    """The fixture's workload and owners created in `namespace` (no status: no controller ran yet), and a pod
    template owned as the fixture's first worker pod (`workers-0-0`, else its first pod) is, not bound to a node;
    `scheduler_name` sets its `schedulerName`."""
    from tests.e2e.test_live_support import _creatable, create, fixture_objects

    workload, owners, pods = fixture_objects(fixture)
    uids = {workload["metadata"]["uid"]: create(server, _creatable(workload), namespace=namespace)["metadata"]["uid"]}
    for owner in owners:
        body = _creatable(owner)
        body.pop("status", None)
        for ref in body["metadata"].get("ownerReferences") or []:
            ref["uid"] = uids[ref["uid"]]
        uids[owner["metadata"]["uid"]] = create(server, body, namespace=namespace)["metadata"]["uid"]
    template = _creatable(next((p for p in pods if "workers-0-0" in p["metadata"]["name"]), pods[0]))
    template.pop("status", None)
    template["spec"].pop("nodeName", None)
    if scheduler_name:
        template["spec"]["schedulerName"] = scheduler_name
    template["metadata"]["namespace"] = namespace
    for ref in template["metadata"]["ownerReferences"]:
        ref["uid"] = uids[ref["uid"]]
    return template


def watch_pods(server: Any, namespace: str) -> Events:
    """A queue the watch of `namespace`'s pods fills from a daemon thread, from now on."""
    events: Events = queue.Queue()

    def watch() -> None:
        with (
            server.client(timeout=None) as watcher,
            watcher.stream("GET", f"/api/v1/namespaces/{namespace}/pods", params={"watch": "true"}) as stream,
        ):
            for line in stream.iter_lines():
                if line:
                    events.put((time.perf_counter(), json.loads(line)))

    threading.Thread(target=watch, daemon=True).start()
    return events


def percentile(values: list[float], q: float) -> float:
    """The value at quantile `q` (0 to 1) of `values`, the nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
