"""The grammar of the jq language exactly as libjq 1.8 reads it.

Why our own parser: the static safety check (`workload_map.jq.safety`) must see the same program libjq will run.
Any expression this parser accepts but reads differently from libjq would be a way around the check, so the
tokens (`workload_map.jq.lexer`) and the grammar follow jq 1.8's `lexer.l` / `parser.y` rule by rule (keywords
as object keys, `def` and `as` bodies that extend to the end of the enclosing query, `try` binding a single
postfix term, the operator table `ast.BINARY_OPERATORS`). `workload_map.jq.unparse` prints a tree back as a program.
tests/unit/test_jq_parser.py checks accept/reject decisions and operator grouping against libjq itself.

Deliberate differences (we reject, libjq accepts): `module`/`import`/`include` directives, and a NUL character
anywhere (see the lexer).

`jq/parser.py` is the door (`parse`, with its cache and the trees the catalog's blob remembers); this module, with
the lexer and the constant folding it uses, is imported only when a text is really parsed: a run whose expressions
all come from the blob never loads it (~2.5 million instructions of a `describe -f`; issue 19: start-up).
"""

from __future__ import annotations

import json
import math

from workload_map._jsontype import json_type
from workload_map._limits import MAX_INT_DIGITS
from workload_map.jq.ast import (
    BINARY_OPERATORS,
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
from workload_map.jq.fold import NOT_CONST, const_value
from workload_map.jq.lexer import KEYWORDS, Token, fail, tokenize

__all__ = ["Parser"]


class Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.last_expr_had_operator = False  # set by parse_expr: did its outermost level apply an operator?

    # -- token helpers
    def peek(self, offset: int = 0) -> Token:
        if offset == 0:
            return self.tokens[self.i]  # i never passes the final EOF token
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def at(self, kind: str) -> bool:
        return self.tokens[self.i].kind == kind

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def expect(self, kind: str, what: str | None = None) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            raise self.error(tok, f"expected {what or repr(kind)}")
        return self.advance()

    def error(self, tok: Token, expected: str | None = None) -> JqParseError:
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
        return fail(self.text, tok.pos, f"syntax error: {message}")

    # -- program
    def parse_program(self) -> Node:
        tok = self.peek()
        if tok.kind in ("module", "import", "include"):
            raise fail(
                self.text, tok.pos, f"'{tok.kind}' directives are not supported (definitions are self-contained)"
            )
        if tok.kind == "EOF":
            raise fail(self.text, tok.pos, "empty expression (use '.' for the whole object)")
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
                raise fail(self.text, self.peek().pos, "a definition must be followed by an expression")
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
        value = const_value(key)
        if value is not NOT_CONST and not isinstance(value, str):
            raise fail(self.text, pos, f"cannot use {json_type(value)} ({json.dumps(value)}) as object key")

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
    # past Python's int-str limit an integer literal is a double, as libjq holds it (the largest double, clamped)
    if text.isdigit() and len(text) <= MAX_INT_DIGITS:
        return Number(text, int(text))
    value = float(text)
    if math.isinf(value):
        value = 1.7976931348623157e308  # libjq clamps literal overflow to the largest double
    return Number(text, value)
