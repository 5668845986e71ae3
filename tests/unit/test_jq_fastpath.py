"""The fast path gives exactly what libjq gives, for every expression it takes.

Test design: hypothesis generates JSON-like objects (normalised as the engine normalises them: integral floats
become ints) and plain-path expressions from the fast-path grammar (fields, quoted fields, integer indexes
including negative ones, iteration, optional `?`, pipes, `//` with literals or paths). Each expression is run by
`compile_fast` and by libjq on the same object with keys sorted recursively (gojq's order); outputs must be equal,
or both must fail with the same message. Fixed cases pin the subset boundary and the documented semantics.
"""

from __future__ import annotations

import functools
import glob
import json
from pathlib import Path
from typing import Any

import jq
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.jq.errors import JqRuntimeError
from workload_map.jq.fastpath import compile_fast

# -- oracle ----------------------------------------------------------------------------------------------------


def normalise(value: Any) -> Any:
    """Integral floats (below 2**53) become ints, recursively; keys sorted (what the engine hands libjq)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise(value[k]) for k in sorted(value)}
    return value


@functools.cache
def _program(expr: str) -> Any:
    return jq.compile(expr)


def libjq(expr: str, value: Any) -> tuple[str, Any]:
    try:
        return "ok", normalise(_program(expr).input_value(normalise(value)).all())
    except ValueError as exc:
        return "error", str(exc)


def fast(expr: str, value: Any) -> tuple[str, Any]:
    run = compile_fast(expr)
    assert run is not None, f"{expr!r} should take the fast path"
    try:
        return "ok", normalise(run(normalise(value)))
    except JqRuntimeError as exc:
        return "error", exc.message


# -- generated objects and paths --------------------------------------------------------------------------------

_KEYS = ["a", "b", "spec", "k.io/x", "", "é", "with space", "x" * 40]
_keys = st.sampled_from(_KEYS)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["", "a", "x" * 50, "é" * 40, 'q"uo\\te', "ctl\x01\x7f\n"]),
)
_json = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(_keys, st.text(max_size=5)), children, max_size=5),
    ),
    max_leaves=20,
)


def _field(key: str, first: bool) -> st.SearchStrategy[str]:
    options = [f".{json.dumps(key)}", f".[{json.dumps(key)}]" if first else f"[{json.dumps(key)}]"]
    if key.isidentifier() and key.isascii():
        options.append(f".{key}")
    return st.sampled_from(options)


@st.composite
def _step(draw: st.DrawFn, first: bool) -> str:
    kind = draw(st.sampled_from(["field", "field", "index", "iterate"]))
    if kind == "field":
        text = draw(_field(draw(_keys), first))
    elif kind == "index":
        n = draw(st.integers(min_value=-3, max_value=3))
        text = f".[{n}]" if first else f"[{n}]"
    else:
        text = ".[]" if first else "[]"
    return text + draw(st.sampled_from(["", "", "?"]))


@st.composite
def _path(draw: st.DrawFn) -> str:
    n = draw(st.integers(min_value=0, max_value=4))
    if n == 0:
        return "."
    return "".join(draw(_step(first=i == 0)) for i in range(n))


_literals = st.sampled_from(['"default"', "0", "1", "-1", "2.5", "true", "false", "null", "[]", "{}", '""'])


@st.composite
def _expression(draw: st.DrawFn) -> str:
    parts = [draw(_path()) for _ in range(draw(st.integers(min_value=1, max_value=3)))]
    expr = " | ".join(parts)
    if draw(st.booleans()):
        expr = f"{expr} // {draw(st.one_of(_literals, _path()))}"
    return expr


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expression(), _json)
def test_fast_path_equals_libjq(expr: str, value: Any) -> None:
    assert fast(expr, value) == libjq(expr, value), expr


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_path(), st.dictionaries(_keys, _json, max_size=6))
def test_fast_path_equals_libjq_on_objects(expr: str, value: dict[str, Any]) -> None:
    assert fast(expr, value) == libjq(expr, value), expr


# -- fixed cases -------------------------------------------------------------------------------------------------

OBJ: dict[str, Any] = {
    "spec": {"replicas": 3, "jobs": [{"name": "w", "n": 1}, {"name": "l"}], "labels": {"k.io/x": "v", "b": 2, "a": 1}},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    "n": 5,
    "s": "str",
}

FAST_CASES: dict[str, Any] = {
    ".": [OBJ],
    ".spec.replicas": [3],
    ".spec.missing.deeper": [None],
    '.spec.labels["k.io/x"]': ["v"],
    '."spec"."replicas"': [3],
    ".spec.jobs[0].name": ["w"],
    ".spec.jobs[-1].name": ["l"],
    ".spec.jobs[5]": [None],
    ".spec.jobs[].name": ["w", "l"],
    ".spec.jobs[] | .name": ["w", "l"],
    ".spec.jobs[].n // 0": [1],
    ".spec.labels[]": [1, 2, "v"],  # sorted key order
    ".status.conditions[]?.type": ["Ready"],
    ".nothing[]?": [],
    ".n.a?": [],
    ".n?": [5],
    ".spec.replicas // 1": [3],
    ".spec.none // 1": [1],
    '.spec.none // "x"': ["x"],
    ".spec.none // []": [[]],
    ".spec.none // {}": [{}],
    ".spec.none // .spec.replicas": [3],
    ".spec.none // .also // -1": [-1],
    "(.spec.none // {}) | .a": [None],
    "(.spec.jobs // [])[] | .name": ["w", "l"],
}


@pytest.mark.parametrize(("expr", "expected"), FAST_CASES.items())
def test_fast_path_results(expr: str, expected: list[Any]) -> None:
    run = compile_fast(expr)
    assert run is not None
    assert run(OBJ) == expected
    assert libjq(expr, OBJ) == ("ok", expected)


ERRORS: dict[str, str] = {
    ".n.a": 'Cannot index number with string ("a")',
    ".s.a": 'Cannot index string with string ("a")',
    ".spec.jobs.name": 'Cannot index array with string ("name")',
    ".spec[0]": "Cannot index object with number (0)",
    ".s[0]": "Cannot index string with number (0)",
    ".nothing[]": "Cannot iterate over null (null)",
    ".n[]": "Cannot iterate over number (5)",
    ".s[]": 'Cannot iterate over string ("str")',
    ".n.a // 1": 'Cannot index number with string ("a")',
}


@pytest.mark.parametrize(("expr", "message"), ERRORS.items())
def test_fast_path_errors_carry_libjqs_message(expr: str, message: str) -> None:
    run = compile_fast(expr)
    assert run is not None
    with pytest.raises(JqRuntimeError) as info:
        run(OBJ)
    assert info.value.message == message
    assert info.value.expression == expr
    assert libjq(expr, OBJ) == ("error", message)


NOT_FAST = [
    ".a | length",
    ".a[.b]",
    ".a[1:]",
    ".a[1.5]",
    "(.a)?",
    ".a, .b",
    "..",
    "$__loc__",
    ". as $x | $x",
    "1 + 1",
    ".a // (.b | length)",
    "try .a",
    ".a == 1",
    "[.a]",
    "{a: .b}",
    '"x\\(.a)"',
    ".a // 9007199254740993",
    ".a[",
    "del(.a)",
]


@pytest.mark.parametrize("expr", NOT_FAST)
def test_expressions_outside_the_subset_are_left_to_libjq(expr: str) -> None:
    assert compile_fast(expr) is None


def test_outputs_share_the_input_objects() -> None:
    run = compile_fast(".spec.jobs")
    assert run is not None
    assert run(OBJ)[0] is OBJ["spec"]["jobs"]


def test_literal_containers_are_fresh_each_time() -> None:
    run = compile_fast(".none // []")
    assert run is not None
    first = run({})
    first[0].append(1)
    assert run({}) == [[]]


def _recorded_objects() -> list[dict[str, Any]]:
    root = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "recordings"
    objects = []
    for name in sorted(glob.glob(str(root / "*.yaml")))[:12]:
        doc = yaml.safe_load(Path(name).read_text())
        for event in doc.get("events", []):
            if event.get("kind") == "STATE":
                objects.append(json.loads(json.dumps(event["object"], default=str)))
                break
    return objects


RECORDED_PATHS = [
    ".spec.replicas",
    ".spec.template.spec.containers[0].image",
    ".spec.template.spec.containers[].name",
    ".status.conditions[]?.type",
    ".status.conditions[]? | .status",
    ".metadata.labels",
    '.metadata.labels["app.kubernetes.io/name"] // "none"',
    ".metadata.ownerReferences[]?.uid",
    ".spec.suspend // false",
    ".spec[]?",
    ".status.replicas // 0",
    ".spec.replicatedJobs[]?.name",
    ".spec.pytorchReplicaSpecs[]?.replicas",
]


def test_fast_path_equals_libjq_on_recorded_objects() -> None:
    objects = _recorded_objects()
    if not objects:
        pytest.skip("shared/conformance recordings not available")
    for obj in objects:
        for expr in RECORDED_PATHS:
            assert fast(expr, obj) == libjq(expr, obj), (expr, obj.get("kind"))


@pytest.mark.parametrize("number", [1e100, 1.5e-05, 2.3243965055587444e16, 0.0001, 123.456, 5e-324, -2.5])
def test_number_in_error_message_is_printed_as_libjq_prints_it(number: float) -> None:
    assert fast(".[]", number) == libjq(".[]", number)


@pytest.mark.parametrize("text", ["x" * 40, "é" * 40, "😀" * 20, 'q"\\' * 12, "\x01\x7f\n\t" * 8])
def test_long_values_in_error_messages_are_cut_as_libjq_cuts_them(text: str) -> None:
    assert fast(".[]", text) == libjq(".[]", text)
    assert fast(f".[{json.dumps(text)}]", 5) == libjq(f".[{json.dumps(text)}]", 5)
