"""Resource requests of containers, pods and fragmented specs (issue 6, at the pod-spec level).

Test design: every case is a small pod spec a user would write, checked against the figure the Kubernetes
scheduler uses for it (``resourcehelper.PodRequests`` over the API server's defaults): requests falling back to
limits, init containers and sidecars, pod-level resources and overhead, and GPUs kept apart from other
accelerators. One test reads a real manifest from the shared conformance data.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.resources.formula import (
    GPU_RESOURCE_NAMES,
    ResourceSpecError,
    accelerator_names,
    add,
    container_requests,
    fragmented_requests,
    gpu_count,
    is_extended_resource,
    is_gpu,
    pod_requests,
    scale,
    total,
)
from workload_map.resources.quantity import QuantityError, format_quantity

GI = 2**30
CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance"


def container(
    name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "busybox", "resources": resources, **extra}


def sidecar(name: str, requests: dict[str, Any]) -> dict[str, Any]:
    return container(name, requests, restartPolicy="Always")


# --- containers ---------------------------------------------------------------------------------------------


def test_container_request_falls_back_to_limit_per_resource() -> None:
    c = container("worker", {"cpu": "500m"}, {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "2"})
    assert container_requests(c) == {"cpu": Fraction(1, 2), "memory": 2 * GI, "nvidia.com/gpu": 2}


def test_container_explicit_zero_request_counts_as_declared() -> None:
    c = container("worker", {"nvidia.com/gpu": "0"}, {"nvidia.com/gpu": "1"})
    assert container_requests(c) == {"nvidia.com/gpu": 0}


def test_container_without_resources_requests_nothing() -> None:
    assert container_requests({"name": "worker"}) == {}
    assert container_requests({"name": "worker", "resources": None}) == {}
    assert container_requests({"name": "worker", "resources": {"requests": None, "limits": {}}}) == {}


def test_container_amounts_are_rounded_up_to_millis_as_the_api_server_stores_them() -> None:
    assert container_requests(container("w", {"cpu": "100u", "memory": 1.5})) == {
        "cpu": Fraction(1, 1000),
        "memory": Fraction(3, 2),
    }


def test_container_yaml_numbers_are_quantities() -> None:
    assert container_requests(container("w", {"cpu": 2, "nvidia.com/gpu": 1, "memory": 0.5})) == {
        "cpu": 2,
        "nvidia.com/gpu": 1,
        "memory": Fraction(1, 2),
    }


def test_malformed_quantity_names_the_container_and_the_resource() -> None:
    c = container("worker", {"cpu": "1"}, {"nvidia.com/gpu": "x"})
    with pytest.raises(QuantityError) as caught:
        pod_requests({"containers": [c]})
    assert str(caught.value).startswith('container "worker" resources.limits["nvidia.com/gpu"]: invalid quantity "x"')


def test_malformed_quantity_in_an_init_container_or_pod_level_field_is_located() -> None:
    with pytest.raises(QuantityError, match=r'^init container "setup" resources\.requests\["cpu"\]: '):
        pod_requests({"containers": [], "initContainers": [container("setup", {"cpu": "2 cores"})]})
    with pytest.raises(QuantityError, match=r'^containers\[1\] resources\.requests\["memory"\]: '):
        pod_requests({"containers": [container("a"), {"resources": {"requests": {"memory": "lots"}}}]})
    with pytest.raises(QuantityError, match=r'^pod-level resources\.requests\["cpu"\]: '):
        pod_requests({"containers": [], "resources": {"requests": {"cpu": "two"}}})
    with pytest.raises(QuantityError, match=r'^overhead\["cpu"\]: '):
        pod_requests({"containers": [], "overhead": {"cpu": "x"}})


def test_wrong_shapes_are_refused_with_the_field_named() -> None:
    with pytest.raises(ResourceSpecError, match="pod spec containers: expected a list"):
        pod_requests({"containers": {"name": "x"}})
    with pytest.raises(ResourceSpecError, match=r'container "w" resources\.requests: expected a mapping'):
        pod_requests({"containers": [container("w", ["cpu"])]})  # type: ignore[arg-type]
    with pytest.raises(ResourceSpecError, match=r"containers\[0\]: expected an object"):
        pod_requests({"containers": ["w"]})


# --- pods: the acceptance cases of issue 6 ------------------------------------------------------------------


def test_pod_with_one_gpu_counts_one_gpu() -> None:
    spec = {"containers": [container("trainer", {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"})]}
    assert gpu_count(pod_requests(spec)) == 1


def test_deployment_pod_with_a_two_gpu_limit_and_no_request_counts_two_per_replica() -> None:
    spec = {"containers": [container("server", limits={"nvidia.com/gpu": "2", "cpu": "200m", "memory": "2Gi"})]}
    per_pod = pod_requests(spec)
    assert gpu_count(per_pod) == 2
    replicas = scale(per_pod, 3)
    assert gpu_count(replicas) == 6
    assert format_quantity(replicas["cpu"], "cpu") == "600m"
    assert format_quantity(replicas["memory"], "memory") == "6Gi"


def test_conformance_deployment_with_gpu_limits_totals_six_gpus() -> None:
    path = CONFORMANCE / "manifests" / "deployment__gpu-limits.yaml"
    if not path.exists():
        pytest.skip("shared conformance data not present")
    deployment = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    per_pod = pod_requests(deployment["spec"]["template"]["spec"])
    assert gpu_count(scale(per_pod, deployment["spec"]["replicas"])) == 6


def test_pod_level_cpu_plus_overhead_replaces_the_containers_cpu() -> None:
    spec = {
        "resources": {"requests": {"cpu": "2"}},
        "overhead": {"cpu": "100m"},
        "containers": [container("main", {"cpu": "500m", "nvidia.com/gpu": "1"})],
    }
    per_pod = pod_requests(spec)
    assert per_pod["cpu"] == Fraction(21, 10)
    two = scale(per_pod, 2)
    assert format_quantity(two["cpu"], "cpu") == "4200m"
    assert gpu_count(two) == 2  # GPUs cannot be declared at pod level: the containers' figure stays


def test_init_container_asking_for_more_gpus_than_the_main_container_sets_the_pod_figure() -> None:
    spec = {
        "initContainers": [container("warmup", {"nvidia.com/gpu": "4"})],
        "containers": [container("main", {"nvidia.com/gpu": "2"})],
    }
    assert gpu_count(pod_requests(spec)) == 4


def test_init_containers_run_one_at_a_time_so_the_largest_counts_not_the_sum() -> None:
    spec = {
        "initContainers": [container("a", {"cpu": "1"}), container("b", {"cpu": "3"}), container("c", {"cpu": "2"})],
        "containers": [container("main", {"cpu": "500m", "memory": "1Gi"})],
    }
    assert pod_requests(spec) == {"cpu": 3, "memory": GI}


def test_sidecars_add_to_the_regular_containers() -> None:
    spec = {
        "initContainers": [sidecar("proxy", {"cpu": "250m", "memory": "64Mi"})],
        "containers": [container("main", {"cpu": "1", "memory": "1Gi"}), container("logs", {"cpu": "250m"})],
    }
    assert pod_requests(spec) == {"cpu": Fraction(3, 2), "memory": GI + 64 * 2**20}


def test_sidecar_started_before_an_init_container_adds_to_that_init_container() -> None:
    # proxy (sidecar, 1 cpu) is running while "migrate" (2 cpu) runs: 3 cpu at that moment, more than the
    # steady state of main (500m) + proxy (1).
    spec = {
        "initContainers": [sidecar("proxy", {"cpu": "1"}), container("migrate", {"cpu": "2"})],
        "containers": [container("main", {"cpu": "500m"})],
    }
    assert pod_requests(spec)["cpu"] == 3


def test_sidecar_declared_after_an_init_container_does_not_add_to_it() -> None:
    spec = {
        "initContainers": [container("migrate", {"cpu": "2"}), sidecar("proxy", {"cpu": "1"})],
        "containers": [container("main", {"cpu": "500m"})],
    }
    assert pod_requests(spec)["cpu"] == 2


def test_init_container_restart_policy_other_than_always_is_not_a_sidecar() -> None:
    spec = {
        "initContainers": [container("setup", {"cpu": "1"}, restartPolicy="OnFailure")],
        "containers": [container("main", {"cpu": "500m"})],
    }
    assert pod_requests(spec)["cpu"] == 1


def test_resources_only_in_init_containers_still_count() -> None:
    spec = {
        "initContainers": [container("fetch", {"ephemeral-storage": "10Gi"})],
        "containers": [container("main", {"cpu": "1"})],
    }
    assert pod_requests(spec) == {"cpu": 1, "ephemeral-storage": 10 * GI}


def test_pod_level_limit_alone_stands_in_for_the_request_when_containers_request_none() -> None:
    spec = {
        "resources": {"limits": {"cpu": "4", "memory": "8Gi"}},
        "containers": [container("main", {"nvidia.com/gpu": "1"})],
    }
    assert pod_requests(spec) == {"cpu": 4, "memory": 8 * GI, "nvidia.com/gpu": 1}


def test_pod_level_limit_does_not_replace_a_cpu_the_containers_request() -> None:
    # The API server defaults the pod-level request to the containers' own requests in this case.
    spec = {"resources": {"limits": {"cpu": "4"}}, "containers": [container("main", {"cpu": "500m"})]}
    assert pod_requests(spec)["cpu"] == Fraction(1, 2)


def test_pod_level_request_for_an_unsupported_resource_is_ignored() -> None:
    spec = {"resources": {"requests": {"nvidia.com/gpu": "8"}}, "containers": [container("m", {"nvidia.com/gpu": "1"})]}
    assert pod_requests(spec) == {"nvidia.com/gpu": 1}


def test_overhead_is_added_to_every_resource_it_names() -> None:
    spec = {"overhead": {"cpu": "250m", "memory": "120Mi"}, "containers": [container("m", {"cpu": "1"})]}
    assert pod_requests(spec) == {"cpu": Fraction(5, 4), "memory": 120 * 2**20}


def test_empty_pod_spec_requests_nothing() -> None:
    assert pod_requests({}) == {}


def test_recorded_pod_with_an_init_container_requests_its_main_container_figure() -> None:
    path = CONFORMANCE / "recordings" / "pod__v1.34.0__core-pod-v1__failed.yaml"
    if not path.exists():
        pytest.skip("shared conformance data not present")
    recording = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    pod = next(e["object"] for e in recording["events"] if e.get("kind") == "STATE")
    assert pod["spec"]["initContainers"], "the recording has an init container"
    assert pod_requests(pod["spec"]) == {"cpu": Fraction(1, 20), "memory": 32 * 2**20}


# --- GPUs and other accelerators ------------------------------------------------------------------------------


def test_mig_slices_are_not_counted_as_gpus() -> None:
    spec = {"containers": [container("infer", {"nvidia.com/mig-1g.5gb": "2", "nvidia.com/gpu": "1"})]}
    requests = pod_requests(spec)
    assert gpu_count(requests) == 1
    assert accelerator_names(requests) == ["nvidia.com/mig-1g.5gb"]


def test_every_extended_resource_is_tracked_under_its_own_name() -> None:
    names = [
        "nvidia.com/gpu",
        "amd.com/gpu",
        "gpu.intel.com/i915",
        "google.com/tpu",
        "habana.ai/gaudi",
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "nvidia.com/mig-3g.20gb",
    ]
    spec = {"containers": [container("a", {n: "1" for n in names[:4]}), container("b", {n: "2" for n in names[4:]})]}
    requests = pod_requests(spec)
    assert requests == {**{n: 1 for n in names[:4]}, **{n: 2 for n in names[4:]}}
    assert gpu_count(requests) == 2  # nvidia.com/gpu + amd.com/gpu only
    assert accelerator_names(requests) == sorted(names[2:])


def test_configured_gpu_names_count_as_gpus() -> None:
    requests = {"gpu.intel.com/i915": Fraction(2), "nvidia.com/gpu": Fraction(1)}
    assert gpu_count(requests, extra_gpu_names=["gpu.intel.com/i915"]) == 3
    assert accelerator_names(requests, extra_gpu_names=["gpu.intel.com/i915"]) == []
    assert is_gpu("gpu.intel.com/i915", ("gpu.intel.com/i915",))
    assert not is_gpu("gpu.intel.com/i915")


def test_native_resources_are_not_accelerators() -> None:
    for name in ("cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "pods", "kubernetes.io/batch-cpu"):
        assert not is_extended_resource(name)
    assert is_extended_resource("nvidia.com/gpu")
    requests = {
        "cpu": Fraction(1),
        "memory": Fraction(GI),
        "hugepages-1Gi": Fraction(GI),
        "google.com/tpu": Fraction(4),
        "example.com/zero": Fraction(0),
    }
    assert accelerator_names(requests) == ["google.com/tpu"]


def test_gpu_names_are_the_whole_device_resources() -> None:
    assert GPU_RESOURCE_NAMES == ("nvidia.com/gpu", "amd.com/gpu")
    assert gpu_count({}) == 0
    assert isinstance(gpu_count({"nvidia.com/gpu": Fraction(3)}), int)


# --- fragmented specs -----------------------------------------------------------------------------------------


def test_fragmented_containers_and_single_container_add_up() -> None:
    fragment = {
        "containers": [container("a", {"nvidia.com/gpu": "2"}), container("b", {"nvidia.com/gpu": "2"})],
        "container": container("main", {"nvidia.com/gpu": "1"}),
        "resources": {"requests": {"nvidia.com/gpu": "8"}},
    }
    assert gpu_count(fragmented_requests(fragment)) == 5


def test_fragmented_cr_level_resources_count_only_when_containers_declare_nothing() -> None:
    fragment = {"container": {"name": "main", "image": "x"}, "resources": {"requests": {"nvidia.com/gpu": "4"}}}
    assert fragmented_requests(fragment) == {"nvidia.com/gpu": 4}
    limits_only = {"resources": {"limits": {"nvidia.com/gpu": "4", "cpu": "8"}}}
    assert fragmented_requests(limits_only) == {"nvidia.com/gpu": 4, "cpu": 8}


def test_fragmented_malformed_quantity_is_located() -> None:
    with pytest.raises(QuantityError, match=r'^container "main" resources\.limits\["nvidia\.com/gpu"\]: '):
        fragmented_requests({"container": container("main", limits={"nvidia.com/gpu": "x"})})
    with pytest.raises(QuantityError, match=r'^resources\.requests\["cpu"\]: '):
        fragmented_requests({"resources": {"requests": {"cpu": "x"}}})


# --- arithmetic -----------------------------------------------------------------------------------------------


def test_add_total_and_scale_combine_per_name() -> None:
    a = {"cpu": Fraction(1, 2), "nvidia.com/gpu": Fraction(1)}
    b = {"cpu": Fraction(1, 2), "memory": Fraction(GI)}
    assert add(a, b) == {"cpu": 1, "nvidia.com/gpu": 1, "memory": GI}
    assert total([a, b, b]) == {"cpu": Fraction(3, 2), "nvidia.com/gpu": 1, "memory": 2 * GI}
    assert scale(b, 2) == {"cpu": 1, "memory": 2 * GI}
    assert a == {"cpu": Fraction(1, 2), "nvidia.com/gpu": Fraction(1)}  # inputs untouched


def test_worked_example_two_replicas_of_500m_and_1gi() -> None:
    per_pod = pod_requests({"containers": [container("w", {"cpu": "500m", "memory": "1Gi"})]})
    two = scale(per_pod, 2)
    assert (format_quantity(two["cpu"], "cpu"), format_quantity(two["memory"], "memory")) == ("1", "2Gi")


def test_results_are_exact_fractions() -> None:
    requests = pod_requests({"containers": [container("w", {"cpu": "100m"})] * 3})
    assert requests["cpu"] == Fraction(3, 10)
    assert all(isinstance(v, Fraction) for v in requests.values())
