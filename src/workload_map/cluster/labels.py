"""Label selectors as kubectl's `-l` takes them, checked before any request (pure).

`selector_problem("team=web,tier!=db")` is None for a valid selector, else a one-line reason, so a typo is a usage
error (exit 2) rather than a server-side 400 after discovery. The grammar is Kubernetes' `labels.Parse`:
`key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key>1`, `key<1`.
"""

from __future__ import annotations

import re

from workload_map._regex import LazyPattern

_NAME = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)"
_PREFIX = r"(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)*)"
_KEY = LazyPattern(rf"(?:{_PREFIX}/)?{_NAME}")
_VALUE = LazyPattern(rf"(?:{_NAME})?")
_SET = LazyPattern(r"^(\S+)\s+(in|notin)\s*\((.*)\)$")
_EQ = LazyPattern(r"^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(.*)$")


def _split(selector: str) -> list[str] | None:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        return None
    parts.append("".join(current))
    return parts


def _key_problem(key: str) -> str | None:
    if not _KEY.fullmatch(key):
        return f"invalid label key {key!r}"
    if "/" in key and len(key.split("/", 1)[0]) > 253:
        return f"label key prefix of {key!r} is longer than 253 characters"
    return None


def selector_problem(selector: str) -> str | None:
    """None when `selector` parses as a label selector, else why not."""
    text = selector.strip()
    if not text:
        return None
    parts = _split(text)
    if parts is None:
        return f"unbalanced parentheses in {selector!r}"
    for raw in parts:
        part = raw.strip()
        if not part:
            return f"empty requirement in {selector!r}"
        found = _SET.match(part)
        if found:
            key, _, values = found.groups()
            problem = _key_problem(key)
            if problem:
                return problem
            for value in (v.strip() for v in values.split(",")):
                if not _VALUE.fullmatch(value):
                    return f"invalid label value {value!r} in {part!r}"
            continue
        if part.startswith("!"):
            problem = _key_problem(part[1:].strip())
            if problem:
                return problem
            continue
        found = _EQ.match(part)
        if found:
            key, operator, value = found.groups()
            problem = _key_problem(key)
            if problem:
                return problem
            value = value.strip()
            if operator in ("<", ">"):
                if not re.fullmatch(r"-?\d+", value):
                    return f"{part!r}: {operator} needs an integer"
            elif not _VALUE.fullmatch(value):
                return f"invalid label value {value!r} in {part!r}"
            continue
        problem = _key_problem(part)
        if problem:
            return problem
    return None
