"""The jq layer: parse, check and evaluate the jq expressions of Karta definitions with upstream's semantics.

    from workload_map.jq import evaluate, Document, assign_each

    evaluate(".spec.replicatedJobs[].name", jobset)          # ["driver", "workers"]
    doc = Document(jobset)                                   # one object, many expressions
    doc.evaluate_many([".metadata.name", ".status.conditions"])
    new = assign_each(".spec.replicatedJobs[].replicas", jobset, [1, 4])   # jobset itself unchanged

Where libjq runs is an explicit `EvaluationPolicy` (`Document(obj, policy=EvaluationPolicy("worker"))`; default: in
process); this layer never reads the environment. Evaluation, write-back and containment are described in
docs/jq.md; differences from upstream in docs/compatibility.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.jq.document import Document, assign, assign_each, evaluate, paths
from workload_map.jq.errors import (
    JqCompileError,
    JqError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
    UnsafeExpressionError,
)
from workload_map.jq.policy import INPROCESS, EvaluationPolicy, StopRecorder
from workload_map.jq.runtime import MAX_RESULTS

if TYPE_CHECKING:
    from workload_map.jq.parser import parse
    from workload_map.jq.safety import check_safety, require_safe

__all__ = [
    "INPROCESS",
    "MAX_RESULTS",
    "Document",
    "EvaluationPolicy",
    "JqCompileError",
    "JqError",
    "JqLimitError",
    "JqParseError",
    "JqRuntimeError",
    "StopRecorder",
    "UnsafeExpressionError",
    "assign",
    "assign_each",
    "check_safety",
    "evaluate",
    "parse",
    "paths",
    "require_safe",
]


def __getattr__(name: str) -> Any:
    # the parser (with the syntax tree's classes) comes with the first expression parsed: a describe of a catalog
    # workload parses none (issue 19: start-up)
    if name == "parse":
        from workload_map.jq.parser import parse

        return parse
    # the static safety check is the validator's (and callers'): evaluating never needs it (issue 19: start-up)
    if name in ("check_safety", "require_safe"):
        from workload_map.jq import safety

        return getattr(safety, name)
    raise AttributeError(f"module 'workload_map.jq' has no attribute {name!r}")
