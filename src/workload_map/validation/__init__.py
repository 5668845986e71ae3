"""Validation of Karta definitions: every rule, all findings at once, each at its YAML field path.

    from workload_map.validation import validate, is_valid
    findings = validate(karta)          # list[Finding]; str(f) == "error: <path>: <message>"
    report = check_files(["defs/"])     # what `wmap validate` prints and its exit code

Imports only the model and jq layers.
"""

from workload_map.validation.findings import ERROR, WARNING, Finding, Severity, errors, is_valid, warnings
from workload_map.validation.jqcheck import MAX_EXPRESSION_LENGTH, expression_problems
from workload_map.validation.report import (
    DefinitionReport,
    FileReport,
    ValidationReport,
    check_files,
    validate_documents,
)
from workload_map.validation.rules import RULES, validate

__all__ = [
    "ERROR",
    "MAX_EXPRESSION_LENGTH",
    "RULES",
    "WARNING",
    "DefinitionReport",
    "FileReport",
    "Finding",
    "Severity",
    "ValidationReport",
    "check_files",
    "errors",
    "expression_problems",
    "is_valid",
    "validate",
    "validate_documents",
    "warnings",
]
