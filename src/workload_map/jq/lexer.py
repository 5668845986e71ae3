"""The jq lexer, token for token as libjq 1.8's `lexer.l` reads a program.

Longest-match tokens, comment continuation with a trailing backslash, `?//` as one token, string literals with
their escapes decoded as libjq's JSON string parser does, and the lexer's start-condition stack for brackets,
strings and `\\(...)` interpolation. A NUL character anywhere is rejected on purpose (the PyPI binding hands libjq
a C string, so libjq would silently ignore everything after it). The parser (`workload_map.jq.parser`) reads
the tokens.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from workload_map._regex import LazyPattern
from workload_map.jq.errors import JqParseError

__all__ = ["KEYWORDS", "Token", "fail", "tokenize"]

KEYWORDS: Final = frozenset(
    {
        "as", "import", "include", "module", "def", "if", "then", "else", "elif", "and", "or", "end",
        "reduce", "foreach", "try", "catch", "label", "break",
    }
)  # fmt: skip


class Token(NamedTuple):
    kind: str  # an operator/keyword spelling, or IDENT FIELD BINDING LITERAL FORMAT LOC QQ_START QQ_TEXT
    #            QQ_INTERP_START QQ_INTERP_END QQ_END EOF
    value: str
    pos: int


_ESCAPES_RE: Final = LazyPattern(r"(?:\\[^u(]|\\u[a-zA-Z0-9]{0,4})+")
_QQ_TEXT_RE: Final = LazyPattern(r'[^\\"]+')
_OPENERS: Final = {"(": ")", "[": "]", "{": "}"}
_SIMPLE_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "t": "\t", "n": "\n", "r": "\r"}


def _position(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


def fail(text: str, pos: int, message: str) -> JqParseError:
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
            raise fail(text, pos, "invalid escape in string literal")
        if i + 4 > n:
            raise fail(text, pos, "invalid \\uXXXX escape in string literal")
        code = _unhex4(raw[i : i + 4])
        if code < 0:
            raise fail(text, pos, "invalid characters in \\uXXXX escape in string literal")
        i += 4
        if 0xD800 <= code <= 0xDBFF:
            low = _unhex4(raw[i + 2 : i + 6]) if i + 6 <= n and raw[i : i + 2] == "\\u" else -1
            if not 0xDC00 <= low <= 0xDFFF:
                raise fail(text, pos, "invalid \\uXXXX\\uXXXX surrogate pair escape in string literal")
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
_CODE_RE: Final = LazyPattern(
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


def tokenize(text: str) -> list[Token]:
    if "\x00" in text:
        raise fail(text, text.index("\x00"), "NUL character in expression")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise fail(text, exc.start, "invalid character (lone surrogate) in expression") from None
    tokens: list[Token] = []
    append = tokens.append
    # The lexer's start-condition stack: "(", "[", "{" for brackets, "interp" inside `\(...)`, '"' in a string.
    stack: list[str] = []
    i = 0
    n = len(text)
    code_match = _CODE_RE.match
    while True:
        if stack and stack[-1] == '"':
            if i >= n:
                raise fail(text, i, "unterminated string literal")
            if text.startswith("\\(", i):
                append(Token("QQ_INTERP_START", "", i))
                stack.append("interp")
                i += 2
                continue
            if text[i] == '"':
                append(Token("QQ_END", "", i))
                stack.pop()
                i += 1
                continue
            m = _ESCAPES_RE.match(text, i)
            if m:
                append(Token("QQ_TEXT", _decode_escapes(text, m.group(), i), i))
                i = m.end()
                continue
            m = _QQ_TEXT_RE.match(text, i)
            if m:
                append(Token("QQ_TEXT", m.group(), i))
                i = m.end()
                continue
            raise fail(text, i, "invalid character in string literal")
        if i >= n:
            append(Token("EOF", "", n))
            return tokens
        m = code_match(text, i)
        if m is None:
            raise fail(text, i, f"invalid character {text[i]!r}")
        group = m.lastgroup
        value = m.group()
        if group == "ws":
            pass
        elif group == "ident":
            append(Token(value if value in KEYWORDS else "IDENT", value, i))
        elif group in {"op", "open"}:
            append(Token(value, value, i))
            if group == "open":
                stack.append(value)
        elif group == "field":
            append(Token("FIELD", value[1:], i))
        elif group == "binding":
            if value == "$__loc__":
                append(Token("LOC", "__loc__", i))
            else:
                append(Token("BINDING", value[1:], i))
        elif group == "number":
            append(Token("LITERAL", value, i))
        elif group == "quote":
            append(Token("QQ_START", "", i))
            stack.append('"')
        elif group == "format":
            append(Token("FORMAT", value[1:], i))
        elif group == "close":
            top = stack[-1] if stack else None
            if top == "interp" and value == ")":
                append(Token("QQ_INTERP_END", "", i))
                stack.pop()
            elif top is not None and top != "interp" and _OPENERS[top] == value:
                append(Token(value, value, i))
                stack.pop()
            else:
                raise fail(text, i, f"unexpected {value!r}")
        else:  # comment
            i = _skip_comment(text, i)
            continue
        i = m.end()
