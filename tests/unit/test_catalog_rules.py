"""Rules across the whole catalog, each decidable from one object (issue 15).

For every definition, tests/fixtures/rules/signals.yaml says in jq what an object tells about itself: whether its
controller observed the current generation, how many units are ready of how many desired, whether a rollout or
scale is reported in progress, whether the workload itself ended, whether a suspension is asked for or reported, a
terminal configuration error, a fault of a running workload. The rules below then say what the primary phase must
be, and each rule runs on every recording of ../shared/conformance (whatever the recorder answered: the
recordings are real controllers), on every row of every flow table (tests/fixtures/flows) and on every status
fixture (tests/fixtures/status).

1. stale: the controller has not observed the current generation -> Initializing
2. in progress: a rollout or scale is reported in progress and fewer units are ready than desired -> Initializing
3. not started: no unit is ready, the workload has never been ready -> Initializing
4. running: every desired unit is ready, the generation observed, no fault -> Running
5. degraded: nothing in progress, the generation observed, 0 < ready < desired -> Degraded
6. terminal: Completed or Failed only when the status says the workload itself ended (a configuration error the
   controller does not retry is Failed); never as a side effect of a suspension
7. configuration error: a configuration error the controller reports as terminal -> Failed

Rules 1 to 5 apply to a workload that has not ended, is not being suspended or resumed and reports no
configuration error. A rule needing a signal a definition leaves out is skipped for that definition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance.test_recordings import STATES, definition_for
from tests.flows import all_rows
from workload_map.catalog import builtin_registry
from workload_map.jq import evaluate
from workload_map.resolve import Workload

SIGNALS_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "signals.yaml"
STATUS_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "status"
SIGNAL_NAMES = (
    "observed",
    "ready",
    "desired",
    "progressing",
    "started",
    "ended",
    "suspension",
    "configError",
    "fault",
)


@cache
def _signals() -> dict[str, dict[str, str]]:
    with SIGNALS_FILE.open(encoding="utf-8") as handle:
        data: dict[str, dict[str, str]] = yaml.safe_load(handle)
    return data


@dataclass(frozen=True)
class Facts:
    observed: bool | None
    ready: int | None
    desired: int | None
    progressing: bool | None
    started: bool | None
    ended: str | None
    suspension: bool
    config_error: bool
    fault: bool

    @property
    def settled(self) -> bool:
        """Not ended, not being suspended or resumed, no configuration error: rules 1 to 5 apply."""
        return self.ended is None and not self.suspension and not self.config_error


def facts(definition: str, obj: dict[str, Any]) -> Facts:
    exprs = _signals().get(definition, {})

    def read(name: str) -> Any:
        expr = exprs.get(name)
        if expr is None:
            return None
        out = evaluate(expr, obj)
        return out[0] if out else None

    return Facts(
        observed=read("observed"),
        ready=read("ready"),
        desired=read("desired"),
        progressing=read("progressing"),
        started=read("started"),
        ended=read("ended"),
        suspension=read("suspension") is True,
        config_error=read("configError") is True,
        fault=read("fault") is True,
    )


def _stale(f: Facts) -> str | None:
    return "Initializing" if f.settled and f.observed is False else None


def _in_progress(f: Facts) -> str | None:
    if not f.settled or f.observed is False or f.progressing is not True or f.ready is None or f.desired is None:
        return None
    return "Initializing" if f.ready < f.desired else None


def _not_started(f: Facts) -> str | None:
    if not f.settled or f.started is not False or f.ready is None or not f.desired:
        return None
    return "Initializing" if f.ready == 0 else None


def _running(f: Facts) -> str | None:
    if not f.settled or f.observed is False or f.fault or f.ready is None or not f.desired:
        return None
    return "Running" if f.ready >= f.desired else None


def _degraded(f: Facts) -> str | None:
    if not f.settled or f.observed is False or f.progressing is not False or f.ready is None or f.desired is None:
        return None
    return "Degraded" if 0 < f.ready < f.desired else None


def _configuration_error(f: Facts) -> str | None:
    return "Failed" if f.config_error else None


# rule name -> what the phase must be (None: the rule does not apply to this object)
RULES: dict[str, Callable[[Facts], str | None]] = {
    "stale": _stale,
    "in-progress": _in_progress,
    "not-started": _not_started,
    "running": _running,
    "degraded": _degraded,
    "configuration-error": _configuration_error,
}


def _terminal_ok(f: Facts, phase: str) -> bool:
    """Rule 6: a terminal phase only when the status says the workload ended (or a terminal configuration error)."""
    if phase == "Completed":
        return f.ended == "Completed"
    if phase == "Failed":
        return f.ended == "Failed" or f.config_error
    return True


@dataclass(frozen=True)
class Case:
    id: str
    definition: str
    obj: dict[str, Any]


def _cases() -> Iterator[Case]:
    for event in STATES:
        obj = event.data["object"]
        yield Case(f"recording {event.id}", definition_for(obj).name, obj)
    for flow, row in all_rows():
        yield Case(f"flow {row.id}", flow.definition, flow.object_at(row))
    for path in sorted(STATUS_FIXTURES.glob("*.yaml")):
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        yield Case(f"status fixture {path.stem}", path.stem.split("__", 1)[0], data["object"])


CASES = list(_cases())


@cache
def _phase(case_id: str) -> str:
    case = next(c for c in CASES if c.id == case_id)
    resolved = builtin_registry().by_name(case.definition)
    assert resolved is not None
    return Workload(resolved.karta, case.obj).status.phase


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_holds_on_every_recording_and_every_flow_row(rule: str) -> None:
    broken = []
    applied = 0
    for case in CASES:
        wanted = RULES[rule](facts(case.definition, case.obj))
        if wanted is None:
            continue
        applied += 1
        phase = _phase(case.id)
        if phase != wanted:
            broken.append(f"{case.id}: {phase}, the rule says {wanted}")
    assert not broken, "\n".join(broken)
    assert applied, f"rule {rule} applied to no object"


def test_terminal_phases_only_when_the_workload_itself_ended() -> None:
    broken = [
        f"{case.id}: {_phase(case.id)} without an end or a terminal configuration error in the status"
        for case in CASES
        if not _terminal_ok(facts(case.definition, case.obj), _phase(case.id))
    ]
    assert not broken, "\n".join(broken)


def test_an_ended_workload_reads_as_it_ended_and_a_suspension_never_ends_one() -> None:
    broken = []
    for case in CASES:
        f = facts(case.definition, case.obj)
        phase = _phase(case.id)
        if f.ended is not None and phase != f.ended:
            broken.append(f"{case.id}: ended {f.ended}, read {phase}")
        if f.suspension and f.ended is None and phase in ("Completed", "Failed"):
            broken.append(f"{case.id}: {phase} while suspending, with no end in the status")
    assert not broken, "\n".join(broken)


def test_every_signal_file_entry_is_a_built_in_definition_with_known_signals() -> None:
    names = {entry.karta.name for entry in builtin_registry().all()}
    for definition, exprs in _signals().items():
        assert definition in names, definition
        assert set(exprs) <= set(SIGNAL_NAMES), (definition, sorted(set(exprs) - set(SIGNAL_NAMES)))


def test_every_definition_has_signals() -> None:
    names = {entry.karta.name for entry in builtin_registry().all()}
    assert names <= set(_signals())
