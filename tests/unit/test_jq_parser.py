"""The jq parser reads every program exactly as libjq 1.8 does.

Test design: libjq (PyPI `jq`) is the oracle. A corpus of valid and invalid programs (the jq manual's examples,
odd lexical cases, every grammar production) is run through both: our accept/reject decision must match
libjq's (a compile error counts as "parsed" when it only says a name is undefined). For every accepted
program, `unparse(parse(e))` (fully parenthesised) must give the same outputs as `e` under libjq on a few
inputs, which pins operator precedence and associativity. A hypothesis test does the same on generated
programs.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.jq import ast
from workload_map.jq.errors import JqParseError
from workload_map.jq.parser import parse
from workload_map.jq.unparse import unparse

# Programs libjq accepts. Evaluated on INPUTS (outputs must agree with the unparsed form).
VALID: list[str] = [
    # paths and indexing
    ".", ".a", ".a.b", ".a.b.c", '."a"', '. "a"', '."a-b"', '.["a"]', '.a["b"]', ".a.[\"b\"]", ".c[0]", ".c[-1]",
    ".c[1:]", ".c[:2]", ".c[1:2]", ".c[]", ".c.[]", ".c[]?", ".a?", ".a.b?", ".x?.y", ".[\"a\"]?", '."a"?',
    ".c[0]?", ".c[1:]?", ".c[:1]?", ".a .b", ". .a", ".a.b .c", ".end", ".if", ".and", ".as", ".reduce",
    ".__loc__", ".a_b", "._", ".A9", ".c[.c[0]]", ".c[.c[0]:]", '.["a","c"]', ".[]", ".[]?", "..", "..?",
    "..[]?", "(..|numbers)", ".a[]?", '.a."b"', "(.a).b", "(.c)[0]", ".c | .[0]", '"abc" | .[1:]',
    # literals
    "1", "1.5", "1.", ".5", "1e3", "1E-3", "1.e2", "012", "1e1000", "-1", "- 1", "- - 1", "-.c[0]",
    "null", "true", "false", '"x"', '""', '"\\u00e9"', '"\\ud83d\\ude04"', '"\\udc00"', '"\\/\\b\\f\\n\\r\\t"',
    '"\\"quoted\\""', '"a\\\\b"', '"tab\there"', '"line\nbreak"', '"#not a comment"', '"\\u0064el"', '"del(.a)"',
    '"\\(1 + 2)"', '"a\\("b\\("c")")"', '"x\\(.a)y\\(.c)"', '"\\(1,2)"', '@base64 "x\\(.d)"', '@json "v=\\(.a)"',
    "@base64", "@base64d", "@json", "@text", "@html", "@uri", "@sh", "@csv", "@tsv", "@foo", '@foo "x"',
    "[]", "[1,2]", "[.c[]]", "[.c[] | . * 2]", "{}", "{a: 1}", '{"a": 1}', "{a: 1,}", "{(.d): 1}", "{a}",
    '{"a"}', '{"a\\(1)"}', "{$__loc__}", "{if: 1}", "{if}", "{then: 1, else: 2, end: 3, as: 4, def: 5}",
    "{reduce: 1, foreach: 2, try: 3, catch: 4, label: 5, break: 6, import: 7, include: 8, module: 9}",
    "{and: 1, or: 2, elif: 3}", "{del: 1}", '{@base64 "x": 1}', '{@base64 "x"}', "{a: 1 | 2}", "{a: .c[0] + 1}",
    '{"a": (1, 2)}', "{(.d, \"k\"): 1}", "{a: {b: {c: 1}}}", '{("a" + "b"): 1}', "{a: -1}", "{a: try .x}",
    "{a: reduce .c[] as $x (0; . + $x)}", "{a: if . then 1 else 2 end}", '{a: .x // "d"}', "{a: .c | length}",
    # variables and bindings
    ". as $x | $x", ".a as $x | $x.b", ". as $x | $x, 1", "1, . as $x | $x", "1 as $x | 2 as $y | [$x, $y]",
    ". as [$a, $b] | $a", ". as {a: $x} | $x", ". as {$a} | $a", '. as {"a": $x} | $x', '. as {("a"): $x} | $x',
    ". as {$a: {b: $b}} | [$a, $b]", ". as {if: $x} | $x", ". as [$a] ?// $a | $a",
    ". as [$a] ?// [$b] ?// $c | [$a, $b, $c]", ".c as [$a, $b] | $a + $b", "1 + 2 as $x | -$x", ". as $if | $if",
    ". as $x | $$$$x", '"x" as $x | {$x: 1}', '"x" as $x | {$x}', ". as $x | [$x | .a]", "[.c[] as $x | $x * 2]",
    "$__loc__", "$__loc__ | .line", ". as $x | $__loc__",
    # operators
    "1 + 2 * 3", "(1 + 2) * 3", "1 - 2 - 3", "8 / 4 / 2", "7 % 3 * 2", "1 + 2 == 3", "1 < 2 and 2 < 3",
    "true and false or true", "true or false and false", "null // 1 // 2", ".x // .a // 3", ".a = 1", ".a |= 1",
    ".c[] += 1", ".c[0] -= 1", ".c[0] *= 2", ".c[0] /= 2", ".c[0] %= 2", ".x //= 5", ".a = .b // 1",
    ".a // .b = 1", ".a = 1 | .a", "1, 2 | . + 1", "1 | 2, 3", "(1, 2) | . * 10", ".c | map(. + 1)",
    "1 != 2", "1 <= 2", "1 >= 2", "1 > 2", ".c[0] == 1 and .d == \"str\"", "not", ".f | not", "-(1 + 2)",
    "[.c[] | -.]", "1 - -1", "1 --1", ".c[0]-1", ".c[0] - 1", "{} + {a: 1}", "[1] - [1]", '"ab" * 2',
    # control flow
    "if . then 1 end", "if .f then 1 else 2 end", "if .f then 1 elif .e then 2 else 3 end",
    "if .f then 1 elif .e then 2 end", "if (.c | length) > 2 then \"big\" else \"small\" end",
    "if . then 1 else 2 end | . + 1", "try error(\"x\") catch .", "try .a", "try error(\"x\")",
    "try error(\"x\") catch . + \"y\"", "try 1 + 2", "(try error(\"x\") catch .) | length", "try .a catch .b [0]",
    "try try error(\"x\") catch error(\"y\") catch .", ".a?", "(.d | tonumber)?", "[.[] | tostring?]",
    "[.c[] | (1, 2)?]", "label $out | 1, break $out, 2", "[label $f | .c[] | if . > 1 then ., break $f else . end]",
    "1, label $f | 2", "reduce .c[] as $x (0; . + $x)", "reduce .c[] as [$a] ?// $a (0; . + 1)",
    "reduce range(5) as $i ([]; . + [$i])", "foreach .c[] as $x (0; . + $x)", "[foreach .c[] as $x (0; . + $x)]",
    "[foreach .c[] as $x (0; . + $x; [$x, .])]", "reduce 1 + 2 as $x (0; . + $x)",
    "reduce .c[] as $x (0; . + $x) | . * 2", "(reduce .c[] as $x (0; . + $x))[0:]?",
    # definitions
    "def f: .; f", "def f: 1; def g: f + 1; g", "def f(x): x * 2; f(3)", "def f($a; $b): $a + $b; f(1; 2)",
    "def f(a; $b): a + $b; f(.c[0]; 10)", "def f: def g: 3; g; f", "(def f: 3; f) + 1", "1, def f: 2; f | . * 10",
    "def f: .; f | f", "def true: 1; true", "def not: 1; not", "def a::b: 1; 2", "def f: reduce .[] as $x (0; 1); f",
    "def fac: if . <= 1 then 1 else . * (. - 1 | fac) end; 5 | fac", "def f(g): [g]; f(.c[])",
    "def f: .; [f, f]", "[.c[] | def inc: . + 1; inc]",
    # builtins and calls
    "length", ".c | length", "keys", "map(.)", ".c | map(. * 2)", "[.c[] | select(. > 1)]", "to_entries",
    "with_entries(.value |= tostring)", ".c | add", "any(.c[]; . == 1)", "all(.c[]; . > 0)", "[limit(1; .c[])]",
    "first(.c[])", ".c | first", ".c | last", "[.c[] | tostring] | join(\",\")", '.d | split("t")',
    '.d | test("s")', '.d | test("S"; "i")', '.d | ltrimstr("s")', '.d | startswith("s")', '.d | ascii_upcase',
    "[paths]", "[leaf_paths]", "getpath([\"a\", \"b\"])", "del(.a)", "to_entries | from_entries", "tojson",
    "tojson | fromjson", ".c | sort_by(-.)", ".c | group_by(. % 2)", ".c | unique", ".c | min_by(.)", "type",
    "[.[] | type]", "has(\"a\")", ".c | index(2)", "[splits(\"x\")?]", '.d | sub("s"; "S")', '.d | capture("(?<x>s)")',
    "[recurse(.[]?; . != null)] | length", "env | type", "$ENV | type", "[range(3)]", "[range(1; 3)]",
    "input_line_number?", "get_search_list", "builtins | length > 10", "a::b?", "tostream", "[.c[] | tostring]",
    "@base64d?", "[.. | numbers]", "walk(.)", "splits(\"a\")?", "[.c[] as $x | $x]", "error(null)?",
    "getpath([\"c\", 0])", "path(.a.b)", "[paths(type == \"number\")]", "ascii", "implode?", "\"a\" | ascii_downcase",
    # odd lexical cases
    ".a # comment", "# leading comment\n.a", ".a # comment \\\n| del(.b)", ".a # c \\\\\n| .c", ".a # c \\\r\n| .x",
    ".a #c\r| .c", ".a\r\n| .c", "\t.a\t", "\n.a\n", ".a|.b", ".c[]|.", "[.c[]|.+1]", ".c|length>2", ".a//1",
    ".c[0]//1", "{a:1}|.a", "[.[]?]", "1as $x|$x", "(1)as $x|$x", ".c[]as $x|$x", "reduce .c[]as $x(0;.+$x)",
    "$__loc__.line", "[.c[]][1:][0]", "..|numbers", ".a.b.c?.d", "try(.a)catch(.)",
]  # fmt: skip

# Programs libjq accepts, checked for parsing only (infinite, side effects, or input-dependent).
VALID_PARSE_ONLY: list[str] = [
    "repeat(1)", "range(1000000)", "[range(0; 10; 3)]", "until(. > 100; . * 2)", "while(. < 100; . * 2)",
    "recurse", "recurse(.a)", "recurse(.a; . != null)", "input", "inputs", "debug", "debug(\"x\")", "stderr",
    "input_filename", "halt", "halt_error", "halt_error(1)", "now", "$__loc__\n", "\n$__loc__", "env.PATH",
    "$ENV.HOME", "combinations", "limit(3; repeat(1))", "first(range(10))", "splits(\"a\"; \"g\")",
    "getpath([\"a\"]) |= 1", "delpaths([[\"a\"]])", "setpath([\"a\"]; 1)", "to_entries[]", "modulemeta",
    "get_jq_origin", "get_prog_origin", "$$$$x", "ltrimstr(1)", "@base32", "x::y", "f(1; 2; 3; 4)", "gpu",
    "$undefined", "break $nolabel", "def f: f; f", "def f: g; def g: f; f", "{(.x |= 1): 2}", "{a: (.x |= 1)}",
]  # fmt: skip

# Programs libjq rejects.
INVALID: list[str] = [
    "", "   ", "# only a comment", ".a |", "| .a", ".a ||", "..a", "...", ". foo", ".a.", ".[", ".]", "]",
    ".a[", ".a[1:2:3]", ".c.[0:1]", ".c.[1:]", ".a.0", "1.a", ".a?//1", ".[]?//1", ".a?//.b", "f()", "f(;)",
    "f(1;)", "{", "}", "{,}", "{a:1,,b:2}", "{a: 1, 2}", "{a: . as $x | $x}", "{a: def f: 1; f}",
    "{a: label $x | 1}", "{@base64: 1}", "{(1): 2}", "{(1 + 1): 2}", "{(null): 1}", "{(true): 1}", "{([]): 1}",
    "{([1,2]): 1}", "{({a: 1}): 1}", '{("a" / "b"): 1}', "{($__loc__): 1}", "{$__loc__: 1}", "{1: 2}",
    "{a b}", "{-a: 1}", ". as {(1): $x} | $x", ". as {$__loc__} | 1", ". as [] | 1", ". as {} | 1", ". as $x",
    ". as $x |", ". as x | x", "as $x | 1", ". as [$a, ] | 1", "1 = 2 = 3", "1 < 2 < 3", "1 == 2 == 3",
    "1 < 2 == 3", ".a |= 1 += 2", "1 + * 2", "* 2", "1 +", "+1", "1 !== 2", "1 ! 2", "!true", "1 === 1",
    "if . then 1", "if . then 1 else 2", "if . 1 end", "if then 1 end", "if . then 1 elif 2 end",
    "if . then 1 else 2 elif 3 then 4 end", "try", "try .a catch", "catch .", "try .a catch .b catch .c",
    "reduce . as $x", "reduce . as $x (0)", "reduce . as $x (0; 1; 2)", "reduce . ($x; 1)", "foreach . as $x (0)",
    "foreach . as $x (0; 1; 2; 3)", "label | 1", "label $x 1", "break", "break x", "def f: .", "def f: .;",
    "def f: .; def g: .;", "def if: 1; 2", "def f(): 1; f", "def f($a;): 1; f", "def (a): 1; 1", "def f: 1 f",
    "def f $a: 1; 1", '"unterminated', '"\\q"', '"\\u12"', '"\\u00zz"', '"\\ud83d"', '"\\ud83dx"',
    '"\\ud83d\\u0041"', '"\\', '"\\(1"', '"\\(1;2)"', '"\\(]"', "\"\\\n\"", "@", "@ base64", "$", "$ x",
    "$$x", "$$$x", "(", ")", "(1", "1)", "[1", "[1,]", "[,1]", "(1,)", "(,)",
    ".a\u00a0", ".a\u2003", ".a\f", ".a\v", "\u00a0.a", ".a \u200b", ".a;", ";", ".a:", ":", ".a .. .b",
    "1 as", "`x`", "'x'", ".a & .b", "~.a", "import \"a\" as a; .", "include \"a\"; .", "module {a: 1}; .",
    "{a: 1} | .a | ]", "[.[] | ]", "..[", ".[]]", "if if . then 1 end then 2 end end", "-", "- |",
    ".a = = 1", "[:]", ".[:]", ".[1:2:]", ". as [$a] ?// | 1", ". as ?// $a | 1", "reduce as $x (0; 1)",
    ". as $__loc__ | 1", "def f($__loc__): 1; 1", "{(2): 3}",
    "\"a\x00b\"", ".a\x00", ".a\x00 | del(.b)",
]  # fmt: skip

# Where we refuse on purpose although libjq parses (documented in docs/jq.md).
DELIBERATE_REJECTIONS = {"module {a: 1}; .", 'import "a" as a; .', 'include "a"; .', ".a\x00", ".a\x00 | del(.b)"}

INPUTS: list[Any] = [
    {"a": {"b": 1}, "c": [1, 2, 3], "d": "str", "e": None, "f": False},
    [3, "x", None, {"a": 1}],
    "text",
    7,
]

_DEFINED_ONLY = re.compile(r"is not defined|module not found")


def libjq_parses(expr: str) -> bool:
    """libjq's verdict: compiles, or fails only on undefined names (our safety check reports those)."""
    try:
        _compiled(expr)
    except ValueError as exc:
        errors = [line for line in str(exc).splitlines() if line.startswith("jq: error")]
        return bool(errors) and all(_DEFINED_ONLY.search(line) for line in errors)
    return True


def we_parse(expr: str) -> bool:
    try:
        parse(expr)
    except JqParseError:
        return False
    return True


@functools.cache
def _compiled(expr: str) -> Any:
    return jq.compile(expr)


def run_libjq(expr: str, value: Any) -> tuple[str, Any]:
    """Outputs of expr on value, or the error message without libjq's position suffix."""
    try:
        return "ok", _compiled(expr).input_value(value).all()
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        return "error", re.sub(r" at <top-level>, line \d+, column \d+:?$", "", first)


def test_corpus_is_large_enough() -> None:
    assert len(set(VALID + VALID_PARSE_ONLY)) >= 150
    assert len(set(INVALID)) >= 150


@pytest.mark.parametrize("expr", VALID + VALID_PARSE_ONLY)
def test_valid_programs_parse_like_libjq(expr: str) -> None:
    assert libjq_parses(expr), f"corpus error: libjq rejects {expr!r}"
    assert we_parse(expr), f"we reject {expr!r}, which libjq accepts"


@pytest.mark.parametrize("expr", INVALID)
def test_invalid_programs_are_rejected_like_libjq(expr: str) -> None:
    if expr not in DELIBERATE_REJECTIONS:
        assert not libjq_parses(expr), f"corpus error: libjq accepts {expr!r}"
    with pytest.raises(JqParseError):
        parse(expr)


@pytest.mark.parametrize("expr", VALID)
def test_unparsed_program_means_the_same_to_libjq(expr: str) -> None:
    canonical = unparse(parse(expr))
    for value in INPUTS:
        assert run_libjq(canonical, value) == run_libjq(expr, value), (expr, canonical, value)


@pytest.mark.parametrize("expr", VALID + VALID_PARSE_ONLY)
def test_unparse_is_a_fixed_point(expr: str) -> None:
    canonical = unparse(parse(expr))
    assert parse(canonical) == parse(expr) or "$__loc__" in expr
    assert unparse(parse(canonical)) == canonical


def test_parse_error_names_line_and_column() -> None:
    with pytest.raises(JqParseError) as info:
        parse(".a |\n  | .b")
    assert "line 2, column 3" in str(info.value)
    assert info.value.expression == ".a |\n  | .b"


def test_precedence_shapes() -> None:
    tree = parse("1 + 2 * 3")
    assert isinstance(tree, ast.Binary) and tree.op == "+" and isinstance(tree.right, ast.Binary)
    tree = parse("a // b // c")
    assert isinstance(tree, ast.Binary) and isinstance(tree.right, ast.Binary) and tree.right.op == "//"
    tree = parse("a, b | c")
    assert isinstance(tree, ast.Pipe) and isinstance(tree.left, ast.Comma)
    tree = parse(". as $x | a, b")
    assert isinstance(tree, ast.Bind) and isinstance(tree.body, ast.Comma)
    tree = parse("try .a + 1")
    assert isinstance(tree, ast.Binary) and isinstance(tree.left, ast.Try)


def test_optional_index_differs_from_try() -> None:
    assert parse(".a?") == ast.Index(ast.Identity(), ast.String(("a",)), optional=True)
    assert parse("(.a)?") == ast.Try(ast.Index(ast.Identity(), ast.String(("a",))))


def test_strings_decode_escapes_and_interpolation() -> None:
    tree = parse('"\\u0064el\\(.a)x"')
    assert isinstance(tree, ast.String)
    assert tree.parts[0] == "del" and tree.parts[2] == "x"
    assert parse('"\\u0064el"') == ast.String(("del",))


def test_parse_is_cached() -> None:
    assert parse(".spec.replicas") is parse(".spec.replicas")


# -- generated programs ---------------------------------------------------------------------------------------

_atoms = st.sampled_from(
    [".", ".a", ".c", ".c[0]", ".c[]", "1", "2", "null", "true", '"s"', "$x", "[]", "{}", ".a?", ".x // 4", "..?"]
)
_binops = st.sampled_from(
    ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "//", "|", ",", "=", "|=", "+=",
     "-=", "//="]
)  # fmt: skip


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, _binops, children).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        children.map(lambda c: f"({c})"),
        children.map(lambda c: f"[{c}]"),
        children.map(lambda c: f"-{c}"),
        children.map(lambda c: f"try {c}"),
        st.tuples(children, children).map(lambda t: f"try {t[0]} catch {t[1]}"),
        children.map(lambda c: f"{c}?"),
        children.map(lambda c: f"{{a: {c}}}"),
        st.tuples(children, children).map(lambda t: f"{t[0]} as $y | {t[1]}"),
        st.tuples(children, children).map(lambda t: f"if {t[0]} then {t[1]} end"),
        st.tuples(children, children).map(lambda t: f"reduce {t[0]} as $y (0; {t[1]})"),
        children.map(lambda c: f"def f: {c}; f"),
        children.map(lambda c: f'"\\({c})"'),
    )


_programs = st.recursive(_atoms, _combine, max_leaves=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_programs)
def test_generated_programs_parse_and_group_like_libjq(body: str) -> None:
    expr = f"1 as $x | {body}"
    ours = we_parse(expr)
    assert ours == libjq_parses(expr), expr
    if ours:
        canonical = unparse(parse(expr))
        for value in INPUTS[:2]:
            assert run_libjq(canonical, value) == run_libjq(expr, value), (expr, canonical)


def test_corpus_has_no_json_surprises() -> None:
    # guard against an accidental edit turning a corpus entry into a non-string
    assert all(isinstance(e, str) for e in VALID + VALID_PARSE_ONLY + INVALID)
    assert json.loads(json.dumps(INVALID)) == INVALID


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    for hostile in ["(" * 5000 + "." + ")" * 5000, "[" * 3000 + "]" * 3000, ".a" * 30000, "1" + " + 1" * 5000]:
        with pytest.raises(JqParseError) as info:
            parse(hostile)
        assert "nested too deeply" in str(info.value)
    assert parse("(" * 50 + "." + ")" * 50) == ast.Identity()
    assert isinstance(parse(".a" * 150), ast.Index)
