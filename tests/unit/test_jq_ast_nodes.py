"""The jq syntax tree's nodes (workload_map.jq.ast): frozen, hashable, compared by class and fields, walked with
`fields_of`; and the walks built on it (depth limit, nesting check, read analysis) still see every field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_map.jq import ast, compiler, parser
from workload_map.jq.errors import JqParseError


def test_nodes_are_frozen_hashable_and_compared_by_class_and_fields() -> None:
    a = ast.Index(ast.Identity(), ast.String(("a",)))
    assert a == ast.Index(ast.Identity(), ast.String(("a",)))
    assert a != ast.Index(ast.Identity(), ast.String(("b",)))
    pipe: object = ast.Pipe(ast.Identity(), ast.Identity())
    assert pipe != ast.Comma(ast.Identity(), ast.Identity())  # same fields, another class
    assert len({a, ast.Index(ast.Identity(), ast.String(("a",)))}) == 1
    with pytest.raises(AttributeError):
        a.optional = True  # type: ignore[misc]
    assert repr(ast.Var("x")) == "Var(name='x')"


def test_bare_source_is_not_part_of_equality() -> None:
    parts = (ast.Number("1", 1), (ast.VarPattern("x"),), ast.Var("x"))
    bare, wrapped = ast.Bind(*parts, bare_source=True), ast.Bind(*parts)
    assert bare == wrapped and hash(bare) == hash(wrapped)
    assert bare.bare_source and not wrapped.bare_source
    assert parser.parse("1 + 2 as $x | $x") != parser.parse("(1 + 2) as $y | $y")
    assert parser.parse("1 + 2 as $x | $x").bare_source  # type: ignore[union-attr]


def test_fields_of_walks_a_node_in_declaration_order() -> None:
    node = ast.Slice(ast.Identity(), ast.Number("1", 1), None, optional=True)
    assert ast.fields_of(node) == (ast.Identity(), ast.Number("1", 1), None, True)
    assert ast.fields_of(ast.Identity()) == ()
    assert ast.fields_of((ast.Identity(),)) == ()  # not a node
    assert ast.is_node(node) and not ast.is_node("x") and not ast.is_node(ast.Index)


def test_the_walks_see_nested_fields() -> None:
    # the nesting check finds a reduce however deep it sits in the tree
    assert compiler.builds_nesting(parser.parse("[.a, {b: (reduce .[] as $x (null; [.]))}]"))
    assert not compiler.builds_nesting(parser.parse("[.a, {b: (.c | length)}]"))
    # the depth limit walks fields and tuples of fields
    deep = "[" * 40 + "." + "]" * 40
    parser.parse(deep)
    with pytest.raises(JqParseError, match="nested too deeply"):
        parser.parse(" | ".join(["[.]"] * 5000))


# `fields_of` and `String.constant` are asked for at every node the analyses and the compiler walk, so they were
# made cheaper (issue 19: start-up); these hold them to the forms they replaced, on generated nodes.
_PARTS = st.lists(st.one_of(st.text(max_size=3), st.just(ast.Identity()), st.builds(ast.Var, st.text(max_size=2))))


@given(_PARTS)
def test_a_strings_constant_is_its_parts_joined_when_all_are_text(parts: list[str | ast.Node]) -> None:
    string = ast.String(tuple(parts))
    before = "".join(p for p in parts if isinstance(p, str)) if all(isinstance(p, str) for p in parts) else None
    assert string.constant == before
    assert type(string.constant) is type(before)


@given(st.sampled_from([name for name in ast.__all__ if isinstance(getattr(ast, name), type)]), st.data())
def test_fields_of_gives_each_field_in_declaration_order(name: str, data: st.DataObject) -> None:
    kind = getattr(ast, name)
    values = [data.draw(st.one_of(st.none(), st.booleans(), st.text(max_size=2))) for _ in kind.__struct_fields__]
    node = kind(*values)
    assert ast.fields_of(node) == tuple(getattr(node, field) for field in kind.__struct_fields__)
    assert type(ast.fields_of(node)) is tuple
