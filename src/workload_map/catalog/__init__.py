"""The built-in catalog of definitions (package data) and the registry that picks one for a workload.

`builtin_definitions()` returns the packaged definitions; `DefinitionRegistry` holds definitions from the
`local`, `cluster` and `catalog` origins and resolves a root GVK, an object, a kind or a name to one of them
(precedence local > cluster > catalog, version fallback within a group and kind).
"""

from workload_map.catalog.registry import (
    ORIGINS,
    DefinitionRegistry,
    Entry,
    Origin,
    Resolved,
    builtin_definitions,
    builtin_registry,
)

__all__ = ["ORIGINS", "DefinitionRegistry", "Entry", "Origin", "Resolved", "builtin_definitions", "builtin_registry"]
