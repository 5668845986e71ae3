"""Workload Map for Python: resolve any Kubernetes workload through a Karta definition into one uniform view.

The public API is small and imported lazily, so `import workload_map` (and `wmap --version`) costs nothing until a
name is used:

    from workload_map import load_definitions, validate, Workload, builtin_registry
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workload_map._version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # model
    "Karta": "workload_map.model",
    "GVK": "workload_map.model",
    "DefinitionError": "workload_map.model",
    "load_definitions": "workload_map.model",
    "loads_definitions": "workload_map.model",
    "scan_definitions": "workload_map.model",
    "dump_yaml": "workload_map.model",
    "dump_json": "workload_map.model",
    # validate
    "validate": "workload_map.validation",
    "Finding": "workload_map.validation",
    # resolve
    "Workload": "workload_map.resolve",
    "resolve": "workload_map.resolve",
    # catalog
    "builtin_definitions": "workload_map.catalog",
    "builtin_registry": "workload_map.catalog",
    "DefinitionRegistry": "workload_map.catalog",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

if TYPE_CHECKING:
    from workload_map.catalog import DefinitionRegistry, builtin_definitions, builtin_registry
    from workload_map.model import (
        GVK,
        DefinitionError,
        Karta,
        dump_json,
        dump_yaml,
        load_definitions,
        loads_definitions,
        scan_definitions,
    )
    from workload_map.resolve import Workload, resolve
    from workload_map.validation import Finding, validate


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workload_map' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
