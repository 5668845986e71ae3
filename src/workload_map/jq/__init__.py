"""The jq layer: parse, check and evaluate the jq expressions of Karta definitions with upstream's semantics.

    from workload_map.jq import evaluate, Document, assign_each

    evaluate(".spec.replicatedJobs[].name", jobset)          # ["driver", "workers"]
    doc = Document(jobset)                                   # one object, many expressions
    doc.evaluate_many([".metadata.name", ".status.conditions"])
    new = assign_each(".spec.replicatedJobs[].replicas", jobset, [1, 4])   # jobset itself unchanged

Evaluation, write-back and containment are described in docs/jq.md; differences from upstream in
docs/compatibility.md.
"""

from __future__ import annotations

from workload_map.jq.document import Document, assign, assign_each, evaluate, paths
from workload_map.jq.engine import MAX_RESULTS
from workload_map.jq.errors import (
    JqCompileError,
    JqError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
    UnsafeExpressionError,
)
from workload_map.jq.parser import parse
from workload_map.jq.safety import check_safety, require_safe
from workload_map.jq.worker import EvaluationMode, EvaluationScope, get_mode, mode_scope, set_mode

__all__ = [
    "MAX_RESULTS",
    "Document",
    "EvaluationMode",
    "EvaluationScope",
    "JqCompileError",
    "JqError",
    "JqLimitError",
    "JqParseError",
    "JqRuntimeError",
    "UnsafeExpressionError",
    "assign",
    "assign_each",
    "check_safety",
    "evaluate",
    "get_mode",
    "mode_scope",
    "parse",
    "paths",
    "require_safe",
    "set_mode",
]
