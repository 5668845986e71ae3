"""Upstream's CalculateSubtreeScale, both modes, with its worked examples (karta-spec §12.2, §15.8)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.gang import karta_from_text
from workload_map.gang import InstanceIdError, StructureSummary, subtree_scale
from workload_map.resolve import ComponentNotFound, Workload

STATUS = """
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]"""

SCALED = f"""
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {{name: scaled}}
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {{group: example.com, version: v1, kind: TrainJob}}
      scaleDefinition: {{replicasPath: .spec.replicas}}{STATUS}
    childComponents:
    - name: worker
      ownerRef: job
      specDefinition: {{podTemplateSpecPath: .spec.worker.template}}
      scaleDefinition:
        replicasPath: .spec.worker.replicas
        minReplicasPath: .spec.worker.minReplicas
        maxReplicasPath: .spec.worker.maxReplicas
    - name: master
      ownerRef: job
      specDefinition: {{podTemplateSpecPath: .spec.master.template}}
      scaleDefinition: {{replicasPath: .spec.master.replicas}}
    - name: shard
      ownerRef: job
      instanceIdPath: '.spec.shards[]?.name'
      specDefinition:
        podTemplateSpecPath: '.spec.shards[]?.template'
      scaleDefinition:
        replicasPath: '.spec.shards[]?.replicas'
      podSelector:
        componentInstanceSelector: {{idPath: .metadata.labels.shard}}
    - name: pool
      ownerRef: job
      instanceIdPath: '(.spec.pools // {{}}) | to_entries[] | .key'
      specDefinition:
        podTemplateSpecPath: '(.spec.pools // {{}}) | to_entries[] | .value.template'
      scaleDefinition:
        replicasPath: '(.spec.pools // {{}}) | to_entries[] | .value.replicas'
      podSelector:
        componentInstanceSelector: {{idPath: .metadata.labels.pool}}
    - name: probe
      ownerRef: job
      instanceIdPath: '.spec.probes[]?'
      podSelector:
        componentInstanceSelector: {{idPath: .metadata.labels.probe}}
"""

LEAVES = f"""
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {{name: unscaled}}
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {{group: example.com, version: v1, kind: TrainJob}}{STATUS}
    childComponents:
    - name: master
      ownerRef: job
      specDefinition: {{podTemplateSpecPath: .spec.master.template}}
    - name: shard
      ownerRef: job
      instanceIdPath: '.spec.shards[]?.name'
      specDefinition:
        podTemplateSpecPath: '.spec.shards[]?.template'
      podSelector:
        componentInstanceSelector: {{idPath: .metadata.labels.shard}}
    - name: stage
      ownerRef: job
    - name: loader
      ownerRef: stage
      specDefinition: {{podTemplateSpecPath: .spec.loader.template}}
    - name: sidecar
      ownerRef: loader
      specDefinition: {{podTemplateSpecPath: .spec.sidecar.template}}
"""

TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "i"}]}}


def make(text: str, spec: dict[str, Any]) -> Workload:
    obj = {"apiVersion": "example.com/v1", "kind": "TrainJob", "metadata": {"name": "t"}, "spec": spec}
    return Workload(karta_from_text(text), obj)


def scaled(**spec: Any) -> Workload:
    base: dict[str, Any] = {"worker": {"template": TEMPLATE}, "master": {"template": TEMPLATE}}
    for key, value in spec.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return make(SCALED, base)


def test_root_replicas_multiply_the_sum_of_the_children() -> None:
    job = scaled(replicas=2, worker={"replicas": 4}, master={"replicas": 1})
    assert subtree_scale(job.resolve(), "job") == 10


def test_without_a_root_scale_the_children_are_summed() -> None:
    job = scaled(worker={"replicas": 4}, master={"replicas": 1})
    assert subtree_scale(job.resolve(), "job") == 5


def test_min_replicas_wins_over_replicas() -> None:
    job = scaled(worker={"replicas": 5, "minReplicas": 3})
    assert subtree_scale(job.resolve(), "worker") == 3


def test_zero_min_replicas_falls_back_to_replicas() -> None:
    job = scaled(worker={"replicas": 4, "minReplicas": 0})
    assert subtree_scale(job.resolve(), "worker") == 4


def test_max_replicas_is_never_used() -> None:
    job = scaled(worker={"maxReplicas": 9})
    assert subtree_scale(job.resolve(), "worker") == 0


def test_both_missing_is_zero() -> None:
    assert subtree_scale(scaled().resolve(), "worker") == 0


def test_the_parents_scale_is_used_when_the_children_have_none() -> None:
    assert subtree_scale(scaled(replicas=3).resolve(), "job") == 3


def test_multi_instance_scales_are_summed_over_an_array() -> None:
    job = scaled(shards=[{"name": "a", "replicas": 2, "template": TEMPLATE}, {"name": "b", "replicas": 3}])
    assert subtree_scale(job.resolve(), "shard") == 5


def test_multi_instance_scales_are_summed_over_a_map() -> None:
    job = scaled(pools={"cpu": {"replicas": 2, "template": TEMPLATE}, "gpu": {"replicas": 6, "template": TEMPLATE}})
    assert subtree_scale(job.resolve(), "pool") == 8


def test_an_instance_id_picks_that_instance_in_an_array_or_a_map() -> None:
    job = scaled(
        shards=[{"name": "a", "replicas": 2, "template": TEMPLATE}, {"name": "b", "replicas": 3, "template": TEMPLATE}],
        pools={"cpu": {"replicas": 2, "template": TEMPLATE}, "gpu": {"replicas": 6, "template": TEMPLATE}},
    )
    assert subtree_scale(job.resolve(), "shard", "b") == 3
    assert subtree_scale(job.resolve(), "pool", "gpu") == 6


def test_the_instance_id_applies_at_the_subtree_root_only() -> None:
    job = scaled(replicas=2, shards=[{"name": "a", "replicas": 2, "template": TEMPLATE}, {"name": "b", "replicas": 3}])
    assert subtree_scale(job.resolve(), "job") == 2 * 5


def test_an_unknown_instance_id_is_an_error() -> None:
    job = scaled(shards=[{"name": "a", "replicas": 2, "template": TEMPLATE}])
    with pytest.raises(InstanceIdError, match="instance id z not found"):
        subtree_scale(job.resolve(), "shard", "z")


def test_an_instance_id_of_a_component_without_scale_is_not_found() -> None:
    job = scaled(probes=["a", "b"])
    with pytest.raises(InstanceIdError, match=r"instance id a not found in component probe .it has no scaleDefinition"):
        subtree_scale(job.resolve(), "probe", "a")


def test_an_empty_instance_id_is_an_error() -> None:
    with pytest.raises(InstanceIdError, match="instance id is empty"):
        subtree_scale(scaled().resolve(), "worker", "")


def test_an_unknown_component_is_an_error() -> None:
    with pytest.raises(ComponentNotFound):
        subtree_scale(scaled().resolve(), "ghost")


# --- by-leaves: no scaleDefinition anywhere --------------------------------------------------------------------


def leaves(**spec: Any) -> Workload:
    base: dict[str, Any] = {"master": {"template": TEMPLATE}, "loader": {"template": TEMPLATE}}
    base.update(spec)
    return make(LEAVES, base)


def test_without_any_scale_definition_leaves_are_counted() -> None:
    job = leaves(shards=[{"name": "a", "template": TEMPLATE}, {"name": "b", "template": TEMPLATE}])
    assert not StructureSummary(job.definition).has_scale_definition
    # master 1 + shard instances 2 + stage -> loader 1 (the loader's own child is not counted)
    assert subtree_scale(job.resolve(), "job") == 4


def test_by_leaves_a_leaf_counts_one_and_does_not_recurse() -> None:
    assert subtree_scale(leaves().resolve(), "loader") == 1
    assert subtree_scale(leaves().resolve(), "stage") == 1


def test_by_leaves_instance_specific_and_unknown_ids() -> None:
    job = leaves(shards=[{"name": "a", "template": TEMPLATE}, {"name": "b", "template": TEMPLATE}])
    assert subtree_scale(job.resolve(), "shard") == 2
    assert subtree_scale(job.resolve(), "shard", "b") == 1
    with pytest.raises(InstanceIdError, match="instance id c not found"):
        subtree_scale(job.resolve(), "shard", "c")
