"""A parser for the jq language exactly as libjq 1.8 reads it, and its inverse `unparse`.

Why our own parser: the static safety check (`workload_map.jq.safety`) must see the same program libjq will run.
Any expression this parser accepts but reads differently from libjq would be a way around the check, so the
lexer and grammar follow jq 1.8's `lexer.l` / `parser.y` rule by rule (longest-match tokens, comment
continuation with a trailing backslash, `?//` as one token, keywords as object keys, `def` and `as` bodies that
extend to the end of the enclosing query, `try` binding a single postfix term, the operator table below).
tests/unit/test_jq_parser.py checks accept/reject decisions and operator grouping against libjq itself.

Deliberate differences (we reject, libjq accepts): `module`/`import`/`include` directives, and a NUL character
anywhere (the PyPI binding hands libjq a C string, so libjq would silently ignore everything after it).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from typing import Any, Final, NamedTuple

from workload_map.jq.ast import (
    ArrayPattern,
    Binary,
    Bind,
    Break,
    Call,
    Collect,
    Comma,
    Foreach,
    Format,
    FuncDef,
    FuncDefine,
    Identity,
    If,
    Index,
    Iterate,
    Label,
    Literal,
    Loc,
    Neg,
    Node,
    Number,
    ObjectCons,
    ObjectEntry,
    ObjectPattern,
    ObjectPatternEntry,
    Pattern,
    Pipe,
    RecurseAll,
    Reduce,
    Slice,
    String,
    Try,
    Var,
    VarNoCopy,
    VarPattern,
)
from workload_map.jq.errors import JqParseError

__all__ = ["ASSIGNMENT_OPERATORS", "BINARY_OPERATORS", "KEYWORDS", "MAX_DEPTH", "parse", "unparse"]

KEYWORDS: Final = frozenset(
    {
        "as", "import", "include", "module", "def", "if", "then", "else", "elif", "and", "or", "end",
        "reduce", "foreach", "try", "catch", "label", "break",
    }
)  # fmt: skip

# Binary operators inside an expression: (level, associativity). Higher level binds tighter. `|` and `,`
# sit below all of these (query level). From jq 1.8 parser.y's precedence declarations.
BINARY_OPERATORS: Final[dict[str, tuple[int, str]]] = {
    "//": (1, "right"),
    "=": (2, "nonassoc"),
    "|=": (2, "nonassoc"),
    "+=": (2, "nonassoc"),
    "-=": (2, "nonassoc"),
    "*=": (2, "nonassoc"),
    "/=": (2, "nonassoc"),
    "%=": (2, "nonassoc"),
    "//=": (2, "nonassoc"),
    "or": (3, "left"),
    "and": (4, "left"),
    "==": (5, "nonassoc"),
    "!=": (5, "nonassoc"),
    "<": (5, "nonassoc"),
    "<=": (5, "nonassoc"),
    ">": (5, "nonassoc"),
    ">=": (5, "nonassoc"),
    "+": (6, "left"),
    "-": (6, "left"),
    "*": (7, "left"),
    "/": (7, "left"),
    "%": (7, "left"),
}
ASSIGNMENT_OPERATORS: Final = frozenset(op for op, (level, _) in BINARY_OPERATORS.items() if level == 2)

# ---------------------------------------------------------------------------------------------------------
# Lexer


class _Token(NamedTuple):
    kind: str  # an operator/keyword spelling, or IDENT FIELD BINDING LITERAL FORMAT LOC QQ_START QQ_TEXT
    #            QQ_INTERP_START QQ_INTERP_END QQ_END EOF
    value: str
    pos: int


_ESCAPES_RE: Final = re.compile(r"(?:\\[^u(]|\\u[a-zA-Z0-9]{0,4})+")
_QQ_TEXT_RE: Final = re.compile(r'[^\\"]+')
_OPENERS: Final = {"(": ")", "[": "]", "{": "}"}
_SIMPLE_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "t": "\t", "n": "\n", "r": "\r"}


def _position(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


def _fail(text: str, pos: int, message: str) -> JqParseError:
    return JqParseError(text, f"{message} at {_position(text, pos)}")


def _unhex4(s: str) -> int:
    if len(s) != 4 or any(c not in "0123456789abcdefABCDEF" for c in s):
        return -1
    return int(s, 16)


def _decode_escapes(text: str, raw: str, pos: int) -> str:
    """Decode a run of backslash escapes the way libjq's JSON string parser does."""
    out: list[str] = []
    i = 0
    n = len(raw)
    while i < n:
        # raw consists only of escapes (see _ESCAPES_RE): raw[i] is a backslash
        c = raw[i + 1]
        i += 2
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
            continue
        if c != "u":
            raise _fail(text, pos, "invalid escape in string literal")
        if i + 4 > n:
            raise _fail(text, pos, "invalid \\uXXXX escape in string literal")
        code = _unhex4(raw[i : i + 4])
        if code < 0:
            raise _fail(text, pos, "invalid characters in \\uXXXX escape in string literal")
        i += 4
        if 0xD800 <= code <= 0xDBFF:
            low = _unhex4(raw[i + 2 : i + 6]) if i + 6 <= n and raw[i : i + 2] == "\\u" else -1
            if not 0xDC00 <= low <= 0xDFFF:
                raise _fail(text, pos, "invalid \\uXXXX\\uXXXX surrogate pair escape in string literal")
            i += 6
            code = 0x10000 + (((code - 0xD800) << 10) | (low - 0xDC00))
        elif 0xDC00 <= code <= 0xDFFF:
            code = 0xFFFD  # libjq turns a lone low surrogate into the replacement character
        out.append(chr(code))
    return "".join(out)


def _skip_comment(text: str, i: int) -> int:
    """Index after a `#` comment starting at i: it ends at a newline, unless the newline is escaped with a
    backslash (jq 1.7+: `\\` + newline continues the comment; `\\\\` is an escaped backslash)."""
    n = len(text)
    i += 1
    while i < n:
        c = text[i]
        if c == "\\":
            if text.startswith("\\\\", i):
                i += 2
                continue
            if text.startswith("\\\r\n", i):
                i += 3
                continue
            if text.startswith("\\\n", i):
                i += 2
                continue
            i += 1
            continue
        if c == "\n":
            return i + 1
        if text.startswith("\r\n", i):
            return i + 2
        i += 1
    return n


# One pattern for the code (non-string) state. Alternatives are ordered so that the first match is flex's
# longest match: at "." a field, a number, ".." and "." differ by the next character; operators longest first.
_CODE_RE: Final = re.compile(
    r"(?P<ws>[ \r\n\t]+)"
    r"|(?P<ident>(?:[a-zA-Z_][a-zA-Z_0-9]*::)*[a-zA-Z_][a-zA-Z_0-9]*)"
    r"|(?P<binding>\$(?:[a-zA-Z_][a-zA-Z_0-9]*::)*[a-zA-Z_][a-zA-Z_0-9]*)"
    r"|(?P<field>\.[a-zA-Z_][a-zA-Z_0-9]*)"
    r"|(?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<op>//=|\?//|!=|==|//|\|=|\+=|-=|\*=|/=|%=|<=|>=|\.\.|[.?=;,:|+\-*/%$<>])"
    r"|(?P<format>@[a-zA-Z0-9_]+)"
    r"|(?P<open>[(\[{])"
    r"|(?P<close>[)\]}])"
    r'|(?P<quote>")'
    r"|(?P<comment>\#)"
)


def _tokenize(text: str) -> list[_Token]:
    if "\x00" in text:
        raise _fail(text, text.index("\x00"), "NUL character in expression")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(text, exc.start, "invalid character (lone surrogate) in expression") from None
    tokens: list[_Token] = []
    append = tokens.append
    # The lexer's start-condition stack: "(", "[", "{" for brackets, "interp" inside `\(...)`, '"' in a string.
    stack: list[str] = []
    i = 0
    n = len(text)
    code_match = _CODE_RE.match
    while True:
        if stack and stack[-1] == '"':
            if i >= n:
                raise _fail(text, i, "unterminated string literal")
            if text.startswith("\\(", i):
                append(_Token("QQ_INTERP_START", "", i))
                stack.append("interp")
                i += 2
                continue
            if text[i] == '"':
                append(_Token("QQ_END", "", i))
                stack.pop()
                i += 1
                continue
            m = _ESCAPES_RE.match(text, i)
            if m:
                append(_Token("QQ_TEXT", _decode_escapes(text, m.group(), i), i))
                i = m.end()
                continue
            m = _QQ_TEXT_RE.match(text, i)
            if m:
                append(_Token("QQ_TEXT", m.group(), i))
                i = m.end()
                continue
            raise _fail(text, i, "invalid character in string literal")
        if i >= n:
            append(_Token("EOF", "", n))
            return tokens
        m = code_match(text, i)
        if m is None:
            raise _fail(text, i, f"invalid character {text[i]!r}")
        group = m.lastgroup
        value = m.group()
        if group == "ws":
            pass
        elif group == "ident":
            append(_Token(value if value in KEYWORDS else "IDENT", value, i))
        elif group in {"op", "open"}:
            append(_Token(value, value, i))
            if group == "open":
                stack.append(value)
        elif group == "field":
            append(_Token("FIELD", value[1:], i))
        elif group == "binding":
            if value == "$__loc__":
                append(_Token("LOC", "__loc__", i))
            else:
                append(_Token("BINDING", value[1:], i))
        elif group == "number":
            append(_Token("LITERAL", value, i))
        elif group == "quote":
            append(_Token("QQ_START", "", i))
            stack.append('"')
        elif group == "format":
            append(_Token("FORMAT", value[1:], i))
        elif group == "close":
            top = stack[-1] if stack else None
            if top == "interp" and value == ")":
                append(_Token("QQ_INTERP_END", "", i))
                stack.pop()
            elif top is not None and top != "interp" and _OPENERS[top] == value:
                append(_Token(value, value, i))
                stack.pop()
            else:
                raise _fail(text, i, f"unexpected {value!r}")
        else:  # comment
            i = _skip_comment(text, i)
            continue
        i = m.end()


# ---------------------------------------------------------------------------------------------------------
# Constant folding, only as far as libjq does it to reject constant non-string object keys (`{(1): 2}`).

_NOT_CONST: Final = object()


def _const_value(node: Node) -> Any:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Loc):
        return {"file": "<top-level>", "line": node.line}
    if isinstance(node, String):
        value = node.constant
        return _NOT_CONST if value is None else value
    if isinstance(node, Collect):
        if node.body is None:
            return []
        items: list[Any] = []
        body: Node = node.body
        while isinstance(body, Comma):  # libjq folds only a left-nested chain of constants
            value = _const_value(body.right)
            if value is _NOT_CONST or isinstance(body.right, Comma):
                return _NOT_CONST
            items.append(value)
            body = body.left
        value = _const_value(body)
        if value is _NOT_CONST:
            return _NOT_CONST
        items.append(value)
        return items[::-1]
    if isinstance(node, ObjectCons):
        obj: dict[str, Any] = {}
        for entry in node.entries:
            if entry.value is None:
                return _NOT_CONST
            key = _const_value(entry.key)
            value = _const_value(entry.value)
            if not isinstance(key, str) or value is _NOT_CONST:
                return _NOT_CONST
            obj[key] = value
        return obj
    if isinstance(node, Binary):
        left = _const_value(node.left)
        right = _const_value(node.right)
        if left is _NOT_CONST or right is _NOT_CONST:
            return _NOT_CONST
        return _fold(node.op, left, right)
    return _NOT_CONST


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
        return _NOT_CONST
    if op == "-":
        if _is_number(a) and _is_number(b):
            return a - b
        if isinstance(a, list) and isinstance(b, list):
            return [x for x in a if x not in b]
        return _NOT_CONST
    if op == "*":
        if _is_number(a) and _is_number(b):
            return a * b
        if (isinstance(a, str) and _is_number(b)) or (isinstance(b, str) and _is_number(a)):
            s, k = (a, b) if isinstance(a, str) else (b, a)
            return None if k < 0 else s * max(int(k), 1 if k > 0 else 0)
        if isinstance(a, dict) and isinstance(b, dict):
            return {**a, **b}
        return _NOT_CONST
    if op == "/":
        if _is_number(a) and _is_number(b):
            return _NOT_CONST if b == 0 else a / b
        if isinstance(a, str) and isinstance(b, str):
            return a.split(b) if b else list(a)
        return _NOT_CONST
    if op == "%":
        if _is_number(a) and _is_number(b):
            if math.isnan(a) or math.isnan(b) or math.isinf(b) or int(b) == 0:
                return _NOT_CONST
            return 0
        return _NOT_CONST
    return _NOT_CONST


def _kind_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object"


# ---------------------------------------------------------------------------------------------------------
# Parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.last_expr_had_operator = False  # set by parse_expr: did its outermost level apply an operator?

    # -- token helpers
    def peek(self, offset: int = 0) -> _Token:
        if offset == 0:
            return self.tokens[self.i]  # i never passes the final EOF token
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def at(self, kind: str) -> bool:
        return self.tokens[self.i].kind == kind

    def advance(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def expect(self, kind: str, what: str | None = None) -> _Token:
        tok = self.peek()
        if tok.kind != kind:
            raise self.error(tok, f"expected {what or repr(kind)}")
        return self.advance()

    def error(self, tok: _Token, expected: str | None = None) -> JqParseError:
        if tok.kind == "EOF":
            found = "end of expression"
        elif tok.kind in ("IDENT", "FIELD", "LITERAL"):
            found = repr(("." if tok.kind == "FIELD" else "") + tok.value)
        elif tok.kind == "BINDING":
            found = repr("$" + tok.value)
        elif tok.kind == "FORMAT":
            found = repr("@" + tok.value)
        elif tok.kind.startswith("QQ"):
            found = "string"
        elif tok.kind == "LOC":
            found = "'$__loc__'"
        else:
            found = repr(tok.kind)
        message = f"unexpected {found}" + (f", {expected}" if expected else "")
        return _fail(self.text, tok.pos, f"syntax error: {message}")

    # -- program
    def parse_program(self) -> Node:
        tok = self.peek()
        if tok.kind in ("module", "import", "include"):
            raise _fail(
                self.text, tok.pos, f"'{tok.kind}' directives are not supported (definitions are self-contained)"
            )
        if tok.kind == "EOF":
            raise _fail(self.text, tok.pos, "empty expression (use '.' for the whole object)")
        node = self.parse_pipe()
        if not self.at("EOF"):
            raise self.error(self.peek(), "expected end of expression")
        return node

    # -- query level: `|` (right), `,` (left); def / label / `as` bodies extend as far right as possible
    def parse_pipe(self) -> Node:
        left = self.parse_comma()
        if self.at("|"):
            self.advance()
            return Pipe(left, self.parse_pipe())
        return left

    def parse_comma(self) -> Node:
        left = self.parse_comma_item()
        while self.at(","):
            self.advance()
            left = Comma(left, self.parse_comma_item())
        return left

    def parse_comma_item(self) -> Node:
        tok = self.peek()
        if tok.kind == "def":
            definition = self.parse_funcdef()
            if self.at("EOF"):
                raise _fail(self.text, self.peek().pos, "a definition must be followed by an expression")
            return FuncDefine(definition, self.parse_pipe())
        if tok.kind == "label":
            self.advance()
            name = self.expect("BINDING", "expected '$name' after 'label'").value
            self.expect("|", "expected '|' after 'label $name'")
            return Label(name, self.parse_pipe())
        expr = self.parse_expr(1)
        if self.at("as"):
            bare = self.last_expr_had_operator
            self.advance()
            patterns = self.parse_patterns()
            self.expect("|", "expected '|' after the 'as' pattern")
            return Bind(expr, patterns, self.parse_pipe(), bare_source=bare)
        return expr

    def parse_funcdef(self) -> FuncDef:
        self.expect("def")
        name = self.expect("IDENT", "expected a function name after 'def'").value
        params: list[str] = []
        if self.at("("):
            self.advance()
            while True:
                tok = self.peek()
                if tok.kind == "BINDING":
                    params.append("$" + tok.value)
                elif tok.kind == "IDENT":
                    params.append(tok.value)
                else:
                    raise self.error(tok, "expected a parameter name")
                self.advance()
                if self.at(";"):
                    self.advance()
                    continue
                self.expect(")", "expected ';' or ')' in the parameter list")
                break
        self.expect(":", "expected ':' after the function name")
        body = self.parse_pipe()
        self.expect(";", "expected ';' after the function body")
        return FuncDef(name, tuple(params), body)

    # -- expression level: binary operators by precedence climbing
    def parse_expr(self, min_level: int) -> Node:
        left = self.parse_term()
        last_nonassoc: int | None = None
        consumed = False
        while True:
            tok = self.peek()
            spec = BINARY_OPERATORS.get(tok.kind)
            if spec is None or spec[0] < min_level:
                self.last_expr_had_operator = consumed
                return left
            level, assoc = spec
            if assoc == "nonassoc" and last_nonassoc == level:
                raise self.error(tok, "this operator does not chain; add parentheses")
            self.advance()
            right = self.parse_expr(level if assoc == "right" else level + 1)
            left = Binary(tok.kind, left, right)
            consumed = True
            last_nonassoc = level if assoc == "nonassoc" else None

    # -- terms
    def parse_term(self) -> Node:
        tok = self.peek()
        if tok.kind == "-":
            self.advance()
            return Neg(self.parse_term())
        if tok.kind == "try":
            self.advance()
            body = self.parse_term()
            handler = None
            if self.at("catch"):
                self.advance()
                handler = self.parse_term()
            return Try(body, handler)
        return self.parse_postfix(self.parse_primary())

    def at_string_start(self, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok.kind == "QQ_START" or (tok.kind == "FORMAT" and self.peek(offset + 1).kind == "QQ_START")

    def parse_string(self) -> String:
        fmt = None
        if self.at("FORMAT"):
            fmt = self.advance().value
        self.expect("QQ_START")
        parts: list[str | Node] = []
        while True:
            tok = self.advance()
            if tok.kind == "QQ_END":
                break
            if tok.kind == "QQ_TEXT":
                if parts and isinstance(parts[-1], str):
                    parts[-1] += tok.value
                else:
                    parts.append(tok.value)
            elif tok.kind == "QQ_INTERP_START":
                parts.append(self.parse_pipe())
                self.expect("QQ_INTERP_END", "expected ')' to close the string interpolation")
            else:  # pragma: no cover - the lexer only emits string tokens here
                raise self.error(tok)
        return String(tuple(parts), fmt)

    def optional(self, node: Index | Slice | Iterate) -> Node:
        if not self.at("?"):
            return node
        self.advance()
        if isinstance(node, Iterate):
            return Iterate(node.target, True)
        if isinstance(node, Slice):
            return Slice(node.target, node.start, node.end, True)
        return Index(node.target, node.key, True)

    def parse_primary(self) -> Node:
        tok = self.peek()
        kind = tok.kind
        if kind == ".":
            self.advance()
            if self.at_string_start():
                return self.optional(Index(Identity(), self.parse_string()))
            return Identity()
        if kind == "..":
            self.advance()
            return RecurseAll()
        if kind == "FIELD":
            self.advance()
            return self.optional(Index(Identity(), String((tok.value,))))
        if kind == "LITERAL":
            self.advance()
            return _number(tok.value)
        if self.at_string_start():
            return self.parse_string()
        if kind == "FORMAT":
            self.advance()
            return Format(tok.value)
        if kind == "(":
            self.advance()
            node = self.parse_pipe()
            self.expect(")", "expected ')'")
            return node
        if kind == "[":
            self.advance()
            if self.at("]"):
                self.advance()
                return Collect(None)
            body = self.parse_pipe()
            self.expect("]", "expected ']'")
            return Collect(body)
        if kind == "{":
            return self.parse_object()
        if kind in ("reduce", "foreach"):
            return self.parse_reduce_foreach()
        if kind == "if":
            return self.parse_if()
        if kind == "$":
            if self.peek(1).kind == "$" and self.peek(2).kind == "$" and self.peek(3).kind == "BINDING":
                self.i += 3
                return VarNoCopy(self.advance().value)
            raise self.error(tok, "expected a variable name")
        if kind == "BINDING":
            self.advance()
            return Var(tok.value)
        if kind == "LOC":
            self.advance()
            return Loc(self.text.count("\n", 0, tok.pos) + 1)
        if kind == "IDENT":
            self.advance()
            if self.at("("):
                self.advance()
                args = [self.parse_pipe()]
                while self.at(";"):
                    self.advance()
                    args.append(self.parse_pipe())
                self.expect(")", "expected ';' or ')' in the argument list")
                return Call(tok.value, tuple(args))
            if tok.value in ("null", "true", "false"):
                return Literal(None if tok.value == "null" else tok.value == "true")
            return Call(tok.value)
        if kind == "break":
            self.advance()
            return Break(self.expect("BINDING", "expected '$label' after 'break'").value)
        raise self.error(tok)

    def parse_postfix(self, node: Node) -> Node:
        while True:
            tok = self.peek()
            if tok.kind == "FIELD":
                self.advance()
                node = self.optional(Index(node, String((tok.value,))))
            elif tok.kind == ".":
                if self.at_string_start(1):
                    self.advance()
                    node = self.optional(Index(node, self.parse_string()))
                elif self.peek(1).kind == "[":
                    self.advance()
                    node = self.parse_bracket(node, dotted=True)
                else:
                    raise self.error(self.peek(1), "expected a field name, a string or '[' after '.'")
            elif tok.kind == "[":
                node = self.parse_bracket(node, dotted=False)
            elif tok.kind == "?":
                self.advance()
                node = Try(node)
            else:
                return node

    def parse_bracket(self, target: Node, dotted: bool) -> Node:
        self.expect("[")
        if self.at("]"):
            self.advance()
            return self.optional(Iterate(target))
        if self.at(":") and not dotted:
            self.advance()
            end = self.parse_pipe()
            self.expect("]", "expected ']'")
            return self.optional(Slice(target, None, end))
        key = self.parse_pipe()
        if self.at(":") and not dotted:
            self.advance()
            if self.at("]"):
                self.advance()
                return self.optional(Slice(target, key, None))
            end = self.parse_pipe()
            self.expect("]", "expected ']'")
            return self.optional(Slice(target, key, end))
        self.expect("]", "expected ']'")
        return self.optional(Index(target, key))

    def parse_reduce_foreach(self) -> Node:
        keyword = self.advance().kind
        source = self.parse_expr(1)
        self.expect("as", f"expected 'as' after the {keyword} source")
        patterns = self.parse_patterns()
        self.expect("(", f"expected '(' after the {keyword} pattern")
        init = self.parse_pipe()
        self.expect(";", f"expected ';' after the {keyword} initial value")
        update = self.parse_pipe()
        if keyword == "reduce":
            self.expect(")", "expected ')' to close reduce")
            return Reduce(source, patterns, init, update)
        extract = None
        if self.at(";"):
            self.advance()
            extract = self.parse_pipe()
        self.expect(")", "expected ')' to close foreach")
        return Foreach(source, patterns, init, update, extract)

    def parse_if(self) -> Node:
        self.expect("if")
        cond = self.parse_pipe()
        self.expect("then", "expected 'then'")
        then = self.parse_pipe()
        elifs: list[tuple[Node, Node]] = []
        otherwise: Node | None = None
        while True:
            tok = self.peek()
            if tok.kind == "elif":
                self.advance()
                c = self.parse_pipe()
                self.expect("then", "expected 'then'")
                elifs.append((c, self.parse_pipe()))
                continue
            if tok.kind == "else":
                self.advance()
                otherwise = self.parse_pipe()
                self.expect("end", "expected 'end'")
                break
            if tok.kind == "end":
                self.advance()
                break
            raise self.error(tok, "expected 'elif', 'else' or 'end'")
        return If(cond, then, tuple(elifs), otherwise)

    # -- object construction
    def check_key(self, key: Node, pos: int) -> None:
        value = _const_value(key)
        if value is not _NOT_CONST and not isinstance(value, str):
            raise _fail(self.text, pos, f"cannot use {_kind_name(value)} ({json.dumps(value)}) as object key")

    def parse_object(self) -> Node:
        self.expect("{")
        entries: list[ObjectEntry] = []
        if self.at("}"):
            self.advance()
            return ObjectCons(())
        while True:
            entries.append(self.parse_object_entry())
            if self.at(","):
                self.advance()
                if self.at("}"):
                    self.advance()
                    break
                continue
            self.expect("}", "expected ',' or '}' in the object")
            break
        return ObjectCons(tuple(entries))

    def parse_dict_value(self) -> Node:
        expr = self.parse_expr(1)
        if self.at("|"):
            self.advance()
            return Pipe(expr, self.parse_dict_value())
        return expr

    def parse_object_entry(self) -> ObjectEntry:
        tok = self.peek()
        kind = tok.kind
        if kind == "IDENT" or kind in KEYWORDS:
            self.advance()
            key = String((tok.value,))
            if self.at(":"):
                self.advance()
                return ObjectEntry(key, self.parse_dict_value())
            return ObjectEntry(key, None)
        if self.at_string_start():
            key = self.parse_string()
            if self.at(":"):
                self.advance()
                return ObjectEntry(key, self.parse_dict_value())
            return ObjectEntry(key, None)
        if kind == "BINDING":
            self.advance()
            if self.at(":"):
                self.advance()
                return ObjectEntry(Var(tok.value), self.parse_dict_value())
            return ObjectEntry(String((tok.value,)), Var(tok.value))
        if kind == "LOC":
            self.advance()
            return ObjectEntry(String(("__loc__",)), Loc(self.text.count("\n", 0, tok.pos) + 1))
        if kind == "(":
            self.advance()
            key_pos = self.peek().pos
            key_node = self.parse_pipe()
            self.expect(")", "expected ')'")
            self.expect(":", "expected ':' after the object key")
            self.check_key(key_node, key_pos)
            return ObjectEntry(key_node, self.parse_dict_value())
        raise self.error(tok, 'expected an object key (name, "string", $var or (expression))')

    # -- destructuring patterns
    def parse_patterns(self) -> tuple[Pattern, ...]:
        patterns = [self.parse_pattern()]
        while self.at("?//"):
            self.advance()
            patterns.append(self.parse_pattern())
        return tuple(patterns)

    def parse_pattern(self) -> Pattern:
        tok = self.peek()
        if tok.kind == "BINDING":
            self.advance()
            return VarPattern(tok.value)
        if tok.kind == "[":
            self.advance()
            elements = [self.parse_pattern()]
            while self.at(","):
                self.advance()
                elements.append(self.parse_pattern())
            self.expect("]", "expected ',' or ']' in the array pattern")
            return ArrayPattern(tuple(elements))
        if tok.kind == "{":
            self.advance()
            entries = [self.parse_object_pattern_entry()]
            while self.at(","):
                self.advance()
                entries.append(self.parse_object_pattern_entry())
            self.expect("}", "expected ',' or '}' in the object pattern")
            return ObjectPattern(tuple(entries))
        raise self.error(tok, "expected a pattern ($name, [...] or {...})")

    def parse_object_pattern_entry(self) -> ObjectPatternEntry:
        tok = self.peek()
        kind = tok.kind
        if kind == "BINDING":
            self.advance()
            sub = None
            if self.at(":"):
                self.advance()
                sub = self.parse_pattern()
            return ObjectPatternEntry(String((tok.value,)), tok.value, sub)
        key: Node
        if kind == "IDENT" or kind in KEYWORDS:
            self.advance()
            key = String((tok.value,))
        elif self.at_string_start():
            key = self.parse_string()
        elif kind == "(":
            self.advance()
            key_pos = self.peek().pos
            key = self.parse_pipe()
            self.expect(")", "expected ')'")
            self.check_key(key, key_pos)
        else:
            raise self.error(tok, "expected an object pattern key")
        self.expect(":", "expected ':' in the object pattern")
        return ObjectPatternEntry(key, None, self.parse_pattern())


def _number(text: str) -> Number:
    if text.isdigit():
        return Number(text, int(text))
    value = float(text)
    if math.isinf(value):
        value = 1.7976931348623157e308  # libjq clamps literal overflow to the largest double
    return Number(text, value)


@functools.lru_cache(maxsize=4096)
def parse(expr: str) -> Node:
    """Parse a jq program into its syntax tree (cached; trees are immutable).

    Raises JqParseError (with line and column) when libjq would not parse the program, and for the module
    directives and NUL characters we refuse on purpose.
    """
    if not isinstance(expr, str):
        raise TypeError(f"jq expression must be a string, not {type(expr).__name__}")
    try:
        parser = _Parser(expr)
        tree: Node | None = parser.parse_program()
    except RecursionError:
        tree = None
    # a node consumes at least one token per three levels of depth, so short programs cannot be too deep
    if tree is None or (3 * len(parser.tokens) > MAX_DEPTH and _too_deep(tree)):
        raise JqParseError(expr, f"expression is nested too deeply (more than {MAX_DEPTH} levels)")
    return tree


MAX_DEPTH: Final = 200  # tree depth every walker (safety check, unparse, fast path) handles with Python's stack


def _too_deep(tree: Node) -> bool:
    """True when the tree is deeper than MAX_DEPTH (long postfix or operator chains build deep trees without
    deep parser recursion)."""
    stack: list[tuple[object, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for f in dataclasses.fields(node):  # type: ignore[arg-type]
            value = getattr(node, f.name)
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                if isinstance(item, tuple):
                    stack.extend((sub, depth + 1) for sub in item if dataclasses.is_dataclass(sub))
                elif dataclasses.is_dataclass(item):
                    stack.append((item, depth + 1))
    return False


# ---------------------------------------------------------------------------------------------------------
# Unparse: a canonical, fully parenthesised program that libjq reads as the same tree.

_ATOMIC: Final = (
    Identity, Literal, Number, String, Format, Var, VarNoCopy, Loc, Call, Collect, ObjectCons, Index, Slice, Iterate,
)  # fmt: skip


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1].replace("\x7f", "\\u007f")


def _string(node: String) -> str:
    out = [f"@{node.format} " if node.format else "", '"']
    for part in node.parts:
        out.append(_quote(part) if isinstance(part, str) else f"\\({unparse(part)})")
    out.append('"')
    return "".join(out)


def _paren(node: Node) -> str:
    text = unparse(node)
    return text if isinstance(node, _ATOMIC) else f"({text})"


def _pattern(p: Pattern) -> str:
    if isinstance(p, VarPattern):
        return f"${p.name}"
    if isinstance(p, ArrayPattern):
        return "[" + ", ".join(_pattern(e) for e in p.elements) + "]"
    entries = []
    for e in p.entries:
        if e.var is not None:
            entries.append(f"${e.var}" + (f": {_pattern(e.pattern)}" if e.pattern is not None else ""))
        else:
            assert e.pattern is not None
            entries.append(f"({unparse(e.key)}): {_pattern(e.pattern)}")
    return "{" + ", ".join(entries) + "}"


def _patterns(ps: tuple[Pattern, ...]) -> str:
    return " ?// ".join(_pattern(p) for p in ps)


def _opt(optional: bool) -> str:
    return "?" if optional else ""


def unparse(node: Node) -> str:
    """Print a tree as a fully parenthesised jq program with the same meaning (one line)."""
    if isinstance(node, Identity):
        return "."
    if isinstance(node, RecurseAll):
        return ".."
    if isinstance(node, Literal):
        return "null" if node.value is None else ("true" if node.value else "false")
    if isinstance(node, Number):
        return node.text
    if isinstance(node, String):
        return _string(node)
    if isinstance(node, Format):
        return f"@{node.name}"
    if isinstance(node, Var):
        return f"${node.name}"
    if isinstance(node, VarNoCopy):
        return f"$$$${node.name}"
    if isinstance(node, Loc):
        return "$__loc__"
    if isinstance(node, Index):
        return f"{_paren(node.target)}[{unparse(node.key)}]{_opt(node.optional)}"
    if isinstance(node, Slice):
        start = "" if node.start is None else unparse(node.start)
        end = "" if node.end is None else unparse(node.end)
        return f"{_paren(node.target)}[{start}:{end}]{_opt(node.optional)}"
    if isinstance(node, Iterate):
        return f"{_paren(node.target)}[]{_opt(node.optional)}"
    if isinstance(node, Try):
        if node.handler is None:
            return f"try {_paren(node.body)}"
        return f"try {_paren(node.body)} catch {_paren(node.handler)}"
    if isinstance(node, Call):
        if not node.args:
            return node.name
        return node.name + "(" + "; ".join(unparse(a) for a in node.args) + ")"
    if isinstance(node, Neg):
        return f"-{_paren(node.operand)}"
    if isinstance(node, Collect):
        return "[]" if node.body is None else f"[{unparse(node.body)}]"
    if isinstance(node, ObjectCons):
        entries = []
        for e in node.entries:
            if e.value is None:
                assert isinstance(e.key, String)
                entries.append(_string(e.key))
            else:
                entries.append(f"({unparse(e.key)}): {_paren(e.value)}")
        return "{" + ", ".join(entries) + "}"
    if isinstance(node, Pipe):
        return f"{_paren(node.left)} | {_paren(node.right)}"
    if isinstance(node, Comma):
        return f"{_paren(node.left)}, {_paren(node.right)}"
    if isinstance(node, Binary):
        return f"{_paren(node.left)} {node.op} {_paren(node.right)}"
    if isinstance(node, If):
        out = f"if {unparse(node.cond)} then {unparse(node.then)}"
        for c, t in node.elifs:
            out += f" elif {unparse(c)} then {unparse(t)}"
        if node.otherwise is not None:
            out += f" else {unparse(node.otherwise)}"
        return out + " end"
    if isinstance(node, Bind):
        return f"{_paren(node.source)} as {_patterns(node.patterns)} | {_paren(node.body)}"
    if isinstance(node, Reduce):
        return (
            f"reduce {_paren(node.source)} as {_patterns(node.patterns)} ({unparse(node.init)}; {unparse(node.update)})"
        )
    if isinstance(node, Foreach):
        extract = "" if node.extract is None else f"; {unparse(node.extract)}"
        return (
            f"foreach {_paren(node.source)} as {_patterns(node.patterns)} "
            f"({unparse(node.init)}; {unparse(node.update)}{extract})"
        )
    if isinstance(node, Label):
        return f"label ${node.name} | {_paren(node.body)}"
    if isinstance(node, Break):
        return f"break ${node.name}"
    if isinstance(node, FuncDefine):
        d = node.definition
        params = "(" + "; ".join(d.params) + ")" if d.params else ""
        return f"def {d.name}{params}: {unparse(d.body)}; {_paren(node.rest)}"
    raise TypeError(f"not a jq syntax node: {node!r}")  # pragma: no cover
