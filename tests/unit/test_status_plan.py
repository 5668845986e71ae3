"""The status plan and its generated functions read the status `extract_status` reads (issue 19, "status, third
round").

`status_plan.planned_status` reads a status definition in one pass over its expressions' results (`StatusPlan.read`),
and evaluates them on demand with the generated functions of `jq/codegen.py` on the object in place (only what it
consults; subtrees several expressions compute, once). What must hold, for every catalog definition's every
status definition over every fixture, corpus object and recording, their variants (decoded with and without the
plain-JSON check, a `datetime` creation time, a tuple in the body) and generated mutations of them:

* the plan over the group's results gives exactly the generic `extract_status`'s status, and gives None exactly
  where the generic path records an error (the caller then runs it, so errors and their order are the generic
  path's);
* the generated functions give what the plan gives over the group's results (the same status, the same None);
* the generated functions are used only where the batch programs are (in process, no refusal, from a batch's
  second evaluation) and honour the step count and the output cap.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import DEFINITIONS, OBJECTS, SETTINGS, _leaves, _mutated, _relevant, _strict
from tests.unit.test_status_alone import _variants
from workload_map.jq import Document, EvaluationPolicy, JqError, codegen, generated
from workload_map.jq.finish import finish, finish_conditions, numbers_only
from workload_map.jq.policy import INPROCESS
from workload_map.model import Karta
from workload_map.resolve import Workload, _json, status, status_plan
from workload_map.resolve.errors import ExtractionError, GVKMismatchError
from workload_map.resolve.snapshot import Snapshot
from workload_map.resolve.structure import structure_of

pytestmark = pytest.mark.usefixtures("generated_from_the_first_object")


def _snapshot(karta: Karta, obj: dict[str, Any]) -> Snapshot:
    """A snapshot as a workload makes one: the object in place when it is plain JSON, else its copy."""
    shared = _json.shareable(obj)
    return Snapshot(obj if shared else _json.json_copy(obj), structure_of(karta).plan_groups, INPROCESS, shared=shared)


def _three_ways(karta: Karta, obj: dict[str, Any]) -> list[tuple[str, Any, Any, Any]]:
    """For each component with a status definition: (name, generic status and errors, the plan over the
    group's results, the plan through the generated functions)."""
    out: list[tuple[str, Any, Any, Any]] = []
    for component in karta.components:
        definition = component.status_definition
        if definition is None:
            continue
        snapshot = _snapshot(karta, copy.deepcopy(obj))
        errors: list[ExtractionError] = []

        def outputs(expr: str, field: str, snapshot: Snapshot = snapshot, name: str = component.name) -> list[Any]:
            return snapshot.outputs(expr, name, field)

        generic = status.extract_status(component.name, definition, outputs, errors.append)
        plan = status_plan.status_plan(definition)
        eager = plan.read(snapshot.results(plan.expressions))
        fresh = _snapshot(karta, copy.deepcopy(obj))
        lazy = status_plan.planned_status(definition, fresh.document, fresh.results)
        out.append((component.name, (generic, [str(error) for error in errors]), eager, lazy))
    return out


def _check(karta: Karta, obj: dict[str, Any], label: Any) -> None:
    for name, (generic, errors), eager, lazy in _three_ways(karta, obj):
        if errors:
            assert eager is None, (label, name, errors)
        else:
            assert eager is not None, (label, name)
            assert _same(eager, generic), (label, name)
        assert _same(lazy, eager), (label, name)


def _same(a: Any, b: Any) -> bool:
    """Equal, field types included (repr spells out every field of a status and its conditions)."""
    return bool(a == b) and repr(a) == repr(b) and _strict(_plain(a)) == _strict(_plain(b))


def _plain(value: Any) -> Any:
    return None if value is None else json.loads(json.dumps(value.to_dict()))


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_the_plan_reads_what_extract_status_reads_on_every_object(karta: Karta) -> None:
    for name, obj in OBJECTS:
        for variant, item, _ in _variants(obj):
            _check(karta, item, (name, variant))


@SETTINGS
@given(_mutated())
def test_the_plan_reads_what_extract_status_reads_on_mutated_objects(case: tuple[str, dict[str, Any]]) -> None:
    name, obj = case
    if any(isinstance(value, float) and not math.isfinite(value) for value in _leaves(obj)):
        obj = json.loads(json.dumps(obj).replace("NaN", "null").replace("Infinity", "1e308"))
    for karta in _relevant(name):
        _check(karta, obj, name)


def _jobset() -> tuple[Karta, dict[str, Any]]:
    karta = next(karta for karta in DEFINITIONS if karta.name.startswith("jobset"))
    obj = next(obj for name, obj in OBJECTS if name.startswith("jobset"))
    return karta, copy.deepcopy(obj)


def test_errors_come_from_the_generic_path_in_its_order() -> None:
    """Where a read fails (conditions that are not an array of objects, an expression that errors) the plan
    gives None and the status and its errors are the generic path's: the same with the plan on and off."""
    karta, obj = _jobset()
    obj["status"]["conditions"] = "broken"  # `any(...)` over a string errors; not an array of conditions
    obj["spec"]["suspend"] = True
    definition = karta.root.status_definition
    assert definition is not None
    (_, (generic, errors), eager, lazy) = _three_ways(karta, obj)[0]
    assert len(errors) >= 2 and eager is None and lazy is None
    resolution = Workload(karta, copy.deepcopy(obj), validate=False).resolve()
    assert [str(error) for error in resolution.errors] == errors
    assert resolution.status == generic
    with pytest.raises(ExtractionError) as raised:
        _ = Workload(karta, copy.deepcopy(obj), validate=False).status
    assert str(raised.value) == errors[0]


def test_the_generated_functions_answer_the_catalog_fixtures_themselves() -> None:
    """Not a vacuous pass: on the fixtures of their own definitions the statuses come from the generated
    functions, without the group's results (which would evaluate every expression)."""

    def never(expressions: Any) -> Any:
        raise AssertionError("the group's results were read")

    by_name = {karta.name: karta for karta in DEFINITIONS}
    answered = total = 0
    for name, obj in OBJECTS:
        karta = by_name.get(name)
        if karta is None or karta.root.status_definition is None:
            continue
        total += 1
        snapshot = _snapshot(karta, copy.deepcopy(obj))
        try:
            found = status_plan.planned_status(karta.root.status_definition, snapshot.document, never)
        except AssertionError:
            continue
        answered += found is not None
    assert total >= 40
    assert answered / total >= 0.9, (answered, total)


def test_only_what_the_plan_consults_is_evaluated() -> None:
    """A status whose byConditions fail never evaluates its byExpression; a reason is read for the primary
    phase only: fewer expressions run than the group holds, each once."""
    karta, obj = _jobset()
    definition = karta.root.status_definition
    assert definition is not None
    plan = status_plan.status_plan(definition)
    functions = generated.generated_functions(Document(obj), plan.expressions)
    assert functions is not None
    ran: list[int] = []

    def counting(index: int) -> Any:
        function = functions[index]
        assert function is not None

        def call(value: Any, memo: dict[int, Any], *finish: Any) -> Any:
            ran.append(index)
            return function(value, memo, *finish)

        return call

    found = plan.read_generated(tuple(counting(index) for index in range(len(functions))), obj)
    assert found is not None and found.phase == "Running"
    assert len(set(ran)) == len(ran) < len(plan.expressions)
    snapshot = Snapshot(obj, structure_of(karta).plan_groups, INPROCESS, shared=True)
    assert found == plan.read(snapshot.results(plan.expressions))


def test_subtrees_several_expressions_compute_are_computed_once() -> None:
    """The JobSet's initializing and running expressions both sum the replicas and the ready jobs: one memo key
    each, whatever the expression they occur in."""
    karta, obj = _jobset()
    definition = karta.root.status_definition
    assert definition is not None
    exprs = status_plan.status_plan(definition).expressions
    trees = [codegen._tree(expr) for expr in exprs]
    shared = codegen._shared_subtrees([tree for tree in trees if tree is not None])
    assert shared
    by_key: dict[int, set[str]] = {}
    for tree in trees:
        for node in _nodes(tree):
            if id(node) in shared:
                by_key.setdefault(shared[id(node)], set()).add(repr(node))
    assert all(len(reprs) == 1 for reprs in by_key.values())  # one key, one subtree
    program = codegen.expression_functions(exprs)
    memo: dict[int, Any] = {}
    first = [function(obj, memo) if function is not None else codegen.BAIL for function in program.functions]
    assert memo  # filled by the first expression that computed each
    assert first == [function(obj, {}) if function is not None else codegen.BAIL for function in program.functions]
    assert first == codegen.batch_program(exprs).run(obj)


def _height(node: Any) -> int:
    return 1 + max((_height(kid) for kid in codegen._children(node)), default=0)


def _nodes(tree: Any) -> list[Any]:
    found, pending = [], [tree]
    while pending:
        node = pending.pop()
        found.append(node)
        pending.extend(codegen._children(node))
    return found


def test_a_generated_function_hands_back_past_its_step_count_and_the_output_cap() -> None:
    counted = "[.items[] | .items[] | .n // 1] | add"
    (function,) = codegen.expression_functions((counted,)).functions
    assert function is not None
    assert function({"items": [{"items": [{"n": 1}] * 400}] * 400}, {}) is codegen.BAIL
    capped = ".items[] | .n"
    (function,) = codegen.expression_functions((capped,)).functions
    assert function is not None
    assert function({"items": [{"n": index} for index in range(5000)]}, {}) is codegen.BAIL


def test_no_generated_function_under_a_worker_policy_a_refusing_recorder_or_before_the_second_evaluation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[str, ...]] = []
    real = codegen.expression_functions

    def recording(exprs: tuple[str, ...]) -> codegen.BatchProgram:
        built.append(exprs)
        return real(exprs)

    monkeypatch.setattr(codegen, "expression_functions", recording)

    class Refuses(list[Any]):
        def refuse(self, expression: str) -> Any:
            return None if expression != ".b" else JqError(expression, "refused")

    obj = {"a": 1, "b": 2}
    assert generated.generated_functions(Document(obj, policy=EvaluationPolicy("worker")), (".a",)) is None
    assert generated.generated_functions(Document(obj, policy=EvaluationPolicy(stops=Refuses())), (".a", ".b")) is None
    monkeypatch.setattr(generated, "GENERATE_AFTER", 1)
    monkeypatch.setattr(generated, "_seen", {})
    assert generated.generated_functions(Document(obj), (".a",)) is None  # the first evaluation: the current path
    assert built == []
    functions = generated.generated_functions(Document(obj), (".a",))
    assert built == [(".a",)]
    assert functions is not None and functions[0] is not None and functions[0](obj, {}) == [1]


def test_a_worker_policy_reads_the_status_through_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a worker policy the plan reads the group's results (evaluated in the worker), never generated
    code, and gives the in-process status."""
    karta, obj = _jobset()
    in_process = Workload(karta, copy.deepcopy(obj), validate=False).status
    monkeypatch.setattr(codegen, "expression_functions", lambda exprs: pytest.fail("generated code under a worker"))
    monkeypatch.setattr(codegen, "batch_program", lambda exprs: pytest.fail("generated code under a worker"))
    worker = Workload(karta, copy.deepcopy(obj), validate=False, policy=EvaluationPolicy("worker", deadline=30.0))
    assert _same(worker.status, in_process)


def test_the_kind_check_still_refuses_another_kind_after_a_pass() -> None:
    """The last (definition, GVK) pair that passed is remembered, not every pair: another kind through the same
    definition is still refused, with the same message, and a passing one after it passes."""
    karta, obj = _jobset()
    Workload(karta, copy.deepcopy(obj), validate=False)
    wrong = copy.deepcopy(obj)
    wrong["kind"] = "jobset"
    for _ in range(2):
        with pytest.raises(GVKMismatchError, match="kinds are case-sensitive"):
            Workload(karta, copy.deepcopy(wrong), validate=False)
    assert Workload(karta, copy.deepcopy(obj), validate=False).object_gvk == Workload(karta, obj).object_gvk


def test_the_status_is_read_without_making_the_components() -> None:
    karta, obj = _jobset()
    workload = Workload(karta, obj, validate=False)
    status_read = workload.status
    assert workload._built is None  # `Workload.status` made no Component
    assert status_read == workload.root.status == workload.resolve().status
    assert list(workload.components) == [karta.root.name, *(child.name for child in karta.children)]
    assert workload.root is workload.component(karta.root.name)


def test_the_generated_matching_holds_no_text_of_the_definitions() -> None:
    """Every string of the matching (status names, condition types, expected results) is a constant passed in:
    the source has no string literal and no comment, whatever the definitions say."""
    import io
    import re
    import tokenize

    vocabulary = {"def", "read", "v", "m", "r", "T", "RP", "M", "h", "c", "e", "E", "if", "is", "not", "None"}
    vocabulary |= {"and", "or", "raise", "NA", "BAIL", "TS", "return", "append", "get", "status", "reason"}
    vocabulary |= {"C", "CF", "CR", "ST", "FS", "x", "type", "str", "elif", "else", "True", "False"}
    for karta in DEFINITIONS:
        for component in karta.components:
            if component.status_definition is None:
                continue
            plan = status_plan.status_plan(component.status_definition)
            functions = codegen.expression_functions(plan.expressions).functions
            source = status_plan._reader_source(plan, functions, {})
            for token in tokenize.generate_tokens(io.StringIO(source).readline):
                assert token.type not in (tokenize.STRING, tokenize.COMMENT), token
                if token.type == tokenize.NAME:
                    assert token.string in vocabulary or re.fullmatch(r"[KFH][0-9]+", token.string), token


@given(
    st.lists(
        st.one_of(
            st.integers(),
            st.sampled_from([2**53, 2**53 + 1, -(2**53), -(2**53) - 1]),
            st.booleans(),
            st.floats(),
            st.text(max_size=3),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_reasons_list_is_written_as_jq_tostring_writes_it(items: list[Any]) -> None:
    assert status.list_text(items) == _json.jq_tostring(items)


def test_only_small_subtrees_are_shared_and_a_deep_batch_still_agrees() -> None:
    """A subtree is shared only up to 48 levels high (it is hashed when counted); a batch of two deep
    expressions that repeat one path still gives what the current path gives, with and without the memo."""
    deep = "." + ".".join(["a"] * 60)
    exprs = (f"{deep} // 1", f"({deep} // 1) + 1", ".b.c", ".b.c == 2")
    trees = [codegen._tree(expr) for expr in exprs]
    shared = codegen._shared_subtrees([tree for tree in trees if tree is not None])
    heights = [_height(node) for tree in trees for node in _nodes(tree) if id(node) in shared]
    assert heights and max(heights) <= 48  # `.b.c` and the deep path's prefixes up to 48 levels
    assert codegen._tree(deep) is not None and _height(codegen._tree(deep)) > 48
    nested: Any = 5
    for _ in range(60):
        nested = {"a": nested}
    obj = {**nested, "b": {"c": 2}}
    expected = Document(copy.deepcopy(obj)).evaluate_many(exprs)
    assert codegen.batch_program(exprs).run(obj) == expected == [[5], [6], [2], [True]]
    program = codegen.expression_functions(exprs)
    memo: dict[int, Any] = {}
    assert [function(obj, memo) for function in program.functions if function is not None] == expected


class _Opaque:
    """A value of no JSON type (what a `from_json` caller should never pass): normalising it raises."""


_READ_ITEM = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([2**53, -(2**53) - 1, 10**30]),
        st.floats(),
        st.text(max_size=3),
        st.sampled_from(["\ud800", "a\udfff", datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)]),
        st.builds(_Opaque),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner),
        st.frozensets(st.integers(), max_size=2),
        st.dictionaries(st.one_of(st.text(max_size=2), st.integers()), inner, max_size=3),
    ),
    max_leaves=8,
)


def _finished(finish: Any, outputs: list[Any]) -> Any:
    try:
        return ("ok", finish(outputs))
    except Exception as error:  # what the generated function turns into BAIL
        return ("raised", type(error).__name__)


def _holds_container(value: Any) -> bool:
    return type(value) is list and any(type(item) in (dict, list) for item in value)


@SETTINGS
@given(st.lists(_READ_ITEM, max_size=3))
def test_finish_read_raises_where_finish_raises_and_differs_only_in_an_ignored_list(outputs: list[Any]) -> None:
    """`codegen.finish_read` (the reason's field reads) raises exactly where `_finish` raises; otherwise it gives
    `_finish`'s outputs, except a first output that is a list holding an object or array, handed back as it is
    where `_finish` gives a list holding an object or array too (the reason ignores both: no fact is written),
    and a lone output that is a list of safe ints, booleans and nulls, handed back uncopied (equal to the copy)."""
    plain = _finished(finish, copy.deepcopy(outputs))
    given_outputs = copy.deepcopy(outputs)
    first = given_outputs[0] if given_outputs else None  # both finishers replace outputs in the list they get
    read = _finished(codegen.finish_read, given_outputs)
    assert (plain[0] == "raised") == (read[0] == "raised"), (plain, read)
    if plain[0] == "raised":
        return
    expected, got = plain[1], read[1]
    assert len(got) == len(expected)
    if got and type(first) is list and got[0] is first and _holds_container(first):  # handed back unnormalised
        assert _holds_container(expected[0])
        assert _strict(got[1:]) == _strict(expected[1:])
    elif got and type(first) is list and got[0] is first:  # a lone list of numbers, not copied: what finish copies
        assert len(got) == 1 and numbers_only(first)
        assert _strict(got) == _strict(expected)
    else:
        assert _strict(got) == _strict(expected)


def test_finish_read_skips_normalising_only_an_ignored_list() -> None:
    """Not vacuous: a list of objects comes back as it is (not a normalised copy), a list of scalars and any
    value the encoder refuses are finished as `_finish` finishes them."""
    objects = [{"b": 1, "a": 2}, {"name": "x"}]
    assert codegen.finish_read([objects])[0] is objects
    assert codegen.finish_read([[1, 2, 3]]) == [[1, 2, 3]]
    opaque = [[{"a": _Opaque()}]]
    with pytest.raises(Exception) as raised:
        finish(copy.deepcopy(opaque))
    with pytest.raises(type(raised.value)):
        codegen.finish_read(opaque)
    surrogate = [[{"a": "\ud800"}]]  # the encoder refuses it; normalising reads U+FFFD
    assert codegen.finish_read(copy.deepcopy(surrogate)) == finish(copy.deepcopy(surrogate))


def test_reads_only_names_the_positions_only_the_reason_reads() -> None:
    """The JobSet's reason reads `.spec.suspend`, `.status.replicatedJobsStatus` and the replica list, which no
    matcher, phase, conditions or message consults; every plan's reads_only is disjoint from what is matched."""
    karta, _ = _jobset()
    definition = karta.root.status_definition
    assert definition is not None
    plan = status_plan.status_plan(definition)
    assert {plan.expressions[at] for at in plan.reads_only} == {
        '.["spec"]["suspend"]',
        '.["status"]["replicatedJobsStatus"]',
        '[.["spec"]["replicatedJobs"][]?["replicas"]]',
    }
    for karta in DEFINITIONS:
        for component in karta.components:
            if component.status_definition is None:
                continue
            plan = status_plan.status_plan(component.status_definition)
            matched = {plan.phase, plan.conditions, plan.message, plan.no_status}
            matched.update(planned.expression for _, matchers in plan.statuses for planned in matchers)
            assert not plan.reads_only & matched


# --- the generated reader's own fast paths (issue 19, "statuseval") -------------------------------------------

_FIELD = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.sampled_from(["True", "False", "Ready", "\ud800", "caf\u00e9", ""]),
    st.integers(),
    st.sampled_from([2**53 + 1, 10**30]),
    st.floats(),
    st.booleans(),
    st.just(datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)),
    st.just(b"raw"),
    st.tuples(st.integers()),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)
_CONDITION = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "type": _FIELD,
            "status": _FIELD,
            "reason": _FIELD,
            "message": _FIELD,
            "lastTransitionTime": _FIELD,
            "observedGeneration": _FIELD,
        },
    ),
    st.sampled_from([None, "x", 1, ("a",), [1]]),
)
_CONDITIONS_OUTPUT = st.one_of(
    st.none(),
    st.lists(_CONDITION, max_size=3),
    st.lists(_CONDITION, max_size=2).map(tuple),
    st.sampled_from(["broken", 3, True, {"type": "Ready"}]),
)


def _conditions_both_ways(plan: status_plan.StatusPlan, outputs: list[Any]) -> tuple[Any, Any]:
    """(the normalised read, as `_head` reads the finished outputs; the read the generated reader makes of
    `finish_conditions`'s outputs), each a result or the name of what it raised."""
    try:
        finished = finish(copy.deepcopy(outputs))
    except Exception as error:
        plain: Any = ("raised", type(error).__name__)
    else:
        conditions = plan._conditions_of(finished)
        plain = None if conditions is None else (conditions, {condition.type: condition for condition in conditions})
    try:
        fast: Any = plan._conditions_read(finish_conditions(copy.deepcopy(outputs)))
    except Exception as error:
        fast = ("raised", type(error).__name__)
    return plain, fast


@SETTINGS
@given(st.lists(_CONDITIONS_OUTPUT, max_size=2))
def test_the_conditions_read_in_place_is_the_normalised_read(outputs: list[Any]) -> None:
    """The generated reader reads the conditions from the list as it stands (no normalised copy) wherever that
    gives what `_head` gives over the normalised outputs: the same conditions with the same field types, the same
    by-type map, the same None, and it raises (hands the expression back) exactly where finishing does; a lone
    surrogate, a timestamp, bytes or a tuple is read from the normalised copy."""
    karta, _ = _jobset()
    definition = karta.root.status_definition
    assert definition is not None
    plan = status_plan.status_plan(definition)
    plain, fast = _conditions_both_ways(plan, outputs)
    if isinstance(plain, tuple) and plain and plain[0] == "raised":
        assert isinstance(fast, tuple) and fast[0] == "raised", (plain, fast)
        return
    assert repr(fast) == repr(plain)
    assert fast == plain


def test_the_conditions_read_in_place_is_not_vacuous() -> None:
    """A list of plain condition objects is read as it stands: each Condition's strings are the item's own."""
    item = {"type": "Ready", "status": "True", "reason": "Up", "message": "ok", "observedGeneration": 2}
    karta, _ = _jobset()
    definition = karta.root.status_definition
    assert definition is not None
    plan = status_plan.status_plan(definition)
    outputs = [[item]]
    assert finish_conditions(outputs) is outputs and outputs[0][0] is item  # left as it is, not copied
    found = plan._conditions_read(outputs)
    assert found is not None and found[0][0].type is item["type"] and found[0][0].message is item["message"]


@given(
    st.lists(
        st.one_of(
            st.integers(),
            st.sampled_from([2**53, 2**53 + 1, -(2**53), -(2**53) - 1, True, False, None, 1.0, 2.5]),
            st.text(max_size=2),
        ),
        max_size=5,
    )
)
def test_a_reasons_fact_of_a_list_is_written_as_before(items: list[Any]) -> None:
    """`read_fact`'s encoder path for a list of safe ints gives what the general form gives."""
    if items and all(isinstance(item, (str, int, float, bool)) for item in items):
        expected: str | None = f"replicas {status.list_text(items)}"
    else:
        expected = None
    assert status.read_fact("replicas", items) == expected


@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=5),
        st.sampled_from(["true", "false", "null", "True", "1"]),
        st.lists(st.booleans(), max_size=2),
        st.dictionaries(st.sampled_from(["true"]), st.booleans(), max_size=1),
    ),
    st.sampled_from(["true", "false", "null", "1", "Running", ""]),
)
def test_an_expected_result_is_compared_as_jq_tostring_compares(value: Any, expected: str) -> None:
    """The generated reader's comparison of a byExpression output with its expected result (`_equals_text`)
    is `jq_tostring(value) == expected`."""
    constants: dict[str, Any] = {}

    def constant(given: Any) -> str:
        name = f"K{len(constants) + 1}"
        constants[name] = given
        return name

    text = status_plan._equals_text("value", expected, constant)
    found = eval(
        text, {"__builtins__": {}, "TS": _json.jq_tostring, "type": type, "str": str, **constants}, {"value": value}
    )
    assert found == (_json.jq_tostring(value) == expected)
