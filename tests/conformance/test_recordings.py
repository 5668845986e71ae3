"""Conformance: the built-in catalog against real operator recordings (../shared/conformance/recordings).

Every `STATE` event of every recording: the built-in definition for the event object's apiVersion and kind
(looked up through the catalog registry, the same path the CLI takes) must give, as `Workload(...).status.phase`,
the recorded `state`. Where the recorder said `Undefined`, our answer must never be Completed or Failed, and it must
be listed, with its reason, in docs/catalog.md under "Undefined in the recordings". `ACTION` events (Suspend,
Resume, Scale) check that our suspend/resume produce a patch with the same effect as the recorded merge patch, and
that the definition sees a recorded scale change.

The recordings are read from the shared directory (never copied into the repo): `WMAP_CONFORMANCE_DIR`, else
`<repo>/../shared/conformance`. Missing: the tests fail under CI=true and skip otherwise.

    python -m tests.conformance.test_recordings     per-recording results and the Undefined events as table rows
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.flows import merge_patch
from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.model import Karta
from workload_map.resolve import Workload

REPO = Path(__file__).resolve().parents[2]
CATALOG_DOC = REPO / "docs" / "catalog.md"
UNDEFINED = "Undefined"
TERMINAL = frozenset({"Completed", "Failed"})
UNDEFINED_SECTION = "## Undefined in the recordings"


def conformance_dir() -> Path:
    override = os.environ.get("WMAP_CONFORMANCE_DIR")
    return Path(override) if override else REPO.parent / "shared" / "conformance"


RECORDINGS = conformance_dir() / "recordings"


@dataclass(frozen=True)
class Event:
    recording: str  # file name
    index: int
    kind: str  # STATE or ACTION
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.recording.removesuffix('.yaml')}#{self.index}"


@cache
def _recording(name: str) -> dict[str, Any]:
    with (RECORDINGS / name).open(encoding="utf-8") as handle:
        data: dict[str, Any] = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return data


def _events() -> list[Event]:
    if not RECORDINGS.is_dir():
        return []
    events = []
    for path in sorted(RECORDINGS.glob("*.yaml")):
        for index, event in enumerate(_recording(path.name).get("events") or []):
            events.append(Event(path.name, index, str(event.get("kind")), event))
    return events


EVENTS = _events()
STATES = [event for event in EVENTS if event.kind == "STATE"]
ACTIONS = [event for event in EVENTS if event.kind == "ACTION"]


def _require_recordings() -> None:
    if RECORDINGS.is_dir() and STATES:
        return
    message = f"no conformance recordings at {RECORDINGS} (set WMAP_CONFORMANCE_DIR)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@cache
def _registry() -> DefinitionRegistry:
    return DefinitionRegistry([("catalog", builtin_definitions())])


def definition_for(obj: dict[str, Any]) -> Karta:
    resolved = _registry().for_object(obj)
    assert resolved is not None, f"no built-in definition for {obj.get('apiVersion')} {obj.get('kind')}"
    assert resolved.exact, f"no built-in definition for version {obj.get('apiVersion')} of {obj.get('kind')}"
    return resolved.karta


def our_phase(obj: dict[str, Any]) -> str:
    return Workload(definition_for(obj), obj).status.phase


def documented_undefined(text: str | None = None) -> dict[tuple[str, int], str]:
    """(recording file, event index) -> our answer, from the table under "Undefined in the recordings"."""
    text = CATALOG_DOC.read_text(encoding="utf-8") if text is None else text
    _, found, section = text.partition(UNDEFINED_SECTION)
    if not found:
        return {}
    section = section.split("\n## ", 1)[0]
    rows: dict[tuple[str, int], str] = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*`([^`]+\.yaml)`\s*\|\s*(\d+)\s*\|\s*(\w+)\s*\|", line)
        if match:
            rows[(match.group(1), int(match.group(2)))] = match.group(3)
    return rows


def _params(events: list[Event]) -> list[Any]:
    return [pytest.param(event, id=event.id) for event in events] or [pytest.param(None, id="no-recordings")]


# --- STATE events -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("event", _params([e for e in STATES if e.data.get("state") != UNDEFINED]))
def test_primary_phase_equals_the_recorded_state(event: Event | None) -> None:
    _require_recordings()
    assert event is not None
    obj = event.data["object"]
    assert our_phase(obj) == event.data["state"], f"{event.id}: recorded phases {event.data.get('phases')}"


@pytest.mark.parametrize("event", _params([e for e in STATES if e.data.get("state") == UNDEFINED]))
def test_undefined_event_gets_a_documented_non_terminal_answer(event: Event | None) -> None:
    _require_recordings()
    assert event is not None
    phase = our_phase(event.data["object"])
    assert phase not in TERMINAL, f"{event.id}: {phase} where the recorder saw no status to justify it"
    documented = documented_undefined().get((event.recording, event.index))
    assert documented == phase, (
        f"{event.id}: our answer {phase} is not listed in docs/catalog.md {UNDEFINED_SECTION!r} "
        f"(listed: {documented}); add the row with its reason"
    )


def test_undefined_table_lists_only_undefined_events() -> None:
    _require_recordings()
    undefined = {(e.recording, e.index) for e in STATES if e.data.get("state") == UNDEFINED}
    stale = sorted(set(documented_undefined()) - undefined)
    assert not stale, f"docs/catalog.md lists events that are not Undefined in the recordings: {stale}"


def test_each_recording_is_read_with_the_definition_of_the_same_name() -> None:
    _require_recordings()
    for event in STATES:
        slug = _recording(event.recording).get("kartaName")
        if slug:
            assert definition_for(event.data["object"]).name == slug, event.id


# --- ACTION events ----------------------------------------------------------------------------------------------


def _previous_object(event: Event) -> dict[str, Any] | None:
    events = _recording(event.recording).get("events") or []
    for earlier in reversed(events[: event.index]):
        if earlier.get("kind") == "STATE":
            obj: dict[str, Any] = earlier["object"]
            return obj
    return None


def _recorded_patch(event: Event) -> dict[str, Any]:
    action = event.data.get("action") or {}
    patch = action.get("patch", action.get("mergePatch", event.data.get("patch")))
    assert isinstance(patch, dict), f"{event.id}: no merge patch recorded"
    return patch


def _scales(karta: Karta, obj: dict[str, Any]) -> dict[str, Any]:
    workload = Workload(karta, obj)
    return {name: component.scales for name, component in workload.components.items()}


@pytest.mark.parametrize("event", _params(ACTIONS))
def test_action_has_the_recorded_effect(event: Event | None) -> None:
    _require_recordings()
    if event is None:
        pytest.skip("the recordings hold no ACTION events")
    before = _previous_object(event)
    assert before is not None, f"{event.id}: no STATE before the action"
    karta = definition_for(before)
    recorded = merge_patch(before, _recorded_patch(event))
    name = (event.data.get("action") or {}).get("name")
    if name in ("Suspend", "Resume"):
        workload = Workload(karta, before)
        if name == "Suspend":
            workload.suspend()
        else:
            workload.resume()
        assert merge_patch(before, workload.merge_patch()) == recorded, f"{event.id}: {name} differs from the recording"
    elif name == "Scale":
        assert _scales(karta, recorded) != _scales(karta, before), f"{event.id}: the definition misses the scale"
    else:
        pytest.fail(f"{event.id}: unknown action {name!r}")


# --- report -----------------------------------------------------------------------------------------------------


def report() -> Iterator[str]:
    """Per recording: events matched / compared; then the Undefined events as docs/catalog.md table rows."""
    documented = documented_undefined()
    undefined_rows = []
    for recording in sorted({event.recording for event in STATES}):
        matched = compared = 0
        for event in (e for e in STATES if e.recording == recording):
            phase = our_phase(event.data["object"])
            if event.data.get("state") == UNDEFINED:
                known = "listed" if documented.get((recording, event.index)) == phase else "NOT LISTED"
                undefined_rows.append(f"| `{recording}` | {event.index} | {phase} | ({known}) |")
                continue
            compared += 1
            matched += phase == event.data.get("state")
        yield f"{matched}/{compared}  {recording}"
    yield ""
    yield "| recording | event | our answer | reason |"
    yield "|---|---|---|---|"
    yield from undefined_rows


if __name__ == "__main__":
    if not STATES:
        sys.exit(f"no conformance recordings at {RECORDINGS} (set WMAP_CONFORMANCE_DIR)")
    for line in report():
        print(line)
