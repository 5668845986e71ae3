"""What a status reason reads: the fields behind a matcher, and the expressions that read them.

The reason of a primary phase (`WorkloadStatus.reason`) names the status fields the matching mapping looked at.
For a `byExpression` matcher those are the fields its expression reads (found by the jq read analysis), read
again as plain paths; the object's `status.message` completes it. Both `status` (which builds the reason) and
`structure` (which puts these reads into the status group of the prefetch plan, so reading a status still
evaluates in one combined call) take them from here.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Final

from workload_map.jq import JqError, facts
from workload_map.model import StatusDefinition

__all__ = ["MESSAGE_EXPRESSION", "NO_STATUS_EXPRESSION", "field_reads", "reason_expressions"]

MESSAGE_EXPRESSION: Final = ".status.message"
NO_STATUS_EXPRESSION: Final = ".status == null"
MAX_FIELDS: Final = 4


@lru_cache(maxsize=1024)
def field_reads(expression: str) -> tuple[tuple[str, str], ...]:
    """(name, path expression) of the status, spec and metadata.generation fields `expression` reads, status
    first, at most MAX_FIELDS; () when the read analysis cannot tell. A status field is named by its key
    (`jobStatus`), a spec or metadata field by its path (`spec.replicas`); a field under one list is read as the
    list of its values (`replicatedJobsStatus[].ready`). Conditions are left out: a reason names them from the
    extracted conditions."""
    known = facts.roots(expression)  # the catalog's stored fact: no parse, no analysis (issue 19: start-up)
    patterns: AbstractSet[tuple[str | int | None, ...]] | None
    if known is not None:
        patterns = known[0]
    else:
        from workload_map.jq import parse
        from workload_map.jq.reads import reads

        try:
            patterns = reads(parse(expression))
        except JqError:
            return ()
    if not patterns:
        return ()
    fields = sorted(
        (
            tuple("[]" if step is None else str(step) for step in pattern)
            for pattern in patterns
            if len(pattern) >= 2
            and not any(isinstance(step, int) for step in pattern)
            and pattern.count(None) <= 1
            and pattern[-1] is not None
            and (pattern[0] in ("status", "spec") or pattern == ("metadata", "generation"))
            and "conditions" not in pattern
        ),
        key=lambda path: (path[0] != "status", path),
    )
    out = []
    for path in fields[:MAX_FIELDS]:
        shown = [step for step in (path[1:] if path[0] == "status" else path)]
        name = ".".join(shown).replace(".[]", "[]") if "[]" in path or path[0] != "status" else path[-1]
        steps = "".join("[]?" if step == "[]" else f"[{_quoted(step)}]" for step in path)
        out.append((name, f"[.{steps}]" if "[]" in path else f".{steps}"))
    return tuple(out)


def _quoted(key: str) -> str:
    """`json.dumps(key)`: a key of printable ASCII without a quote or backslash is itself between quotes (every key
    the catalog's reasons read is one), so a start-up need not import json for it (its six patterns are ~1 ms;
    issue 19); any other key is json's."""
    if key.isascii() and key.isprintable() and '"' not in key and "\\" not in key:
        return f'"{key}"'
    import json

    return json.dumps(key)


def reason_expressions(definition: StatusDefinition) -> tuple[str, ...]:
    """Every expression the reason of a status under `definition` may read."""
    found = [MESSAGE_EXPRESSION, NO_STATUS_EXPRESSION]
    for _, matchers in definition.status_mappings.entries():
        for matcher in matchers or ():
            if matcher.by_expression is not None:
                found.extend(path for _, path in field_reads(matcher.by_expression.expression))
    return tuple(dict.fromkeys(found))
