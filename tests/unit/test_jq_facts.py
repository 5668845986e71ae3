"""Static facts kept in the catalog's blob (jq/facts.py, catalog/precompiled.py): every stored fact is what the
analyses give for the expression's tree, the engine and the compiler take a remembered fact instead of walking the
tree, a fact that does not read back is worked out as before, and the blob's key covers the modules that decide
them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from tests.unit.test_jq_trees import _catalog_expressions
from workload_map.catalog import precompiled, registry
from workload_map.jq import compiler, engine, facts, parse, reads, trees
from workload_map.jq.convert import roots_key
from workload_map.jq.errors import JqError


def _clear() -> None:
    parse.cache_clear()  # type: ignore[attr-defined]  # also forgets remembered trees
    facts.forget()
    engine.compile_expression.cache_clear()
    compiler.compile_closure.cache_clear()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _clear()
    yield
    _clear()


def _worked_out(expression: str) -> tuple[frozenset[tuple[str | int | None, ...]] | None, bool]:
    tree = parse(expression)
    try:
        found = roots_key(reads.reads(tree))
    except (JqError, RecursionError):
        found = None
    return found, compiler.builds_nesting(tree)


def test_every_stored_fact_is_what_the_analyses_give(tmp_path: Path) -> None:
    env = {"WMAP_CACHE_DIR": str(tmp_path / "cache")}
    files = registry._builtin_files()
    check = registry._without_errors
    precompiled.load_cached(files, registry._parse_builtin, env, check=check)  # builds the blob
    _clear()  # as a new process: nothing parsed, nothing remembered
    precompiled.load_cached(files, registry._parse_builtin, env, check=check)  # every definition decoded
    expressions = _catalog_expressions()
    remembered = {expression: (facts.roots(expression), facts.nests(expression)) for expression in expressions}
    known = {expression: found for expression, found in remembered.items() if found[0] is not None}
    assert len(known) > 300
    for expression, (found_roots, nests) in known.items():
        assert found_roots is not None and nests is not None
        assert (found_roots[0], nests) == _worked_out(expression), expression


def test_the_engine_takes_remembered_roots() -> None:
    facts.remember({".a": [[["b", 0, None]], False]})  # a stand-in, so that taking it shows
    assert engine.compile_expression(".a").roots == frozenset({("b", 0, None)})
    facts.remember({".c": [None, False]})
    assert engine.compile_expression(".c").roots is None  # remembered as the whole input
    assert engine.compile_expression(".d").roots == frozenset({("d",)})  # not remembered: worked out


def test_the_compiler_takes_a_remembered_nesting(monkeypatch: pytest.MonkeyPatch) -> None:
    expression = "reduce .[] as $x (null; [.])"
    facts.remember({expression: [None, True]})
    monkeypatch.setattr(compiler, "builds_nesting", lambda tree: pytest.fail("walked a remembered tree"))
    run = compiler.compile_closure(expression)
    assert run is not None
    with pytest.raises(JqError, match="nested more than"):
        run([1] * (compiler.MAX_DEPTH + 10), 10)  # the depth check a nesting expression's outputs get
    assert run([1, 2], 10) == [[[None]]]


def test_a_fact_that_does_not_read_back_is_worked_out() -> None:
    damaged = {
        ".a": "text",
        ".b": [[["b", 1.5]], False],  # a float is no step
        ".c": [None, "yes"],
        ".d": [[["d"]]],
        ".e": [["e"], False],  # a pattern that is not a list
        ".f": [{"f": 1}, False],
    }
    facts.remember(damaged)
    for expression in damaged:
        assert facts.roots(expression) is None and facts.nests(expression) is None
        assert engine.compile_expression(expression).roots == frozenset({(expression[1:],)})


def test_the_stored_form_reads_back_through_msgpack() -> None:
    found = frozenset({("spec", "replicas"), ("status", None, 3), ()})
    stored = msgspec.msgpack.decode(msgspec.msgpack.encode(facts.stored(found, True)))
    facts.remember({".x": stored, ".y": msgspec.msgpack.decode(msgspec.msgpack.encode(facts.stored(None, False)))})
    assert facts.roots(".x") == (found,) and facts.nests(".x") is True
    assert facts.roots(".y") == (None,) and facts.nests(".y") is False
    assert facts.plain(".x") is None and facts.plain(".y") is None  # not told: the fast path is asked
    told = msgspec.msgpack.decode(msgspec.msgpack.encode(facts.stored(found, False, True)))
    facts.remember({".z": told, ".w": [None, False, "yes"]})
    assert facts.plain(".z") is True and facts.roots(".z") == (found,) and facts.nests(".z") is False
    assert facts.plain(".w") is None and facts.roots(".w") is None  # a third element that is not a boolean
    # the run that builds the blob remembers the tuples `stored` makes, before any msgpack round trip
    facts.remember({".t": facts.stored(found, True, False)})
    assert facts.roots(".t") == (found,) and facts.nests(".t") is True and facts.plain(".t") is False


def test_the_key_covers_the_modules_that_decide_trees_and_facts() -> None:
    own = precompiled.analysis_stamp(None)
    assert own is not None
    names = {line.rsplit(":", 2)[0] for line in own.decode().splitlines()}
    deciding = {f"jq/{name}" for name in (*trees._PARSER_MODULES, *facts._FACT_MODULES)}
    assert deciding <= names
    assert {"jq/reads.py", "jq/compiler.py", "jq/engine.py", "jq/parser.py"} <= deciding
    files = [("a.yaml", b"x")]
    key = precompiled.catalog_key(files, parser=own)
    edited = own.replace(b"jq/reads.py:", b"jq/reads.py:1", 1)  # another size
    assert precompiled.catalog_key(files, parser=edited) != key
    # with the validator's stamp, the same modules are in it (every jq module, by name, size and time)
    validator = precompiled.validator_stamp()
    assert validator is not None
    listed = validator.decode().splitlines()
    own_lines = set(own.decode().splitlines())
    assert own_lines <= set(listed)
    assert precompiled.analysis_stamp(validator) == precompiled.analysis_stamp(validator + b"\nmore")
