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
from workload_map.jq.finish import BAIL, Bail, finish, finish_conditions, finish_read
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


_UNDEFINED_PHASES: tuple[str, ...] = (UNDEFINED,)
# the types of a field value whose normalised form is no string either (`jq.convert.normalize`: containers, numbers
# and booleans stay what they are, a tuple or set becomes an array); a string and None are read as they are
_NOT_TEXT = frozenset({int, float, bool, list, dict, tuple, set, frozenset})


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
    quotes: bool  # whether the text holds a quote: else it names no condition type (`_reason`)
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
        "functions",
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
                        quotes='"' in text,
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
        # the generated functions of `expressions` under an in-process policy without a recorder, once
        # `generated_functions` gave them (`planned_status`)
        self.functions: Functions | None = None
        # the generated reader for one tuple of generated functions (`read_generated`), made on first use
        self._match: tuple[Functions, Callable[[Any], WorkloadStatus | None]] | None = None

    def read_generated(self, functions: Functions, obj: Any) -> WorkloadStatus | None:
        """`read` over the results the generated `functions` give on `obj` in place, each evaluated when first
        consulted, with the reading itself generated (`_reader_source`: the phase and conditions read, the
        statuses' criteria and the primary phase as straight-line Python; the reason by `_generated_status`).
        Raises `_NotAnswered` when a function hands an expression back (then `read` the group's results)."""
        reader = self._match
        if reader is None or reader[0] is not functions:
            reader = self._match = (functions, _compile_reader(self, functions))
        return reader[1](obj)

    def _conditions_read(self, outputs: list[Any]) -> tuple[tuple[Condition, ...], dict[str, Condition]] | None:
        """The conditions and the conditions by type (the last duplicate type wins) from the conditions
        expression's outputs as `finish_conditions` hands them back (a list the encoder takes left as it is), or
        None where `_head` gives None. What only normalising can decide (an item that is not exactly a dict, a
        field that is neither a string nor a JSON value: a timestamp, bytes) is read from the normalised outputs,
        as `_head` reads them, so each field is what the normalised item holds."""
        found: list[Condition] = []
        by_type: dict[str, Condition] = {}
        type_key, status_key, reason_key, message_key = self.fields
        for value in outputs:
            if value is None:
                continue
            if type(value) is not list:
                return self._conditions_normalised(outputs)
            for item in value:
                if type(item) is not dict:
                    return self._conditions_normalised(outputs)
                kind = item.get(type_key) if type_key else None
                state = item.get(status_key) if status_key else None
                why = item.get(reason_key) if reason_key else None
                message = item.get(message_key) if message_key else None
                # a string is the normalised one (the encoder took it: no lone surrogate); None and the JSON
                # types are no string either way; anything else may normalise to a string
                if not (
                    (type(kind) is str or kind is None or type(kind) in _NOT_TEXT)
                    and (type(state) is str or state is None or type(state) in _NOT_TEXT)
                    and (type(why) is str or why is None or type(why) in _NOT_TEXT)
                    and (type(message) is str or message is None or type(message) in _NOT_TEXT)
                ):
                    return self._conditions_normalised(outputs)
                condition = Condition(
                    kind if type(kind) is str and kind else "",
                    state if type(state) is str and state else "",
                    why if type(why) is str else None,
                    message if type(message) is str and message else "",
                )
                found.append(condition)
                by_type[condition.type] = condition
        return tuple(found), by_type

    def _conditions_normalised(self, outputs: list[Any]) -> tuple[tuple[Condition, ...], dict[str, Condition]] | None:
        try:
            finished = finish(list(outputs))
        except Bail:  # never for what `finish_conditions` left as it is (the encoder took it); kept exact anyway
            raise _NotAnswered from None
        conditions = self._conditions_of(finished)
        if conditions is None:
            return None
        return conditions, {condition.type: condition for condition in conditions}

    def _generated_status(  # noqa: PLR0917 - called positionally by the generated reader (keywords cost)
        self,
        raw_phase: str | None,
        conditions: tuple[Condition, ...],
        by_type: dict[str, Condition],
        matched: list[str],
        phase: str,
        hit: _PlannedMatcher | None,
        found: list[Any],
        obj: Any,
        memo: dict[int, Any],
        functions: Functions,
    ) -> WorkloadStatus:
        """The status once the generated reader has matched: the primary `phase` and its `hit` (None: nothing
        matched), the reason read with its reads evaluated first, then the message and "no status yet" reads
        when the reason consults them (all by `functions` into `found`, sharing the read's memo)."""
        if hit is None:
            return WorkloadStatus(phase, tuple(matched) if matched else _UNDEFINED_PHASES, raw_phase, conditions)
        reads_only = self.reads_only
        # the reason's reads, evaluated before the reason runs over the plain list
        _evaluate(functions, obj, memo, found, [position for _, position in hit.reads], reads_only=reads_only)

        def need(position: int) -> None:  # the message and "no status yet" reads, evaluated if the reason asks
            _evaluate(functions, obj, memo, found, (position,))

        return WorkloadStatus(
            phase,
            tuple(matched) if matched else _UNDEFINED_PHASES,
            raw_phase,
            conditions,
            self._reason(hit, raw_phase, by_type, found, need),
            hit.source,
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
        conditions = self._conditions_of(values)
        return None if conditions is None else (raw_phase, conditions)

    def _conditions_of(self, values: list[Any]) -> tuple[Condition, ...] | None:
        """The conditions from the conditions expression's (finished) outputs, or None where reading them records
        an error (an output that is not an array of objects)."""
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
        return tuple(found)

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
            named = (
                [condition for condition in by_type.values() if f'"{condition.type}"' in expression]
                if hit.quotes
                else []
            )
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


def _reader_source(plan: StatusPlan, functions: Functions, constants: dict[str, Any]) -> str:
    """The source of `read(v)`: the read of `read_generated` written out for one plan and one tuple of generated
    functions. It evaluates the phase and the conditions (`F<i>`, into the results list `r`, sharing the memo
    `m`), reads them as `_head` does (None where it gives None), checks the plan's statuses in order as the loop
    of `read` does (byPhase against `RP`, byConditions against the conditions by type `T`, byExpression
    evaluated on first use), picks the primary phase by PRIMARY_PHASE_PRECEDENCE and hands the rest to
    `_generated_status` (`ST`). Every string is a constant passed in (`K<n>`), never written into the text."""

    def constant(value: Any) -> str:
        name = f"K{len(constants) + 1}"
        constants[name] = value
        return name

    def evaluate(index: int, indent: str, finisher: str = "") -> list[str]:
        if functions[index] is None:
            return [f"{indent}raise NA"]  # not generated: the group's results answer it
        if finisher:  # outputs left as they are are not the results a later reader of `r` expects: not kept
            return [f"{indent}e = F{index}(v, m, {finisher})", f"{indent}if e is BAIL: raise NA"]
        return [f"{indent}e = r[{index}] = F{index}(v, m)", f"{indent}if e is BAIL: raise NA"]

    lines = ["def read(v):", "    m = {}", f"    r = [None] * {len(functions)}"]
    if plan.phase >= 0:
        lines += evaluate(plan.phase, "    ")
        lines.append("    RP = e[0] if e else None")
    else:
        lines.append("    RP = None")
    if plan.conditions >= 0:
        lines += evaluate(plan.conditions, "    ", "CF")
        lines.append("    e = CR(e)")
    if plan.phase >= 0:  # as `_head`: the phase first (a finished output is a str exactly when it is one)
        lines.append("    if RP is None: RP = E")
        lines.append("    elif type(RP) is not str: return None")
    if plan.conditions >= 0:
        lines.append("    if e is None: return None")
        lines.append("    C, T = e")
    else:
        lines.append("    C = ()")
        lines.append("    T = {}")
    lines.append("    M = []")
    hits: dict[str, str] = {}  # status -> the local holding its first matching matcher (the last entry's wins)
    for status, matchers in plan.statuses:
        if not matchers:
            continue
        local = hits.setdefault(status, f"H{len(hits)}")
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
                continue
            if functions[index] is None:
                lines.append("        raise NA")
                continue
            lines.append(f"        e = r[{index}]")
            lines.append("        if e is None:")
            lines += evaluate(index, "            ")
            lines.append(f"        if e and {_equals_text('e[0]', planned.expected, constant)}: h = {hit}")
        name = constant(status)
        lines.append("    if h is not None:")
        lines.append(f"        M.append({name})")
        lines.append(f"        {local} = h")
    tail = "r, v, m, FS)"
    for candidate in PRIMARY_PHASE_PRECEDENCE:
        held = hits.get(candidate)
        if held is not None:
            lines.append(f"    if {held} is not None: return ST(RP, C, T, M, {constant(candidate)}, {held}, {tail}")
    lines.append(f"    return ST(RP, C, T, M, {constant(UNDEFINED)}, None, {tail}")
    head = [lines[0], *(f"    {local} = None" for local in hits.values())]
    return "\n".join([*head, *lines[1:]]) + "\n"


def _equals_text(value: str, expected: str, constant: Callable[[Any], str]) -> str:
    """`jq_tostring(value) == expected` for an output (a str, bool, None, int, float, list or dict): a string is
    itself, and "true" and "false" are the texts of True and False only (a number writes digits or "null", a
    container a bracket); any other expected text takes `TS`."""
    name = constant(expected)
    if expected in _LITERALS:
        literal = _LITERALS[expected]
        return f"((x := {value}) is {literal} or (type(x) is str and x == {name}))"
    return f"TS({value}) == {name}"


_LITERALS: dict[str, str] = {"true": "True", "false": "False"}


def _compile_reader(plan: StatusPlan, functions: Functions) -> Callable[[Any], WorkloadStatus | None]:
    constants: dict[str, Any] = {}
    source = _reader_source(plan, functions, constants)
    namespace: dict[str, Any] = {
        "__builtins__": {},
        "BAIL": BAIL,
        "NA": _NotAnswered,
        "TS": jq_tostring,
        "E": "",
        "str": str,
        "type": type,
        "CF": finish_conditions,
        "CR": plan._conditions_read,
        "ST": plan._generated_status,
        "FS": functions,
        **constants,
        **{f"F{index}": function for index, function in enumerate(functions) if function is not None},
    }
    exec(compile(source, "<status plan>", "exec"), namespace)  # the source is built from the plan's positions only
    found: Callable[[Any], WorkloadStatus | None] = namespace["read"]
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
    policy = document.policy
    if policy.stops is None and policy.mode == "inprocess":
        # the answer depends on nothing else once it is a tuple (the batch was worth generating: it stays so),
        # so it is kept with the plan: ~5 K instructions a status of building and hashing the batch's key twice
        functions = plan.functions
        if functions is None:
            functions = plan.functions = generated_functions(document, plan.expressions)
    else:  # a recorder may refuse any evaluation, at any time: asked each time
        functions = generated_functions(document, plan.expressions)
    if functions is not None:
        try:
            return plan.read_generated(functions, document.obj)
        except _NotAnswered:
            pass
    return plan.read(results(plan.expressions))
