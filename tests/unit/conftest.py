"""Fixtures the unit tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, Result, Wmap, invoke


@pytest.fixture
def wmap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Wmap:
    """`wmap` run in process from the repository root, with HOME in a temporary directory (no ~/.kube/config, no
    config file, no $KUBECONFIG: see `invoke`)."""
    monkeypatch.chdir(REPO)

    def call(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> Result:
        return invoke(args, home=tmp_path, stdin=stdin, env=env)

    return call


@pytest.fixture(scope="module")
def generated_from_the_first_object() -> Iterator[None]:
    """The generated jq programs run from a batch's first evaluation on (`generated.GENERATE_AFTER` 0), so every
    object a test gives is read by the generated code, not only the second one of each definition."""
    from workload_map.jq import generated

    before = generated.GENERATE_AFTER
    generated.GENERATE_AFTER = 0
    try:
        yield
    finally:
        generated.GENERATE_AFTER = before


@pytest.fixture
def raw_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The expressions the fast path's in-place readers (`Compiled.raw`, from `fastpath.compile_fast_raw`) run for,
    in order, during the test: the engine's cache of compiled expressions is cleared before (so every reader is a
    counting one) and after (so none outlives the test)."""
    from typing import Any

    from workload_map.jq import engine, fastpath

    runs: list[str] = []
    original = fastpath.compile_fast_raw

    def counted(expr: str) -> Any:
        read = original(expr)
        if read is None:
            return None

        def run(value: Any) -> list[Any]:
            runs.append(expr)
            return read(value)

        return run

    monkeypatch.setattr(fastpath, "compile_fast_raw", counted)
    engine.compile_expression.cache_clear()
    yield runs
    engine.compile_expression.cache_clear()
