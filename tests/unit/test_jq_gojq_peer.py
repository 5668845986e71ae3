"""gojq's own test cases (tests/fixtures/gojq/test.yaml, vendored from itchyny/gojq) as a peer suite for the compiled
path (`workload_map.jq.compiler`).

Cases taken: a single query argument (no command-line options, no environment), an input, expected outputs, and a
query our safety check accepts. Each query runs as `try (QUERY) catch <marker>` on every input value, the way gojq's
CLI reports an error and goes on: the outputs must be gojq's, and an error must be reported where gojq reports one
(error texts differ by design: ours are libjq's, see docs/compatibility.md). Queries the compiler does not cover run
in libjq and are counted apart. Every difference is listed in KNOWN_DIFFERENCES with its reason (and in
docs/compatibility.md, "jq: the compiled path and gojq").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.jq import JqError, compiler, convert
from workload_map.jq.safety import check_safety

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "gojq" / "test.yaml"
MARKER = "__gojq_peer_error__"

_ERROR_TEXT = "the query catches an error and prints its text: ours is libjq 1.8's wording (docs/compatibility.md)"

# case name -> why the compiled path differs from gojq there (the libjq path differs the same way)
KNOWN_DIFFERENCES = {
    "number input": "integral floats in the input are ints (10.0 reads as 10), and numbers beyond a double's range "
    "or precision are what Python's JSON parser makes of them (an exact int, inf read as null); gojq prints its "
    "own float forms",
    "string indexing": "indexing a string with a number is an error, as in libjq 1.8 (gojq returns the code point)",
    **{
        name: _ERROR_TEXT
        for name in (
            "min, max, sort, unique functions error",
            "tonumber function error",
            "indices, index, rindex functions type error",
            "startswith function error",
            "endswith function error",
            "ltrimstr function error",
            "rtrimstr function error",
            "ltrim function error",
            "rtrim function error",
            "trim function error",
            "implode function error",
            "join function error item",
            "join function error input",
            "join function non-string separator",
            "try catch",
            "try catch with function declaration",
        )
    },
}

# the agreement recorded in docs/compatibility.md; the test fails if it drops
AGREEING_COMPILED = 155


def _stream(text: str | None) -> list[Any]:
    decoder = json.JSONDecoder()
    out: list[Any] = []
    text = text or ""
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return out
        value, index = decoder.raw_decode(text, index)
        out.append(value)


def _plain(case: dict[str, Any]) -> bool:
    args = case.get("args", [])
    if len(args) != 1 or not isinstance(args[0], str) or args[0].startswith("-"):
        return False
    if "input" not in case or "expected" not in case or "env" in case:
        return False
    try:
        return not check_safety(args[0])
    except JqError:
        return False


def _cases() -> list[dict[str, Any]]:
    return [case for case in yaml.safe_load(SUITE.read_text()) if _plain(case)]


CASES = _cases()


def _run(case: dict[str, Any]) -> tuple[bool, list[Any], bool] | None:
    """(compiled?, outputs, errored?) of the case through the compiled path, or None when not compiled."""
    query = f"try ({case['args'][0]}\n) catch {{{MARKER}: true}}"
    closure = compiler.compile_closure(query)
    if closure is None:
        return None
    outputs: list[Any] = []
    errored = False
    for value in _stream(case["input"]):
        try:
            produced = closure(convert.normalize(value), 1000)
        except JqError:
            errored = True
            continue
        for item in produced:
            if isinstance(item, dict) and item.get(MARKER) is True:
                errored = True
            else:
                outputs.append(item)
    return True, outputs, errored


def _agrees(case: dict[str, Any]) -> bool | None:
    result = _run(case)
    if result is None:
        return None
    _, outputs, errored = result
    try:
        expected = _stream(case["expected"])
    except ValueError:
        return False
    return outputs == expected and errored == ("error" in case)


def test_the_peer_suite_has_the_cases_the_issue_counted() -> None:
    assert len(CASES) >= 190


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_gojq_case_on_the_compiled_path(case: dict[str, Any]) -> None:
    agrees = _agrees(case)
    if agrees is None:
        pytest.skip("not compiled: libjq runs it")
    if case["name"] in KNOWN_DIFFERENCES:
        assert not agrees, f"{case['name']} agrees now: drop it from KNOWN_DIFFERENCES"
        return
    assert agrees, (case["name"], case["args"][0], _run(case), case["expected"])


def test_the_recorded_agreement_holds() -> None:
    verdicts = [_agrees(case) for case in CASES]
    compiled = [v for v in verdicts if v is not None]
    assert sum(compiled) >= AGREEING_COMPILED
    assert len(compiled) - sum(compiled) == len(KNOWN_DIFFERENCES)
