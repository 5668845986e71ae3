"""`JSONPathError`, apart from the JSONPath engine: `get` names it around every `-o` it parses, and the engine
(`render.jsonpath`, `render.columns`: a dozen classes) is imported only when the format is a template."""

from __future__ import annotations

from workload_map.errors import WorkloadMapError


class JSONPathError(WorkloadMapError, ValueError):
    """A template that cannot be parsed."""


__all__ = ["JSONPathError"]
