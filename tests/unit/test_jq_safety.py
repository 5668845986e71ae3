"""The static safety check rejects what upstream rejects, the leaks upstream misses, and nothing a normal
definition needs.

Test design: three lists pin the verdicts (upstream's rejections from its validation tests, the leaks our
whole-tree walk closes, and real definition patterns that must pass). The builtin table is cross-checked
against the installed libjq's own `builtins`, and every program libjq refuses to compile for an undefined
name must be reported statically. `referenced_roots` is checked by evaluating expressions with libjq on the
full and on the shrunk object (real operator recordings from shared/conformance).
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

import jq
import pytest
import yaml

from workload_map.jq import builtins
from workload_map.jq.errors import JqParseError, UnsafeExpressionError
from workload_map.jq.safety import check_safety, referenced_roots, require_safe

from .test_jq_parser import VALID, VALID_PARSE_ONLY, run_libjq

# Upstream's validation tests reject each of these (karta-spec §15.2), alone and inside pipe chains.
UPSTREAM_REJECTS: dict[str, str] = {
    "del(.metadata)": "del",
    "recurse": "recurse",
    "walk(.)": "walk",
    "[paths]": "paths",
    "range(1000000)": "range",
    "repeat(.)": "repeat",
    "..": "'..'",
    ".a = 1": "'='",
    ".a += 1": "'+='",
    ".a -= 1": "'-='",
    ".a *= 2": "'*='",
    ".a /= 2": "'/='",
    ".a %= 2": "'%='",
    ".a //= 1": "'//='",
    ".a |= 1": "'|='",
}

# Leaks upstream's walker misses (karta-spec §9.3), each with the construct the reason must name.
LEAKS: dict[str, str] = {
    "(del(.a))": "del",
    "[.x = 1]": "'='",
    "if . then del(.a) else . end": "del",
    "if del(.a) then 1 else 2 end": "del",
    "if . then 1 elif del(.a) then 2 else 3 end": "del",
    "$ENV.HOME": "$ENV",
    "env.PATH": "'env'",
    "def f: f; f": "recursive function 'f/0'",
    "def f: def g: f; g; f": "recursive function 'f/0'",
    "def f: g; def g: f; f": "undefined function 'g/0'",
    "def f(g): g; def h: f(h); h": "recursive function 'h/0'",
    "[..]": "'..'",
    "{a: (.x |= 1)}": "'|='",
    "{(.x |= 1): 2}": "'|='",
    '"\\(del(.a))"': "del",
    '@base64 "\\(del(.a))"': "del",
    "reduce (..) as $x (0; .)": "'..'",
    "reduce .[] as $x (del(.a); .)": "del",
    "reduce .[] as $x (0; del(.a))": "del",
    "foreach .[] as $x (0; .; del(.a))": "del",
    "try del(.a) catch .": "del",
    "try . catch del(.a)": "del",
    "del(.a)?": "del",
    ".a as $x | $x | del(.b)": "del",
    ". as [$a] ?// $a | del(.b)": "del",
    ". as {(del(.a) | tostring): $x} | 1": "del",
    "first(range(10))": "range",
    "limit(1; repeat(1))": "repeat",
    "[limit(3; recurse)]": "recurse",
    ".a # comment\n| del(.b)": "del",
    ".a # comment \\\n| .b\n| del(.c)": "del",
    ".a\n\t|\r\ndel(.b)": "del",
    "label $f | del(.a), break $f": "del",
    "def f: del(.a); 1": "del",
    "def f(x): x; f(del(.a))": "del",
    ".a[del(.b)]": "del",
    ".a[del(.b):]": "del",
    "-del(.a)": "del",
    'getpath(["a"]) |= 1': "'|='",
    'delpaths([["a"]])': "delpaths",
    'setpath(["a"]; 1)': "setpath",
    "to_entries | map(.value = 1)": "'='",
    "input": "'input'",
    "[inputs]": "'inputs'",
    "debug": "'debug'",
    'debug("x")': "'debug'",
    "stderr": "'stderr'",
    "input_filename": "'input_filename'",
    "input_line_number": "'input_line_number'",
    "$__loc__": "$__loc__",
    "{$__loc__}": "$__loc__",
    "halt": "'halt'",
    "halt_error(1)": "'halt_error'",
    "get_search_list": "'get_search_list'",
    "get_jq_origin": "'get_jq_origin'",
    "get_prog_origin": "'get_prog_origin'",
    "modulemeta": "'modulemeta'",
    "until(. > 100; . * 2)": "'until'",
    "[while(. < 100; . * 2)]": "'while'",
    "combinations": "'combinations'",
    "[tostream]": "'tostream'",
    "leaf_paths": "'leaf_paths'",
    "recurse_down": "'recurse_down'",
    "recurse(.a; . != null)": "'recurse'",
    "range(0; 10; 2)": "'range'",
    "localtime": "'localtime'",
    "builtins": "'builtins'",
    "keys_unsorted": "'keys_unsorted/0' exists only in libjq",
    "have_literal_numbers": "'have_literal_numbers/0' exists only in libjq",
    "$__prog_args": "$__prog_args",
    "$$$$x": "$$$$x",
    ". as $x | $$$$x": "$$$$x",
    "_modify(.a; 1)": "'_modify/2'",
    "a::b": "'a::b/0'",
    "def true: 1; 2": "'true'",
    "@base32": "'@base32'",
    '@foo "x"': "'@foo'",
    "gpu": "undefined function 'gpu/0'",
    "$undefined": "'$undefined'",
    "break $nolabel": "'break $nolabel'",
    "map": "'map/0'",
    "ascii": "'ascii/0'",
    "1 + 2 as $x | $x": "'(a + b) as $x'",
    "reduce .[] as [$a] ?// $a (0; .)": "?//",
    "skip(1; .[])": "'skip/2'",
    "toboolean": "'toboolean/0'",
}

# What definitions write every day: must pass.
SAFE: list[str] = [
    ".",
    ".spec.replicatedJobs[].name",
    ".spec.services | to_entries[] | .key",
    "(.spec.replicas // 1) * ((.spec.leaderWorkerTemplate.size // 1) - 1)",
    "if .spec.suspend == true then 0 else 1 end",
    '[.status.conditions[]? | select(.type=="Ready")] | length > 0',
    '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]',
    '.metadata.ownerReferences[]? | select(.kind == "Sandbox") | .uid',
    'any(.status.conditions[]?; .type == "Ready" and .status == "True")',
    ".spec.replicas | tostring",
    '"3" | tonumber',
    ".metadata.name | ascii_downcase",
    '.metadata.name | test("x")',
    ".spec.containers | map(.name)",
    "[.spec.containers[].resources.limits.cpu // 0] | add",
    ".spec.containers | length",
    ".metadata.labels | keys",
    '.metadata.labels | has("x")',
    "first(.spec.containers[])",
    ".spec.containers | last",
    ".metadata.labels | values",
    '.spec.containers[] | select(.name == "main")',
    ".spec | type",
    ".spec.suspend | not",
    ".spec.containers | min_by(.name)",
    ".spec.containers | sort_by(.name)",
    ".spec.containers | group_by(.image)",
    "[.spec.containers[].image] | unique",
    '[.spec.containers[].name] | join(",")',
    '.metadata.name | split("-")',
    '.metadata.name | startswith("x")',
    '.metadata.name | ltrimstr("x-")',
    ".data.blob | @base64d",
    ".data.json | fromjson",
    ".spec | tojson",
    "limit(1; .spec.containers[])",
    'getpath(["spec", "replicas"])',
    ".metadata.labels | to_entries",
    ".metadata.labels | to_entries | from_entries",
    '.metadata.labels | with_entries(select(.value != ""))',
    '.metadata.name | [splits("-")]',
    '.metadata.name | sub("-"; "_")',
    '.metadata.name | capture("(?<job>[a-z]+)-(?<n>[0-9]+)")',
    ".metadata.name | ascii_upcase",
    '"\\u0064el"',
    '."del"',
    ".del",
    "{del: 1}",
    '{"del": .a}',
    ".spec.del.range.recurse",
    '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] // "" | length',
    'reduce .spec.containers[] as $c (0; . + ($c.resources.limits["nvidia.com/gpu"] // 0 | tonumber))',
    "[foreach .spec.containers[] as $c (0; . + 1)]",
    ".spec as $s | $s.replicas",
    ". as {spec: {replicas: $r}} | $r",
    'def gpus: .resources.limits["nvidia.com/gpu"] // 0; [.spec.containers[] | gpus] | add',
    "def count(f): [f] | length; count(.spec.containers[])",
    "def f($n): $n + 1; f(.spec.replicas // 0)",
    'label $out | .spec.containers[] | if .name == "x" then ., break $out else empty end',
    "try (.spec.replicas | tonumber) catch 0",
    "(.spec.replicas | tonumber)?",
    'error("missing replicas")',
    '"\\(.metadata.namespace)/\\(.metadata.name)"',
    '@base64 "\\(.metadata.name)"',
    ".metadata.name | @sh",
    "now | floor",
    ".status.startTime | fromdateiso8601",
    ".spec.containers | map(select(.ports)) | length",
    "[.spec.containers[] | .ports[]?.containerPort]",
    '.spec.containers | map(.name) | index("main")',
    '.spec.template.spec.containers[0].image | split(":") | .[-1]',
    ".items[1:3]",
    ".spec.replicas as $r | $r * 2",
    ". as $root | .spec.containers[] | {name, ns: $root.metadata.namespace}",
    '{a: .x, b: .y} | to_entries | map("\\(.key)=\\(.value)") | join(",")',
    ".x as [$a, $b] | {a: $a, b: $b}",
    "isempty(.spec.containers[]?)",
    '[.spec.containers[] | .name] | IN(["a"], ["b"])',
    "pick(.spec.replicas)",
    "path(.spec.replicas)",
    ".spec.containers | map_values(.name)",
    'ltrimstr("x") | rtrimstr("y") | trim',
    "abs",
    'splits("a"; "g")',
    'getpath(["a"]) // 1',
    "values",
]


@pytest.mark.parametrize(("expr", "construct"), UPSTREAM_REJECTS.items())
def test_upstream_rejections_are_rejected(expr: str, construct: str) -> None:
    reasons = check_safety(expr)
    assert any(construct in r for r in reasons), reasons


@pytest.mark.parametrize(("expr", "construct"), UPSTREAM_REJECTS.items())
def test_upstream_rejections_inside_pipe_chains(expr: str, construct: str) -> None:
    for chain in (f".spec | {expr}", f".a | .b | ({expr}) | .c", f"{expr} | .x", f"1, ({expr})"):
        reasons = check_safety(chain)
        assert any(construct in r for r in reasons), (chain, reasons)


def test_upstream_messages_keep_upstreams_wording() -> None:
    assert check_safety("del(.a)") == ["del function is not allowed"]
    assert check_safety("range(1000000)") == ["function 'range' may produce excessive output and is not allowed"]
    assert check_safety("..") == ["recursive descent operator '..' is not allowed"]
    assert check_safety(".a |= 1") == ["modifying operator '|=' is not allowed"]


@pytest.mark.parametrize(("expr", "construct"), LEAKS.items())
def test_leaks_upstream_misses_are_rejected(expr: str, construct: str) -> None:
    reasons = check_safety(expr)
    assert any(construct in r for r in reasons), reasons


@pytest.mark.parametrize("expr", SAFE)
def test_everyday_definition_patterns_pass(expr: str) -> None:
    assert check_safety(expr) == []


def test_every_reason_is_one_line() -> None:
    for expr in [*UPSTREAM_REJECTS, *LEAKS]:
        assert all("\n" not in r and r for r in check_safety(expr))


def test_all_reasons_are_collected() -> None:
    reasons = check_safety("del(.a) | .b = 1 | [..] | $ENV | gpu")
    assert len(reasons) == 5
    assert check_safety("del(.a) | del(.b)") == ["del function is not allowed"]


def test_unparseable_expression_raises_parse_error() -> None:
    with pytest.raises(JqParseError):
        check_safety(".invalid[[[syntax")
    with pytest.raises(JqParseError):
        check_safety("[.a")


def test_require_safe_carries_field_path_and_every_reason() -> None:
    path = "Spec.StructureDefinition.RootComponent.ScaleDefinition.ReplicasPath"
    with pytest.raises(UnsafeExpressionError) as info:
        require_safe("del(.a) | .b |= 1", path)
    assert info.value.field_path == path
    assert "del function is not allowed" in str(info.value)
    assert "'|='" in str(info.value)
    with pytest.raises(JqParseError) as parse_info:
        require_safe(".a[", path)
    assert parse_info.value.field_path == path
    require_safe(".spec.replicas", path)


def test_shadowing_a_builtin_name_does_not_hide_it() -> None:
    # upstream checks names, so a local `del` is still refused (keeps definitions portable)
    assert check_safety("def del(f): f; del(.a)") == ["del function is not allowed"]


def test_local_definitions_and_parameters_resolve() -> None:
    assert check_safety("def f(g; $n): g + $n + n; f(.a; 1)") == []
    assert check_safety("def f: 1; f(2)") == ["undefined function 'f/1': 'f' takes 0 argument(s)"]
    assert check_safety("(def f: 1; f) | f") == ["undefined function 'f/0'; to write a constant string use '\"f\"'"]


def test_variables_are_scoped() -> None:
    assert check_safety(". as $x | $x") == []
    assert check_safety("(. as $x | $x) | $x") == ["undefined variable '$x'"]
    assert check_safety("reduce .[] as $x ($x; .)") == ["undefined variable '$x'"]
    assert check_safety("[foreach .[] as $x (0; . + $x; [$x, .])]") == []
    assert check_safety(". as [$a] ?// {b: $b} | [$a, $b]") == []


# -- the builtin table against the installed libjq ------------------------------------------------------------


def test_builtin_table_matches_installed_libjq() -> None:
    libjq = set(jq.compile("builtins").input_value(None).first())
    assert libjq == builtins.PORTABLE | builtins.LIBJQ_ONLY
    assert not builtins.PORTABLE & builtins.LIBJQ_ONLY


@pytest.mark.parametrize("expr", sorted(set(VALID + VALID_PARSE_ONLY)))
def test_everything_libjq_cannot_resolve_is_reported(expr: str) -> None:
    try:
        jq.compile(expr)
    except ValueError as exc:
        if "is not defined" in str(exc):
            assert check_safety(expr), f"libjq: {exc}"


# -- referenced_roots --------------------------------------------------------------------------------------------

ROOTS: dict[str, set[tuple[str, ...]] | None] = {
    ".status.conditions[]?": {("status",)},
    '.status.conditions[]? | select(.type == "Ready")': {("status",)},
    ".spec.replicas // 1": {("spec",)},
    "(.spec.replicas // 1) * (.spec.size // 1)": {("spec",)},
    '.metadata.labels["a/b"]': {("metadata",)},
    '."spec"': {("spec",)},
    ".a[.b]": {("a",), ("b",)},
    "[.a, .b]": {("a",), ("b",)},
    "{x: .a, b}": {("a",), ("b",)},
    "if .a then .b else .c end": {("a",), ("b",), ("c",)},
    '"\\(.a)-\\(.b)"': {("a",), ("b",)},
    'any(.status.conditions[]?; .type == "Ready")': {("status",)},
    "try .a catch .b": {("a",)},
    "(.a)?": {("a",)},
    "1": set(),
    ".": None,
    "length": None,
    ".[]": None,
    ".[0]": None,
    "..": None,
    "if .a then .b end": None,
    ". as $x | $x.a": None,
    ".a as $x | .b": None,
    "def f: .a; f": None,
    ".a | $x": None,
    "keys": None,
    "select(.a)": None,
}


@pytest.mark.parametrize(("expr", "roots"), ROOTS.items())
def test_referenced_roots(expr: str, roots: set[tuple[str, ...]] | None) -> None:
    assert referenced_roots(expr) == roots


def test_referenced_roots_deeper() -> None:
    assert referenced_roots(".status.conditions[]? | .type", depth=2) == {("status", "conditions")}
    assert referenced_roots(".spec.template.spec.containers[0].image", depth=3) == {("spec", "template", "spec")}
    assert referenced_roots(".a[0].b", depth=3) == {("a",)}


def _recorded_objects() -> list[dict[str, Any]]:
    root = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "recordings"
    objects = []
    for name in sorted(glob.glob(str(root / "*running*.yaml")))[:6]:
        doc = yaml.safe_load(Path(name).read_text())
        for event in doc.get("events", []):
            if event.get("kind") == "STATE":
                objects.append(event["object"])
                break
    return objects


SHRINK_EXPRESSIONS = [
    ".spec.replicas // 1",
    '.status.conditions[]? | select(.type == "Ready") | .status',
    ".metadata.labels // {} | to_entries | map(.key)",
    "[.spec.template.spec.containers[]?.name]",
    '.metadata.ownerReferences[]? | select(.kind == "Sandbox") | .uid',
    "{name: .metadata.name, phase: .status.phase}",
    "if .spec.suspend == true then 0 else 1 end",
]


def test_shrunk_object_gives_the_same_results() -> None:
    objects = _recorded_objects()
    if not objects:
        pytest.skip("shared/conformance recordings not available")
    for expr in SHRINK_EXPRESSIONS:
        roots = referenced_roots(expr)
        assert roots is not None, expr
        for obj in objects:
            shrunk = {k: obj[k] for (k,) in roots if k in obj}
            assert run_libjq(expr, shrunk) == run_libjq(expr, obj), (expr, obj.get("kind"))


def _is_jq_field(key: str) -> bool:
    return key.lower().endswith("path") or key.endswith("Paths") or key in ("expression", "filters")


def _catalog_expressions() -> set[str]:
    """Every jq string of the built-in definitions (fields named *Path, *Paths, path, expression, filters)."""
    found: set[str] = set()

    def walk(node: Any, key: str | None = None) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key is not None and _is_jq_field(key):
            found.add(node)

    root = Path(__file__).resolve().parents[2] / "src" / "workload_map" / "catalog" / "definitions"
    for name in sorted(root.glob("*.yaml")):
        for doc in yaml.safe_load_all(name.read_text()):
            walk(doc)
    return found


def test_every_expression_of_the_built_in_catalog_is_safe() -> None:
    expressions = _catalog_expressions()
    assert len(expressions) > 100
    unsafe = {e: check_safety(e) for e in expressions if check_safety(e)}
    assert unsafe == {}
