"""Constant folding, only as far as libjq does it to reject constant non-string object keys (`{(1): 2}`).

The parser (`workload_map.jq.parser`) folds an object key with `const_value` and rejects it when the result is
a constant that is not a string (`workload_map._jsontype.json_type` names its kind in the message).
"""

from __future__ import annotations

import math
from typing import Any, Final

from workload_map.jq.ast import Binary, Collect, Comma, Literal, Loc, Node, Number, ObjectCons, String

__all__ = ["NOT_CONST", "const_value"]

NOT_CONST: Final = object()


def const_value(node: Node) -> Any:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Loc):
        return {"file": "<top-level>", "line": node.line}
    if isinstance(node, String):
        value = node.constant
        return NOT_CONST if value is None else value
    if isinstance(node, Collect):
        if node.body is None:
            return []
        items: list[Any] = []
        body: Node = node.body
        while isinstance(body, Comma):  # libjq folds only a left-nested chain of constants
            value = const_value(body.right)
            if value is NOT_CONST or isinstance(body.right, Comma):
                return NOT_CONST
            items.append(value)
            body = body.left
        value = const_value(body)
        if value is NOT_CONST:
            return NOT_CONST
        items.append(value)
        return items[::-1]
    if isinstance(node, ObjectCons):
        obj: dict[str, Any] = {}
        for entry in node.entries:
            if entry.value is None:
                return NOT_CONST
            key = const_value(entry.key)
            value = const_value(entry.value)
            if not isinstance(key, str) or value is NOT_CONST:
                return NOT_CONST
            obj[key] = value
        return obj
    if isinstance(node, Binary):
        left = const_value(node.left)
        right = const_value(node.right)
        if left is NOT_CONST or right is NOT_CONST:
            return NOT_CONST
        return _fold(node.op, left, right)
    return NOT_CONST


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _fold(op: str, a: Any, b: Any) -> Any:
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return True  # a boolean: only its kind matters here
    if op == "+":
        if a is None:
            return b
        if b is None:
            return a
        if _is_number(a) and _is_number(b):
            return a + b
        if isinstance(a, str) and isinstance(b, str):
            return a + b
        if isinstance(a, list) and isinstance(b, list):
            return a + b
        if isinstance(a, dict) and isinstance(b, dict):
            return {**a, **b}
        return NOT_CONST
    if op == "-":
        if _is_number(a) and _is_number(b):
            return a - b
        if isinstance(a, list) and isinstance(b, list):
            return [x for x in a if x not in b]
        return NOT_CONST
    if op == "*":
        if _is_number(a) and _is_number(b):
            return a * b
        if (isinstance(a, str) and _is_number(b)) or (isinstance(b, str) and _is_number(a)):
            s, k = (a, b) if isinstance(a, str) else (b, a)
            return None if k < 0 else s * max(int(k), 1 if k > 0 else 0)
        if isinstance(a, dict) and isinstance(b, dict):
            return {**a, **b}
        return NOT_CONST
    if op == "/":
        if _is_number(a) and _is_number(b):
            return NOT_CONST if b == 0 else a / b
        if isinstance(a, str) and isinstance(b, str):
            return a.split(b) if b else list(a)
        return NOT_CONST
    if op == "%":
        if _is_number(a) and _is_number(b):
            if math.isnan(a) or math.isnan(b) or math.isinf(b) or int(b) == 0:
                return NOT_CONST
            return 0
        return NOT_CONST
    return NOT_CONST
