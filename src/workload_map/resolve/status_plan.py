"""The status read as one plan (issue 19, "status, third round").

`StatusPlan` (once per status definition) is `status.extract_status`'s reading worked out once: every expression
the status and its reason read, by position, each matcher's criteria, the reason's reads. `planned_status` reads
a status through it, on the object in place by the generated functions of `jq/codegen.py` (only what the plan
consults, with the matching itself generated as straight-line Python), else over the group's results; wherever a
read fails it gives None and the caller runs `extract_status`, which gives the errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.errors import WorkloadMapError
from workload_map.jq import Document
from workload_map.jq.finish import BAIL, finish_read
from workload_map.jq.generated import generated_functions
from workload_map.model import PRIMARY_PHASE_PRECEDENCE, UNDEFINED, StatusDefinition, StatusMatcher
from workload_map.resolve._json import jq_tostring
from workload_map.resolve.reasons import MESSAGE_EXPRESSION, NO_STATUS_EXPRESSION, field_reads
from workload_map.resolve.results import Condition, WorkloadStatus
from workload_map.resolve.status import condition_text, field_name, matcher_plan, per_object, read_fact

if TYPE_CHECKING:  # annotations only: a Protocol class and the alias cost ~0.3 M and ~0.15 M instructions at import
    from typing import Protocol

    class Results(Protocol):
        """Each expression's outputs (a list) or its `JqError`, by the expression's position in a plan."""

        def __getitem__(self, index: int, /) -> Any: ...

    Functions = tuple[Callable[..., Any] | None, ...]


class _PlannedMatcher(msgspec.Struct, frozen=True):
    """One matcher with what reading it needs worked out once: its criteria, the position of its expression's
    outputs among the plan's results (-1 without `byExpression`), and the reason's reads.

    A frozen msgspec Struct, read by field name only: making a NamedTuple class costs ~0.5 M instructions at
    import, on every describe's path (issue 19)."""

    by_phase: str | None
    conditions: tuple[tuple[str, str | None, str | None], ...]
    expression: int
    expected: str
    text: str  # the expression's text ("" without one): a reason names the conditions it names
    asks_conditions: bool
    reads: tuple[tuple[str, int], ...]  # (field name, position) of the reason's field reads
    source: str  # statusDefinition.statusMappings.<status>[<index>]
    matcher: StatusMatcher


class StatusPlan:
    """A status definition's read, worked out once per definition: every expression the status and its reason
    read (`expressions`, in one list), and `read(results)`, which gives the `WorkloadStatus` from their results
    with none of the generic path's per-read calls.

    `read` is `extract_status` over the same outputs: the same phase, conditions, matched statuses, primary
    phase and reason. It answers only where the generic path records no error: whenever an output it consults
    is a jq error or does not fit its field (a phase that is not a string, conditions that are not an array of
    objects) it gives None, and the caller runs `extract_status`, which gives the errors (and the rest of the
    status) exactly as before (`tests/unit/test_status_alone.py`)."""

    __slots__ = (
        "_match",
        "conditions",
        "expressions",
        "fields",
        "message",
        "no_status",
        "phase",
        "phase_name",
        "reads_only",
        "statuses",
    )

    def __init__(self, definition: StatusDefinition) -> None:
        positions: dict[str, int] = {}

        def at(expression: str) -> int:
            return positions.setdefault(expression, len(positions))

        phase = definition.phase_definition
        self.phase = at(phase.path) if phase is not None else -1
        self.phase_name = field_name(phase.path) if phase is not None else ""
        conditions = definition.conditions_definition
        self.conditions = at(conditions.path) if conditions is not None else -1
        self.fields: tuple[str | None, str | None, str | None, str | None] = (
            (
                conditions.type_field_name or None,
                conditions.status_field_name or None,
                conditions.reason_field_name or None,
                conditions.message_field_name or None,
            )
            if conditions is not None
            else (None, None, None, None)
        )
        statuses: list[tuple[str, tuple[_PlannedMatcher, ...]]] = []
        for status, matchers in matcher_plan(definition.status_mappings):
            planned: list[_PlannedMatcher] = []
            for _, matcher, field in matchers:
                expression = matcher.by_expression
                text = expression.expression if expression is not None else ""
                planned.append(
                    _PlannedMatcher(
                        by_phase=matcher.by_phase or None,
                        conditions=tuple(
                            (expected.type, expected.status or None, expected.reason or None)
                            for expected in matcher.by_conditions or ()
                        ),
                        expression=at(text) if expression is not None else -1,
                        expected=expression.expected_result if expression is not None else "",
                        text=text,
                        asks_conditions="conditions" in text,
                        reads=()
                        if expression is None
                        else tuple((name, at(path)) for name, path in field_reads(expression.expression)),
                        source=field,
                        matcher=matcher,
                    )
                )
            statuses.append((status, tuple(planned)))
        self.statuses = tuple(statuses)
        self.message = at(MESSAGE_EXPRESSION)
        self.no_status = at(NO_STATUS_EXPRESSION)
        self.expressions = tuple(positions)
        # positions only the reason's field reads consult: a list holding containers there is no fact, so the
        # generated read hands it back unnormalised (`jq.finish.finish_read`)
        consulted = {self.phase, self.conditions, self.message, self.no_status}
        consulted.update(planned.expression for _, matchers in self.statuses for planned in matchers)
        self.reads_only = frozenset(
            at for _, matchers in self.statuses for planned in matchers for _, at in planned.reads
        ).difference(consulted)
        # the generated matching for one tuple of generated functions (`read_generated`), made on first use
        self._match: tuple[Functions, Callable[..., tuple[list[str], dict[str, _PlannedMatcher]]]] | None = None

    def read_generated(self, functions: Functions, obj: Any) -> WorkloadStatus | None:
        """`read` over the results the generated `functions` give on `obj` in place, each evaluated when first
        consulted, with the matching itself generated (`_matcher_source`: the statuses' criteria as straight-line
        Python). Raises `_NotAnswered` when a function hands an expression back (then `read` the group's
        results)."""
        match = self._match
        if match is None or match[0] is not functions:
            match = self._match = (functions, _compile_matcher(self, functions))
        memo: dict[int, Any] = {}
        found: list[Any] = [None] * len(functions)  # each expression's outputs once evaluated (None: not yet)
        # what is read whatever the object: the phase and the conditions
        _evaluate(functions, obj, memo, found, (self.phase, self.conditions))
        head = self._head(found)
        if head is None:
            return None
        raw_phase, conditions = head
        by_type = {condition.type: condition for condition in conditions}  # the last duplicate type wins
        matched, hits = match[1](obj, memo, found, by_type, raw_phase)
        for candidate in PRIMARY_PHASE_PRECEDENCE:
            hit = hits.get(candidate)
            if hit is not None:  # the reason's reads, evaluated before the reason runs over the plain list
                _evaluate(functions, obj, memo, found, [at for _, at in hit.reads], reads_only=self.reads_only)
                break

        def need(position: int) -> None:  # the message and "no status yet" reads, evaluated if the reason asks
            _evaluate(functions, obj, memo, found, (position,))

        return self._status(
            raw_phase, conditions, by_type=by_type, matched=matched, hits=hits, results=found, need=need
        )

    def read(self, results: Results) -> WorkloadStatus | None:
        """The status from `results` (each expression's outputs, a list, or its `JqError`), or None where the
        generic path would record an error (then run `extract_status`)."""
        head = self._head(results)
        if head is None:
            return None
        raw_phase, conditions = head
        by_type = {condition.type: condition for condition in conditions}  # the last duplicate type wins
        matched: list[str] = []
        hits: dict[str, _PlannedMatcher] = {}
        for status, matchers in self.statuses:
            for planned in matchers:
                if planned.by_phase and raw_phase != planned.by_phase:
                    continue
                if planned.conditions and not _conditions_hold(planned.conditions, by_type):
                    continue
                if planned.expression >= 0:
                    values = results[planned.expression]
                    if type(values) is not list:
                        return None  # the generic path records this matcher's error
                    if not values or jq_tostring(values[0]) != planned.expected:
                        continue
                matched.append(status)
                hits[status] = planned
                break  # OR across the matchers of one status
        return self._status(raw_phase, conditions, by_type=by_type, matched=matched, hits=hits, results=results)

    def _head(self, results: Results) -> tuple[str | None, tuple[Condition, ...]] | None:
        """The raw phase and the conditions, or None where reading them records an error."""
        raw_phase: str | None = None
        if self.phase >= 0:
            values = results[self.phase]
            if type(values) is not list:
                return None
            first = values[0] if values else None
            if first is None:
                raw_phase = ""
            elif isinstance(first, str):
                raw_phase = first
            else:
                return None
        if self.conditions < 0:
            return raw_phase, ()
        values = results[self.conditions]
        if type(values) is not list:
            return None
        found: list[Condition] = []
        type_key, status_key, reason_key, message_key = self.fields
        for value in values:
            if value is None:
                continue
            if not isinstance(value, list):
                return None
            for item in value:
                if not isinstance(item, dict):
                    return None
                kind = item.get(type_key) if type_key else None
                state = item.get(status_key) if status_key else None
                why = item.get(reason_key) if reason_key else None
                message = item.get(message_key) if message_key else None
                found.append(
                    Condition(
                        type=kind if isinstance(kind, str) and kind else "",
                        status=state if isinstance(state, str) and state else "",
                        reason=why if isinstance(why, str) else None,
                        message=message if isinstance(message, str) and message else "",
                    )
                )
        return raw_phase, tuple(found)

    def _status(
        self,
        raw_phase: str | None,
        conditions: tuple[Condition, ...],
        *,
        by_type: dict[str, Condition],
        matched: list[str],
        hits: dict[str, _PlannedMatcher],
        results: Results,
        need: Callable[[int], None] | None = None,
    ) -> WorkloadStatus:
        phase = UNDEFINED
        for candidate in PRIMARY_PHASE_PRECEDENCE:
            if candidate in hits:
                phase = candidate
                break
        hit = hits.get(phase)
        return WorkloadStatus(
            phase=phase,
            phases=tuple(matched) if matched else (UNDEFINED,),
            raw_phase=raw_phase,
            conditions=conditions,
            reason=None if hit is None else self._reason(hit, raw_phase, by_type, results, need),
            reason_source=None if hit is None else hit.source,
        )

    def _reason(
        self,
        hit: _PlannedMatcher,
        raw_phase: str | None,
        by_type: dict[str, Condition],
        results: Results,
        need: Callable[[int], None] | None,
    ) -> str | None:
        """`_reason` over the plan's results (the same facts, in the same order, and the same message); `need`
        (the generated read) evaluates the message and "no status yet" reads when they are consulted."""
        facts: list[str] = []
        message = ""
        if hit.by_phase and self.phase >= 0:
            facts.append(f"{self.phase_name} {raw_phase}")
        for kind, _, _ in hit.conditions:
            actual = by_type.get(kind)
            if actual is not None:
                facts.append(condition_text(actual))
                message = message or actual.message
        if hit.expression >= 0:
            expression = hit.text
            named = [condition for condition in by_type.values() if f'"{condition.type}"' in expression]
            if not named and hit.asks_conditions:
                named = [condition for condition in by_type.values() if condition.status == "True"][:3]
            for condition in named:
                facts.append(condition_text(condition))
                message = message or (condition.message if condition.status == "True" else "")
            for name, position in hit.reads:
                fact = read_fact(name, _first(results[position]))
                if fact:
                    facts.append(fact)
        if not message:
            if need is not None:
                need(self.message)
            value = _first(results[self.message])
            message = value if isinstance(value, str) else ""
        if not facts and not message:
            if need is not None:
                need(self.no_status)
            if _first(results[self.no_status]) is True:
                return "no status yet"
        if len(facts) > 1:
            facts = list(dict.fromkeys(facts))
        text = "; ".join(facts)
        if message:
            text = f"{text}: {message}" if text else message
        return text or None


def _conditions_hold(expected: tuple[tuple[str, str | None, str | None], ...], by_type: dict[str, Condition]) -> bool:
    for kind, status, reason in expected:
        actual = by_type.get(kind)
        if actual is None:
            return False
        if status and actual.status != status:
            return False
        if reason and (actual.reason or "") != reason:
            return False
    return True


def _first(values: Any) -> Any:
    """The first output of a reason's read; None when it has none or failed (a reason never fails)."""
    return values[0] if type(values) is list and values else None


_STATUS_PLANS: dict[int, tuple[StatusDefinition, StatusPlan]] = {}


def status_plan(definition: StatusDefinition) -> StatusPlan:
    """The plan of a status definition, once per definition object."""
    return per_object(_STATUS_PLANS, definition, StatusPlan)


def _matcher_source(plan: StatusPlan, functions: Functions, constants: dict[str, Any]) -> str:
    """The source of `match(v, m, r, T, RP)`: the plan's statuses in order, each matcher's criteria (byPhase
    against `RP`, byConditions against the conditions by type `T`, byExpression through `F<i>`, evaluated on
    first use into the results list `r`) as the loop of `read` checks them; gives the matched statuses and each
    one's first matching matcher. Every string is a constant passed in (`K<n>`), never written into the text."""

    def constant(value: Any) -> str:
        name = f"K{len(constants) + 1}"
        constants[name] = value
        return name

    lines = ["def match(v, m, r, T, RP):", "    M = []", "    H = {}"]
    for status, matchers in plan.statuses:
        if not matchers:
            continue
        lines.append("    h = None")
        for planned in matchers:
            tests = []
            if planned.by_phase:
                tests.append(f"RP == {constant(planned.by_phase)}")
            for kind, state, why in planned.conditions:
                parts = [f"(c := T.get({constant(kind)})) is not None"]
                if state:
                    parts.append(f"c.status == {constant(state)}")
                if why:
                    parts.append(f"(c.reason or E) == {constant(why)}")
                tests.append(" and ".join(parts))
            lines.append("    if h is None" + "".join(f" and ({test})" for test in tests) + ":")
            hit = constant(planned)
            index = planned.expression
            if index < 0:
                lines.append(f"        h = {hit}")
            elif functions[index] is None:
                lines.append("        raise NA")  # not generated: the group's results answer it
            else:
                lines.append(f"        e = r[{index}]")
                lines.append("        if e is None:")
                lines.append(f"            e = r[{index}] = F{index}(v, m)")
                lines.append("            if e is BAIL: raise NA")
                lines.append(f"        if e and TS(e[0]) == {constant(planned.expected)}: h = {hit}")
        name = constant(status)
        lines.append("    if h is not None:")
        lines.append(f"        M.append({name})")
        lines.append(f"        H[{name}] = h")
    lines.append("    return M, H")
    return "\n".join(lines) + "\n"


def _compile_matcher(
    plan: StatusPlan, functions: Functions
) -> Callable[..., tuple[list[str], dict[str, _PlannedMatcher]]]:
    constants: dict[str, Any] = {}
    source = _matcher_source(plan, functions, constants)
    namespace: dict[str, Any] = {
        "__builtins__": {},
        "BAIL": BAIL,
        "NA": _NotAnswered,
        "TS": jq_tostring,
        "E": "",
        **constants,
        **{f"F{index}": function for index, function in enumerate(functions) if function is not None},
    }
    exec(compile(source, "<status plan>", "exec"), namespace)  # the source is built from the plan's positions only
    found: Callable[..., tuple[list[str], dict[str, _PlannedMatcher]]] = namespace["match"]
    return found


class _NotAnswered(WorkloadMapError):  # noqa: N818 - a signal: "read the status from the group's results"
    """A generated function could not answer an expression the plan consulted."""


def _evaluate(
    functions: Functions,
    obj: Any,
    memo: dict[int, Any],
    found: list[Any],
    positions: Sequence[int],
    *,
    reads_only: frozenset[int] = frozenset(),
) -> None:
    """The outputs of the expressions at `positions` (-1: none) into `found`, by the generated functions on the
    object in place, sharing the memo of one read: only what the plan consults is evaluated (a status whose
    byConditions fail never evaluates its byExpression, a reason is read for the primary phase only). Those at
    `reads_only` (consulted by the reason's field reads alone) are finished by `jq.finish.finish_read`. An
    expression the generated code does not answer raises `_NotAnswered`."""
    for position in positions:
        if position < 0 or found[position] is not None:
            continue
        function = functions[position]
        if function is None:
            raise _NotAnswered
        outputs = function(obj, memo, finish_read) if position in reads_only else function(obj, memo)
        if outputs is BAIL:
            raise _NotAnswered
        found[position] = outputs


def planned_status(
    definition: StatusDefinition, document: Document, results: Callable[[Sequence[str]], Sequence[Any]]
) -> WorkloadStatus | None:
    """The status under `definition` through its plan: from the generated functions on `document`'s object in
    place when they answer every expression the plan consults, else from `results(plan.expressions)` (each
    expression's outputs or `JqError`, as the snapshot evaluates its group); None where the generic
    `extract_status` records an error (run it then: it gives the errors and the rest of the status)."""
    plan = status_plan(definition)
    functions = generated_functions(document, plan.expressions)
    if functions is not None:
        try:
            return plan.read_generated(functions, document.obj)
        except _NotAnswered:
            pass
    return plan.read(results(plan.expressions))
