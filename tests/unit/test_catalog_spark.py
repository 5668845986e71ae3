"""The built-in SparkApplication definition's pod requests, as spark-submit sizes the driver and executor pods:
cpu from coreRequest or cores, memory plus its overhead (explicit, or max(factor x memory, 384 MiB)), GPUs by name,
and the executor count's fallbacks."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.resolve import resolve

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "sparkoperator-k8s-io-sparkapplication-v1beta2"


@cache
def _app() -> dict[str, Any]:
    app: dict[str, Any] = yaml.safe_load((FIXTURE / "workload.yaml").read_text())
    return app


def _instance(app: dict[str, Any], component: str) -> Any:
    entry = builtin_registry().for_object(app)
    assert entry is not None and entry.karta.name == "sparkoperator-k8s-io-sparkapplication-v1beta2"
    resolution = resolve(entry.karta, app)
    assert resolution.errors == ()
    return resolution.component(component).instances[""]


def _with(role: str, **fields: Any) -> dict[str, Any]:
    app = copy.deepcopy(_app())
    app["spec"][role].update(fields)
    return app


def _requests(app: dict[str, Any], component: str) -> dict[str, str]:
    requests = _instance(app, component).requests
    assert requests is not None
    return {name: str(value) for name, value in requests.items()}


def test_the_fixture_requests_are_those_of_its_pods() -> None:
    pods = yaml.safe_load((FIXTURE / "pods.yaml").read_text())["items"]
    by_role = {
        pod["metadata"]["labels"]["spark-role"]: pod["spec"]["containers"][0]["resources"]["requests"] for pod in pods
    }
    for role in ("driver", "executor"):
        computed = _instance(_app(), role).pod_template["spec"]["containers"][0]["resources"]["requests"]
        assert computed == by_role[role], role


@pytest.mark.parametrize(
    ("fields", "memory"),
    [
        ({"memory": "2g"}, "2432Mi"),  # 2048 + 384 (0.1 x 2048 is below the minimum)
        ({"memory": "8g"}, "9012Mi"),  # 8192 + ceil(819.2)
        ({"memory": "4096"}, "4506Mi"),  # a bare number is MiB
        ({"memory": "2g", "memoryOverhead": "1g"}, "3072Mi"),
        ({"memory": None}, "1408Mi"),  # the operator's default of 1g, + 384
    ],
)
def test_driver_memory_is_memory_plus_its_overhead(fields: dict[str, Any], memory: str) -> None:
    app = _with("driver", **fields)
    if fields.get("memory", "") is None:
        del app["spec"]["driver"]["memory"]
    pod_memory = _instance(app, "driver").pod_template["spec"]["containers"][0]["resources"]["requests"]["memory"]
    assert pod_memory == memory


def test_the_application_overhead_factor_applies() -> None:
    app = _with("executor", memory="10g")
    app["spec"]["memoryOverheadFactor"] = "0.4"
    resources = _instance(app, "executor").pod_template["spec"]["containers"][0]["resources"]
    assert resources["requests"]["memory"] == "14336Mi" and resources["limits"]["nvidia.com/gpu"] == "1"


def test_core_request_wins_over_cores_and_core_limit_is_a_limit() -> None:
    resources = _instance(_with("driver", coreRequest="500m", coreLimit="2"), "driver").pod_template["spec"][
        "containers"
    ][0]["resources"]
    assert resources["requests"]["cpu"] == "500m" and resources["limits"]["cpu"] == "2"


def test_executor_count_falls_back_to_spark_conf_then_dynamic_allocation() -> None:
    app = copy.deepcopy(_app())
    del app["spec"]["executor"]["instances"]
    app["spec"]["sparkConf"] = {"spark.executor.instances": "5"}
    assert _instance(app, "executor").desired_replicas == 5
    del app["spec"]["sparkConf"]
    app["spec"]["dynamicAllocation"] = {"enabled": True, "initialExecutors": 2, "minExecutors": 1, "maxExecutors": 8}
    instance = _instance(app, "executor")
    assert (instance.desired_replicas, instance.min_replicas) == (2, 1)
    del app["spec"]["dynamicAllocation"]
    assert _instance(app, "executor").desired_replicas == 1
    assert _requests(_app(), "executor")["nvidia.com/gpu"] == "1"
