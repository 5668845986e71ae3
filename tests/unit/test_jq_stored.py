"""Programs stored with the catalog (`jq/stored.py`, issue 19: start-up): the generated function of each catalog
expression the generator covers, marshalled into the blob and run by `generated.evaluate_batch` on the first
objects of a definition.

What must hold: a stored program read back answers every catalog fixture and recording exactly as the current path
(`Document.evaluate_many`) does, or hands the expression back (`BAIL`); a stored form that is damaged in any way
reads back as no program (the expression then runs as without it); the blob hands programs over only when it is
the user's own and writable by no one else; and the blob's key covers the interpreter's bytecode magic number.
"""

from __future__ import annotations

import copy
import functools
import marshal
import os
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_codegen import OBJECTS, _strict
from workload_map.catalog import builtin_definitions, precompiled, registry
from workload_map.jq import Document, EvaluationPolicy, JqError, codegen, engine, facts, generated, stored
from workload_map.jq.errors import NotPlainError
from workload_map.jq.fastpath import compile_fast_raw
from workload_map.jq.finish import BAIL
from workload_map.model import Karta, StatusDefinition, StatusMatcher, jq_fields
from workload_map.resolve import reasons, snapshot
from workload_map.resolve.structure import structure_of

DEFINITIONS: list[Karta] = builtin_definitions()


def _expressions(karta: Karta) -> list[str]:
    return sorted({expression for _path, expression in jq_fields(karta)})


def _encoded(expr: str) -> list[Any] | None:
    """The stored form of `expr`'s program, as the blob's builder makes it (None: the generator leaves it out)."""
    found = codegen.stored_program(expr)
    return None if found is None else list(found)


def _read_back(expr: str) -> stored.Program | None:
    """The program of `expr` as a blob stores it and a run reads it back (None: none is stored)."""
    form = _encoded(expr)
    if form is None:
        return None
    decoded = precompiled._EXPRESSIONS.decode(precompiled._ENCODER.encode(({}, {}, {expr: form})))[2][expr]
    return stored._read(decoded)


@pytest.fixture
def no_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    """No programs remembered during the test (those the catalog decoded in this process remembered are back
    after it)."""
    monkeypatch.setattr(stored, "_stored", {})
    monkeypatch.setattr(stored, "_loaded", {})


@pytest.fixture
def no_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """No facts remembered during the test (as `no_programs`)."""
    monkeypatch.setattr(facts, "_stored", {})
    monkeypatch.setattr(facts, "_read_back", {})


def test_most_catalog_expressions_have_a_stored_program() -> None:
    expressions = {expr for karta in DEFINITIONS for expr in _expressions(karta)}
    not_plain = {expr for expr in expressions if engine.compile_expression(expr).fast is None}
    programs = {expr for expr in expressions if _encoded(expr) is not None}
    assert len(not_plain) > 200
    assert len(programs & not_plain) > 0.75 * len(not_plain), (len(programs & not_plain), len(not_plain))
    assert len(programs - not_plain) > 0.9 * len(expressions - not_plain)  # plain paths too


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_a_stored_program_answers_as_the_current_path_or_hands_the_expression_back(karta: Karta) -> None:
    programs = {expr: _read_back(expr) for expr in _expressions(karta)}
    answered = 0
    for _name, obj in OBJECTS:
        for expr, program in programs.items():
            if program is None:
                continue
            got = program(copy.deepcopy(obj), {})
            if got is BAIL:
                continue
            answered += 1
            expected = Document(copy.deepcopy(obj)).evaluate_many([expr])[0]
            assert not isinstance(expected, JqError), expr  # a program never answers where the engine fails
            assert _strict(got) == _strict(expected), expr
    if any(program is not None for program in programs.values()):
        assert answered > 0  # on some object every such definition's programs answer themselves


def test_the_first_batch_of_a_definition_runs_its_stored_programs(no_programs: None) -> None:
    expr = "if .spec.a == null then 0 else (.spec.a.replicas // 1) end"
    form = _encoded(expr)
    assert form is not None
    stored.remember({expr: form})
    batch = (".metadata.name", expr, ".spec.missing | length")
    obj = {"metadata": {"name": "x"}, "spec": {"a": {"replicas": 3}}}
    assert generated._seen.get(batch, 0) == 0  # not worth generating yet: the stored program answers
    assert generated.evaluate_batch(Document(obj), batch) == [["x"], [3], [0]]
    assert stored._loaded[expr] is not None
    # where it bails (a float the normalised form may read otherwise), the current path gives its own answer
    for other in ({"spec": {"a": {"replicas": 2.0}}}, {"spec": {"a": "text"}}):
        program = stored._loaded[expr]
        assert program is not None and program(copy.deepcopy(other), {}) is BAIL
        generated._seen.pop(batch, None)
        got = generated.evaluate_batch(Document(copy.deepcopy(other)), batch)
        assert _strict(got) == _strict(Document(other).evaluate_many(batch))
    assert isinstance(got[1], JqError)  # the engine's error for a string's `.replicas`, as without the program
    generated._seen.pop(batch, None)


def test_stored_programs_never_run_under_a_worker_policy(no_programs: None, monkeypatch: pytest.MonkeyPatch) -> None:
    expr = ".spec.a != true"
    form = _encoded(expr)
    assert form is not None
    stored.remember({expr: form})
    ran: list[str] = []
    monkeypatch.setattr(stored, "programs", lambda exprs: ran.append("asked") or None)
    monkeypatch.setattr(generated, "stored_programs", stored.programs)
    document = Document({"spec": {"a": True}}, policy=EvaluationPolicy(mode="worker"))
    assert generated.evaluate_batch(document, (expr,)) == [[False]]
    assert ran == []


def _good() -> list[Any]:
    form = _encoded(".spec.a != true")
    assert form is not None
    return form


@pytest.mark.parametrize(
    "damaged",
    [
        None,
        "text",
        [b"\x00\x01"],
        [b"not marshal at all", {}],
        [marshal.dumps(("a", "tuple")), {}],
        [marshal.dumps(compile("x = 1", "<jq stored>", "exec")), {}],  # no f0
        [marshal.dumps(compile("f0 = len", "<jq stored>", "exec")), {}],  # not a function of its own
        [marshal.dumps(compile("raise ValueError", "<jq stored>", "exec")), {}],
        "truncated",
        "constants",
        "constant names",
        "a runtime name",
    ],
)
def test_a_damaged_stored_form_reads_back_as_no_program(damaged: Any) -> None:
    good = _good()
    if damaged == "truncated":
        damaged = [good[0][: len(good[0]) // 2], good[1]]
    elif damaged == "constants":
        damaged = [good[0], {name: [value] for name, value in good[1].items()} or {"K1": [1]}]
    elif damaged == "constant names":
        damaged = [good[0], {"__builtins__": {}, **good[1]}]
    elif damaged == "a runtime name":
        damaged = [good[0], {"KEY": 1, **good[1]}]
    assert stored._read(damaged) is None
    assert stored._read(good) is not None


def test_an_expression_whose_program_is_damaged_runs_as_without_it(no_programs: None) -> None:
    expr = ".spec.a != true"
    stored.remember({expr: [b"damaged", {}]})
    assert stored.programs([expr]) is None  # read back as none: the batch goes to evaluate_many whole
    assert generated.evaluate_batch(Document({"spec": {"a": 1}}), (expr,)) == [[True]]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"WMAP_CACHE_DIR": str(tmp_path / "cache")}


def _decode_pytorchjob(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    definitions = precompiled.load_definitions(files, registry._parse_builtin, env)
    position = next(i for i, (name, _gvk) in enumerate(definitions.heads) if name == "kubeflow-org-pytorchjob-v1")
    definitions.karta(position)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="user ids are what the blob's trust is judged by")
def test_the_blob_hands_its_programs_over_only_when_no_one_else_can_write_it(
    env: dict[str, str], no_programs: None
) -> None:
    files = registry._builtin_files()
    precompiled.load_definitions(files, registry._parse_builtin, env)  # builds the blob
    stored.forget()
    _decode_pytorchjob(env)
    remembered = dict(stored._stored)
    assert len(remembered) >= 3  # its replica counts and its suspend test are not plain paths
    assert all(stored._read(form) is not None for form in remembered.values())
    (blob,) = (Path(env["WMAP_CACHE_DIR"]) / "catalog").glob("*.msgpack")
    for mode in (0o620, 0o602, 0o666):
        blob.chmod(mode)
        stored.forget()
        _decode_pytorchjob(env)  # its data is still read: the definition decodes from the blob
        assert stored._stored == {}, oct(mode)
    blob.chmod(0o600)
    stored.forget()
    _decode_pytorchjob(env)
    assert stored._stored == remembered


def test_the_key_covers_the_interpreters_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    files = registry._builtin_files()
    before = precompiled.catalog_key(files)
    monkeypatch.setattr(precompiled, "MAGIC_NUMBER", b"\x00\x00\r\n")
    assert precompiled.catalog_key(files) != before


def test_without_the_validators_stamp_the_programs_modules_are_stamped() -> None:
    stamp = precompiled.analysis_stamp(None)
    program = stored.program_stamp()
    assert stamp is not None and program is not None and program in stamp
    assert b"jq/codegen.py:" in program and b"jq/runtime.py:" in program


# --- the jq front end left out: facts and in-place reads that stand in for it ------------------------------------


def _object_paths() -> list[str]:
    return sorted({path for karta in DEFINITIONS for path in structure_of(karta).in_place})


def test_the_stored_plain_fact_is_the_fast_paths_own_answer() -> None:
    expressions = {expr for karta in DEFINITIONS for expr in _expressions(karta)}
    found = {expr: engine.expression_facts(expr) for expr in expressions}
    told = {expr: fact[2] for expr, fact in found.items() if fact is not None and len(fact) == 3}
    assert len(told) == sum(fact is not None for fact in found.values()) > 500
    assert all(plain == (compile_fast_raw(expr) is not None) for expr, plain in told.items())
    assert sum(told.values()) > 100 and not all(told.values())


def test_a_catalog_object_path_read_in_place_by_its_program_is_what_the_fast_path_reads() -> None:
    paths = _object_paths()
    assert len(paths) > 30
    answered = 0
    for path in paths:
        program = _read_back(path)
        raw = compile_fast_raw(path)
        assert raw is not None, path  # in place only where the fast path reads in place
        if program is None:
            continue
        for _name, obj in OBJECTS:
            try:
                expected: Any = raw(obj)
            except (JqError, NotPlainError) as error:
                expected = error
            try:
                got: Any = snapshot._read_by_program(program, obj)
            except NotPlainError:
                continue  # bailed: the snapshot evaluates it the current way, as for the fast path's refusal
            answered += 1
            assert not isinstance(expected, BaseException), path  # it never answers where the fast path cannot
            # the very objects of the caller's dict, not copies
            assert len(got) == len(expected) and all(a is b or a == b for a, b in zip(got, expected, strict=True))
            assert all(a is b for a, b in zip(got, expected, strict=True) if isinstance(a, (dict, list)))
    assert answered > 1000


def test_the_snapshot_reads_a_catalog_path_in_place_by_its_program(no_programs: None, no_facts: None) -> None:
    path = ".spec.template"
    form = _encoded(path)
    assert form is not None
    stored.remember({path: form})
    facts.remember({path: [[["spec", "template"]], False, True]})
    read = snapshot._in_place_reader(path)
    assert isinstance(read, functools.partial) and read.func is snapshot._read_by_program
    template = {"spec": {"containers": []}}
    assert read({"spec": {"template": template}})[0] is template
    with pytest.raises(NotPlainError):
        read({"spec": {"other": 1, 2: "a key that is not a string"}})  # bails: the current path decides
    facts.remember({".spec.other": [[["spec", "other"]], False, False]})
    assert snapshot._in_place_reader(".spec.other") is None  # the catalog says it is not read in place
    # no fact: the fast path's own reader
    assert snapshot._in_place_reader(".spec.third") is compile_fast_raw(".spec.third") is not None


def test_a_reasons_field_reads_from_the_stored_fact_are_those_of_the_analysis() -> None:
    expressions = sorted(
        {
            matcher.by_expression.expression
            for karta in DEFINITIONS
            for component in karta.components
            if component.status_definition is not None
            for matcher in _matchers(component.status_definition)
            if matcher.by_expression is not None
        }
    )
    assert len(expressions) > 20
    from_facts = {}
    for expr in expressions:
        assert facts.roots(expr) is not None, expr  # the catalog decoded in this process remembered them
        from_facts[expr] = reasons.field_reads.__wrapped__(expr)
    with pytest.MonkeyPatch.context() as patched:  # no fact: the read analysis of the parsed tree
        patched.setattr(facts, "_stored", {})
        patched.setattr(facts, "_read_back", {})
        assert {expr: reasons.field_reads.__wrapped__(expr) for expr in expressions} == from_facts
    assert any(from_facts.values())


def _matchers(definition: StatusDefinition) -> list[StatusMatcher]:
    return [matcher for _status, found in definition.status_mappings.entries() for matcher in found or ()]
