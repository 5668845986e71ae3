"""TEMPORARY stand-in for `workload_map.jq.Document` until the jq layer lands; deleted then."""

from __future__ import annotations

import json
from typing import Any

import jq as _libjq

from workload_map.jq.errors import JqError, JqRuntimeError


def _ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_ints(v) for v in value]
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    return value


class Document:
    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def evaluate(self, expr: str, field_path: str | None = None) -> list[Any]:
        try:
            text = json.dumps(self.obj, sort_keys=True)
            return [_ints(v) for v in _libjq.compile(expr).input_text(text).all()]
        except ValueError as exc:
            raise JqRuntimeError(expr, str(exc), field_path) from None

    def evaluate_many(self, exprs: list[str]) -> list[list[Any] | JqError]:
        out: list[list[Any] | JqError] = []
        for expr in exprs:
            try:
                out.append(self.evaluate(expr))
            except JqError as exc:
                out.append(exc)
        return out

    def paths(self, expr: str) -> list[list[str | int]]:
        return self.evaluate(f"[path({expr})]")[0]  # type: ignore[no-any-return]
