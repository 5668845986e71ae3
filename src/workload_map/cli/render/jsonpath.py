"""kubectl's JSONPath templates (`-o jsonpath=...`, and the columns of `-o custom-columns`), over plain JSON data.

The subset kubectl documents (kubernetes.io/docs/reference/kubectl/jsonpath/):

* text outside braces is printed as is; `{"text"}` is a quoted literal (`\\n`, `\\t`, `\\\\`, `\\"` escapes);
* `{.a.b}`, `{['a']}`, `{@}`: fields of the current object (the data, or a `{range}`'s element); `{$.a}` from
  the root even inside a range;
* `[*]` every element (an object's values, by key), `[n]` and `[-n]` an index, `[a:b]` / `[a:b:c]` a slice,
  `['a','b']` a union of fields (a dotted name that is not a key is a path, `['metadata.name']`), `..name`
  recursive descent, `\\.` a dot inside a bare name (`.metadata.labels.app\\.kubernetes\\.io/name`);
* `[?(@.x=="y")]` a filter over a list's elements: `==`, `!=`, `<`, `<=`, `>`, `>=` between `@`-paths, quoted
  strings, numbers, `true`, `false` and `null`, or `[?(@.x)]` (present and not null, false or empty);
* `{range EXPR}...{end}`: the template between once per result of EXPR, as the current object;
* `{.a,.b}`: several expressions in one action.

As kubectl prints `-o jsonpath`, a missing field prints nothing (never an error); the results of one action are
joined by a space; strings print as they are, numbers and booleans as JSON, objects and lists as compact JSON.
A template that does not parse is a `JSONPathError` naming what is wrong and where (the CLI's exit 2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from workload_map._regex import LazyPattern
from workload_map.cli.render.jsonpath_error import JSONPathError

__all__ = ["JSONPathError", "Template", "compile_template", "to_text"]

MAX_TEMPLATE: Final = 10_000  # characters; a template is typed by a person
MAX_DEPTH: Final = 64  # nested ranges and filters


# --- the parsed form -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    names: tuple[str, ...]  # one name, or a union ['a','b']


@dataclass(frozen=True)
class _All:
    pass


@dataclass(frozen=True)
class _Index:
    start: int | None
    stop: int | None = None
    step: int | None = None
    single: bool = True


@dataclass(frozen=True)
class _Descend:
    pass


@dataclass(frozen=True)
class _Filter:
    left: _Operand
    op: str  # "" for a presence test
    right: _Operand | None


@dataclass(frozen=True)
class _Operand:
    path: _Path | None = None
    value: Any = None


@dataclass(frozen=True)
class _Path:
    from_root: bool
    steps: tuple[_Field | _All | _Index | _Descend | _Filter, ...]


@dataclass(frozen=True)
class _Literal:
    text: str


@dataclass(frozen=True)
class _Action:
    paths: tuple[_Path, ...]


@dataclass(frozen=True)
class _Range:
    path: _Path
    body: tuple[_Literal | _Action | _Range, ...]


_Node = _Literal | _Action | _Range


# --- parsing ----------------------------------------------------------------------------------------------------

_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}
_NUMBER: Final = LazyPattern(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_NAME_END: Final = frozenset(".[,)=!<> \t\n}")


class _Parser:
    """One pass over an action's text (`src`), `pos` the next character."""

    def __init__(self, src: str, offset: int) -> None:
        self.src = src
        self.pos = 0
        self.offset = offset  # where the action starts in the template, for messages

    def fail(self, what: str) -> JSONPathError:
        return JSONPathError(f"{what} at character {self.offset + self.pos + 1}")

    def peek(self, text: str) -> bool:
        return self.src.startswith(text, self.pos)

    def skip_space(self) -> None:
        while self.pos < len(self.src) and self.src[self.pos] in " \t\n":
            self.pos += 1

    def done(self) -> bool:
        self.skip_space()
        return self.pos >= len(self.src)

    def quoted(self) -> str:
        quote = self.src[self.pos]
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.src):
            char = self.src[self.pos]
            if char == "\\" and self.pos + 1 < len(self.src):
                nxt = self.src[self.pos + 1]
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                self.pos += 2
                continue
            if char == quote:
                self.pos += 1
                return "".join(out)
            out.append(char)
            self.pos += 1
        raise self.fail(f"unterminated quoted string {quote}...{quote}")

    def name(self) -> str:
        """A bare name; `\\.` is a dot inside it (`.metadata.labels.app\\.kubernetes\\.io/name`)."""
        out: list[str] = []
        while self.pos < len(self.src) and self.src[self.pos] not in _NAME_END:
            if self.src[self.pos] == "\\" and self.pos + 1 < len(self.src):
                self.pos += 1
            out.append(self.src[self.pos])
            self.pos += 1
        return "".join(out)

    def path(self, depth: int) -> _Path:
        if depth > MAX_DEPTH:
            raise self.fail(f"more than {MAX_DEPTH} nested filters")
        self.skip_space()
        from_root = False  # relative to the current object: the root, or a {range}'s element
        if self.peek("$"):
            self.pos += 1
            from_root = True
        elif self.peek("@"):
            self.pos += 1
        steps: list[_Field | _All | _Index | _Descend | _Filter] = []
        while self.pos < len(self.src):
            if self.peek(".."):
                self.pos += 2
                steps.append(_Descend())
                if self.peek("["):
                    continue
                steps.append(self.field_step())
            elif self.peek("."):
                self.pos += 1
                if self.peek(".") or self.peek("["):
                    raise self.fail("a name is missing after '.'")
                steps.append(self.field_step())
            elif self.peek("["):
                steps.append(self.bracket(depth))
            else:
                break
        return _Path(from_root, tuple(steps))

    def field_step(self) -> _Field | _All:
        if self.peek("*"):
            self.pos += 1
            return _All()
        name = self.name()
        if not name:
            raise self.fail("a name is missing after '.'")
        return _Field((name,))

    def bracket(self, depth: int) -> _Field | _All | _Index | _Filter:
        self.pos += 1  # [
        self.skip_space()
        if self.peek("*"):
            self.pos += 1
            self.close("]")
            return _All()
        if self.peek("?"):
            self.pos += 1
            self.skip_space()
            self.close("(")
            found = self.filter(depth)
            self.close(")")
            self.close("]")
            return found
        if self.peek("'") or self.peek('"'):
            names = [self.quoted()]
            self.skip_space()
            while self.peek(","):
                self.pos += 1
                self.skip_space()
                if not (self.peek("'") or self.peek('"')):
                    raise self.fail("a union lists quoted names: ['a','b']")
                names.append(self.quoted())
                self.skip_space()
            self.close("]")
            return _Field(tuple(names))
        return self.index()

    def index(self) -> _Index:
        end = self.src.find("]", self.pos)
        if end < 0:
            raise self.fail("unclosed '['")
        text = self.src[self.pos : end].replace(" ", "")
        parts = text.split(":")
        if len(parts) > 3 or not text:
            raise self.fail(f"invalid subscript [{text}]")
        numbers: list[int | None] = []
        for part in parts:
            if part == "":
                numbers.append(None)
            elif re.fullmatch(r"-?\d+", part):
                numbers.append(int(part))
            else:
                raise self.fail(f"invalid subscript [{text}]: use a number, a slice a:b:c, *, a quoted name or ?()")
        self.pos = end + 1
        if len(numbers) == 1:
            return _Index(numbers[0])
        if len(numbers) == 3 and numbers[2] == 0:
            raise self.fail("a slice's step cannot be 0")
        return _Index(numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else None, single=False)

    def close(self, char: str) -> None:
        self.skip_space()
        if not self.peek(char):
            found = self.src[self.pos] if self.pos < len(self.src) else "the end"
            raise self.fail(f"expected {char!r}, found {found!r}")
        self.pos += 1

    def operand(self, depth: int) -> _Operand:
        self.skip_space()
        if self.peek("@") or self.peek("$"):
            return _Operand(path=self.path(depth + 1))
        if self.peek("'") or self.peek('"'):
            return _Operand(value=self.quoted())
        for word, value in (("true", True), ("false", False), ("null", None)):
            if self.peek(word):
                self.pos += len(word)
                return _Operand(value=value)
        match = _NUMBER.match(self.src, self.pos)
        if match:
            self.pos = match.end()
            number = match.group()
            return _Operand(value=float(number) if any(c in number for c in ".eE") else int(number))
        raise self.fail("a filter compares @-paths, quoted strings, numbers, true, false or null")

    def filter(self, depth: int) -> _Filter:
        left = self.operand(depth)
        self.skip_space()
        for op in ("==", "!=", "<=", ">=", "<", ">"):
            if self.peek(op):
                self.pos += len(op)
                return _Filter(left, op, self.operand(depth))
        if left.path is None:
            raise self.fail("a filter without a comparison tests an @-path: ?(@.ready)")
        return _Filter(left, "", None)


def _split_actions(template: str) -> Iterator[tuple[str, str, int]]:
    """(`"text"`, text, offset) and (`"action"`, inside the braces, offset), in order."""
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        if start < 0:
            yield "text", template[pos:], pos
            return
        if start > pos:
            yield "text", template[pos:start], pos
        end = _closing(template, start)
        yield "action", template[start + 1 : end], start + 1
        pos = end + 1


def _closing(template: str, start: int) -> int:
    """The `}` that closes the action opened at `start` (braces inside quotes do not count)."""
    quote = ""
    pos = start + 1
    while pos < len(template):
        char = template[pos]
        if quote:
            if char == "\\":
                pos += 2
                continue
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "}":
            return pos
        elif char == "{":
            raise JSONPathError(f"unexpected '{{' inside an action at character {pos + 1}")
        pos += 1
    raise JSONPathError(f"unclosed action: '{{' at character {start + 1} has no '}}'")


def _top_level_commas(text: str) -> list[tuple[str, int]]:
    parts: list[tuple[str, int]] = []
    depth, quote, begin = 0, "", 0
    for index, char in enumerate(text):
        if quote:
            if char == quote and text[index - 1] != "\\":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append((text[begin:index], begin))
            begin = index + 1
    parts.append((text[begin:], begin))
    return parts


def _parse_path(text: str, offset: int) -> _Path:
    parser = _Parser(text, offset)
    found = parser.path(0)
    if not parser.done():
        raise parser.fail(f"unexpected {parser.src[parser.pos]!r}")
    return found


def _parse_action(text: str, offset: int) -> _Literal | _Action | tuple[str, _Path | None]:
    stripped = text.strip()
    lead = offset + (len(text) - len(text.lstrip()))
    if not stripped:
        raise JSONPathError(f"empty action {{}} at character {offset}")
    if stripped == "end":
        return ("end", None)
    if stripped.startswith("range ") or stripped == "range":
        rest = stripped[5:]
        if not rest.strip():
            raise JSONPathError(f"{{range}} needs an expression, {{range .items[*]}}, at character {lead + 1}")
        return ("range", _parse_path(rest, lead + 5))
    if stripped[0] in "'\"":
        parser = _Parser(stripped, lead)
        literal = parser.quoted()
        if not parser.done():
            raise parser.fail("text after a quoted literal")
        return _Literal(literal)
    paths = []
    for part, where in _top_level_commas(text):
        if not part.strip():
            raise JSONPathError(f"empty expression in a ',' list at character {offset + where + 1}")
        paths.append(_parse_path(part, offset + where))
    return _Action(tuple(paths))


def compile_template(template: str) -> Template:
    """Parse a template once; `JSONPathError` (one line, where) when it is not kubectl's JSONPath."""
    if len(template) > MAX_TEMPLATE:
        raise JSONPathError(f"the template is longer than {MAX_TEMPLATE:,} characters")
    stack: list[list[_Node]] = [[]]
    ranges: list[tuple[_Path, int]] = []
    for kind, text, offset in _split_actions(template):
        if kind == "text":
            stack[-1].append(_Literal(text))
            continue
        parsed = _parse_action(text, offset)
        if isinstance(parsed, tuple):
            word, path = parsed
            if word == "range" and path is not None:
                if len(ranges) >= MAX_DEPTH:
                    raise JSONPathError(f"more than {MAX_DEPTH} nested {{range}}")
                ranges.append((path, offset))
                stack.append([])
            else:
                if not ranges:
                    raise JSONPathError(f"{{end}} without a {{range}} at character {offset}")
                body = stack.pop()
                opened, _ = ranges.pop()
                stack[-1].append(_Range(opened, tuple(body)))
            continue
        stack[-1].append(parsed)
    if ranges:
        raise JSONPathError(f"{{range}} at character {ranges[-1][1]} has no {{end}}")
    return Template(tuple(stack[0]))


# --- evaluation -------------------------------------------------------------------------------------------------


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value[key] for key in sorted(value)]
    if isinstance(value, list):
        return list(value)
    return []


def _descendants(value: Any) -> Iterator[Any]:
    yield value
    for child in _children(value):
        yield from _descendants(child)


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "==":
        return bool(_same(left, right))
    if op == "!=":
        return not _same(left, right)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if not numbers and not (isinstance(left, str) and isinstance(right, str)):
        return False
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    return bool(left == right)


def _operand(operand: _Operand, current: Any, root: Any) -> tuple[bool, Any]:
    """(found, value): a path's first result, or the literal."""
    if operand.path is None:
        return True, operand.value
    for found in _eval_path(operand.path, current, root):
        return True, found
    return False, None


def _matches(step: _Filter, element: Any, root: Any) -> bool:
    found, left = _operand(step.left, element, root)
    if not step.op:
        return found and left not in (None, False, "", [], {})
    if step.right is None:
        return False
    right_found, right = _operand(step.right, element, root)
    if not found or not right_found:
        return step.op == "!=" and found != right_found
    return _compare(left, step.op, right)


def _key(value: dict[str, Any], name: str) -> list[Any]:
    """The field `name`; a quoted name with dots that is not a key is a path, as kubectl's union reads
    `['metadata.name', 'status']`."""
    if name in value:
        return [value[name]]
    if "." not in name:
        return []
    found: list[Any] = [value]
    for part in name.split("."):
        found = [item[part] for item in found if isinstance(item, dict) and part in item]
    return found


def _apply(step: _Field | _All | _Index | _Descend | _Filter, values: list[Any], root: Any) -> list[Any]:
    out: list[Any] = []
    if isinstance(step, _Field):
        for value in values:
            if isinstance(value, dict):
                out += [found for name in step.names for found in _key(value, name)]
    elif isinstance(step, _All):
        for value in values:
            out += _children(value)
    elif isinstance(step, _Descend):
        for value in values:
            out += list(_descendants(value))
    elif isinstance(step, _Index):
        for value in values:
            if not isinstance(value, list):
                continue
            if step.single:
                index = step.start or 0
                if -len(value) <= index < len(value):
                    out.append(value[index])
            else:
                out += value[step.start : step.stop : step.step]
    else:
        for value in values:
            candidates = value if isinstance(value, list) else [value]
            out += [element for element in candidates if _matches(step, element, root)]
    return out


def _eval_path(path: _Path, current: Any, root: Any) -> list[Any]:
    values = [root if path.from_root else current]
    for step in path.steps:
        values = _apply(step, values, root)
        if not values:
            break
    return values


def to_text(value: Any) -> str:
    """One result as kubectl prints it: a string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class Template:
    """A parsed template: `render(data)` is the text kubectl would print, `results(data)` the values of a single
    expression (custom columns)."""

    nodes: tuple[_Node, ...]

    def render(self, data: Any, escape: Callable[[str], str] | None = None) -> str:
        """The text; `escape` is applied to each value's text (not to the template's own text)."""
        out: list[str] = []
        self._run(self.nodes, data, data, out, escape or _same_text)
        return "".join(out)

    def results(self, data: Any) -> list[Any]:
        """The values of every expression of the template, in order (its text is left out)."""
        found: list[Any] = []
        for node in self.nodes:
            if isinstance(node, _Action):
                for path in node.paths:
                    found += _eval_path(path, data, data)
        return found

    def _run(
        self, nodes: Sequence[_Node], current: Any, root: Any, out: list[str], escape: Callable[[str], str]
    ) -> None:
        for node in nodes:
            if isinstance(node, _Literal):
                out.append(node.text)
            elif isinstance(node, _Action):
                values = [value for path in node.paths for value in _eval_path(path, current, root)]
                out.append(" ".join(escape(to_text(value)) for value in values))
            else:
                for element in _eval_path(node.path, current, root):
                    self._run(node.body, element, root, out, escape)


def _same_text(text: str) -> str:
    return text
