"""Workload Map for Python: resolve any Kubernetes workload through a Karta definition into one uniform view.

The public API is small and imported lazily, so `import workload_map` (and `wmap --version`) loads no layer until a
name is used:

    from workload_map import Workload, build_view, builtin_registry, load_definitions, validate
"""

from __future__ import annotations

import importlib

from workload_map._version import __version__

# not typing.TYPE_CHECKING: importing typing (and re with it) is most of what `wmap --version` would cost
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from workload_map.catalog import (
        DefinitionRegistry,
        builtin_definitions,
        builtin_registry,
    )
    from workload_map.errors import WorkloadMapError
    from workload_map.gang import (
        GangPlan,
        export,
        plan,
    )
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
    from workload_map.pods import attribute
    from workload_map.resolve import (
        Condition,
        GVKMismatchError,
        InvalidDefinitionError,
        Resolution,
        ResolveError,
        Scale,
        Workload,
        WorkloadStatus,
        resolve,
    )
    from workload_map.validation import (
        Finding,
        validate,
    )
    from workload_map.view import (
        WorkloadView,
        build_view,
    )

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "WorkloadMapError": "workload_map.errors",
    "Karta": "workload_map.model",
    "GVK": "workload_map.model",
    "DefinitionError": "workload_map.model",
    "load_definitions": "workload_map.model",
    "loads_definitions": "workload_map.model",
    "scan_definitions": "workload_map.model",
    "dump_yaml": "workload_map.model",
    "dump_json": "workload_map.model",
    "validate": "workload_map.validation",
    "Finding": "workload_map.validation",
    "Workload": "workload_map.resolve",
    "resolve": "workload_map.resolve",
    "Resolution": "workload_map.resolve",
    "WorkloadStatus": "workload_map.resolve",
    "Scale": "workload_map.resolve",
    "Condition": "workload_map.resolve",
    "ResolveError": "workload_map.resolve",
    "InvalidDefinitionError": "workload_map.resolve",
    "GVKMismatchError": "workload_map.resolve",
    "builtin_definitions": "workload_map.catalog",
    "builtin_registry": "workload_map.catalog",
    "DefinitionRegistry": "workload_map.catalog",
    "build_view": "workload_map.view",
    "WorkloadView": "workload_map.view",
    "attribute": "workload_map.pods",
    "plan": "workload_map.gang",
    "export": "workload_map.gang",
    "GangPlan": "workload_map.gang",
}

__all__ = [
    "GVK",
    "Condition",
    "DefinitionError",
    "DefinitionRegistry",
    "Finding",
    "GVKMismatchError",
    "GangPlan",
    "InvalidDefinitionError",
    "Karta",
    "Resolution",
    "ResolveError",
    "Scale",
    "Workload",
    "WorkloadMapError",
    "WorkloadStatus",
    "WorkloadView",
    "__version__",
    "attribute",
    "build_view",
    "builtin_definitions",
    "builtin_registry",
    "dump_json",
    "dump_yaml",
    "export",
    "load_definitions",
    "loads_definitions",
    "plan",
    "resolve",
    "scan_definitions",
    "validate",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workload_map' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
