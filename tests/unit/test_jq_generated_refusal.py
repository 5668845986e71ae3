"""The generated path asks the policy's recorder about a batch on every evaluation (issue 19, session 19).

`jq.generated` looks the recorder's `refuse` up once per batch instead of going through `EvaluationPolicy.refusal`
per expression; the answers are never remembered, since a recorder's answer changes within a command (the CLI's
refuses everything once a definition was stopped). What must hold: a refusing recorder still refuses, in
`evaluate_batch` and `generated_functions`, from the moment it starts to; the same `refuse` calls in the same
order (up to the first refusal) as `any(policy.refusal(e) ...)`; a subclass's own `refusal` is still asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from workload_map.jq import Document, EvaluationPolicy, JqError, JqLimitError, generated

EXPRS = (".a", ".b | length", "[.c[]? | . + 1]")
OBJ: dict[str, Any] = {"a": 1, "b": "xyz", "c": [1, 2]}


class _Recorder(list[JqLimitError]):
    """Refuses `refusing` expressions (all of them with "*"), and notes what it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.refusing: set[str] = set()
        self.asked: list[str] = []

    def refuse(self, expression: str) -> JqLimitError | None:
        self.asked.append(expression)
        if "*" in self.refusing or expression in self.refusing:
            return JqLimitError(expression, "refused by the test")
        return None


@pytest.fixture(autouse=True)
def _generate_at_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(generated, "GENERATE_AFTER", 0)
    yield


def _values(results: list[Any]) -> list[Any]:
    return [("error", type(r).__name__, r.message) if isinstance(r, JqError) else ("ok", r) for r in results]


def test_a_recorder_that_starts_refusing_is_heeded_at_once() -> None:
    recorder = _Recorder()
    document = Document(OBJ, policy=EvaluationPolicy(stops=recorder))
    plain = Document(OBJ).evaluate_many(EXPRS)
    assert _values(generated.evaluate_batch(document, EXPRS)) == _values(plain)
    assert generated.generated_functions(document, EXPRS) is not None
    recorder.refusing = {"*"}  # the same policy, the same batch: refused from now on
    refused = generated.evaluate_batch(document, EXPRS)
    assert all(isinstance(result, JqLimitError) for result in refused)
    assert [result.message for result in refused] == [JqLimitError(e, "refused by the test").message for e in EXPRS]
    assert generated.generated_functions(document, EXPRS) is None
    recorder.refusing = set()  # and answered again once it stops refusing
    assert _values(generated.evaluate_batch(document, EXPRS)) == _values(plain)
    assert generated.generated_functions(document, EXPRS) is not None


def test_one_refused_expression_sends_the_batch_the_current_way() -> None:
    recorder = _Recorder()
    recorder.refusing = {EXPRS[1]}
    document = Document(OBJ, policy=EvaluationPolicy(stops=recorder))
    found = generated.evaluate_batch(document, EXPRS)
    assert _values(found) == _values(Document(OBJ, policy=EvaluationPolicy(stops=_copy(recorder))).evaluate_many(EXPRS))
    assert isinstance(found[1], JqLimitError) and not isinstance(found[0], JqError)
    assert generated.generated_functions(document, EXPRS) is None


def _copy(recorder: _Recorder) -> _Recorder:
    other = _Recorder()
    other.refusing = set(recorder.refusing)
    return other


@pytest.mark.parametrize("refusing", [set(), {EXPRS[0]}, {EXPRS[1]}, {EXPRS[2]}, {"*"}])
def test_the_same_calls_in_the_same_order_as_asking_each_expression(refusing: set[str]) -> None:
    recorder, before = _Recorder(), _Recorder()
    recorder.refusing, before.refusing = set(refusing), set(refusing)
    policy = EvaluationPolicy(stops=recorder)
    assert generated._refuses(policy, EXPRS) == any(
        EvaluationPolicy(stops=before).refusal(expr) is not None for expr in EXPRS
    )
    assert recorder.asked == before.asked


def test_a_recorder_without_refuse_and_no_recorder_refuse_nothing() -> None:
    assert generated._refuses(EvaluationPolicy(stops=[]), EXPRS) is False
    assert generated._refuses(EvaluationPolicy(), EXPRS) is False
    document = Document(OBJ, policy=EvaluationPolicy(stops=[]))
    assert _values(generated.evaluate_batch(document, EXPRS)) == _values(Document(OBJ).evaluate_many(EXPRS))


class _Refusing(EvaluationPolicy):
    __slots__ = ()

    def refusal(self, expression: str) -> JqLimitError | None:
        return JqLimitError(expression, "refused by the subclass")


def test_a_subclass_refusal_is_asked() -> None:
    policy = _Refusing(stops=[])
    assert generated._refuses(policy, EXPRS) is True
    assert generated.generated_functions(Document(OBJ, policy=policy), EXPRS) is None
