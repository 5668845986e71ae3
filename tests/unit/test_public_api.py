"""The public API of `workload_map`: every advertised name resolves, lazily, to what it says."""

from __future__ import annotations

import importlib
import subprocess
import sys

import workload_map


def test_every_public_name_resolves() -> None:
    for name in workload_map.__all__:
        assert getattr(workload_map, name) is not None, name


def test_validate_is_the_function_even_after_the_layers_are_imported() -> None:
    importlib.import_module("workload_map.resolve")  # loads the validation layer as a side effect
    from workload_map import validate

    assert callable(validate)
    assert validate.__module__.startswith("workload_map.validation")


def test_importing_the_package_loads_no_layer() -> None:
    code = "import sys, workload_map; print(sorted(m for m in sys.modules if m.startswith('workload_map.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['workload_map._version']"


def test_version_is_the_package_version() -> None:
    from importlib.metadata import version

    assert workload_map.__version__ == version("workload-map")
