"""jq evaluation: result shapes, error classes, the output cap, gojq numbers and key order (karta-spec §10, §15.1)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map.jq import (
    MAX_RESULTS,
    Document,
    JqCompileError,
    JqError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
    convert,
    engine,
    evaluate,
)

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": "nginx", "ports": [{"containerPort": 80}, {"containerPort": 443}]},
            {"name": "sidecar", "ports": [{"containerPort": 9090}]},
        ]
    },
}


# --- result shapes (§10.3, §15.1) ------------------------------------------------------------------------------


def test_simple_path_and_array_access_return_the_values() -> None:
    assert evaluate(".metadata.name", POD) == ["web"]
    assert evaluate(".spec.containers[0].name", POD) == ["nginx"]


def test_array_iteration_gives_one_output_per_element_in_order() -> None:
    assert evaluate(".spec.containers[].name", POD) == ["nginx", "sidecar"]


def test_nested_iteration_gives_integral_numbers_as_ints() -> None:
    ports = evaluate(".spec.containers[].ports[].containerPort", POD)
    assert ports == [80, 443, 9090]
    assert all(type(port) is int for port in ports)


def test_missing_field_gives_one_null_output() -> None:
    assert evaluate(".metadata.nonexistent", POD) == [None]


def test_select_matching_nothing_gives_no_outputs() -> None:
    assert evaluate('.spec.containers[] | select(.name == "nope")', POD) == []


def test_booleans_select_map_and_length_work_as_in_jq() -> None:
    assert evaluate('.metadata.name == "web"', POD) == [True]
    assert evaluate(".spec.containers | map(.name)", POD) == [["nginx", "sidecar"]]
    assert evaluate(".spec.containers | length", POD) == [2]
    assert evaluate(".spec.containers[] | select(.ports | length > 1) | .name", POD) == ["nginx"]


@pytest.mark.parametrize(
    ("source", "expr", "expected"),
    [
        ("hello world", "length", [11]),
        (42, ". + 8", [50]),
        ([1, 2, 3], "length", [3]),
        (None, ".", [None]),
    ],
)
def test_any_json_value_can_be_the_source(source: Any, expr: str, expected: list[Any]) -> None:
    assert evaluate(expr, source) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('.missing // "default"', ["default"]),
        (".missing // 7", [7]),
        (".missing // false", [False]),
        (".missing // {a: 1}", [{"a": 1}]),
        (".missing // [1]", [[1]]),
        ('.missing // .other // "x"', ["x"]),
        ('.metadata.name // "default"', ["web"]),
        ('.metadata | has("labels")', [True]),
        ('if .metadata.missing then "yes" else "no" end', ["no"]),
        ('(.x // []) | map(.name // "unnamed")', [[]]),
        ('(.spec.containers // []) | map(.image // "unnamed")', [["unnamed", "unnamed"]]),
    ],
)
def test_alternative_operator_and_defaults(expr: str, expected: list[Any]) -> None:
    assert evaluate(expr, POD) == expected


# --- errors (§10.2) -----------------------------------------------------------------------------------------


def test_iterating_a_missing_field_is_a_runtime_error_naming_expression_and_field() -> None:
    with pytest.raises(JqRuntimeError) as caught:
        evaluate(".spec.volumes[]", POD, field_path="spec.specDefinition.podSpecPath")
    error = caught.value
    assert error.expression == ".spec.volumes[]"
    assert error.field_path == "spec.specDefinition.podSpecPath"
    assert "Cannot iterate over null" in str(error)
    assert "spec.specDefinition.podSpecPath" in str(error)


def test_error_builtin_and_to_entries_on_null_are_runtime_errors() -> None:
    with pytest.raises(JqRuntimeError, match="boom"):
        evaluate('error("boom")', POD)
    with pytest.raises(JqRuntimeError):
        evaluate(".missing | to_entries", POD)


def test_invalid_syntax_is_a_parse_error() -> None:
    with pytest.raises(JqParseError) as caught:
        evaluate(".invalid[[[syntax", POD)
    assert "syntax error" in caught.value.message
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("expr", ["undefined_function", "map(.a; .b)", "length(1)", "$nope"])
def test_undefined_functions_bad_arity_and_unknown_variables_are_compile_errors(expr: str) -> None:
    with pytest.raises(JqCompileError, match="is not defined"):
        evaluate(expr, POD)


def test_parse_and_compile_errors_are_not_runtime_errors() -> None:
    # callers tell a broken definition (parse/compile) from a broken object (runtime) by class
    assert not issubclass(JqParseError, JqRuntimeError)
    assert not issubclass(JqCompileError, JqRuntimeError)
    assert issubclass(JqLimitError, JqRuntimeError)


# --- the output cap -----------------------------------------------------------------------------------------


def test_reaching_the_output_cap_is_an_error_and_no_outputs_are_returned() -> None:
    items = {"items": list(range(100))}
    with pytest.raises(JqLimitError, match="query results exceed the allowed number 5"):
        evaluate(".items[]", items, max_results=5)
    assert evaluate(".items[:3][]", items, max_results=5) == [0, 1, 2]


def test_default_cap_is_1000_and_exactly_1000_outputs_already_fail() -> None:
    assert MAX_RESULTS == 1000
    assert len(evaluate("range(999)", None)) == 999
    with pytest.raises(JqLimitError, match="allowed number 1000"):
        evaluate("range(1000)", None)


def test_an_endless_generator_stops_at_the_cap_instead_of_running_forever() -> None:
    with pytest.raises(JqLimitError):
        evaluate("repeat(1)", None)
    results = Document(None).evaluate_many(["repeat(1)", "[limit(3; repeat(1))]"])
    assert isinstance(results[0], JqLimitError)
    assert results[1] == [[1, 1, 1]]


# --- numbers (§10.5) -----------------------------------------------------------------------------------------


def test_integral_floats_in_the_input_behave_as_integers() -> None:
    obj = {"replicas": 3.0, "ratio": 2.5, "big": 1e300}
    assert evaluate(".replicas | tostring", obj) == ["3"]
    assert evaluate(".replicas", obj) == [3]
    assert type(evaluate(".replicas", obj)[0]) is int
    assert evaluate(".ratio", obj) == [2.5]
    assert evaluate(".ratio | tostring", obj) == ["2.5"]


def test_computed_integral_values_come_back_as_ints() -> None:
    out = evaluate(".a * 1000000, .a / 2, (.a | tonumber? // 0)", {"a": 3})
    assert out == [3000000, 1.5, 3]
    assert type(out[0]) is int


def test_tonumber_then_tostring_round_trips_a_label_value() -> None:
    assert evaluate(".v | tonumber | tostring", {"v": "3"}) == ["3"]


# --- object key order (§10.4) ----------------------------------------------------------------------------------


DYNAMO = {"spec": {"services": {"worker": {"replicas": 4}, "frontend": {"replicas": 1}}}}


def test_object_values_keys_and_entries_iterate_in_sorted_key_order_as_gojq() -> None:
    assert evaluate(".spec.services | keys_unsorted", DYNAMO) == [["frontend", "worker"]]
    assert evaluate(".spec.services | to_entries[] | .key", DYNAMO) == ["frontend", "worker"]
    assert evaluate(".spec.services[] | .replicas", DYNAMO) == [1, 4]


def test_instance_ids_and_every_multi_output_path_pair_up() -> None:
    doc = Document(DYNAMO)
    ids, scales, paths = doc.evaluate_many(
        [".spec.services | to_entries[] | .key", ".spec.services[] | .replicas", "[path(.spec.services[])]"]
    )
    assert ids == ["frontend", "worker"]
    assert scales == [1, 4]
    assert paths == [[["spec", "services", "frontend"], ["spec", "services", "worker"]]]
    assert doc.paths(".spec.services[] | .replicas") == [
        ["spec", "services", "frontend", "replicas"],
        ["spec", "services", "worker", "replicas"],
    ]


def test_sorting_is_only_for_evaluation_the_callers_object_keeps_its_order() -> None:
    obj = {"b": 1, "a": 2}
    evaluate(".", obj)
    assert list(obj) == ["b", "a"]


# --- inputs that YAML produces ---------------------------------------------------------------------------------


def test_yaml_timestamps_become_rfc3339_strings() -> None:
    obj = {"metadata": {"creationTimestamp": dt.datetime(2026, 1, 10, 10, 0, tzinfo=dt.timezone.utc)}}
    assert evaluate(".metadata.creationTimestamp", obj) == ["2026-01-10T10:00:00Z"]


def test_non_string_keys_are_named_as_json_names_them() -> None:
    obj = {"data": {1: "one", None: "nothing", "b": 2.0}}
    assert evaluate(".data | keys", obj) == [["1", "b", "null"]]
    assert evaluate(".data.b", obj) == [2]


def test_a_value_without_json_form_is_reported() -> None:
    with pytest.raises(TypeError, match="not JSON"):
        evaluate(".", {"x": object()})


# --- many expressions on one object -----------------------------------------------------------------------


EXPRESSIONS = [
    ".metadata.name",
    ".spec.containers[].name",
    ".spec.containers[] | .ports[]? | .containerPort",
    ".spec.volumes[]",
    "undefined_function",
    ".invalid[[[",
    'error({"reason": "object error"})',
    "error(null)",
    "range(2000)",
    "first(range(10; 2000))",
    "empty",
    ".metadata.labels # a comment that ends with a backslash \\",
    "def twice: . * 2; .spec.containers | length | twice",
    "1, halt, 2",
    ". as {metadata: {name: $n}} | $n",
    "label $out | 1, 2, break $out",
    '.spec.containers[] | "\\(.name)#\\(.ports | length)"',
]


def _outcome(result: list[Any] | JqError) -> Any:
    return (type(result).__name__, result.message) if isinstance(result, JqError) else result


def _alone(expr: str) -> Any:
    try:
        return evaluate(expr, POD)
    except JqError as exc:
        return (type(exc).__name__, exc.message)


def test_evaluate_many_gives_each_expression_the_same_result_as_alone() -> None:
    together = Document(POD).evaluate_many(EXPRESSIONS)
    assert [_outcome(result) for result in together] == [_alone(expr) for expr in EXPRESSIONS]


def test_evaluate_many_keeps_one_failure_from_touching_the_others() -> None:
    results = Document(POD).evaluate_many([".metadata.name", "foo(", ".spec.x[]", "range(5000)", ".kind"])
    assert results[0] == ["web"]
    assert isinstance(results[1], JqParseError)
    assert isinstance(results[2], JqRuntimeError)
    assert isinstance(results[3], JqLimitError)
    assert results[4] == ["Pod"]


def test_a_runaway_expression_in_a_batch_is_cut_off_and_the_rest_still_run() -> None:
    exprs = ["range(3) | . * 2", "repeat(1)", ".metadata.name | ascii_upcase", "range(5000)", '"x" * 3', "empty"]
    results = Document(POD).evaluate_many(exprs)
    assert results[0] == [0, 2, 4]
    assert isinstance(results[1], JqLimitError)
    assert results[2] == ["WEB"]
    assert isinstance(results[3], JqLimitError)
    assert results[4] == ["xxx"]
    assert results[5] == []


def test_evaluate_many_places_errors_at_their_fields() -> None:
    results = Document(POD).evaluate_many([".a[]", ".b[]"], ["spec.first", None])
    assert isinstance(results[0], JqError) and results[0].field_path == "spec.first"
    assert isinstance(results[1], JqError) and results[1].field_path is None


def test_error_values_that_are_not_strings_are_reported_as_json() -> None:
    with pytest.raises(JqRuntimeError) as caught:
        evaluate('error({"reason": "object error"})', POD)
    assert caught.value.message == '{"reason": "object error"}'


def test_halt_ends_that_expression_quietly() -> None:
    assert evaluate("1, halt, 2", POD) == [1]


# --- compile cache --------------------------------------------------------------------------------------------


def test_an_expression_is_analysed_once_per_process() -> None:
    assert engine.compile_expression(".metadata.name") is engine.compile_expression(".metadata.name")


def test_a_broken_expression_fails_the_same_way_every_time() -> None:
    errors: list[JqCompileError] = []
    for _ in range(3):
        with pytest.raises(JqCompileError) as caught:
            evaluate("nope(1)", POD, field_path=f"f{len(errors)}")
        errors.append(caught.value)
    assert {e.message for e in errors} == {"nope/1 is not defined (line 1, column 1)"}
    assert [e.field_path for e in errors] == ["f0", "f1", "f2"]


# --- pruning: an expression sees only what it reads, and that changes nothing -----------------------------------


Root = tuple[str | int | None, ...]
PRUNE_CASES: list[tuple[str, set[Root]]] = [
    (".metadata.name", {("metadata", "name")}),
    (".spec.containers[].name", {("spec", "containers")}),
    (".metadata.labels.app // .metadata.name", {("metadata", "labels", "app"), ("metadata", "name")}),
    ('.metadata | has("labels")', {("metadata",)}),
    (".spec.missing.deeper", {("spec", "missing", "deeper")}),
    (".metadata.name.x", {("metadata", "name", "x")}),  # an error: the string is kept, so the same error
    ("[path(.spec.containers[].name)]", {("spec", "containers")}),
    ('"constant"', set()),
    (".kind", {()}),
    # None is "every element or value" (`.[]`): the containers keep their length and key set
    (".spec.containers[].name", {("spec", "containers", None, "name")}),
    (".spec.containers[] | .ports[]? | .containerPort", {("spec", "containers", None, "ports", None, "containerPort")}),
    (".spec.containers[-1].name", {("spec", "containers", -1, "name")}),
    (".spec.containers[5].name", {("spec", "containers", 5, "name")}),
    (".spec.containers[].name.x", {("spec", "containers", None, "name", "x")}),
    (".metadata[] | strings", {("metadata", None)}),
    (".spec.containers[0].x", {("spec", "containers", 0, "x"), ("spec", "containers", "bad")}),
]


@pytest.mark.parametrize(("expr", "roots"), PRUNE_CASES)
def test_pruning_to_the_read_subtrees_gives_the_same_result(expr: str, roots: set[Root]) -> None:
    pruned = convert.encode(convert.prune(POD, frozenset(roots)))
    whole = convert.encode(POD)
    assert len(pruned) <= len(whole)

    def run(text: str) -> Any:
        try:
            return engine.run_one(expr, text)
        except JqError as exc:
            return (type(exc).__name__, exc.message)

    assert run(pruned) == run(whole)


def test_prune_keeps_only_named_keys_and_shares_subtrees() -> None:
    pruned = convert.prune(POD, frozenset({("spec", "containers"), ("metadata", "name")}))
    assert pruned == {"spec": {"containers": POD["spec"]["containers"]}, "metadata": {"name": "web"}}
    assert pruned["spec"]["containers"] is POD["spec"]["containers"]
    assert convert.prune(POD, None) is POD
    assert convert.prune([1, 2], frozenset({("a",)})) == [1, 2]


def test_prune_through_iteration_keeps_every_element_but_only_the_read_fields() -> None:
    pruned = convert.prune(POD, frozenset({("spec", "containers", None, "name")}))
    assert pruned == {"spec": {"containers": [{"name": "nginx"}, {"name": "sidecar"}]}}
    one = convert.prune(POD, frozenset({("spec", "containers", 1, "name")}))
    assert one == {"spec": {"containers": [None, {"name": "sidecar"}]}}


# --- the reads analysis: libjq is given only what an expression looks at, and nothing changes -------------------

ANALYSED = [
    ".a",
    ".a.b",
    ".a[]",
    ".a[]?",
    ".a[0]",
    ".a[1].b",
    ".a[]? | .b",
    ".a[] | .b // .c",
    ".a[]? | .b.c, .c",
    "(.a // .b) | .c",
    "(.a // []) | .[]? | .b",
    "(.a // [])[]? | .b",
    "[.a[]? | .b // 1] | add // 0",
    ".a | to_entries[]? | .key",
    ".a | keys",
    ".a | length",
    ".a[]? | select(.b == 1) | .c",
    "[.a[]? | .b] | length > 1",
    "([.a[]? | .b // 1] | add // 0) as $n | $n > 0 and (.c // 0) >= $n",
    ". as {a: $x, $c} | [$x, $c]",
    ".a[]? as [$x, $y] | {x: $x, y: $y, b: .b}",
    "if .a then .b[]? else .c.a end",
    'if .a.b then "y" elif .c then .c.b else "n" end',
    'try (.a[] | .b) catch "failed"',
    "(.a[] | .b)?",
    "first(.a[]? | .b)",
    "any(.a[]?; .b == 1)",
    "all(.a[]?; .b)",
    "limit(2; .a[]? | .c)",
    "isempty(.a[]?)",
    '"\\(.a.b)-\\(.c)"',
    "{x: .a.b, y: [.c[]?]}",
    "{a, c}",
    ".a[.c]",
    '.a["b"]',
    ".a[1:]",
    ".a | .b | .c",
    ".a.b | tostring",
    ".a[]?.b[]?.c",
    "-(.a.b)",
    "[.a[]?] | map(.b)",
    "error(.a.b)",
    ".a.b + .c",
    "(.a | .b) as $x | .c | $x",
]
ANALYSED_OBJECTS: list[Any] = [
    {},
    None,
    5,
    "text",
    [1, {"b": 2}],
    {"a": None, "b": {"c": 3}, "c": 0},
    {"a": [{"b": 1, "c": {"b": 5}, "x": "big"}, {"b": 2}, 3, None, "s"], "c": 2, "z": {"big": list(range(5))}},
    {"a": {"k2": {"b": 1, "c": 2}, "k1": {"b": False}}, "b": {"c": [1]}, "c": {"b": "x", "a": True}},
    {"a": {"b": {"c": 1}}, "c": "b"},
    {"a": [[1, 2], {"b": [{"c": 4}]}], "b": [], "c": {"a": [1]}},
    {"a": "str", "b": None, "c": [{"b": 1}]},
    {"a": [{"b": [{"c": 1}, {"c": None}, 7]}, {"b": {"x": {"c": 2}}}]},
    {"a": False, "b": [{"c": 1}], "c": {"a": {"b": 2}}},
    {"a": {"b": 1.5}, "c": 3.0},
]


def _outcome_of(expr: str, text: str) -> Any:
    try:
        return engine.run_one(expr, text)
    except JqError as exc:
        return (type(exc).__name__, exc.message)


@pytest.mark.parametrize("expr", ANALYSED)
def test_an_expression_given_only_what_it_reads_gives_the_same_outputs_and_errors(expr: str) -> None:
    roots = engine.compile_expression(expr).roots
    for obj in ANALYSED_OBJECTS:
        pruned = convert.encode(convert.prune(obj, roots))
        assert _outcome_of(expr, pruned) == _outcome_of(expr, convert.encode(obj)), (expr, obj, roots)


def test_the_reads_analysis_follows_iterations_into_array_elements() -> None:
    roots = engine.compile_expression("[.spec.replicatedJobs[]? | .replicas // 1] | add // 0").roots
    assert roots == frozenset({("spec", "replicatedJobs", None, "replicas")})
    bound = engine.compile_expression("([.a[]? | .b] | add // 0) as $n | $n > 0 and .c >= $n").roots
    assert bound == frozenset({("a", None, "b"), ("c",)})


def test_expressions_the_analysis_cannot_follow_read_the_whole_object() -> None:
    assert engine.compile_expression("reduce .a[] as $x (0; . + $x)").roots is None
    assert engine.compile_expression("def f: .a; f").roots is None
    assert engine.compile_expression("length").roots == frozenset({()})


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.5, 2.0, "", "b", "c"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "k1", "k2"]), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(obj=_JSON)
def test_pruning_never_changes_a_result_on_generated_objects(obj: Any) -> None:
    whole = convert.encode(obj)
    for expr in ANALYSED:
        roots = engine.compile_expression(expr).roots
        assert _outcome_of(expr, convert.encode(convert.prune(obj, roots))) == _outcome_of(expr, whole), expr
