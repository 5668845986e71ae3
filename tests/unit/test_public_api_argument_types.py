"""No builtin exception type escapes the public API on a wrong argument type (issue 16).

Every public callable of the library's packages (their `__all__`) is called with each required argument of a
wrong type (None, an int, a bare object, bytes, a list holding an object): it may return (None is a valid value
for some), or raise one of the library's own errors (`WorkloadMapError`; for a wrong type that is
`ArgumentTypeError`, also a `TypeError`), never a bare `TypeError`, `AttributeError`, `ValueError`, ...

Left out, with the reason: exception classes; type aliases and protocols (`Origin`, `Format`, `StopRecorder`,
...: not callables a program calls); the result types the library builds and hands out (`Resolution`,
`Component`), which a program never constructs.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from tests.fixtures.resolve import karta
from workload_map.catalog import DefinitionRegistry
from workload_map.errors import ArgumentTypeError, ArgumentValueError, WorkloadMapError
from workload_map.jq import Document, EvaluationPolicy, evaluate

MODULES = (
    "workload_map",
    "workload_map.jq",
    "workload_map.catalog",
    "workload_map.model",
    "workload_map.resolve",
    "workload_map.pods",
    "workload_map.view",
    "workload_map.validation",
    "workload_map.resources",
    "workload_map.gang",
)
BUILT_BY_THE_LIBRARY = frozenset({"Resolution", "Component", "ResolvedComponent"})
WRONG_VALUES: tuple[Any, ...] = (None, 5, object(), b"x", [object()])


def _public_callables() -> list[tuple[str, Callable[..., Any]]]:
    found: dict[int, tuple[str, Callable[..., Any]]] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if name in BUILT_BY_THE_LIBRARY or not callable(value) or id(value) in found:
                continue
            if inspect.isclass(value) and (issubclass(value, BaseException) or getattr(value, "_is_protocol", False)):
                continue
            if typing.get_origin(value) is not None or type(value).__module__ == "typing":
                continue  # Literal aliases, Union aliases
            found[id(value)] = (f"{module_name}.{name}", value)
    return sorted(found.values())


def _required(function: Callable[..., Any]) -> list[inspect.Parameter]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p for p in signature.parameters.values() if p.default is p.empty and p.kind in kinds]


CALLABLES = [(name, function) for name, function in _public_callables() if _required(function)]


def test_the_sweep_covers_the_public_api() -> None:
    names = {name for name, _ in CALLABLES}
    assert len(names) > 60
    for expected in ("workload_map.jq.evaluate", "workload_map.Workload", "workload_map.load_definitions"):
        assert expected in names


@pytest.mark.parametrize("value", WRONG_VALUES, ids=["None", "int", "object", "bytes", "list-of-object"])
@pytest.mark.parametrize(("name", "function"), CALLABLES, ids=[name for name, _ in CALLABLES])
def test_a_wrong_argument_type_never_raises_a_builtin_exception(
    name: str, function: Callable[..., Any], value: Any
) -> None:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in _required(function):
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    try:
        function(*args, **kwargs)
    except WorkloadMapError:
        pass
    except Exception as error:  # what the test is about: anything but the library's own
        pytest.fail(f"{name}({value!r}) raised {type(error).__name__}: {error}")


@pytest.mark.parametrize(
    "call",
    [
        lambda: DefinitionRegistry().add(5, [karta("pyflow")]),  # type: ignore[arg-type]
        lambda: DefinitionRegistry().add(["local"], [karta("pyflow")]),  # type: ignore[arg-type]
        lambda: DefinitionRegistry().add("local", 5),  # type: ignore[arg-type]
        lambda: DefinitionRegistry().add("local", karta("pyflow")),  # type: ignore[arg-type]
        lambda: DefinitionRegistry().add("local", [None]),  # type: ignore[list-item]
        lambda: DefinitionRegistry([("local", None)]),  # type: ignore[list-item]
        lambda: evaluate(".a", {}, policy=5),  # type: ignore[arg-type]
        lambda: evaluate(["."], {}),  # type: ignore[arg-type]
        lambda: Document({}).evaluate_many([".a", 5]),  # type: ignore[list-item]
        lambda: EvaluationPolicy(5),  # type: ignore[arg-type]
        lambda: EvaluationPolicy(deadline="10"),  # type: ignore[arg-type]
        lambda: EvaluationPolicy(memory_mb=1.5),  # type: ignore[arg-type]
        lambda: EvaluationPolicy(stops=5),  # type: ignore[arg-type]
    ],
    ids=[
        "add(origin=5)",
        "add(origin=list)",
        "add(kartas=5)",
        "add(kartas=one Karta)",
        "add(kartas=[None])",
        "DefinitionRegistry([(local, None)])",
        "evaluate(policy=5)",
        "evaluate(expr=list)",
        "evaluate_many([.., 5])",
        "EvaluationPolicy(mode=5)",
        "EvaluationPolicy(deadline=str)",
        "EvaluationPolicy(memory_mb=float)",
        "EvaluationPolicy(stops=5)",
    ],
)
def test_the_issues_named_calls_raise_argument_type_error(call: Callable[[], Any]) -> None:
    with pytest.raises(ArgumentTypeError) as info:
        call()
    assert isinstance(info.value, TypeError) and " must be " in str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: DefinitionRegistry().add("remote", [karta("pyflow")]),  # type: ignore[arg-type]
        lambda: EvaluationPolicy("auto"),  # type: ignore[arg-type]
        lambda: EvaluationPolicy(deadline=0),
        lambda: EvaluationPolicy(memory_mb=-1),
    ],
    ids=["add(origin=remote)", "EvaluationPolicy(auto)", "EvaluationPolicy(deadline=0)", "memory_mb=-1"],
)
def test_a_wrong_argument_value_is_an_argument_value_error(call: Callable[[], Any]) -> None:
    with pytest.raises(ArgumentValueError) as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, WorkloadMapError)
