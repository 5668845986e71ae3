"""`EvaluationPolicy` is a plain slotted class (no `dataclasses` import at start-up, issue 19) that keeps the frozen
dataclass's behaviour: fields by keyword or position, equality and hash without `stops`, the repr, immutability,
copy and pickle, and a validated `replace`."""

from __future__ import annotations

import copy
import pickle

import pytest

from workload_map.errors import ArgumentValueError
from workload_map.jq.policy import INPROCESS, EvaluationPolicy


def test_fields_by_keyword_or_position_and_the_deadline_as_a_float() -> None:
    policy = EvaluationPolicy("worker", 5, 256)
    assert (policy.mode, policy.deadline, policy.memory_mb, policy.stops) == ("worker", 5.0, 256, None)
    assert isinstance(policy.deadline, float)
    assert EvaluationPolicy(mode="worker", deadline=5.0, memory_mb=256) == policy
    assert EvaluationPolicy() == INPROCESS and INPROCESS.mode == "inprocess"


def test_equality_and_hash_leave_out_the_recorder() -> None:
    stops: list[object] = []
    recorded = EvaluationPolicy("worker", stops=stops)
    assert recorded == EvaluationPolicy("worker") and hash(recorded) == hash(EvaluationPolicy("worker"))
    assert recorded != EvaluationPolicy("worker", deadline=2) and recorded != ("worker", 10.0, 1024)
    assert len({recorded, EvaluationPolicy("worker"), INPROCESS}) == 2
    assert repr(recorded) == "EvaluationPolicy(mode='worker', deadline=10.0, memory_mb=1024)"
    match recorded:
        case EvaluationPolicy(mode, deadline):
            assert (mode, deadline) == ("worker", 10.0)


def test_frozen() -> None:
    with pytest.raises(AttributeError, match="frozen"):
        INPROCESS.mode = "worker"
    with pytest.raises(AttributeError, match="frozen"):
        del INPROCESS.deadline
    with pytest.raises(AttributeError):
        INPROCESS.other = 1
    assert INPROCESS.mode == "inprocess"


def test_copy_pickle_and_replace_keep_the_fields() -> None:
    stops: list[object] = []
    policy = EvaluationPolicy("worker", 3, 0, stops)
    assert pickle.loads(pickle.dumps(policy)) == policy
    assert copy.copy(policy).stops is stops and copy.deepcopy(policy) == policy
    changed = policy.replace(deadline=7)
    assert (changed.mode, changed.deadline, changed.memory_mb, changed.stops) == ("worker", 7.0, 0, stops)
    with pytest.raises(ArgumentValueError, match="deadline"):
        policy.replace(deadline=0)
    with pytest.raises(TypeError):
        policy.replace(colour="red")
