"""The generated evaluator (`jq/codegen.py`) against the current path (`Document.evaluate_many`), issue 19.

What must hold: for every catalog definition's expression groups (the ones a resolution evaluates together), over
every catalog fixture and conformance recording and over generated mutations of them (missing fields, nulls, wrong
types, numbers as strings, floats, huge arrays, non-ASCII text and keys, deep nesting), the generated program gives
exactly what the current path gives (same types, same key order, same errors), and so does the whole resolution
(status: phase, conditions, reason, message; components, instances, templates, scales) with the generated path on
and off. Which catalog expressions the generator leaves to the current path is pinned (`EXPECTED_UNCOVERED`). The
generated source holds no text of the program (its strings are constants passed in), bails to the current path
past its step count and the output cap, and is never used under a worker policy or a refusing recorder.
"""

from __future__ import annotations

import copy
import io
import json
import keyword
import math
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.catalog import builtin_definitions
from workload_map.jq import Document, EvaluationPolicy, JqError, codegen, generated
from workload_map.model import Karta
from workload_map.resolve import Workload, _json, extract, snapshot
from workload_map.resolve.structure import structure_of

pytestmark = pytest.mark.usefixtures("generated_from_the_first_object")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "catalog"
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
RECORDINGS = ROOT.parent / "shared" / "conformance" / "recordings"

CI = os.environ.get("CI") == "true"
SETTINGS = settings(
    max_examples=60 if CI else 100,
    deadline=None,
    derandomize=CI,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# catalog status expressions the generator does not cover, so they always take the current path (closures or
# libjq), each with what it uses that the generator leaves out
EXPECTED_UNCOVERED_STATUS: dict[str, str] = {
    "extensions-agents-x-k8s-io-sandboxclaim-v1beta1": "an object built by the expression ({status: ..., reason:"
    " ...}: its keys keep construction order, which normalising an output would sort) and index/1",
}
# how many structure expressions (ids, pod paths, scales) of each definition the generator leaves to the current
# path: object construction (pod metadata labels), `def`, to_entries/keys, tonumber, fromjson, `/`, string
# interpolation, `?//`, min_by/sort_by and the like
EXPECTED_UNCOVERED_STRUCTURE: dict[str, int] = {
    "batch-volcano-sh-job-v1alpha1": 1,
    "flux-framework-org-minicluster-v1alpha2": 2,
    "grove-io-podcliqueset-v1alpha1": 3,
    "kubeflow-org-notebook-v1": 1,
    "kubeflow-org-scheduledworkflow-v1beta1": 5,
    "kubevirt-io-virtualmachine-v1": 2,
    "kubevirt-io-virtualmachineinstance-v1": 2,
    "machinelearning-seldon-io-seldondeployment-v1": 2,
    "milvus-io-milvus-v1beta1": 12,
    "nvidia-com-dynamographdeployment-v1alpha1": 1,
    "serving-kserve-io-inferencegraph-v1alpha1": 1,
    "serving-kserve-io-llminferenceservice-v1alpha1": 2,
    "serving-kserve-io-llminferenceservice-v1alpha2": 2,
    "sparkoperator-k8s-io-sparkapplication-v1beta2": 3,
    "tekton-dev-pipelinerun-v1": 2,
    "tekton-dev-taskrun-v1": 2,
    "trainer-kubeflow-org-trainjob-v1alpha1": 2,
    "workload-codeflare-dev-appwrapper-v1beta2": 3,
    "workspace-devfile-io-devworkspace-v1alpha2": 2,
}

DEFINITIONS: list[Karta] = builtin_definitions()


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(_json.json_copy(value)))


def _objects() -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(FIXTURES.glob("*/workload.yaml")):
        found.append((path.parent.name, _plain(yaml.safe_load(path.read_text()))))
    for path in sorted(CORPUS.glob("*.yaml")):
        for index, document in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(document, dict):
                found.append((f"{path.stem}[{index}]", _plain(document)))
    if RECORDINGS.is_dir():
        for path in sorted(RECORDINGS.glob("*.yaml")):
            for index, event in enumerate(yaml.safe_load(path.read_text())["events"]):
                if event.get("kind") == "STATE" and isinstance(event.get("object"), dict):
                    found.append((f"{path.stem}#{index}", _plain(event["object"])))
    return found


OBJECTS = _objects()


def _groups(karta: Karta) -> tuple[tuple[str, ...], ...]:
    return structure_of(karta).plan_groups


def _strict(value: Any) -> Any:
    """A value with its JSON types and key order spelled out (Python says True == 1 and 1 == 1.0)."""
    if isinstance(value, JqError):
        return ("error", type(value).__name__, str(value))
    if isinstance(value, dict):
        return ("object", [(key, _strict(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("array", [_strict(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _current(document: Document, exprs: tuple[str, ...]) -> list[Any]:
    return document.evaluate_many(exprs)


def _agree(obj: Any, exprs: tuple[str, ...]) -> None:
    expected = _current(Document(copy.deepcopy(obj)), exprs)
    got = generated.evaluate_batch(Document(obj), exprs)
    for expr, mine, theirs in zip(exprs, got, expected, strict=True):
        assert _strict(mine) == _strict(theirs), expr


def _everything(karta: Karta, obj: dict[str, Any]) -> Any:
    workload = Workload(karta, obj, validate=False, check_gvk=False, from_json=True)
    resolution = workload.resolve()
    out: dict[str, Any] = {"view": resolution.to_dict(), "errors": [str(error) for error in resolution.errors]}
    out["status"] = {name: component.status for name, component in resolution.components.items()}
    out["templates"] = [
        (name, instance.instance_id, instance.pod_template, instance.desired_replicas)
        for name, component in resolution.components.items()
        for instance in component.instances.values()
    ]
    return _strict(json.loads(json.dumps(out, default=repr)))


def _resolutions_agree(karta: Karta, obj: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole resolution with the generated path (the batch programs and the status plan's generated
    functions) and without it (every group through `evaluate_many`, the status through `extract_status`)."""
    got = _everything(karta, copy.deepcopy(obj))
    with monkeypatch.context() as patched:
        patched.setattr(snapshot, "evaluate_batch", _current)
        patched.setattr(extract, "planned_status", lambda *args: None)
        expected = _everything(karta, copy.deepcopy(obj))
    assert got == expected


# --- every catalog expression over every recorded object ------------------------------------------------------


def test_there_is_something_to_compare() -> None:
    assert len(DEFINITIONS) >= 50
    assert len(OBJECTS) >= 100


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_every_group_of_a_definition_gives_what_the_current_path_gives_on_every_object(karta: Karta) -> None:
    for _, obj in OBJECTS:
        for group in _groups(karta):
            _agree(obj, group)


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_the_whole_resolution_is_the_same_with_the_generated_path_on_and_off(
    karta: Karta, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _, obj in OBJECTS:
        _resolutions_agree(karta, obj, monkeypatch)


def test_the_generated_path_answers_the_catalog_fixtures_itself() -> None:
    """Not a vacuous pass: on its own fixtures almost every expression of a definition is answered by the
    generated program, not handed back."""
    answered = total = 0
    by_name = {karta.name: karta for karta in DEFINITIONS}
    for name, obj in OBJECTS:
        karta = by_name.get(name)
        if karta is None:
            continue
        for group in _groups(karta):
            results = codegen.batch_program(group).run(obj)
            answered += sum(result is not codegen.BAIL for result in results)
            total += len(results)
    assert total >= 500
    assert answered / total >= 0.9, (answered, total)


def test_which_catalog_expressions_fall_back_is_pinned() -> None:
    status: set[str] = set()
    structure: dict[str, int] = {}
    for karta in DEFINITIONS:
        groups = _groups(karta)
        status_group = set(structure_of(karta).plan_groups[-1]) if groups else set()
        for expr in (expr for group in groups for expr in codegen.uncovered(group)):
            if expr in status_group:
                status.add(karta.name)
            else:
                structure[karta.name] = structure.get(karta.name, 0) + 1
    assert status == set(EXPECTED_UNCOVERED_STATUS)
    assert structure == EXPECTED_UNCOVERED_STRUCTURE


# --- mutations -------------------------------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            yield from _paths(item, (*prefix, index))


def _replace(obj: Any, path: tuple[Any, ...], make: Any) -> Any:
    if not path:
        return make(obj)
    head, rest = path[0], path[1:]
    if isinstance(obj, dict) and head in obj:
        out = dict(obj)
        out[head] = _replace(obj[head], rest, make)
        return out
    if isinstance(obj, list) and isinstance(head, int) and head < len(obj):
        items = list(obj)
        items[head] = _replace(obj[head], rest, make)
        return items
    return obj


_DELETE = object()

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.sampled_from([0, 1, -1, 2**53, 2**53 + 1, -(2**53), 2**63, 2**64 + 5]),
    st.sampled_from([1.0, 2.0, 0.5, -0.0, 1e300, float("nan"), float("inf")]),
    st.text(max_size=6),
    st.sampled_from(["True", "true", "False", "3", "1.5", "Running", "Suspended", "Failed", "é", "日本", "\u0000"]),
)


def _mutation(draw: st.DrawFn, value: Any) -> Any:
    kind = draw(st.sampled_from(["delete", "scalar", "string_number", "empty", "huge", "deep", "keys", "wrap"]))
    if kind == "delete":
        return _DELETE
    if kind == "scalar":
        return draw(_SCALARS)
    if kind == "string_number":
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "7"
    if kind == "empty":
        return draw(st.sampled_from([[], {}, "", [None], [{}]]))
    if kind == "huge":
        item = value[0] if isinstance(value, list) and value else value
        if len(json.dumps(item)) > 2000:
            item = {"name": "x", "replicas": 2, "type": "Ready", "status": "True"}
        return [item] * draw(st.sampled_from([1001, 2500]))  # shared items: the walk, not the copy, is tested
    if kind == "deep":
        out = value
        for _ in range(draw(st.integers(min_value=10, max_value=120))):
            out = [out] if draw(st.booleans()) else {"status": out}
        return out
    if kind == "keys":
        if isinstance(value, dict):
            return {
                draw(st.sampled_from(["é", "Z", "a", "ß", "type", "status"])) + key: item for key, item in value.items()
            }
        return {"é": value, "a": value}
    return [value, value] if draw(st.booleans()) else {"type": value, "status": value}


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name, obj = draw(st.sampled_from(OBJECTS))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = list(_paths(obj))[1:]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        new = _mutation(draw, _get(obj, path))
        if new is _DELETE:
            obj = _replace(obj, path[:-1], lambda parent, key=path[-1]: _without(parent, key))
        else:
            obj = _replace(obj, path, lambda _old, new=new: new)
    return name, obj


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def _without(parent: Any, key: Any) -> Any:
    if isinstance(parent, dict):
        return {k: v for k, v in parent.items() if k != key}
    if isinstance(parent, list):
        return [v for i, v in enumerate(parent) if i != key]
    return parent


_BY_NAME = {karta.name: karta for karta in DEFINITIONS}


def _relevant(name: str) -> list[Karta]:
    """The object's own definition (by fixture name or kind), else one of the catalog's."""
    own = _BY_NAME.get(name.split("#", maxsplit=1)[0].split("__")[-2] if "__" in name else name)
    return [own] if own is not None else [DEFINITIONS[hash(name) % len(DEFINITIONS)]]


@SETTINGS
@given(_mutated(), st.sampled_from(range(len(DEFINITIONS))))
def test_mutated_objects_give_what_the_current_path_gives(case: tuple[str, dict[str, Any]], other: int) -> None:
    name, obj = case
    for karta in [*_relevant(name), DEFINITIONS[other]]:
        for group in _groups(karta):
            _agree(obj, group)


@SETTINGS
@given(_mutated())
def test_mutated_objects_resolve_the_same_with_the_generated_path_on_and_off(case: tuple[str, dict[str, Any]]) -> None:
    name, obj = case
    if any(isinstance(value, float) and not math.isfinite(value) for value in _leaves(obj)):
        obj = json.loads(json.dumps(obj).replace("NaN", "null").replace("Infinity", "1e308"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        for karta in _relevant(name):
            _resolutions_agree(karta, obj, monkeypatch)


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


# --- containment -----------------------------------------------------------------------------------------------


def _catalog_expressions() -> list[str]:
    return sorted({expr for karta in DEFINITIONS for group in _groups(karta) for expr in group})


def test_the_generated_source_holds_no_text_of_the_programs() -> None:
    """Every string of a program is a constant passed in (`K1`, ...): the source has no string literal, no comment,
    and every name in it is a generated counter or one of a fixed vocabulary, whatever the expressions say."""
    exprs = tuple(_catalog_expressions())
    # the batch as one function, and as one function per expression (the status plan's)
    for source in (codegen.generated_source(exprs), codegen.expression_functions(exprs).source):
        names: set[str] = set()
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            assert token.type not in (tokenize.STRING, tokenize.COMMENT), token
            if token.type == tokenize.NAME and not re.fullmatch(r"[xKf][0-9]+", token.string):
                names.add(token.string)
        assert names <= _VOCABULARY, names - _VOCABULARY
        assert {"x1", "K1"} <= set(re.findall(r"\b[xK]1\b", source))
        assert "m.get(" in source  # the catalog's groups share subtrees: the memo is used


_VOCABULARY = set(keyword.kwlist) | {
    "run", "v", "r", "s", "o", "m", "F", "f", "N", "B", "BAIL", "SK", "SV", "KEY", "EQ", "EXT", "FIN", "ASC", "S", "L",
    "Exception", "type", "len", "abs", "str", "int", "float", "bool", "list", "dict",
    "append", "get", "startswith", "endswith",
}  # fmt: skip


def test_past_its_step_count_the_generated_code_hands_the_expression_back() -> None:
    expr = "[.items[] | .items[] | .n // 1] | add"
    obj = {"items": [{"items": [{"n": 1}] * 400}] * 400}  # 160,400 elements visited: past the generated count
    program = codegen.batch_program((expr,))
    assert program.covered == (True,)
    assert program.run(obj) == [codegen.BAIL]
    assert generated.evaluate_batch(Document(obj), (expr,)) == Document(obj).evaluate_many([expr]) == [[160000]]


def test_past_the_output_cap_the_current_path_gives_its_error() -> None:
    expr = ".items[] | .n"
    obj = {"items": [{"n": index} for index in range(5000)]}
    assert codegen.batch_program((expr,)).run(obj) == [codegen.BAIL]
    got = generated.evaluate_batch(Document(obj), (expr,))[0]
    assert isinstance(got, JqError)
    assert _strict(got) == _strict(Document(obj).evaluate_many([expr])[0])


def test_a_worker_policy_or_a_refusing_recorder_never_runs_generated_code(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(codegen, "batch_program", calls.append)  # returns None: a run would fail

    class Refuses(list[Any]):
        def refuse(self, expression: str) -> Any:
            return None if expression != ".b" else JqError(expression, "refused")

    obj = {"a": 1, "b": 2}
    worker = EvaluationPolicy("worker")
    assert generated.evaluate_batch(Document(obj, policy=worker), (".a",)) == [[1]]
    refusing = EvaluationPolicy(stops=Refuses())
    assert generated.evaluate_batch(Document(obj, policy=refusing), (".a", ".b"))[0] == [1]
    assert calls == []


def test_a_program_for_an_expression_the_engine_leaves_to_libjq_is_not_generated() -> None:
    expr = '.a | test("x")'  # regular expressions: libjq only
    assert codegen.uncovered((expr, ".a")) == [expr]
    assert codegen.batch_program((expr, ".a")).run({"a": "x"}) == [codegen.BAIL, ["x"]]


def test_a_block_python_refuses_is_left_out_and_the_rest_of_its_batch_still_generated() -> None:
    # 30 iterations nest 30 `for` blocks, past Python's limit of 20 statically nested blocks: the batch compiled
    # as a whole fails, so its blocks are compiled one by one and only that one is left to the current path
    deep = "[" + " | ".join([".[]"] * 30) + "]"
    with pytest.raises(SyntaxError):
        compile(codegen._function_source([codegen._expression_lines(deep, {})]), "<jq>", "exec")
    program = codegen.batch_program((deep, ".a"))
    assert program.covered == (False, True)
    nested: Any = 1
    for _ in range(30):
        nested = [nested]
    assert program.run({"a": 2}) == [codegen.BAIL, [2]]
    assert generated.evaluate_batch(Document(nested), (deep,)) == Document(nested).evaluate_many([deep]) == [[[1]]]


def test_a_batch_is_generated_only_from_its_second_evaluation_in_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, ...]] = []
    real = codegen.batch_program

    def recording(exprs: tuple[str, ...]) -> codegen.BatchProgram:
        built.append(exprs)
        return real(exprs)

    monkeypatch.setattr(codegen, "batch_program", recording)
    monkeypatch.setattr(generated, "GENERATE_AFTER", 1)
    monkeypatch.setattr(generated, "_seen", {})
    batch = (".spec.replicas", '.status.conditions[]? | select(.type == "Ready") | .status')
    objects = [
        {"spec": {"replicas": n}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}} for n in (1, 2, 3)
    ]
    results = [generated.evaluate_batch(Document(obj), batch) for obj in objects]
    assert built == [batch, batch]  # not for the first object: it took the current path
    assert results == [Document(obj).evaluate_many(batch) for obj in objects] == [[[n], ["True"]] for n in (1, 2, 3)]


def test_the_count_of_batches_seen_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generated, "GENERATE_AFTER", 1)
    monkeypatch.setattr(generated, "_seen", {})
    for index in range(generated._MAX_SEEN + 10):
        assert not generated._worth_generating((f".a{index}",))
    assert len(generated._seen) <= generated._MAX_SEEN
    assert generated._worth_generating((f".a{generated._MAX_SEEN + 9}",))


# --- the shapes the generator specialises: `[f] | add` without the array, `//` keeping an int at once, comparisons
# of two ints (issue 19, session 18) ---------------------------------------------------------------------------

_SPECIALISED = (
    "[.a[]? | .b // 1] | add // 0",
    "[.a[]? | .b] | add",
    "[.a[]? | .b // 1] | add // null",
    '[.a[]? | .b] | add // "none"',
    "[(.c // [])[] | (.b // 0) + (.d // 0)] | add // 0",
    "[.a[]?, .c[]? | .b // 1] | add",
    "[.a[]? | .b] | add // .x",  # the fallback reads the input: not the `([f] | add) // c` form
    "[.a[]? | .b // 1] | add // 0 | . > 0",
    "([.a[]? | .b // 1] | add // 0) as $n | $n > 0 and ([.c[]? | .b // 0] | add // 0) >= $n",
    ".x > 0, .x < .y, .x >= .y, .x <= 3, 2 < .y, .x == .y, .x != 0, (.x // 0) > (.y // 0)",
    ".x // 5, .y // .x, (.x // false) and (.y // true), .x > 0 and .y > 0, .x < 0 or .y < 0",
    # a `.key` of a target read before is reused only where that read dominates it
    "[.a[]? | (.b.b // 1) * ([.d.b // 1, .z.b // .d.b // 1] | min)]",
    "[.a[]? | .b.b // .d.b // .b.b]",
    "(.x.b // .y.b), .x.b, (if .x.b then .y.b else .x.b end), .y.b",
    ".a | (.b.b, .b.d), [.c[]? | .b.b, .b.b]",
    "[.a[]?, .c[]? | .b.b], .x.b",
)

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.integers(min_value=2**53 - 3, max_value=2**53 + 3),
    st.integers(min_value=-(2**53) - 3, max_value=-(2**53) + 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.0, math.nan, math.inf]),
    st.sampled_from(["", "a", "1"]),
    st.just([]),
    st.just([1, 2]),
    st.just({}),
    st.just({"b": 1}),
)
_ITEMS = st.one_of(st.dictionaries(st.sampled_from(["b", "d", "z"]), _VALUES, max_size=3), _VALUES)
_HOLDERS = st.fixed_dictionaries(
    {},
    optional={
        "a": st.one_of(st.lists(_ITEMS, max_size=5), _VALUES),
        "c": st.one_of(st.lists(_ITEMS, max_size=5), _VALUES),
        "x": _VALUES,
        "y": _VALUES,
    },
)


@SETTINGS
@given(_HOLDERS)
def test_the_specialised_shapes_give_what_the_current_path_gives(obj: dict[str, Any]) -> None:
    for expr in _SPECIALISED:
        _agree(obj, (expr,))
    _agree(obj, _SPECIALISED)  # as one batch, with its shared subtrees


def test_the_specialised_shapes_are_generated_and_answer_plain_objects_themselves() -> None:
    assert not codegen.uncovered(_SPECIALISED)
    source = codegen.generated_source(("[.a[]? | .b // 1] | add // 0",))
    assert set(re.findall(r"(\w+)\.append\(", source)) <= {"o", "r"}  # `[f] | add` adds as it goes: no array
    obj = {"a": [{"b": 2}, {}, {"b": None}, {"b": 3}], "c": [{"b": 1, "d": 2}], "x": 4, "y": 4}
    program = codegen.expression_functions(_SPECIALISED)
    got = [function(obj, {}) for function in program.functions]
    assert codegen.BAIL not in got[:11]  # the index reuse cases below index ints here: the current path errs
    assert got[0] == [7] and got[1] == [5] and got[4] == [3] and got[8] == [False]
    assert got[9] == [True, False, True, False, True, True, True, False]
    expected = _current(Document(copy.deepcopy(obj)), _SPECIALISED)
    assert [_strict(value) for value in got[:11]] == [_strict(value) for value in expected[:11]]
    _agree(obj, _SPECIALISED)
