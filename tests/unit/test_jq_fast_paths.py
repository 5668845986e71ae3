"""Write-back paths in Python (`fastpath.compile_fast_paths`): since libjq runs only in the worker (issue 16), a
plain path's `[path(expr)]` is found in process, and must equal libjq's (outputs, or the exact error message), on
generated objects and paths and on every catalog write-back path over every catalog fixture.

libjq is called in this test process as the oracle (the library itself never calls it in process)."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_jq_fastpath import _json, _keys, _path, normalise
from workload_map.catalog import builtin_definitions
from workload_map.jq import Document, JqLimitError, JqRuntimeError, engine, worker
from workload_map.jq.fastpath import compile_fast_paths
from workload_map.model.dump import to_dict


def libjq_paths(expr: str, value: Any) -> tuple[str, Any]:
    try:
        return "ok", engine.run_one(expr, json.dumps(normalise(value)), kind="paths")
    except JqRuntimeError as exc:
        return "error", exc.message


def python_paths(expr: str, value: Any) -> tuple[str, Any]:
    run = compile_fast_paths(expr)
    assert run is not None, f"{expr!r} should be found in Python"
    try:
        return "ok", run(normalise(value))
    except JqRuntimeError as exc:
        return "error", exc.message


@st.composite
def _selecting(draw: st.DrawFn) -> str:
    """Plain paths, piped, with a `//` between two of them (no literals: those are not paths)."""
    parts = [draw(_path()) for _ in range(draw(st.integers(min_value=1, max_value=3)))]
    expr = " | ".join(parts)
    if draw(st.booleans()):
        expr = f"{expr} // {draw(_path())}"
    return expr


def _covered(expr: str) -> bool:
    return compile_fast_paths(expr) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_selecting().filter(_covered), _json)
def test_python_paths_equal_libjqs(expr: str, value: Any) -> None:
    assert python_paths(expr, value) == libjq_paths(expr, value), expr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_selecting().filter(_covered), st.dictionaries(_keys, _json, max_size=6))
def test_python_paths_equal_libjqs_on_objects(expr: str, value: dict[str, Any]) -> None:
    assert python_paths(expr, value) == libjq_paths(expr, value), expr


@pytest.mark.parametrize(
    "expr",
    [".[-1]", ".a[-2].b", ".a // 1", ".a // null", '.a // "x"', "[.a]", ".a | keys", ".. | .a?", "first(.a[])"],
)
def test_what_is_not_a_plain_selection_is_left_to_libjq(expr: str) -> None:
    assert compile_fast_paths(expr) is None


def _catalog_write_back() -> list[tuple[str, dict[str, Any], str]]:
    """(definition, fixture object, path expression) for every path a catalog definition writes back through."""
    cases: list[tuple[str, dict[str, Any], str]] = []
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(glob.glob(str(fixtures / "**" / "*.yaml"), recursive=True)):
        for document in yaml.safe_load_all(Path(name).read_text(encoding="utf-8")):
            if isinstance(document, dict) and isinstance(document.get("kind"), str):
                by_kind.setdefault(document["kind"], []).append(json.loads(json.dumps(document, default=str)))
    for karta in builtin_definitions():
        gvk = karta.root_gvk
        if gvk is None:
            continue
        for expr in _write_paths(karta):
            for obj in by_kind.get(gvk.kind, [])[:3]:
                cases.append((karta.name, obj, expr))
    return cases


def _write_paths(karta: Any) -> set[str]:
    """Every `path` and `*Path` field of a definition (a superset of what write-back goes through: pod template and
    spec paths, replicas paths, suspend and resume action paths); those `compile_fast_paths` declines are skipped."""
    found: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for name, item in value.items():
                walk(item, name)
        elif isinstance(value, list):
            for item in value:
                walk(item, key)
        elif isinstance(value, str) and (key == "path" or key.endswith("Path")) and key != "keyPath":
            found.add(value)

    walk(to_dict(karta))
    return found


CATALOG_CASES = _catalog_write_back()


def test_the_catalog_write_back_cases_are_many() -> None:
    assert len(CATALOG_CASES) > 100


def test_catalog_write_back_paths_equal_libjqs_on_the_fixtures() -> None:
    taken = 0
    for name, obj, expr in CATALOG_CASES:
        if compile_fast_paths(expr) is None:
            continue
        taken += 1
        assert python_paths(expr, obj) == libjq_paths(expr, obj), (name, expr)
    assert taken >= 100  # the plain ones (most pod template, spec and action paths) need no worker


def test_document_paths_need_no_worker_for_plain_paths_and_keep_the_output_cap() -> None:
    worker.shutdown()
    doc = Document({"spec": {"items": [{"n": i} for i in range(3)]}})
    assert doc.paths(".spec.items[].n") == [["spec", "items", i, "n"] for i in range(3)]
    doc.assign_each(".spec.items[].n", [10, 20, 30])
    assert [item["n"] for item in doc.obj["spec"]["items"]] == [10, 20, 30]
    assert worker.worker_pids() == {}
    with pytest.raises(JqLimitError, match="query results exceed the allowed number 1000"):
        Document({"a": list(range(1000))}).paths(".a[]")
