"""`cluster.core.gc_paused`: the collector paused while an answer is decoded, and left as it was found."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from workload_map.cluster.core import Call, gc_paused, interpret


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:  # a test may have turned it off (test_left_off_when_it_was_off): the next test gets it as it was
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_running_after(collector_on: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_off_when_it_was_off(collector_on: None) -> None:
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_inside_still_resumes(collector_on: None) -> None:
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_concurrent_pauses_resume_when_the_last_ends(collector_on: None) -> None:
    inside = threading.Barrier(2)
    release = threading.Event()
    seen: list[bool] = []

    def hold() -> None:
        with gc_paused():
            inside.wait(5)
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    with gc_paused():
        inside.wait(5)
    seen.append(gc.isenabled())  # the other thread still decodes
    release.set()
    thread.join(5)
    assert seen == [False]
    assert gc.isenabled()


def test_interpret_decodes_with_the_collector_paused(collector_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import msgspec

    decode = msgspec.json.decode
    during: list[bool] = []

    def recording(content: bytes) -> Any:
        during.append(gc.isenabled())
        return decode(content)

    monkeypatch.setattr(msgspec.json, "decode", recording)
    context: Any = None  # read only to describe a failed answer
    answer = interpret(context, Call("GET", "/api/v1/pods"), 200, b'{"items": [{"a": 1}]}', "application/json")
    assert answer == {"items": [{"a": 1}]}
    assert during == [False]
    assert gc.isenabled()
