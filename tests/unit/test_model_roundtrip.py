"""Load -> dump -> load gives an equal definition: over the fixtures, the catalog, and generated definitions.

Test design: the generated definitions come from a strategy derived from the msgspec types themselves, so a
new field is covered without touching this file; strings are drawn from an alphabet that stresses YAML
(`yes`, `null`, `#`, `: `, quotes, newlines, unicode), since the dump must quote whatever YAML would misread.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Union

import msgspec
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.model import (
    ConditionsDefinition,
    Karta,
    ObjectMeta,
    dump_json,
    dump_yaml,
    load_definition,
    load_definitions,
    loads_definitions,
    to_dict,
)

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "tests" / "fixtures" / "definitions").rglob("*.yaml")) + sorted(
    (REPO / "src" / "workload_map" / "catalog" / "definitions").glob("*.yaml")
)
FILES += sorted((REPO / "tests" / "fixtures" / "definitions").rglob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REPO)) for p in FILES])
def test_files_survive_yaml_and_json_round_trips(path: Path) -> None:
    kartas = load_definitions(path)
    assert loads_definitions(dump_yaml(kartas)) == kartas
    for karta in kartas:
        assert load_definition(dump_json(karta)) == karta
        assert load_definition(dump_yaml(karta)) == karta


def test_dump_starts_with_the_kubernetes_header() -> None:
    karta = load_definition(REPO / "tests" / "fixtures" / "definitions" / "valid" / "bare-spec.yaml")
    assert dump_yaml(karta).startswith("apiVersion: run.ai/v1alpha1\nkind: Karta\n")
    assert list(to_dict(karta))[:2] == ["apiVersion", "kind"]


def test_dump_writes_the_applied_crd_defaults_and_every_gvk_key() -> None:
    karta = load_definition(REPO / "tests" / "fixtures" / "definitions" / "valid" / "pyflow.yaml")
    root = to_dict(karta)["spec"]["structureDefinition"]["rootComponent"]
    assert root["statusDefinition"]["conditionsDefinition"] == {
        "path": ".status.conditions",
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    pod = load_definition(REPO / "tests" / "fixtures" / "definitions" / "valid" / "bare-spec.yaml")
    assert to_dict(pod)["spec"]["structureDefinition"]["rootComponent"]["kind"] == {
        "group": "",
        "version": "v1",
        "kind": "Pod",
    }


def test_multi_line_expressions_dump_as_literal_blocks() -> None:
    fleet = load_definitions(REPO / "tests" / "fixtures" / "definitions" / "valid" / "others-everything.yaml")[0]
    text = dump_yaml(fleet)
    assert "expression: |\n" in text


def test_several_definitions_dump_as_a_stream_and_a_karta_list() -> None:
    kartas = load_definitions(REPO / "tests" / "fixtures" / "definitions" / "valid" / "others-everything.yaml")
    assert dump_yaml(kartas).count("\n---\n") == 1
    as_json = json.loads(dump_json(kartas))
    assert as_json["kind"] == "KartaList"
    assert len(as_json["items"]) == 2


def test_no_reason_built_in_code_survives_a_round_trip() -> None:
    """None given in code means "do not read it"; on the wire that is "" (null means the CRD default)."""
    conditions = ConditionsDefinition(path=".c", reason_field_name=None)
    assert conditions.reason_field_name == ""


# --- generated definitions --------------------------------------------------------------------------------------

TRICKY = st.sampled_from(
    ["", "yes", "no", "on", "null", "~", "True", "1", "1.5", "0x10", "-", "- a", "#x", "a: b", "'", '"', "*a", "&a",
     "!x", "%", "@", "`", "{", "}", "[", "]", "|", ">", " lead", "trail ", "a\nb", "a\n\nb\n", "\t", "ü", "日本",
     "\u2028", ".spec.replicatedJobs[].name", '.metadata.labels["a/b"]', "if . then 1 else 2 end"]
)  # fmt: skip
TEXT = st.one_of(TRICKY, st.text(max_size=12))


def _strategy(tp: Any) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = st.one_of(*[_strategy(a) for a in options])
        return st.one_of(st.none(), inner) if len(options) < len(typing.get_args(tp)) else inner
    if origin is tuple:  # the model's lists are tuples (it is frozen): tuple[X, ...]
        return st.lists(_strategy(typing.get_args(tp)[0]), max_size=2).map(tuple)
    if origin is dict:
        return st.dictionaries(TEXT, TEXT, max_size=2)
    if tp is str:
        return TEXT
    if tp is int:
        return st.integers(min_value=0, max_value=2**31)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _struct(tp)
    raise AssertionError(f"no strategy for {tp!r}")


def _struct(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for name in cls.__struct_fields__:
        if cls is Karta and name == "status":
            continue  # dropped on load by design
        if cls is Karta and name in ("kind", "api_version"):
            continue
        if cls is ConditionsDefinition and name in ("message_field_name", "reason_field_name"):
            fields[name] = TEXT  # None is normalised to "" (see test above)
            continue
        fields[name] = _strategy(hints[name])
    return st.builds(cls, **fields)


KARTAS = st.deferred(lambda: _struct(Karta)).map(
    lambda k: msgspec.structs.replace(k, metadata=msgspec.structs.replace(k.metadata, creation_timestamp=None))
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(KARTAS)
def test_generated_definitions_survive_yaml_and_json_round_trips(karta: Karta) -> None:
    assert load_definition(dump_yaml(karta)) == karta
    assert load_definition(dump_json(karta)) == karta
    assert load_definition(to_dict(karta)) == karta


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(st.lists(KARTAS, min_size=2, max_size=3))
def test_generated_streams_survive_a_round_trip(kartas: list[Karta]) -> None:
    assert loads_definitions(dump_yaml(kartas)) == kartas
    assert load_definitions(json.loads(dump_json(kartas))) == kartas


def test_object_meta_generation_is_an_integer_on_the_wire() -> None:
    meta = ObjectMeta(name="x", generation=3)
    assert yaml.safe_load(dump_yaml(Karta(metadata=meta, spec=load_definition(_minimal()).spec)))["metadata"] == {
        "name": "x",
        "generation": 3,
    }


def _minimal() -> dict[str, Any]:
    return {
        "spec": {
            "structureDefinition": {
                "rootComponent": {"name": "m", "kind": {"group": "a", "version": "v1", "kind": "M"}}
            }
        }
    }


@pytest.mark.parametrize(
    "value",
    ["a\x7fb", "nul\x00", "esc\x1b", "nel\x85", "ls\u2028ps\u2029", "a\rb", "a\r\nb", " \n", "a\n ", "\ta\n", "\ufeffa",
     "yes", "null", "1e3", "- x", "a: b", "#c", "multi\nline\n", "\n\nlead"],
)  # fmt: skip
def test_awkward_strings_survive_yaml_and_json(value: str) -> None:
    karta = load_definition(
        {"spec": {"structureDefinition": {"rootComponent": {"name": value, "instanceIdPath": value}}}}
    )
    assert load_definition(dump_yaml(karta)) == karta
    assert load_definition(dump_json(karta)) == karta
