"""The definition model is frozen: nothing changes a definition once built, so it can be shared and keyed by identity.

Test design: assignments go through the public attributes a user would try; the validation cache is observed
through the count of validations `resolve.workload` keeps (no layer of ours is mocked).
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from msgspec.structs import replace

import workload_map.model.types as types_module
from workload_map.catalog import builtin_registry
from workload_map.model import GVK, ConditionsDefinition, load_definition, to_dict
from workload_map.resolve import InvalidDefinitionError, Workload
from workload_map.resolve import workload as workload_module

REPO = Path(__file__).resolve().parents[2]
PYTORCHJOB = REPO / "src" / "workload_map" / "catalog" / "definitions" / "kubeflow-org-pytorchjob-v1.yaml"

MODEL_TYPES = [
    cls
    for cls in vars(types_module).values()
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct) and cls.__module__ == types_module.__name__
]


@pytest.mark.parametrize("cls", MODEL_TYPES, ids=lambda cls: cls.__name__)
def test_every_model_type_is_frozen_and_holds_no_lists(cls: type[msgspec.Struct]) -> None:
    assert cls.__struct_config__.frozen
    for name, hint in typing.get_type_hints(cls).items():
        if name in cls.__struct_fields__:
            assert "list[" not in str(hint), (cls.__name__, name, hint)


def test_assigning_a_field_of_a_loaded_definition_raises() -> None:
    karta = load_definition(PYTORCHJOB)
    with pytest.raises(AttributeError):
        karta.metadata.name = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        karta.spec = karta.spec  # type: ignore[misc]
    with pytest.raises(AttributeError):
        karta.root.name = "x"  # type: ignore[misc]
    children = karta.structure.child_components
    assert isinstance(children, tuple)
    with pytest.raises(AttributeError):
        children.append(karta.root)  # type: ignore[attr-defined]
    assert karta.name == "kubeflow-org-pytorchjob-v1"


def test_a_changed_copy_leaves_the_original_alone_and_dumps_as_before() -> None:
    karta = load_definition(PYTORCHJOB)
    before = to_dict(karta)
    renamed = replace(karta, metadata=replace(karta.metadata, name="x"))
    assert (renamed.name, karta.name) == ("x", "kubeflow-org-pytorchjob-v1")
    assert renamed.spec is karta.spec  # the untouched parts are shared
    assert to_dict(karta) == before
    assert to_dict(renamed) == {**before, "metadata": {**before["metadata"], "name": "x"}}


def test_lists_are_tuples_in_the_model_and_lists_on_the_wire() -> None:
    karta = load_definition(PYTORCHJOB)
    children = to_dict(karta)["spec"]["structureDefinition"]["childComponents"]
    assert isinstance(children, list)
    assert yaml.safe_load(yaml.safe_dump(children)) == children


def test_frozen_parts_without_maps_are_hashable() -> None:
    assert hash(GVK(group="a", version="v1", kind="K")) == hash(GVK(group="a", version="v1", kind="K"))
    conditions = ConditionsDefinition(path=".c")
    assert {conditions: 1}[ConditionsDefinition(path=".c")] == 1


# --- the validation cache ---------------------------------------------------------------------------------------


def _pytorchjob(index: int) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": f"job-{index}", "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": []}}}}},
    }


def test_resolving_a_hundred_objects_through_one_definition_validates_it_once() -> None:
    karta = load_definition(PYTORCHJOB)  # a new object: not validated yet
    before = workload_module._VALIDATIONS
    roots = {Workload(karta, _pytorchjob(index)).root.name for index in range(100)}
    assert workload_module._VALIDATIONS - before == 1
    assert roots == {karta.root.name}


def test_a_changed_copy_is_validated_on_its_own_and_the_original_stays_cached() -> None:
    karta = load_definition(PYTORCHJOB)
    Workload(karta, _pytorchjob(0))
    before = workload_module._VALIDATIONS
    renamed = replace(karta, metadata=replace(karta.metadata, name="renamed"))
    Workload(renamed, _pytorchjob(1))
    Workload(renamed, _pytorchjob(2))
    Workload(karta, _pytorchjob(3))
    assert workload_module._VALIDATIONS - before == 1


def test_the_shared_catalog_definitions_validate_once_per_process() -> None:
    found = builtin_registry().for_object(_pytorchjob(0))
    assert found is not None
    Workload(found.karta, _pytorchjob(0))
    before = workload_module._VALIDATIONS
    for index in range(10):
        again = builtin_registry().for_object(_pytorchjob(index))
        assert again is not None
        Workload(again.karta, _pytorchjob(index))
    assert workload_module._VALIDATIONS - before == 0


def test_an_invalid_definition_is_refused_every_time_from_one_validation() -> None:
    karta = load_definition(PYTORCHJOB)
    root = replace(karta.root, instance_id_path=".[")
    broken = replace(
        karta, spec=replace(karta.spec, structure_definition=replace(karta.structure, root_component=root))
    )
    before = workload_module._VALIDATIONS
    for index in range(3):
        with pytest.raises(InvalidDefinitionError, match="instanceIdPath"):
            Workload(broken, _pytorchjob(index))
    assert workload_module._VALIDATIONS - before == 1
