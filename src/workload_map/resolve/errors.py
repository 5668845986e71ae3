"""Errors of the resolve layer. Each message is one line naming the component, the definition field and the fix.

ResolveError
├── InvalidDefinitionError     the definition has validation errors (nothing was extracted)
├── InvalidObjectError         the object is not a Kubernetes object (not a mapping, no apiVersion/kind/name)
│   └── GVKMismatchError       the object is of another group or kind than the definition's root
├── ComponentNotFound          (also a KeyError) no component of that name in the definition
├── ExtractionError            a path failed or its output has the wrong type / count
├── UpdateError                a write-back could not be done
│   └── DefinitionNotFound     the component has no definition for what was asked (no podSpecPath, ...)
│       └── SuspendNotSupported   no suspendDefinition
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workload_map.errors import WorkloadMapError


class ResolveError(WorkloadMapError):
    """Base of every error raised while resolving a workload through its definition."""


class InvalidDefinitionError(ResolveError):
    """The definition did not pass validation; `findings` holds the error findings (warnings never block)."""

    def __init__(self, definition: str, findings: Sequence[Any]) -> None:
        self.definition = definition
        self.findings = list(findings)
        listed = "; ".join(str(finding) for finding in self.findings)
        count = len(self.findings)
        noun = "error" if count == 1 else "errors"
        super().__init__(f"definition {definition!r} is invalid ({count} {noun}): {listed}")


class InvalidObjectError(ResolveError):
    """The object cannot be resolved or written back: not a mapping, or no apiVersion, kind or name."""


class GVKMismatchError(InvalidObjectError):
    """The object's group or kind differs from the definition's root kind (versions may differ)."""

    def __init__(self, message: str, *, expected: str, actual: str) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(message)


class ComponentNotFound(ResolveError, KeyError):  # noqa: N818 (the name the API promises)
    """No component of that name in the definition."""

    def __init__(self, name: str, definition: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = list(known)
        super().__init__(
            f"component {name!r} not found in definition {definition!r}; its components are: {', '.join(known)}"
        )

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class ExtractionError(ResolveError):
    """A component field could not be extracted: a jq error, a wrong type, or an output count mismatch."""

    def __init__(self, component: str, field: str, message: str) -> None:
        self.component = component
        self.field = field
        self.message = message
        super().__init__(f"component {component!r}, {field}: {message}")


class UpdateError(ResolveError):
    """A write-back failed: a missing instance value, a path that is not writable, a count mismatch."""

    def __init__(self, component: str, field: str, message: str) -> None:
        self.component = component
        self.field = field
        self.message = message
        super().__init__(f"component {component!r}, {field}: {message}")


class DefinitionNotFound(UpdateError):  # noqa: N818 (upstream's name)
    """The component has no definition for the requested update (e.g. no podSpecPath)."""


class SuspendNotSupported(DefinitionNotFound):
    """The workload type has no suspendDefinition, so it cannot be suspended or resumed through its definition."""
