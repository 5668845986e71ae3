"""Status extraction and matching (karta-spec §6).

The raw phase, the conditions, every matched status in upstream's evaluation order, and the primary phase that
the conformance recordings call `state`. `extract_status` is the generic reading, through an outputs callback,
which records each failure; `status_plan.planned_status` is the same reading in one pass (issue 19), used
wherever no read fails (then `extract_status` runs and gives the errors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from workload_map._regex import LazyPattern
from workload_map.errors import ArgumentTypeError
from workload_map.model import (
    PRIMARY_PHASE_PRECEDENCE,
    UNDEFINED,
    ConditionsDefinition,
    StatusDefinition,
    StatusMappings,
    StatusMatcher,
)
from workload_map.resolve._json import jq_tostring
from workload_map.resolve.decode import DecodeError, decode_string
from workload_map.resolve.errors import ExtractionError
from workload_map.resolve.reasons import MESSAGE_EXPRESSION, NO_STATUS_EXPRESSION, field_reads
from workload_map.resolve.results import Condition, WorkloadStatus

# (expression, field) -> outputs; raises ExtractionError
Outputs = Callable[[str, str], list[Any]]
# called with each error in lenient mode; strict mode raises instead
ErrorSink = Callable[[ExtractionError], None]

_PHASE_FIELD = "statusDefinition.phaseDefinition.path"
_CONDITIONS_FIELD = "statusDefinition.conditionsDefinition.path"
_MAPPINGS_FIELD = "statusDefinition.statusMappings"
_LAST_NAME = LazyPattern(r"\.\s*\"?([A-Za-z_][A-Za-z0-9_-]*)\"?\s*\]?\s*$")


def primary_phase(phases: tuple[str, ...] | list[str]) -> str:
    """The strongest matched status: Failed > Completed > Suspended > Suspending > Resuming > Degraded > Running >
    Initializing; `"Undefined"` when none matched."""
    given: Any = phases  # annotated as a tuple or list; checked, since it comes from callers
    if isinstance(given, (str, bytes)) or not isinstance(given, (tuple, list, set, frozenset)):
        raise ArgumentTypeError("the phases", "a tuple or list of phase names", given)
    matched = {phase for phase in phases if isinstance(phase, str)}
    for phase in PRIMARY_PHASE_PRECEDENCE:
        if phase in matched:
            return phase
    return UNDEFINED


def extract_status(
    component: str, definition: StatusDefinition, outputs: Outputs, on_error: ErrorSink | None = None
) -> WorkloadStatus:
    """The status of the object under `definition`.

    Strict (no `on_error`): the first failure raises `ExtractionError`. Lenient: each failure is passed to
    `on_error` and counts as "nothing extracted" (no phase, no conditions, a matcher that does not match), so the
    rest of the status still comes out.
    """

    def fail(error: ExtractionError) -> None:
        if on_error is None:
            raise error
        on_error(error)

    raw_phase: str | None = None
    if definition.phase_definition is not None:
        try:
            raw_phase = _extract_phase(component, definition.phase_definition.path, outputs)
        except ExtractionError as error:
            fail(error)

    conditions: tuple[Condition, ...] = ()
    if definition.conditions_definition is not None:
        try:
            conditions = _extract_conditions(component, definition.conditions_definition, outputs)
        except ExtractionError as error:
            fail(error)

    by_type = {condition.type: condition for condition in conditions}  # the last duplicate type wins
    hits: dict[str, tuple[int, StatusMatcher]] = {}
    phases = _matched_statuses(
        component,
        mappings=definition.status_mappings,
        raw_phase=raw_phase,
        conditions=by_type,
        outputs=outputs,
        fail=fail,
        hits=hits,
    )
    phase = primary_phase(phases)
    reason = source = None
    if phase in hits:
        index, matcher = hits[phase]
        source = f"{_MAPPINGS_FIELD}.{phase.lower()}[{index}]"
        reason = _reason(
            matcher=matcher,
            definition=definition,
            raw_phase=raw_phase,
            conditions=by_type,
            outputs=outputs,
            source=source,
        )
    return WorkloadStatus(
        phase=phase,
        phases=tuple(phases),
        raw_phase=raw_phase,
        conditions=conditions,
        reason=reason,
        reason_source=source,
    )


def _extract_phase(component: str, path: str, outputs: Outputs) -> str:
    values = outputs(path, _PHASE_FIELD)
    if not values:
        return ""
    try:
        return decode_string(0, values[0])
    except DecodeError as exc:
        raise ExtractionError(component, _PHASE_FIELD, f"failed to extract phase: {exc}") from None


def _extract_conditions(component: str, definition: ConditionsDefinition, outputs: Outputs) -> tuple[Condition, ...]:
    values = outputs(definition.path, _CONDITIONS_FIELD)
    conditions: list[Condition] = []
    for index, value in enumerate(values):
        if value is None:
            continue
        if not isinstance(value, list):
            raise ExtractionError(
                component,
                _CONDITIONS_FIELD,
                f"failed to extract conditions: output {index} is not an array of condition objects "
                f"(got {type(value).__name__})",
            )
        for position, item in enumerate(value):
            if not isinstance(item, dict):
                raise ExtractionError(
                    component,
                    _CONDITIONS_FIELD,
                    f"failed to extract conditions: item {position} of output {index} is not an object",
                )
            conditions.append(_condition(item, definition))
    return tuple(conditions)


def _condition(item: dict[str, Any], definition: ConditionsDefinition) -> Condition:
    def text(key: str | None) -> str | None:
        if not key:
            return None
        value = item.get(key)
        return value if isinstance(value, str) else None

    return Condition(
        type=text(definition.type_field_name) or "",
        status=text(definition.status_field_name) or "",
        reason=text(definition.reason_field_name),
        message=text(definition.message_field_name) or "",
    )


def _matched_statuses(
    component: str,
    *,
    mappings: StatusMappings,
    raw_phase: str | None,
    conditions: dict[str, Condition],
    outputs: Outputs,
    fail: Callable[[ExtractionError], None],
    hits: dict[str, tuple[int, StatusMatcher]] | None = None,
) -> list[str]:
    matched: list[str] = []
    for status, matchers in matcher_plan(mappings):
        for index, matcher, field in matchers:
            try:
                hit = _matches(
                    component,
                    field=field,
                    matcher=matcher,
                    raw_phase=raw_phase,
                    conditions=conditions,
                    outputs=outputs,
                )
            except ExtractionError as error:
                fail(error)
                hit = False
            if hit:
                matched.append(status)
                if hits is not None:
                    hits[status] = (index, matcher)
                break  # OR across the matchers of one status
    return matched or [UNDEFINED]


_Plan = tuple[tuple[str, tuple[tuple[int, StatusMatcher, str], ...]], ...]
_PLANS: dict[int, tuple[StatusMappings, _Plan]] = {}
PLANS_MAX = 1024
_Key = TypeVar("_Key")
_Made = TypeVar("_Made")


def per_object(cache: dict[int, tuple[_Key, _Made]], key: _Key, make: Callable[[_Key], _Made]) -> _Made:
    """`make(key)` once per `key` object (a frozen definition part): keyed by identity, the entry holding the object
    so its id is not reused; the cache is emptied when it holds PLANS_MAX entries."""
    found = cache.get(id(key))
    if found is not None and found[0] is key:
        return found[1]
    made = make(key)
    if len(cache) >= PLANS_MAX:
        cache.clear()
    cache[id(key)] = (key, made)
    return made


def matcher_plan(mappings: StatusMappings) -> _Plan:
    """Each status with its matchers and their field paths, in evaluation order: once per mappings object, not per
    workload."""
    return per_object(_PLANS, mappings, _build_plan)


def _build_plan(mappings: StatusMappings) -> _Plan:
    return tuple(
        (
            status,
            tuple(
                (index, matcher, f"statusDefinition.statusMappings.{status.lower()}[{index}]")
                for index, matcher in enumerate(matchers or ())
            ),
        )
        for status, matchers in mappings.entries()
    )


def _matches(
    component: str,
    *,
    field: str,
    matcher: StatusMatcher,
    raw_phase: str | None,
    conditions: dict[str, Condition],
    outputs: Outputs,
) -> bool:
    """AND of the criteria set, in the order byPhase, byConditions, byExpression; the first failure decides."""
    if matcher.by_phase and raw_phase != matcher.by_phase:
        return False
    for expected in matcher.by_conditions or ():
        actual = conditions.get(expected.type)
        if actual is None:
            return False
        if expected.status and actual.status != expected.status:
            return False
        if expected.reason and (actual.reason or "") != expected.reason:
            return False
    if matcher.by_expression is not None:
        expression_field = f"{field}.byExpression.expression"
        try:
            values = outputs(matcher.by_expression.expression, expression_field)
        except ExtractionError as error:
            raise ExtractionError(
                component,
                expression_field,
                f"failed to match status: failed to evaluate matcher: failed to evaluate ByExpression: {error.message}",
            ) from None
        if not values:
            return False
        return jq_tostring(values[0]) == matcher.by_expression.expected_result
    return True


# --- why the primary phase ------------------------------------------------------------------------------------


def _reason(
    *,
    matcher: StatusMatcher,
    definition: StatusDefinition,
    raw_phase: str | None,
    conditions: dict[str, Condition],
    outputs: Outputs,
    source: str,
) -> str | None:
    """The status fields behind the matcher that gave the primary phase, in words; then a message from the status.

    Never fails: a field that cannot be read is left out (the matcher itself was already evaluated).
    """
    facts: list[str] = []
    message = ""
    if matcher.by_phase and definition.phase_definition is not None:
        facts.append(f"{field_name(definition.phase_definition.path)} {raw_phase}")
    for expected in matcher.by_conditions or ():
        actual = conditions.get(expected.type)
        if actual is not None:
            facts.append(condition_text(actual))
            message = message or actual.message
    if matcher.by_expression is not None:
        expression = matcher.by_expression.expression
        named = [condition for condition in conditions.values() if f'"{condition.type}"' in expression]
        if not named and "conditions" in expression:
            # the expression asks about conditions it does not name (none of these is true): the true ones
            named = [condition for condition in conditions.values() if condition.status == "True"][:3]
        for condition in named:
            facts.append(condition_text(condition))
            message = message or (condition.message if condition.status == "True" else "")
        facts.extend(_expression_facts(expression, outputs, source))
    if not message:
        message = _status_message(outputs, source)
    if not facts and not message and _read(outputs, NO_STATUS_EXPRESSION, source) is True:
        return "no status yet"
    facts = list(dict.fromkeys(facts))
    text = "; ".join(facts)
    if message:
        text = f"{text}: {message}" if text else message
    return text or None


def condition_text(condition: Condition) -> str:
    text = f"{condition.type}={condition.status}"
    return f"{text} ({condition.reason})" if condition.reason else text


def field_name(path: str) -> str:
    """The last field name of a jq path (`.status.jobDeploymentStatus` -> `jobDeploymentStatus`)."""
    found = _LAST_NAME.search(path)
    return found.group(1) if found else path.strip()


def _expression_facts(expression: str, outputs: Outputs, source: str) -> list[str]:
    facts: list[str] = []
    for name, path in field_reads(expression):
        fact = read_fact(name, _read(outputs, path, source))
        if fact:
            facts.append(fact)
    return facts


def read_fact(name: str, value: Any) -> str | None:
    """The reason's fact for a field read (`replicas [1,2]`, `suspended true`, `phase Running`): a non-empty list
    of scalars, a boolean, a number or a non-empty string; None for anything else (a reason never fails)."""
    if isinstance(value, list):
        if not value:
            return None
        for item in value:  # the usual list, of safe ints (`replicas [1,2]`): written by the encoder in C
            if type(item) is not int or not -_SAFE_INT <= item <= _SAFE_INT:
                if type(item) is dict or type(item) is list:
                    return None  # a list holding containers (`replicatedJobsStatus`) is no fact
                break
        else:
            return f"{name} {_ENCODE(value).decode()}"  # a safe int as `str` writes it, as `list_text` does
        if all(isinstance(item, (str, int, float, bool)) for item in value):
            return f"{name} {list_text(value)}"
        return None
    if isinstance(value, bool):
        return f"{name} {'true' if value else 'false'}"
    if isinstance(value, (str, int, float)) and value != "":
        return f"{name} {jq_tostring(value)}"
    return None


def list_text(items: list[Any]) -> str:
    """`jq_tostring` of a list of scalars: written out for safe ints (`[1,2,3,4]`, a replica list), which
    `jq_json` prints as `str` does; anything else through `jq_tostring`."""
    for item in items:
        if type(item) is not int or not -_SAFE_INT <= item <= _SAFE_INT:
            return jq_tostring(items)
    return "[" + ",".join(map(str, items)) + "]"


_SAFE_INT = 2**53
_ENCODE = msgspec.json.encode


def _status_message(outputs: Outputs, source: str) -> str:
    value = _read(outputs, MESSAGE_EXPRESSION, source)
    return value if isinstance(value, str) else ""


def _read(outputs: Outputs, expression: str, source: str) -> Any:
    try:
        values = outputs(expression, f"{source}.reason")
    except ExtractionError:
        return None
    return values[0] if values else None
