"""Document: one object, many expressions, at most one conversion; the same answers as plain libjq.

The differential tests run every jq expression of every built-in definition against that definition's fixture
objects (the workload and its pods) through `Document.evaluate_many` (fast path, pruning, combined program) and
through plain libjq on the whole object (sorted keys, as gojq), and require identical outputs and errors.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jq as libjq
import pytest
import yaml

from workload_map.jq import (
    Document,
    EvaluationPolicy,
    JqError,
    JqRuntimeError,
    convert,
    document,
    engine,
    evaluate,
)

ROOT = Path(__file__).resolve().parents[2]
DEFINITIONS = ROOT / "src" / "workload_map" / "catalog" / "definitions"
FIXTURES = ROOT / "tests" / "fixtures" / "catalog"

_EXPRESSION_KEYS = ("path", "Path", "expression", "keyPath", "idPath", "groupByKeyPaths")


def _expressions(node: Any, key: str = "") -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _expressions(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from _expressions(item, key)
    elif isinstance(node, str) and key.endswith(_EXPRESSION_KEYS) and key != "ownerRef":
        yield node


def _cases() -> list[tuple[str, list[str], list[Any]]]:
    cases = []
    for definition in sorted(DEFINITIONS.glob("*.yaml")):
        exprs = list(dict.fromkeys(_expressions(yaml.safe_load(definition.read_text()))))
        fixture = FIXTURES / definition.stem
        objects: list[Any] = []
        if (fixture / "workload.yaml").exists():
            objects.append(yaml.safe_load((fixture / "workload.yaml").read_text()))
        if (fixture / "pods.yaml").exists():
            objects.extend(yaml.safe_load((fixture / "pods.yaml").read_text()).get("items", [])[:3])
        if exprs and objects:
            cases.append((definition.stem, exprs, objects))
    return cases


CASES = _cases()


@functools.cache
def _plain_program(expr: str) -> Any:
    try:
        return libjq.compile(expr)
    except ValueError:
        return None


def _reference(expr: str, obj: Any) -> Any:
    """Plain libjq on the whole object with sorted keys: what the Document must reproduce."""
    text = json.dumps(convert.normalize(obj), sort_keys=True)
    program = _plain_program(expr)
    if program is None:
        return "compile error"
    try:
        return program.input_text(text).all()
    except ValueError as exc:
        return ("error", str(exc))


def _ours(result: list[Any] | JqError) -> Any:
    if isinstance(result, JqRuntimeError):
        return ("error", result.message)
    if isinstance(result, JqError):
        return "compile error"
    return result


def test_the_catalog_gives_the_differential_tests_something_to_chew_on() -> None:
    assert len(CASES) >= 10
    assert sum(len(exprs) * len(objects) for _, exprs, objects in CASES) >= 300


@pytest.mark.parametrize(("name", "exprs", "objects"), CASES, ids=[case[0] for case in CASES])
def test_every_catalog_expression_gives_what_plain_libjq_gives(name: str, exprs: list[str], objects: list[Any]) -> None:
    for obj in objects:
        together = Document(obj).evaluate_many(exprs)
        for expr, result in zip(exprs, together, strict=True):
            assert _ours(result) == _reference(expr, obj), (name, expr)


@pytest.mark.parametrize(("name", "exprs", "objects"), CASES, ids=[case[0] for case in CASES])
def test_every_catalog_expression_alone_gives_what_it_gives_in_a_batch(
    name: str, exprs: list[str], objects: list[Any]
) -> None:
    obj = objects[0]
    together = Document(obj).evaluate_many(exprs)
    for expr, result in zip(exprs, together, strict=True):
        doc = Document(obj)
        try:
            alone: Any = doc.evaluate(expr)
        except JqError as exc:
            alone = exc
        assert _ours(alone) == _ours(result), (name, expr)


WRITE_CASES = ("jobset", "dynamographdeployment-v1alpha1", "leaderworkerset", "raycluster", "pytorchjob")


def test_paths_of_catalog_expressions_match_plain_libjq() -> None:
    for name, exprs, objects in CASES:
        if not any(part in name for part in WRITE_CASES):
            continue
        obj = objects[0]
        for expr in exprs:
            reference = _reference(f"[path({expr})]", obj)
            try:
                ours: Any = [Document(obj).paths(expr)]
            except JqRuntimeError as exc:
                ours = ("error", exc.message)
            except JqError:
                ours = "compile error"
            if isinstance(reference, list):
                assert ours == reference, expr
            else:
                assert ours != [] and not isinstance(ours, list), expr


# --- conversion happens once ------------------------------------------------------------------------------------


class _Counter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.args: list[Any] = []
        # what is converted depends on the process's hints of plain paths that gave a container (speed only, the
        # outputs are the same): earlier tests in the same process leave some, so each count starts without
        monkeypatch.setattr(document, "_GIVES_CONTAINERS", set())
        for name in ("encode", "normalize"):
            original = getattr(convert, name)

            def counted(obj: Any, _original: Any = original) -> Any:
                self.calls += 1
                self.args.append(obj)
                return _original(obj)

            monkeypatch.setattr(convert, name, counted)


JOB = {
    "metadata": {"name": "job", "labels": {"app": "x"}},
    "spec": {"replicatedJobs": [{"name": "a", "replicas": 2}, {"name": "b", "replicas": 1}], "suspend": False},
    "status": {"conditions": [{"type": "Completed", "status": "True"}]},
}
BATCH = [
    ".spec.replicatedJobs[]? | .name",
    ".spec.replicatedJobs[]? | .replicas // 1",
    "[.spec.replicatedJobs[]? | .replicas // 1] | add // 0",
    '(.status.conditions // []) | any(.type == "Completed" and .status == "True")',
    ".spec.suspend == true",
    ".status.conditions",
    ".metadata.name",
]


def test_evaluate_many_converts_the_object_at_most_once_per_kind_of_use(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = _Counter(monkeypatch)
    doc = Document(JOB)
    first = doc.evaluate_many(BATCH)
    # one normalised tree, of what the compiled closures and the plain path with a container output
    # (`.status.conditions`) read; the plain paths to scalars read the object in place
    assert counter.args == [convert.prune(JOB, _tree_roots())]
    second = doc.evaluate_many(BATCH)
    assert counter.calls == 1  # cached
    assert first == second


def _tree_roots() -> Any:
    found: set[Any] = set()
    for expr in BATCH:
        info = engine.compile_expression(expr)
        if info.fast is None or expr == ".status.conditions":
            assert info.roots is not None
            found |= info.roots
    return frozenset(found)


def test_plain_paths_to_scalars_read_the_callers_object_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = _Counter(monkeypatch)
    obj = {"spec": {"b": 1.0, "n": "x", "a": {"y": 2.0, "x": [3.0]}}, "status": {"phase": "Running"}}
    doc = Document(obj)
    assert doc.evaluate_many([".status.phase", ".spec.b", ".spec.n // 1", ".spec.missing.deeper"]) == [
        ["Running"],
        [1],  # the int the normalised tree holds
        ["x"],
        [None],
    ]
    assert counter.calls == 0
    found = doc.evaluate_many([".spec.a", ".spec[]?"])
    assert found == [[{"x": [3], "y": 2}], [{"x": [3], "y": 2}, 1, "x"]]  # sorted keys, as gojq iterates
    assert counter.calls == 1  # one tree for both container outputs
    out = found[0][0]  # type: ignore[index]
    assert type(out["y"]) is int and list(out) == ["x", "y"]
    assert out is not obj["spec"]["a"]
    assert obj == {"spec": {"b": 1.0, "n": "x", "a": {"y": 2.0, "x": [3.0]}}, "status": {"phase": "Running"}}


def test_a_write_through_the_document_is_seen_by_the_next_read() -> None:
    doc = Document(json.loads(json.dumps(JOB)))
    assert doc.evaluate_many(BATCH)[4] == [False]
    doc.assign(".spec.suspend", True)
    assert doc.evaluate_many(BATCH)[4] == [True]


def test_a_change_made_behind_the_documents_back_needs_invalidate() -> None:
    obj = json.loads(json.dumps(JOB))
    doc = Document(obj)
    assert doc.evaluate("[.spec.replicatedJobs[].replicas] | add") == [3]
    obj["spec"]["replicatedJobs"][0]["replicas"] = 5
    doc.invalidate()
    assert doc.evaluate("[.spec.replicatedJobs[].replicas] | add") == [6]


def test_the_document_holds_the_callers_object_without_copying() -> None:
    doc = Document(JOB)
    assert doc.obj is JOB


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown jq evaluation mode"):
        Document(JOB, policy=EvaluationPolicy("threads"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown jq evaluation mode"):
        evaluate(".", JOB, policy=EvaluationPolicy("threads"))  # type: ignore[arg-type]


RECORDINGS = Path("/work/shared/conformance/recordings")


def _recorded_objects() -> list[tuple[str, Any]]:
    if not RECORDINGS.is_dir():
        return []
    out = []
    for recording in sorted(RECORDINGS.glob("*.yaml")):
        slug = recording.name.split("__")[2]
        states = [e for e in yaml.safe_load(recording.read_text())["events"] if e.get("kind") == "STATE"]
        if states:
            out.append((slug, states[-1]["object"]))
    return out


@pytest.mark.skipif(not RECORDINGS.is_dir(), reason="the shared operator recordings are not on this machine")
def test_catalog_expressions_on_recorded_operator_objects_give_what_plain_libjq_gives() -> None:
    definitions = {
        path.stem: list(dict.fromkeys(_expressions(yaml.safe_load(path.read_text()))))
        for path in DEFINITIONS.glob("*.yaml")
    }
    checked = 0
    for slug, obj in _recorded_objects():
        exprs = definitions.get(slug, [])
        for expr, result in zip(exprs, Document(obj).evaluate_many(exprs), strict=True):
            assert _ours(result) == _reference(expr, obj), (slug, expr)
            checked += 1
    assert checked >= 200


def test_a_plain_path_the_compiled_tree_holds_is_answered_from_that_tree(raw_reads: list[str]) -> None:
    obj = {"status": {"phase": "Running", "ready": 2.0}, "spec": {"name": "x"}}
    found = Document(obj).evaluate_many([".status == null", ".status.phase", ".status.ready", ".spec.name"])
    assert found == [[False], ["Running"], [2], ["x"]]
    assert raw_reads == [".spec.name"]  # `.status == null` keeps all of `.status` on the tree


def test_a_batch_plan_is_reused_across_objects_and_a_non_string_is_still_refused() -> None:
    """`evaluate_many` works out a batch's split (plain paths, closures, libjq) once per batch (issue 19): the same
    batch on different objects gives each object's own outputs, and a non-string expression is refused every time,
    not only when the batch is first seen."""
    from workload_map.errors import ArgumentTypeError
    from workload_map.jq import document as document_module

    batch = [".a", ".b | length", "[.c[]? | . * 2]", ".a // .b"]
    first = Document({"a": 1, "b": [1, 2], "c": [3]}).evaluate_many(batch)
    second = Document({"b": "xyz", "c": [5, 6]}).evaluate_many(batch)
    assert first == [[1], [2], [[6]], [1]]
    assert second == [[None], [3], [[10, 12]], ["xyz"]]
    assert document_module._batch_split.cache_info().hits >= 1
    for bad in ([".a", 1], [".a", None], [[".a"]]):
        for _ in range(2):
            with pytest.raises(ArgumentTypeError, match="a jq expression must be a string"):
                Document({}).evaluate_many(bad)  # type: ignore[arg-type]
