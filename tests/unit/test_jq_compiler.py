"""The compiled path (`jq.compiler`) against the libjq path: the same outputs, or errors of the same class and text.

* hypothesis: generated expressions (paths, pipes, `,`, operators, `and`/`or`/`not`, `select`, `any`/`all`, `map`,
  `if`, construction, the string and collection builtins, `reduce`/`foreach`, `try`, `?`, interpolation, `as`,
  `def`) over generated JSON, derandomized under CI (`CI=true`);
* every catalog expression over every fixture and recorded operator object (tests/unit/test_jq_document.py has
  the cases);
* the Document uses the compiled path in process, and libjq in the worker;
* the step budget and the output cap.

Known differences (allow-listed with their reason in ALLOWED_MESSAGE_DIFFERENCES): `fromjson`'s parse error text
(Python's JSON parser reports its own position, the class is the same).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit.test_jq_document import CASES, DEFINITIONS, _expressions, _recorded_objects, _reference
from workload_map.jq import Document, EvaluationPolicy, JqError, JqLimitError, JqRuntimeError, compiler, convert
from workload_map.jq import engine as jq_engine

CI = os.environ.get("CI") == "true"
SETTINGS = settings(
    max_examples=300 if CI else 500,
    deadline=None,
    derandomize=CI,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# error messages the compiled path words differently (same class), each with its reason
ALLOWED_MESSAGE_DIFFERENCES = {
    "fromjson": "Python's JSON parser reports the problem in its own words (libjq: 'Unfinished JSON term at ...')",
}


def _libjq(expr: str, value: Any) -> Any:
    try:
        return jq_engine.run_one(expr, convert.encode(value))
    except JqLimitError as exc:
        return ("limit", exc.message)
    except JqRuntimeError as exc:
        return ("error", exc.message)
    except JqError:
        return "compile error"


def _compiled(expr: str, value: Any) -> Any:
    closure = compiler.compile_closure(expr)
    assert closure is not None, expr
    try:
        return closure(convert.normalize(value), jq_engine.MAX_RESULTS)
    except JqLimitError as exc:
        return ("limit", exc.message)
    except JqRuntimeError as exc:
        return ("error", exc.message)


def _same(expr: str, ours: Any, theirs: Any) -> bool:
    if ours == theirs:
        return True
    if isinstance(ours, tuple) and isinstance(theirs, tuple) and ours[0] == theirs[0]:
        return any(name in expr for name in ALLOWED_MESSAGE_DIFFERENCES)
    return False


# --- generated JSON and expressions -------------------------------------------------------------------------------

KEYS = ["a", "b", "c", "name", "type", "status"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 12),
    st.sampled_from([0.5, -1.5, 2.25, 100.75]),
    st.sampled_from(["", "a", "b", "ab", "True", "x,y", "A b", "1", "2.5", "é"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=12,
)

LITERALS = ['"a"', '"b"', '""', '"x,y"', "0", "1", "2", "-1", "1.5", "null", "true", "false", "[]", "{}", "[1,2]"]
PATHS = [
    ".",
    ".a",
    ".b",
    ".a.b",
    ".[0]",
    ".[-1]",
    ".[]",
    ".[]?",
    ".a[]?",
    ".a?",
    ".[1:]",
    ".[:2]",
    '.["name"]',
    ".c[0]",
]
UNARY = [
    "length",
    "keys",
    "not",
    "type",
    "tostring",
    "tonumber",
    "tojson",
    "add",
    "min",
    "max",
    "sort",
    "unique",
    "to_entries",
    "from_entries",
    "first",
    "last",
    "reverse",
    "ascii_downcase",
    "ascii_upcase",
    "explode",
    "floor",
    "sqrt",
    "abs",
    "fromjson",
    "@text",
    "@json",
    "@csv",
    "@sh",
    "@html",
    "@uri",
    "@base64",
    "@tsv",
    "flatten",
    "any",
    "all",
    "values",
    "strings",
    "numbers",
    "arrays",
    "objects",
    "scalars",
    "nulls",
    "utf8bytelength",
    "trim",
    "isempty(.[])",
    "keys_unsorted",
    "transpose",
    "implode",
]
WITH_ARG = [
    "select",
    "map",
    "any",
    "all",
    "has",
    "in",
    "contains",
    "inside",
    "startswith",
    "endswith",
    "ltrimstr",
    "rtrimstr",
    "split",
    "join",
    "sort_by",
    "group_by",
    "unique_by",
    "min_by",
    "max_by",
    "with_entries",
    "map_values",
    "first",
    "last",
    "isempty",
    "IN",
    "index",
    "rindex",
    "indices",
    "error",
    "getpath",
    "flatten",
]
BINARY = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "//", "|", ","]


def _expr(depth: int) -> st.SearchStrategy[str]:
    leaf = st.sampled_from(LITERALS + PATHS + UNARY)
    if depth <= 0:
        return leaf
    sub = st.deferred(lambda: _expr(depth - 1))
    return st.one_of(
        leaf,
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub, st.sampled_from(BINARY), sub),
        st.builds(lambda f, a: f"{f}({a})", st.sampled_from(WITH_ARG), sub),
        st.builds(lambda a, b: f"[{a}, {b}]", sub, sub),
        st.builds(lambda a: f"[{a}]", sub),
        st.builds(lambda k, a: f"{{{k}: {a}}}", st.sampled_from(["a", '"b"', '(.name // "k" | tostring)']), sub),
        st.builds(lambda c, a, b: f"(if {c} then {a} else {b} end)", sub, sub, sub),
        st.builds(lambda c, a: f"(if {c} then {a} end)", sub, sub),
        st.builds(lambda a, b: f"(try {a} catch {b})", sub, sub),
        st.builds(lambda a: f"({a})?", sub),
        st.builds(lambda a, b: f"({a} as $x | {b} | [., $x])", sub, sub),
        st.builds(lambda s, u: f"reduce ({s}) as $x (0; {u})", sub, st.sampled_from([". + 1", ". + $x", "[., $x]"])),
        st.builds(lambda s: f"[foreach ({s}) as $x (null; [$x, .]; .[0])]", sub),
        st.builds(lambda n, a: f"[limit({n}; {a})]", st.sampled_from(["0", "1", "2", "-1"]), sub),
        st.builds(lambda a: f'"v=\\({a})!"', sub),
        st.builds(lambda a, b: f"def f(g): g | {b}; f({a})", sub, sub),
        st.builds(lambda a: f"def f($v): [$v, .]; f({a})", sub),
        st.builds(lambda a: f"(. as [$p, $q] | [$q, $p, {a}])", sub),
        st.builds(lambda a: f"(. as {{a: $p, $b}} | [$p, $b, {a}])", sub),
        st.builds(lambda a: f"[label $out | {a} | ., break $out]", sub),
        st.builds(lambda a: f"[{a}] | length", sub),
        st.builds(lambda a: f"-({a})", sub),
    )


expressions = _expr(3)


@SETTINGS
@given(expr=expressions, value=json_values)
@example(expr='("a" + getpath([null]))', value=None)  # found by exploration: null indexed with a null key is an error
@example(expr="reduce ([sqrt]) as $x (0; . + $x)", value=-1)  # found by exploration: NaN in a message is null
@example(expr='("a" + sqrt)', value=-1.5)  # found by exploration: a NaN operand previews as null, not NaN
@example(expr='("a" + -infinite)', value=None)  # an infinite operand previews as the largest double
@example(expr="({} | .[nan])", value=None)  # so does a NaN key in an index error
@example(expr="[label $out | sqrt | ., break $out]", value=-1.5)  # found by exploration: NaN inside an output
def test_generated_expressions_give_what_libjq_gives(expr: str, value: Any) -> None:
    if compiler.compile_closure(expr) is None:
        return  # not covered: libjq runs it (counted below)
    theirs = _libjq(expr, value)
    if theirs == "compile error":
        return
    ours = _compiled(expr, value)
    assert _same(expr, ours, theirs), (expr, json.dumps(value), ours, theirs)


# libjq's jv_dump_string_trunc and gojq's Preview (preview.go, over encoder.go's encodeFloat64) both print NaN as
# null and clamp an infinity to the largest double: the compiled path's error texts say the same
@pytest.mark.parametrize(
    ("expr", "value", "message"),
    [
        ('("a" + sqrt)', -1.5, 'string ("a") and number (null) cannot be added'),
        ('("a" + infinite)', None, 'string ("a") and number (1.7976931348623157e+308) cannot be added'),
        ('(-infinite - "a")', None, 'number (-1.7976931348623157e+308) and string ("a") cannot be subtracted'),
        ("({} | .[nan])", None, "Cannot index object with number (null)"),
    ],
)
def test_a_nan_or_infinite_number_in_an_error_text_is_what_libjq_and_gojq_print(
    expr: str, value: Any, message: str
) -> None:
    assert _compiled(expr, value) == ("error", message)
    assert _libjq(expr, value) == ("error", message)


def test_the_generated_expressions_are_covered() -> None:
    """Nearly everything the generator writes compiles (it writes only covered constructs)."""
    samples = [f"{f}(.)" for f in WITH_ARG] + UNARY + PATHS + LITERALS
    assert [expr for expr in samples if compiler.compile_closure(expr) is None] == []


# --- the catalog --------------------------------------------------------------------------------------------------


def _catalog_pairs() -> list[tuple[str, str, Any]]:
    pairs = [(name, expr, obj) for name, exprs, objects in CASES for obj in objects for expr in exprs]
    import yaml

    definitions = {
        path.stem: list(dict.fromkeys(_expressions(yaml.safe_load(path.read_text()))))
        for path in DEFINITIONS.glob("*.yaml")
    }
    for slug, obj in _recorded_objects():
        pairs.extend((slug, expr, obj) for expr in definitions.get(slug, []))
    return pairs


CATALOG_PAIRS = _catalog_pairs()


def test_every_catalog_expression_is_compiled() -> None:
    exprs = {expr for _, expr, _ in CATALOG_PAIRS}
    assert len(exprs) >= 200
    assert [expr for expr in sorted(exprs) if compiler.compile_closure(expr) is None] == []


def test_every_catalog_expression_gives_what_libjq_gives_on_every_fixture_and_recording() -> None:
    compared = 0
    for name, expr, obj in CATALOG_PAIRS:
        closure = compiler.compile_closure(expr)
        assert closure is not None
        try:
            ours: Any = closure(convert.normalize(obj), jq_engine.MAX_RESULTS)
        except JqRuntimeError as exc:
            ours = ("error", exc.message)
        assert ours == _reference(expr, obj), (name, expr)
        compared += 1
    assert compared >= 1500


# --- where the compiled path runs ---------------------------------------------------------------------------------

JOB = {"spec": {"replicatedJobs": [{"name": "a", "replicas": 2}, {"name": "b"}]}, "status": {"ready": 3}}
MATCHER = "([.spec.replicatedJobs[]? | .replicas // 1] | add // 0) > (.status.ready // 0)"


def test_the_document_runs_covered_expressions_in_python_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_libjq(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("libjq was called")

    monkeypatch.setattr(jq_engine, "run_batch", no_libjq)
    monkeypatch.setattr(jq_engine, "run_one", no_libjq)
    assert Document(JOB).evaluate_many([MATCHER, '[.spec.replicatedJobs[].name] | join(",")']) == [[False], ["a,b"]]


def test_uncovered_expressions_still_run_in_libjq() -> None:
    expr = '.spec.replicatedJobs[] | .name | test("^a")'
    assert compiler.compile_closure(expr) is None
    assert Document(JOB).evaluate(expr) == [True, False]


def test_the_worker_keeps_to_libjq(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    from workload_map.jq import worker

    original = worker.run_batch

    def spy(policy: EvaluationPolicy, exprs: list[str], *args: Any) -> Any:
        seen.append(list(exprs))
        return original(policy, exprs, *args)

    monkeypatch.setattr(worker, "run_batch", spy)
    policy = EvaluationPolicy("worker")
    try:
        assert Document(JOB, policy=policy).evaluate(MATCHER) == [False]
    finally:
        worker.shutdown()
    assert seen == [[MATCHER]]


# --- limits -------------------------------------------------------------------------------------------------------


def test_the_output_cap_is_the_engines() -> None:
    closure = compiler.compile_closure("[.[] as $x | .[] as $y | 1][]")
    assert closure is not None
    with pytest.raises(JqLimitError, match="query results exceed the allowed number 1000"):
        closure(list(range(40)), 1000)
    with pytest.raises(JqLimitError, match="query results exceed the allowed number 1000"):
        Document(list(range(40))).evaluate(".[] as $x | .[] as $y | 1")


def test_the_step_budget_stops_runaway_work() -> None:
    nested = "[.[] as $a | .[] as $b | .[] as $c | .[] as $d | 1] | length"
    with pytest.raises(JqLimitError, match="step budget"):
        Document(list(range(40))).evaluate(nested)
    with pytest.raises(JqLimitError, match="step budget"):
        Document({"n": 10**9}).evaluate('"x" * .n | length')
    doubling = 'reduce range(40) as $i ("x"; . + .) | length'
    with pytest.raises(JqLimitError, match="step budget"):
        compiler.compile_closure(doubling)(None, 1000)  # type: ignore[misc]


def test_recursive_definitions_are_left_to_libjq() -> None:
    assert compiler.compile_closure("def f: if . > 0 then . - 1 | f else . end; f") is None


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("[sqrt]", -1.5),
        ("[label $out | sqrt | ., break $out]", -1.5),
        ("{a: [nan, infinite, -infinite]}", None),
        ("[. * 10, . + .]", 1e308),
        ("[.[] | tonumber]", ["1e999", "-1e999", "2"]),
        ("[add]", [1e308, 1e308]),
        ("[.[] | fromjson]", ["[1e999]", "3"]),
    ],
)
def test_nan_and_infinities_inside_an_output_are_what_libjq_gives(expr: str, value: Any) -> None:
    """libjq's JSON output writes NaN as null and an infinity as the largest double at any depth, not only at the
    top of an output (`compiler._finite_inside`)."""
    assert compiler.compile_closure(expr) is not None, expr
    theirs = _libjq(expr, value)
    assert theirs != "compile error"
    assert _compiled(expr, value) == theirs


def test_nan_is_written_as_null_like_libjq() -> None:
    for expr in ("[sqrt] | tojson", "{a: sqrt} | tostring"):
        run = compiler.compile_closure(expr)
        assert run is not None
        assert run(-1, 1000) == _libjq(expr, -1) == ["[null]" if expr.startswith("[") else '{"a":null}'], expr
