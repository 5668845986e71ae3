"""One error root: every exception class of the library subclasses `WorkloadMapError`, and the twins are one.

The walk imports every module under `workload_map` (pkgutil), so a new exception class that forgets the root
fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import workload_map
from workload_map.errors import WorkloadMapError

_SRC = Path(workload_map.__file__).parent


def _modules() -> list[ModuleType]:
    names = [info.name for info in pkgutil.walk_packages(workload_map.__path__, "workload_map.")]
    return [workload_map, *(importlib.import_module(name) for name in names)]


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for module in _modules():
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                found.append(value)
    return found


EXCEPTIONS = _exception_classes()


def test_the_walk_sees_every_layer() -> None:
    modules = {cls.__module__.split(".")[1] for cls in EXCEPTIONS}
    assert {"model", "jq", "resolve", "resources", "pods", "gang", "cluster", "cli"} <= modules
    assert len(EXCEPTIONS) >= 40
    assert WorkloadMapError in EXCEPTIONS


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_exception_class_subclasses_the_root(cls: type[BaseException]) -> None:
    assert issubclass(cls, WorkloadMapError), f"{cls.__module__}.{cls.__qualname__} does not subclass WorkloadMapError"


def test_the_root_is_public_and_imports_no_layer() -> None:
    assert workload_map.WorkloadMapError is WorkloadMapError
    assert "WorkloadMapError" in workload_map.__all__
    code = "import sys, workload_map.errors; print(sorted(m for m in sys.modules if m.startswith('workload_map.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['workload_map._version', 'workload_map.errors']"


@pytest.mark.parametrize(
    ("module", "name", "builtin"),
    [
        ("workload_map.model", "DefinitionError", ValueError),
        ("workload_map.model", "DocumentError", ValueError),
        ("workload_map.jq.writeback", "PathError", ValueError),
        ("workload_map.resources", "QuantityError", ValueError),
        ("workload_map.resources", "ResourceSpecError", ValueError),
        ("workload_map.resolve", "ComponentNotFound", KeyError),
        ("workload_map.resolve.decode", "DecodeError", ValueError),
        ("workload_map.resolve._json", "NotJSONError", ValueError),
        ("workload_map.pods", "SelectorError", ValueError),
        ("workload_map.gang", "GangError", ValueError),
    ],
)
def test_the_builtin_mixins_are_kept(module: str, name: str, builtin: type[BaseException]) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, WorkloadMapError)
    assert issubclass(cls, builtin)


def test_component_not_found_is_a_key_error_whose_message_is_not_quoted() -> None:
    from workload_map.resolve import ComponentNotFound

    error = ComponentNotFound("worker", "my-def", ["launcher"])
    with pytest.raises(KeyError):
        raise error
    assert str(error) == "component 'worker' not found in definition 'my-def'; its components are: launcher"


def test_no_two_exception_classes_share_a_name() -> None:
    names = [cls.__qualname__ for cls in EXCEPTIONS]
    assert sorted({name for name in names if names.count(name) > 1}) == []


# --- the twins, one each -------------------------------------------------------------------------------------------


def test_workload_not_found_is_one_class_and_still_exit_3() -> None:
    from workload_map.cli import errors as cli_errors
    from workload_map.cli.live import cli_error
    from workload_map.cluster import ClusterError, WorkloadNotFound
    from workload_map.cluster import errors as cluster_errors

    assert WorkloadNotFound is cluster_errors.WorkloadNotFound
    assert issubclass(WorkloadNotFound, ClusterError)
    assert not hasattr(cli_errors, "WorkloadNotFound")
    assert [cls for cls in EXCEPTIONS if cls.__name__ == "WorkloadNotFound"] == [WorkloadNotFound]

    converted = cli_error(WorkloadNotFound('Job "x" not found in namespace "default"', hint="check the name"))
    assert isinstance(converted, cli_errors.CLIError)
    assert converted.exit_code == cli_errors.EXIT_WORKLOAD_NOT_FOUND == 3
    assert converted.message == 'Job "x" not found in namespace "default"'
    assert converted.hint == "check the name"


def _module_level_assignments(name: str) -> list[str]:
    """The source files that assign `name` at module level (a definition, not an import)."""
    found = []
    for path in sorted(_SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(target, ast.Name) and target.id == name for target in targets):
                found.append(path.relative_to(_SRC).as_posix())
    return found


def test_role_is_defined_once() -> None:
    users = [importlib.import_module(f"workload_map.gang.{name}") for name in ("builder", "alpha", "tree")]
    scale = importlib.import_module("workload_map.gang.scale")

    assert _module_level_assignments("Role") == ["gang/scale.py"]
    assert all(module.Role is scale.Role for module in users)


def test_undefined_is_defined_once() -> None:
    from workload_map.model import UNDEFINED
    from workload_map.view import build

    assert _module_level_assignments("UNDEFINED") == ["model/types.py"]
    assert vars(build)["UNDEFINED"] is UNDEFINED == "Undefined"  # imported from the model, not defined again


# --- the JSON type-name helper, one for every layer ----------------------------------------------------------------

_JSON_TYPE_NAMES = {"null", "boolean", "number", "string", "array", "object"}


def _functions_returning_json_type_names() -> list[str]:
    """`file:function` of every function that returns a JSON type name (with or without an article) literally."""
    found = []
    for path in sorted(_SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            returned = {
                ret.value.value.split(" ")[-1]
                for ret in ast.walk(node)
                if isinstance(ret, ast.Return)
                and isinstance(ret.value, ast.Constant)
                and isinstance(ret.value.value, str)
            }
            if len(returned & _JSON_TYPE_NAMES) >= 3:
                found.append(f"{path.relative_to(_SRC).as_posix()}:{node.name}")
    return found


def test_the_json_type_helper_is_written_once() -> None:
    assert _functions_returning_json_type_names() == ["_jsontype.py:json_type"]


@pytest.mark.parametrize(
    ("value", "name", "phrase"),
    [
        (None, "null", "null"),
        (True, "boolean", "a boolean"),
        (False, "boolean", "a boolean"),
        (0, "number", "a number"),
        (1.5, "number", "a number"),
        ("x", "string", "a string"),
        ([1], "array", "an array"),
        ({"a": 1}, "object", "an object"),
    ],
)
def test_json_type_names(value: object, name: str, phrase: str) -> None:
    from workload_map._jsontype import json_type, json_type_phrase

    assert json_type(value) == name
    assert json_type_phrase(value) == phrase


def test_the_helper_names_the_types_in_each_layers_messages() -> None:
    from workload_map.jq import JqParseError, JqRuntimeError, parse
    from workload_map.jq.fastpath import compile_fast
    from workload_map.jq.writeback import PathError, set_paths
    from workload_map.resolve.decode import DecodeError, decode_string

    with pytest.raises(JqParseError, match=r"cannot use boolean \(true\) as object key"):
        parse("{(true): 1}")
    fast = compile_fast(".a.b")
    assert fast is not None
    with pytest.raises(JqRuntimeError, match=r"Cannot index number with"):
        fast({"a": 1})
    with pytest.raises(PathError, match=r"Cannot index string with"):
        set_paths({"a": "x"}, [["a", "b"]], [1], copy=True)
    with pytest.raises(DecodeError, match=r"got an array \(\[1\]\)"):
        decode_string(0, [1])
