"""A validation finding: severity, YAML field path, message and a stable rule id."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from workload_map.errors import ArgumentTypeError

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


@dataclass(frozen=True)
class Finding:
    """One thing wrong (error) or suspicious (warning) in a definition.

    `path` is the YAML field path inside the definition (`spec.structureDefinition.childComponents[1].ownerRef`),
    empty when the finding is about the whole definition; `rule` is a short stable id (see docs/definitions.md).
    """

    severity: Severity
    path: str
    message: str
    rule: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}" if self.path else f"{self.severity}: {self.message}"

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR


def _findings(findings: Any) -> list[Finding]:
    if isinstance(findings, (str, bytes, Finding)) or not isinstance(findings, Iterable):
        raise ArgumentTypeError("the findings", "an iterable of Finding (what validate() returns)", findings)
    items = list(findings)
    for item in items:
        if not isinstance(item, Finding):
            raise ArgumentTypeError("each finding", "a Finding", item)
    return items


def is_valid(findings: Iterable[Finding]) -> bool:
    """True when no finding is an error (warnings do not make a definition invalid)."""
    return not any(f.severity == ERROR for f in _findings(findings))


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in _findings(findings) if f.severity == ERROR]


def warnings(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in _findings(findings) if f.severity == WARNING]
