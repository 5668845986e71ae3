"""The view over the built-in catalog: the example manifests (file mode) and the catalog fixtures (live pods).

Test design: examples/*.yaml are what a newcomer runs first (`wmap describe -f examples/...`), so their key
figures are pinned. tests/fixtures/catalog/<definition>/ hold a mid-run workload with the pods and intermediate
owners its operator creates; over all of them the view must place every owned pod, report no errors, and add up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog.registry import builtin_registry
from workload_map.pods import attribute
from workload_map.resolve import Workload
from workload_map.view import WorkloadView, build_view

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CATALOG_FIXTURES = ROOT / "tests" / "fixtures" / "catalog"


def load(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def view_of(
    obj: dict[str, Any], pods: list[dict[str, Any]] | None = None, owners: list[dict[str, Any]] | None = None
) -> WorkloadView:
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None, f"no definition for {obj['kind']}"
    resolution = Workload(resolved.karta, obj).resolve()
    attribution = attribute(resolution, pods, owners) if pods is not None else None
    return build_view(resolution, attribution, origin=resolved.origin)


def figures(view: WorkloadView) -> dict[str, tuple[int, int]]:
    """(desired, gpus) per node, keyed component or component/instance."""
    return {
        (f"{node.component}/{node.instance}" if node.instance else node.component): (
            node.replicas.desired,
            node.resources.gpus,
        )
        for _, node in view.walk()
    }


def test_example_pytorchjob() -> None:
    view = view_of(load(EXAMPLES / "pytorchjob.yaml"))
    assert (view.replicas.desired, view.resources.gpus) == (5, 33)
    assert figures(view) == {"master": (1, 1), "worker": (4, 32)}
    assert view.file_mode and view.origin == "catalog" and view.phase == "Running"


def test_example_jobset_has_one_node_per_replicated_job() -> None:
    view = view_of(load(EXAMPLES / "jobset.yaml"))
    assert (view.replicas.desired, view.resources.gpus) == (9, 8)
    assert figures(view) == {
        "replicatedjob": (9, 8),
        "replicatedjob/driver": (1, 0),
        "replicatedjob/workers": (8, 8),  # 2 Jobs x parallelism 4
    }


def test_example_leaderworkerset_multiplies_groups_into_leaders_and_workers() -> None:
    view = view_of(load(EXAMPLES / "leaderworkerset.yaml"))
    assert (view.replicas.desired, view.resources.gpus) == (8, 64)
    assert figures(view) == {"group": (8, 64), "leader": (2, 16), "worker": (6, 48)}
    # Progressing=True with 1 of 2 groups ready: LWS reports a scale-up and a recovering group alike (issue 15).
    assert view.phase == "Initializing"


def test_example_raycluster() -> None:
    view = view_of(load(EXAMPLES / "raycluster.yaml"))
    assert (view.replicas.desired, view.resources.gpus) == (3, 4)
    assert figures(view) == {"head": (1, 0), "worker": (2, 4), "worker/gpu-workers": (2, 4)}
    assert view.resources.cpu_millis == 20000


def test_example_dynamo_graph_counts_every_node_of_a_multinode_service() -> None:
    view = view_of(load(EXAMPLES / "dynamo-graph.yaml"))
    assert (view.replicas.desired, view.resources.gpus) == (6, 18)
    assert figures(view) == {
        "service": (6, 18),
        "service/Frontend": (2, 0),
        "service/VllmDecodeWorker": (2, 2),
        "service/VllmPrefillWorker": (2, 16),  # 1 replica x 2 nodes x 8 GPUs
    }


# Pods the catalog's definitions do not model on purpose (listed, never dropped).
# The submitter Job pod of a RayJob, and of the RayJob a RayCronJob run creates.
EXPECTED_UNCLAIMED = {"ray-io-rayjob-v1": 1, "ray-io-raycronjob-v1": 1}


@pytest.mark.parametrize("name", sorted(path.name for path in CATALOG_FIXTURES.iterdir() if path.is_dir()))
def test_catalog_fixture_places_every_owned_pod(name: str) -> None:
    directory = CATALOG_FIXTURES / name
    obj = load(directory / "workload.yaml")
    pods = load(directory / "pods.yaml")["items"]
    owners = load(directory / "owners.yaml")["items"] if (directory / "owners.yaml").exists() else []
    view = view_of(obj, pods=pods, owners=owners)
    assert view.definition == name
    assert not view.errors, [str(error) for error in view.errors]
    assert len(view.unclaimed_pods) == EXPECTED_UNCLAIMED.get(name, 0)
    assert all(not pod.errors for pod in view.pods)
    placed = len(view.pods)
    assert view.replicas.current == placed
    assert placed + len(view.unclaimed_pods) == len(pods)  # every fixture pod belongs to its workload
    assert view.replicas.ready == sum(1 for pod in view.pods if pod.ready)
    for _, node in view.walk():  # every node adds up from its own pods and its children
        assert node.replicas.desired == node.own_replicas.desired + sum(c.replicas.desired for c in node.children)
        assert node.replicas.current == len(node.pods) + sum(c.replicas.current or 0 for c in node.children)
