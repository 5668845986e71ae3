"""`cli.pipeline.admitted_workload`, the Workload `get` reads a row's status from without taking a Resolution: the
status `resolve_object`'s resolution reads, value or error, and the same refusal of a definition stopped earlier
in the command."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.cli import context
from workload_map.cli.jqmode import NotEvaluated, definition_policy
from workload_map.cli.jqsettings import Stop
from workload_map.cli.pipeline import admitted_workload, resolve_object
from workload_map.jq import JqLimitError
from workload_map.resolve import ResolveError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "catalog"


@pytest.fixture
def fresh_run() -> Iterator[context.State]:
    try:
        yield context.reset()
    finally:
        context.reset()


def _workloads() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(FIXTURES.glob("*/workload.yaml")):
        with path.open(encoding="utf-8") as file:
            found.append((path.parent.name, yaml.safe_load(file)))
    return found


def _status(read: Any) -> Any:
    try:
        status = read()
    except ResolveError as exc:
        return ("error", type(exc), str(exc))
    return None if status is None else status.to_dict()


@pytest.mark.usefixtures("fresh_run")
@pytest.mark.parametrize(("name", "obj"), _workloads(), ids=lambda value: value if isinstance(value, str) else "")
def test_the_status_is_the_resolutions(name: str, obj: dict[str, Any]) -> None:
    found = builtin_registry().for_object(obj)
    assert found is not None, name
    policy = definition_policy(found.karta.name, found.origin)
    alone = admitted_workload(found.karta, obj, policy=policy)
    resolved = resolve_object(found.karta, obj, label=name, origin=found.origin, policy=policy)
    assert _status(lambda: alone.root.status) == _status(lambda: resolved.resolution.root_component.status)
    assert _status(lambda: alone.root.status) == _status(lambda: resolved.workload.root.status)


def test_a_definition_stopped_earlier_is_refused_as_resolve_object_refuses_it(fresh_run: context.State) -> None:
    name, obj = next(item for item in _workloads() if item[0] == "apps-deployment-v1")
    found = builtin_registry().for_object(obj)
    assert found is not None
    policy = definition_policy(found.karta.name, found.origin)
    fresh_run.jq_stops.append(Stop(found.karta.name, found.origin, JqLimitError(".", "the step budget"), 0.0))
    with pytest.raises(NotEvaluated) as alone:
        admitted_workload(found.karta, obj, policy=policy)
    with pytest.raises(NotEvaluated) as resolved:
        resolve_object(found.karta, obj, label=name, origin=found.origin, policy=policy)
    assert str(alone.value) == str(resolved.value)
    assert "was stopped earlier in this command" in str(alone.value)
