"""Pod templates, pod specs and metadata read in place (issue 19, complete resolution).

A definition's object paths that are plain paths (`Structure.in_place`) are read from the document as it stands
(`Snapshot.objects`); the request formula reads them there (`resources.pod_requests_in_place`) and a reader is
handed their normalised copy, made on first use (`extract.PlainValues`). What must hold: every resolution is what
it was with every object path evaluated in its group and normalised at once (components, instances, pod
templates with their key order and types, requests, replica counts, status, errors and warnings with their
messages and order, the strict getters' values and errors), over every catalog definition and every fixture,
corpus object and recording, and over objects whose pod specs hold what the in-place reading must not vouch for
(floats, tuples, typed values, keys that are not strings, bad quantities); the caller's object is never changed
nor handed out, and what the getters hand out can be changed without touching it.
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import json
from collections import OrderedDict
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import DEFINITIONS, OBJECTS, SETTINGS, _strict
from workload_map.jq import EvaluationPolicy, JqLimitError, convert
from workload_map.model import Karta
from workload_map.resolve import ExtractionError, Workload, extract, snapshot, structure
from workload_map.resolve.structure import structure_of
from workload_map.resources import QuantityError, ResourceSpecError, pod_requests
from workload_map.resources.formula import pod_requests_in_place

BY_NAME = {karta.name: karta for karta in DEFINITIONS}


def _requests(value: Any) -> Any:
    if isinstance(value, dict):
        return [(name, type(amount).__name__, str(amount)) for name, amount in value.items()]
    return value


def _everything(karta: Karta, obj: Any, *, from_json: bool = True) -> Any:
    """Everything a reader of the resolution and of the strict getters sees, types and key order spelled out."""
    workload = Workload(karta, obj, validate=False, check_gvk=False, from_json=from_json)
    resolution = workload.resolve()
    out: dict[str, Any] = {
        "view": resolution.to_dict(),
        "errors": [str(error) for error in resolution.errors],
        "warnings": [str(warning) for warning in resolution.warnings],
    }
    out["instances"] = [
        (
            name,
            instance.instance_id,
            instance.pod_template,
            instance.pod_template_spec,
            instance.pod_spec,
            instance.pod_metadata,
            _requests(instance.requests),
            str(instance.requests_error),
            instance.desired_replicas,
            instance.min_replicas,
        )
        for name, component in resolution.components.items()
        for instance in component.instances.values()
    ]
    strict: list[Any] = []
    for component in workload:
        for getter in ("pod_template_specs", "pod_specs", "pod_metadata"):
            try:
                strict.append((component.name, getter, getattr(component, getter)))
            except ExtractionError as error:
                strict.append((component.name, getter, "error", str(error)))
    out["strict"] = strict
    return _strict(json.loads(json.dumps(out, default=repr)))


def _as_before(karta: Karta, obj: Any, monkeypatch: pytest.MonkeyPatch, *, from_json: bool = True) -> Any:
    """`_everything` with no path read in place: every object path in its group, normalised when evaluated."""
    with monkeypatch.context() as patched:
        patched.setattr(structure, "_plain", lambda expr: False)
        patched.setattr(snapshot, "_in_place_reader", lambda expr: None)
        patched.setattr(structure, "_CACHE", type(structure._CACHE)())
        return _everything(karta, obj, from_json=from_json)


def _agree(karta: Karta, obj: Any, monkeypatch: pytest.MonkeyPatch, *, from_json: bool = True) -> None:
    before = copy.deepcopy(obj)
    got = _everything(karta, obj, from_json=from_json)
    assert obj == before  # the caller's object is read, never changed
    assert got == _as_before(karta, copy.deepcopy(obj), monkeypatch, from_json=from_json)


# --- every catalog definition over every recorded object -------------------------------------------------------


def test_object_paths_are_read_in_place_for_most_definitions() -> None:
    """Not a vacuous pass: many catalog definitions have object paths read in place, and they are out of the
    plan's groups (a group would evaluate and normalise them anyway)."""
    with_paths = [karta for karta in DEFINITIONS if structure_of(karta).in_place]
    assert len(with_paths) >= 25
    for karta in with_paths:
        shape = structure_of(karta)
        assert not shape.in_place & {expr for group in shape.plan_groups for expr in group}


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_every_resolution_is_what_it_was_with_the_objects_normalised_at_once(
    karta: Karta, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _, obj in OBJECTS:
        _agree(karta, obj, monkeypatch)


@pytest.mark.parametrize("name", sorted({name for name, _ in OBJECTS if name in BY_NAME}))
def test_a_definitions_own_fixture_agrees_read_in_place_and_checked(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same on a definition's own fixture, where the paths find what they look for, with the object shared
    after the plain-JSON check (not `from_json`)."""
    karta = BY_NAME[name]
    for _, obj in (item for item in OBJECTS if item[0] == name):
        _agree(karta, obj, monkeypatch, from_json=False)


def test_a_complete_resolution_copies_no_pod_template_until_one_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    karta = BY_NAME["jobset-x-k8s-io-jobset-v1alpha2"]
    obj = next(obj for name, obj in OBJECTS if name == karta.name)
    copies: list[Any] = []

    def counted(value: Any) -> Any:
        copies.append(value)
        return convert.normalize(value)

    monkeypatch.setattr(extract, "normalize", counted)
    resolution = Workload(karta, obj, from_json=True).resolve()
    assert resolution.ok
    component = resolution.component("replicatedjob")
    assert all(instance.requests for instance in component.instances.values())
    assert copies == []
    assert component._part("templates").in_place
    templates = [instance.pod_template for instance in component.instances.values()]
    assert len(copies) == 1  # one copy of the component's templates, on the first read
    assert [instance.pod_template for instance in component.instances.values()] == templates
    assert all(a is b for a, b in zip(templates, [i.pod_template for i in component.instances.values()], strict=True))


def _subtrees(value: Any) -> set[int]:
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            found.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


def test_nothing_handed_out_is_the_callers_object_and_changing_it_changes_nothing() -> None:
    karta = BY_NAME["jobset-x-k8s-io-jobset-v1alpha2"]
    obj = copy.deepcopy(next(obj for name, obj in OBJECTS if name == karta.name))
    kept = copy.deepcopy(obj)
    workload = Workload(karta, obj, from_json=True)
    resolution = workload.resolve()
    own = _subtrees(obj)
    handed: list[Any] = []
    for component in resolution:
        for instance in component.instances.values():
            handed += [instance.pod_template, instance.pod_template_spec, instance.pod_spec, instance.pod_metadata]
    strict = workload.component("replicatedjob").pod_template_specs
    assert strict is not None and handed
    assert not any(_subtrees(value) & own for value in [*handed, strict])
    for template in strict.values():  # a getter's values are the caller's to change
        template["spec"]["containers"].clear()
    assert workload.component("replicatedjob").pod_template_specs != strict
    assert obj == kept


# --- objects the in-place reading must leave to the normalised copy --------------------------------------------


class _Policy(enum.Enum):
    ALWAYS = "Always"


def _jobset_with(container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    karta_obj = next(obj for name, obj in OBJECTS if name == "jobset-x-k8s-io-jobset-v1alpha2")
    obj = copy.deepcopy(karta_obj)
    template = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    template["spec"]["containers"] = [container]
    template["spec"].update(spec)
    return obj


_SIDECAR = {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}
ODD_SPECS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"name": "a", "resources": {"requests": {"cpu": 2.0, "memory": "1Gi"}}}, {}),  # an integral float
    ({"name": "a", "resources": {"requests": {"cpu": -2.0}}}, {}),  # its message names the normalised int
    ({"name": "a", "resources": {"requests": {"cpu": 0.5}}}, {}),
    ({"name": "a", "resources": {"limits": {"memory": "1Gi", "cpu": "2"}, "requests": {"cpu": "500m"}}}, {}),
    ({"name": "a", "resources": {"requests": {"zz.io/x": "1", "a.io/y": 2, "cpu": None}}}, {}),
    ({"name": "a", "resources": {"requests": {"cpu": "two"}}}, {}),
    ({"name": "a", "resources": {"requests": {"cpu": {"b": 1, "a": 2}}}}, {}),  # the message shows an object
    ({"name": "a", "resources": {"requests": {"cpu": True}}}, {}),
    ({"name": "a", "resources": {"requests": ["cpu"]}}, {}),
    ({"name": "a", "resources": "lots"}, {}),
    ({"name": "a", "resources": {"requests": {"cpu": "1"}}}, {"initContainers": [{"name": "i"}, _SIDECAR]}),
    ({"name": "a"}, {"initContainers": [_SIDECAR, {"name": "i", "resources": {"limits": {"cpu": "3"}}}]}),
    ({"name": "a"}, {"initContainers": "none"}),
    ({"name": "a"}, {"resources": {"limits": {"cpu": "4", "memory": "2Gi"}}, "overhead": {"cpu": "100m"}}),
    ({"name": "a"}, {"resources": [1]}),
    ({"name": "a"}, {"overhead": {"cpu": 1.0}}),
]


@pytest.mark.parametrize(("container", "spec"), ODD_SPECS)
def test_odd_pod_specs_resolve_as_they_did(
    container: dict[str, Any], spec: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = BY_NAME["jobset-x-k8s-io-jobset-v1alpha2"]
    _agree(karta, _jobset_with(container, **spec), monkeypatch)
    _agree(karta, _jobset_with(container, **spec), monkeypatch, from_json=False)


def test_typed_values_in_a_shared_object_resolve_as_they_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the plain-JSON check lets through as it stands (tuples, timestamps, typed values, ordered dicts, keys
    that are not strings) reads as its normalised copy does."""
    karta = BY_NAME["jobset-x-k8s-io-jobset-v1alpha2"]
    odd: list[dict[str, Any]] = [
        _jobset_with({"name": "a", "resources": {"requests": OrderedDict([("memory", "1Gi"), ("cpu", "1")])}}),
        _jobset_with({"name": "a", "resources": {"requests": {"cpu": "1"}}}, initContainers=({"name": "i"},)),
        _jobset_with({"name": "a"}, initContainers=[{"name": "i", "restartPolicy": _Policy.ALWAYS}]),
        _jobset_with({"name": "a", "resources": {"requests": {1: "1", "cpu": "2"}}}),
        _jobset_with({"name": "a", "resources": {"requests": {"cpu": dt.date(2026, 1, 1)}}}),
    ]
    odd[0]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"] = OrderedDict(
        [("spec", {"containers": [{"name": "b", "resources": {"limits": {"cpu": "3"}}}]}), ("metadata", {})]
    )
    for obj in odd:
        got = _everything(karta, obj, from_json=False)
        assert got == _as_before(karta, obj, monkeypatch, from_json=False)


# --- the formula in place --------------------------------------------------------------------------------------

_QUANTITIES = st.one_of(
    st.sampled_from(["1", "500m", "1Gi", "2.5", "-1", "0", "1e3", "abc", "", " 2 ", "1.0"]),
    st.integers(-3, 10**20),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-5, max_value=1e6),
    st.none(),
    st.booleans(),
)
_NAMES = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage", "é.io/x", "a"])
_LISTS = st.dictionaries(_NAMES, _QUANTITIES, max_size=4) | st.sampled_from([None, [], "x", 3])
_RESOURCES = st.fixed_dictionaries({}, optional={"requests": _LISTS, "limits": _LISTS}) | st.sampled_from([None, []])
_CONTAINERS = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", ""])},
    optional={"resources": _RESOURCES, "restartPolicy": st.sampled_from(["Always", "Never", None, 1])},
)
_SPECS = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.lists(_CONTAINERS, max_size=3) | st.sampled_from([None, {}, "x"]),
        "initContainers": st.lists(_CONTAINERS, max_size=3),
        "resources": _RESOURCES,
        "overhead": _LISTS,
    },
)


def _outcome(spec: dict[str, Any]) -> Any:
    try:
        found = pod_requests(spec)
    except (QuantityError, ResourceSpecError) as error:
        return ("error", str(error))
    return [(name, amount) for name, amount in found.items()]


@SETTINGS
@given(_SPECS)
def test_the_formula_in_place_is_the_formula_on_the_normalised_spec(spec: dict[str, Any]) -> None:
    expected = _outcome(convert.normalize(spec))
    found = pod_requests_in_place(spec)
    if found is None:  # it vouches for nothing it cannot: then the caller reads the normalised spec
        return
    assert [(name, amount) for name, amount in found.items()] == expected  # never an answer where one is an error
    assert all(type(amount) is Fraction for amount in found.values())


@SETTINGS
@given(_SPECS)
def test_the_formula_in_place_declines_every_spec_whose_reading_fails(spec: dict[str, Any]) -> None:
    if _outcome(convert.normalize(spec))[:1] == ("error",):
        assert pod_requests_in_place(spec) is None


def test_the_formula_in_place_answers_the_common_forms_and_declines_the_rest() -> None:
    plain = {
        "containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi", "cpu": "1"}, "limits": {"x/y": 2}}}],
        "initContainers": [{"name": "s", "restartPolicy": "Always", "resources": {"limits": {"cpu": "500m"}}}],
        "overhead": {"cpu": "10m"},
    }
    found = pod_requests_in_place(plain)
    assert found is not None and list(found) == list(pod_requests(convert.normalize(plain)))
    assert found == {"cpu": Fraction(151, 100), "memory": Fraction(2**30), "x/y": Fraction(2)}
    for odd in (
        {"containers": [{"resources": {"requests": {"cpu": 1.0}}}]},
        {"containers": [{"resources": {"requests": {"cpu": "bad"}}}]},
        {"containers": ({"resources": {}},)},
        {"containers": [OrderedDict(resources={})]},
    ):
        assert pod_requests_in_place(odd) is None


# --- parts a definition has no path for --------------------------------------------------------------------


def test_a_part_the_definition_has_no_path_for_is_what_extracting_it_gives() -> None:
    """`ComponentSlot.absent` parts are None without extracting them; extracting them gives None too, on every
    definition's own fixture and on an object they do not describe."""
    checked = 0
    other = next(obj for name, obj in OBJECTS if name == "jobset-x-k8s-io-jobset-v1alpha2")
    for name, obj in [item for item in OBJECTS if item[0] in BY_NAME] + [("other", other)]:
        for karta in [BY_NAME[name]] if name in BY_NAME else DEFINITIONS:
            resolution = Workload(karta, obj, validate=False, check_gvk=False, from_json=True).resolve()
            for component in resolution:
                for key in component._slot.absent:
                    assert component._part(key) is None
                    assert component._compute(key) is None, (karta.name, component.name, key)
                    checked += 1
    assert checked >= 500


# --- policies ---------------------------------------------------------------------------------------------------


class _Refuses(list[Any]):
    """A recorder that refuses the pod template path (as one whose definition was stopped earlier would)."""

    def __init__(self, refused: str) -> None:
        super().__init__()
        self.refused = refused

    def refuse(self, expression: str) -> Any:
        return JqLimitError(expression, "refused") if expression == self.refused else None


def _with_policy(karta: Karta, obj: Any, policy: EvaluationPolicy) -> Any:
    resolution = Workload(karta, obj, from_json=True, policy=policy).resolve()
    component = resolution.component("replicatedjob")
    return _strict(
        json.loads(
            json.dumps(
                {
                    "errors": [str(error) for error in resolution.errors],
                    "templates": [instance.pod_template for instance in component.instances.values()],
                    "requests": [_requests(instance.requests) for instance in component.instances.values()],
                },
                default=repr,
            )
        )
    )


def test_a_worker_policy_and_a_refusing_recorder_resolve_as_they_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the worker policy the plain paths are read in place as the Document reads them (in Python); a
    refused object path is never read in place: its refusal is the part's error, as before."""
    karta = BY_NAME["jobset-x-k8s-io-jobset-v1alpha2"]
    obj = next(obj for name, obj in OBJECTS if name == karta.name)
    (path,) = structure_of(karta).in_place
    for policy in (EvaluationPolicy("worker"), EvaluationPolicy(stops=_Refuses(path))):
        got = _with_policy(karta, obj, policy)
        with monkeypatch.context() as patched:
            patched.setattr(structure, "_plain", lambda expr: False)
            patched.setattr(snapshot, "_in_place_reader", lambda expr: None)
            patched.setattr(structure, "_CACHE", type(structure._CACHE)())
            assert got == _with_policy(karta, obj, policy)
    refused = Workload(karta, obj, from_json=True, policy=EvaluationPolicy(stops=_Refuses(path))).resolve()
    assert any("refused" in str(error) for error in refused.errors)
