"""Status extraction and matching (karta-spec §6).

The raw phase, the conditions, every matched status in upstream's evaluation order, and the primary phase that
the conformance recordings call `state`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from workload_map.resolve.results import Condition, WorkloadStatus

# (expression, field) -> outputs; raises ExtractionError
Outputs = Callable[[str, str], list[Any]]
# called with each error in lenient mode; strict mode raises instead
ErrorSink = Callable[[ExtractionError], None]

_PHASE_FIELD = "statusDefinition.phaseDefinition.path"
_CONDITIONS_FIELD = "statusDefinition.conditionsDefinition.path"


def primary_phase(phases: tuple[str, ...] | list[str]) -> str:
    """The strongest matched status: Failed > Completed > Suspended > Suspending > Resuming > Degraded > Running >
    Initializing; `"Undefined"` when none matched."""
    matched = set(phases)
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
    phases = _matched_statuses(
        component,
        mappings=definition.status_mappings,
        raw_phase=raw_phase,
        conditions=by_type,
        outputs=outputs,
        fail=fail,
    )
    return WorkloadStatus(phase=primary_phase(phases), phases=tuple(phases), raw_phase=raw_phase, conditions=conditions)


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
) -> list[str]:
    matched: list[str] = []
    for status, matchers in mappings.entries():
        for index, matcher in enumerate(matchers or ()):
            field = f"statusDefinition.statusMappings.{status.lower()}[{index}]"
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
                break  # OR across the matchers of one status
    return matched or [UNDEFINED]


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
