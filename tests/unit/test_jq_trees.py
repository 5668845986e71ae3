"""Syntax trees kept in the catalog's blob (jq/trees.py, catalog/precompiled.py): every tree comes back exactly as
the parser built it, `parse` hands out a remembered tree instead of parsing, a run that finds the blob parses no
catalog expression, and the blob's key changes with the parser's modules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from workload_map.catalog import precompiled, registry
from workload_map.jq import ast, parse, trees
from workload_map.jq import parser as jq_parser
from workload_map.model import jq_fields
from workload_map.resolve.reasons import reason_expressions


@pytest.fixture(autouse=True)
def _fresh_parser() -> Iterator[None]:
    parse.cache_clear()  # type: ignore[attr-defined]  # also forgets remembered trees
    yield
    parse.cache_clear()  # type: ignore[attr-defined]


def _catalog_expressions() -> list[str]:
    found: dict[str, None] = {}
    for karta in registry._parse_builtin(registry._builtin_files()):
        found.update((expression, None) for _path, expression in jq_fields(karta))
        for component in karta.components:
            if component.status_definition is not None:
                found.update((expression, None) for expression in reason_expressions(component.status_definition))
    return list(found)


MORE = [
    '"a\\(.b)c\\(.d | tostring)"',
    '@base64 "x\\(.y)"',
    "@json",
    "reduce .[] as [$a, {b: $c}] (0; . + $a) | foreach .[] as $x (0; . + 1; [., $x])",
    ". as [$a] ?// $a | $a",
    "def f(g; $x): g + $x; f(.a; 1)",
    "if .a then 1 elif .b then 2 elif .c then 3 else 4 end",
    "label $out | .[] | if . > 1 then ., break $out else . end",
    'try error("x") catch .',
    ".a?.b[1:2][]?.c[-1] | .[:3]",
    "1.5, 1e3, .5, 0, -1, null, true, false, $__loc__, ..",
    '{a: 1, "b": 2, (.c): 3, $__loc__, "x\\(.y)": 5, $v}',
    "1 + 2 as $x | $x",
    "[.[] | select(.a == 1)] | length // 0",
]


def test_every_catalog_expression_comes_back_as_parsed() -> None:
    expressions = _catalog_expressions()
    assert len(expressions) > 300
    for expression in [*expressions, *MORE]:
        tree = jq_parser._parse(expression)
        data = trees.encode(tree)
        assert data is not None, expression
        back = trees.decode(data)
        assert back == tree, expression
        assert trees.encode(back) == data, expression  # fields equality leaves out (Bind.bare_source) included
        assert back == jq_parser._parse(expression)


def test_a_bare_source_survives() -> None:
    tree = jq_parser._parse("1 + 2 as $x | $x")
    back = trees.decode(trees.encode(tree) or b"")
    assert isinstance(back, ast.Bind) and back.bare_source is True


def test_what_cannot_be_carried_or_decoded_is_refused() -> None:
    assert trees.encode(jq_parser._parse("1" + "0" * 30)) is None  # past 64 bits: parsed when used instead
    for damaged in (
        b"",
        b"\xc1",
        msgspec.msgpack.encode(["Nope", 1]),
        msgspec.msgpack.encode([7, 1]),
        msgspec.msgpack.encode([0, 1]),
        msgspec.msgpack.encode("text"),
    ):
        assert trees.decode(damaged) is None


def test_parse_hands_out_a_remembered_tree() -> None:
    stand_in = jq_parser._parse(".b")
    trees.remember({".a": trees.encode(stand_in) or b""})
    assert parse(".a") is parse(".a") == stand_in  # the stored tree, decoded once, not a parse of the text
    assert jq_parser._parse.cache_info().misses == 1  # only ".b" was ever parsed
    trees.remember({".c": b"damaged"})
    assert parse(".c") == jq_parser._parse(".c")  # a tree that does not decode: the text is parsed


def test_a_run_that_finds_the_blob_parses_no_catalog_expression(tmp_path: Path) -> None:
    env = {"WMAP_CACHE_DIR": str(tmp_path / "cache")}
    files = registry._builtin_files()
    check = registry._without_errors
    precompiled.load_cached(files, registry._parse_builtin, env, check=check)  # builds the blob
    parse.cache_clear()  # type: ignore[attr-defined]  # as a new process: nothing parsed, nothing remembered
    precompiled.load_cached(files, registry._parse_builtin, env, check=check)
    expressions = _catalog_expressions()
    for expression in expressions:
        parse(expression)
    info = jq_parser._parse.cache_info()
    assert info.misses == 0, info


def test_the_key_covers_the_parser_modules() -> None:
    files = [("a.yaml", b"x")]
    stamp = trees.tree_stamp()
    assert stamp is not None
    names = {line.rsplit(":", 2)[0] for line in stamp.decode().splitlines()}
    assert {"jq/ast.py", "jq/parser.py", "jq/lexer.py", "jq/fold.py", "jq/trees.py"} <= names
    # and every module of the jq layer the grammar reads (it is imported only for a text really parsed)
    grammar = (Path(jq_parser.__file__).parent / "grammar.py").read_text()
    used = {
        f"jq/{line.split()[1].rsplit('.', 1)[1]}.py"
        for line in grammar.splitlines()
        if line.startswith("from workload_map.jq.")
    }
    assert used and used - {"jq/errors.py"} <= names, used - names
    assert "jq/grammar.py" in names
    key = precompiled.catalog_key(files, parser=stamp)
    assert key != precompiled.catalog_key(files)
    edited = stamp.replace(b"jq/ast.py:", b"jq/ast.py:1", 1)  # another size
    assert precompiled.catalog_key(files, parser=edited) != key
