"""Generated evaluators: a batch of jq expressions (a definition's status group) as ONE Python function.

`batch_program(exprs)` turns the expressions it covers into the source of one function `run(obj)` that gives each
expression's outputs, and `compile()`s it once per process per batch; `expression_functions(exprs)` compiles the
same code as one function per expression (`f(obj, memo)`), for a reader that evaluates only what it consults (the
resolve layer's status plan). Subtrees several expressions of a batch compute on the root are computed once per
evaluation and kept in a memo (`_shared_subtrees`). Unlike the closures of `compiler` (a call per
node, a generator per stream) the generated code is straight-line Python: a pipe is a nested block, an iteration a
`for` loop, `//` a flag. And it reads the caller's object *in place*, without the pruned and normalised copy the
closures run on (`convert.normalize`), which is most of what a `wmap get` row costs.

Why it agrees with the engine. Each node is generated only for the happy path: whenever the code meets anything
where the closures would raise a jq error, or where the object read in place might differ from its normalised form
(a float: NaN reads as null normalised, 1.0 as 1; a value of no JSON type; a dict with keys that are not strings;
non-ASCII keys being iterated; an int past 2**53), it raises `_Bail` and the expression is evaluated the current
way (`Document.evaluate_many`) instead, which gives the exact result or error. So a generated answer is only ever
given where the current path gives the same one, which `tests/unit/test_codegen.py` checks over every catalog
expression, fixture and recording, and on generated mutations of them. An expression with a construct the
generator does not know is not generated (it always takes the current path; `uncovered()` names them).

Safety. The source is built only from the parse tree: names are generated counters, never a jq identifier; every
string or other constant of the program is passed as a global of the function (`K1`, `K2`, ...), never written into
the text. Only expressions the engine already runs in process (`engine.compile_expression` gives a fast path or
closures, so the static safety check and the compiler's limits passed them) are generated, and only under an
"inprocess" policy without refusals (a definition for the worker never runs here). Loops are bounded: every
element an iteration visits is counted, as the closures charge their step budget, and an evaluation that counts past
`_STEPS` (a tenth of the closures' `STEP_BUDGET`) bails, so the current path then stops it exactly as before;
outputs past the cap bail the same way. Nothing recurses (no `..`, `def`, `reduce`, `foreach`, `recurse`), so no
value depth limit is reached; container outputs are normalised by `convert.normalize` exactly as the tree path
normalises what it reads.
"""

from __future__ import annotations

import functools
import marshal
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from workload_map.errors import WorkloadMapError
from workload_map.jq import ast as A  # noqa: N812 - the node types, read as A.Index, A.Pipe, ...
from workload_map.jq import engine
from workload_map.jq.engine import MAX_RESULTS
from workload_map.jq.errors import JqError
from workload_map.jq.finish import BAIL, finish_read
from workload_map.jq.parser import parse
from workload_map.jq.runtime import GLOBALS as _GLOBALS
from workload_map.jq.runtime import SAFE as _SAFE

__all__ = [
    "BAIL",
    "BatchProgram",
    "batch_program",
    "expression_functions",
    "finish_read",
    "generated_source",
    "stored_program",
    "uncovered",
]

_MAX_LINES: Final = 2000  # generated lines per expression (branches copy their continuation)
Emit = Callable[[str, int], None]


class _Decline(WorkloadMapError):  # noqa: N818
    """The expression has a construct the generator does not cover."""


# --- the generator ---------------------------------------------------------------------------------------------


class _Generator:
    """The source of one expression's code, in continuation-passing style: each node is given the name of its
    input and a continuation `emit(name, indent)` that writes what to do with each of its outputs."""

    def __init__(self, constants: dict[str, Any], shared: dict[int, int] | None = None) -> None:
        self.lines: list[str] = []
        self.constants = constants
        self.names = 0
        # names known to hold a null, a boolean, a string or a safe int (constants, comparison results): no checks
        self.known: set[str] = {"True", "False", "None"}
        # id of a node of the batch's trees -> its memo key, for subtrees the batch computes more than once on the
        # root (`_shared_subtrees`): computed once per evaluation of the batch and kept in the memo `m`
        self.shared: dict[int, int] = shared or {}
        # (target name, key) -> (the name holding `target.key`, the indent it was computed at): a later `.key` of
        # the same target reuses it while no line has left that indent since (`.template.spec.parallelism` read
        # three times per element of the JobSet's scale reads `.template.spec` once); no name the generator
        # indexes is assigned again once it is handed to a continuation, so the value cannot have changed
        self.indexed: dict[tuple[str, str], tuple[str, int]] = {}

    def fresh(self) -> str:
        self.names += 1
        return f"x{self.names}"

    def put(self, indent: int, text: str) -> None:
        if len(self.lines) >= _MAX_LINES:
            raise _Decline
        if self.indexed:
            self.indexed = {pair: found for pair, found in self.indexed.items() if found[1] <= indent}
        self.lines.append("    " * indent + text)

    def constant(self, value: Any) -> str:
        """A name for a constant of the program: ints, booleans and null as their repr, anything else a global."""
        if value is None or type(value) is bool:
            return repr(value)
        name = f"K{len(self.constants) + 1}"
        self.constants[name] = value
        if type(value) is str or (type(value) is int and -_SAFE < value < _SAFE):
            self.known.add(name)
        return name

    def scalar(self, indent: int, expression: str) -> str:
        """A fresh name for a value known to be a null, a boolean, a string or a safe int."""
        name = self.assign(indent, expression)
        self.known.add(name)
        return name

    def assign(self, indent: int, expression: str) -> str:
        name = self.fresh()
        self.put(indent, f"{name} = {expression}")
        return name

    def truthy_check(self, name: str, indent: int) -> None:
        if name not in self.known:  # a float may be NaN, which reads as null normalised
            self.put(indent, f"if type({name}) is float: raise B")

    def charge(self, name: str, indent: int) -> None:
        self.put(indent, f"s += len({name})")
        self.put(indent, "if s > L: raise B")

    def simple(self, name: str, indent: int) -> None:
        """Bail unless the value is a scalar that reads the same normalised: null, a boolean, a string, a safe int."""
        if name in self.known:
            return
        kind = self.assign(indent, f"type({name})")
        self.put(
            indent,
            f"if not ({kind} is str or {name} is None or {kind} is bool or ({kind} is int and -S < {name} < S)): "
            "raise B",
        )

    # --- single outputs -------------------------------------------------------------------------------------

    def is_one(self, node: Any) -> bool:
        """Whether the node gives exactly one output (or fails, which bails): its code then computes one name at
        the indent it starts at, so a branch (`//`, `and`, `if`) need not copy what follows it."""
        kind = type(node)
        if kind in (A.Identity, A.Literal, A.Number, A.String, A.Var, A.Collect, A.ObjectCons):
            return True
        if kind is A.Index:
            return not node.optional and self.is_one(node.target)
        if kind is A.Pipe:
            return self.is_one(node.left) and self.is_one(node.right)
        if kind is A.Binary:
            return self.is_one(node.left) and self.is_one(node.right)
        if kind is A.Try:
            return node.handler is None and self.is_one(node.body)
        if kind is A.Bind:
            return self.is_one(node.source) and self.is_one(node.body)
        if kind is A.If:
            parts = [node.cond, node.then, *(part for pair in node.elifs for part in pair)]
            return all(self.is_one(part) for part in parts) and (node.otherwise is None or self.is_one(node.otherwise))
        if kind is A.Call:
            return f"{node.name}/{len(node.args)}" in _ONE_CALLS
        return False

    def one(self, node: Any, inp: str, indent: int, env: dict[str, str]) -> str:
        """The name holding the one output of a node `is_one` accepts, computed at `indent`."""
        names: list[str] = []

        def capture(name: str, at: int) -> None:
            if at != indent or names:
                raise _Decline  # not one output at this indent after all: leave the expression to the current path
            names.append(name)

        self.node(node, inp, indent, env, capture)
        if not names:
            raise _Decline
        return names[0]

    # --- nodes ----------------------------------------------------------------------------------------------

    def node(self, node: Any, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        if self.shared and inp == "v" and id(node) in self.shared and self._memoized(node, indent, env, emit):
            return
        method = getattr(self, "n_" + type(node).__name__, None)
        if method is None:
            raise _Decline
        method(node, inp, indent, env, emit)

    def _memoized(self, node: Any, indent: int, env: dict[str, str], emit: Emit) -> bool:
        """A subtree another expression of the batch computes on the root too: its one output taken from the
        memo `m`, computed there by the first expression that needs it. (`v` always names the root: the generator
        never assigns it.) False when it does not compute as one output here (then it is generated in place)."""
        key = self.shared[id(node)]
        mark, names, known, indexed = len(self.lines), self.names, set(self.known), dict(self.indexed)
        out = self.fresh()
        self.put(indent, f"{out} = m.get({key}, BAIL)")
        self.put(indent, f"if {out} is BAIL:")
        shared, self.shared = self.shared, {}  # its inner subtrees are computed in place
        try:
            inner = self.one(node, "v", indent + 1, env)
        except _Decline:
            del self.lines[mark:]
            self.names, self.known, self.indexed = names, known, indexed
            return False
        finally:
            self.shared = shared
        self.put(indent + 1, f"{out} = {inner}")
        self.put(indent + 1, f"m[{key}] = {out}")
        if inner in self.known:
            self.known.add(out)
        emit(out, indent)
        return True

    def n_Identity(self, node: A.Identity, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        emit(inp, indent)

    def n_Literal(self, node: A.Literal, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        value: Any = node.value
        if not (value is None or type(value) is bool or type(value) is str or type(value) is int):
            raise _Decline
        if type(value) is int and not -_SAFE < value < _SAFE:
            raise _Decline
        emit(self.constant(value), indent)

    def n_Number(self, node: A.Number, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        value = node.value
        if type(value) is float and value.is_integer() and -_SAFE < value < _SAFE:
            value = int(value)
        if type(value) is not int or not -_SAFE < value < _SAFE:
            raise _Decline
        emit(self.constant(value), indent)

    def n_String(self, node: A.String, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        if node.constant is None:
            raise _Decline
        emit(self.constant(node.constant), indent)

    def n_Var(self, node: A.Var, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        name = env.get(node.name)
        if name is None:
            raise _Decline  # $ENV, $__loc__, unbound: the current path answers them
        emit(name, indent)

    def n_Try(self, node: A.Try, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        if node.handler is not None:
            raise _Decline
        # `body?` gives the body's outputs when it does not fail; when it fails the generated code bails
        self.node(node.body, inp, indent, env, emit)

    def n_Pipe(self, node: A.Pipe, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        left, right = node.left, node.right
        if type(left) is A.Collect and left.body is not None:
            if (
                isinstance(right, A.Call)
                and right.name in ("min", "max")
                and not right.args
                and self._pair_extreme(left.body, right.name == "min", inp, indent, env=env, emit=emit)
            ):
                return
            if _is_add(right):
                emit(self._summed(left.body, inp, indent, env), indent)
                return
            if type(right) is A.Binary and right.op == "//" and _is_add(right.left) and _is_constant(right.right):
                # `[f] | add // c` is `([f] | add) // c` when c reads no input
                self._alternative(A.Binary("//", A.Pipe(left, right.left), right.right), inp, indent, env, emit)
                return
        self.node(left, inp, indent, env, lambda mid, at: self.node(right, mid, at, env, emit))

    def _pair_extreme(self, body: Any, is_min: bool, inp: str, indent: int, *, env: dict[str, str], emit: Emit) -> bool:
        """`[a, b] | min` (or `max`) of two single outputs without the array when both are safe ints (the JobSet's
        `[parallelism // 1, completions // ...] | min`): the first of the least (greatest), as `min` gives it; any
        other pair takes `EXT` of the array. The same order of evaluation and the same charge. False (nothing
        generated) for any other body."""
        if type(body) is not A.Comma or not (self.is_one(body.left) and self.is_one(body.right)):
            return False
        a = self.one(body.left, inp, indent, env)
        b = self.one(body.right, inp, indent, env)
        self.put(indent, "s += 2")  # what `min` charges for iterating the array
        self.put(indent, "if s > L: raise B")
        checks = [f"type({name}) is int" for name in (a, b) if type(self.constants.get(name)) is not int]
        checks += [f"-S < {name} < S" for name in (a, b) if name not in self.known]
        out = self.fresh()
        self.known.add(out)
        before = "<" if is_min else ">"
        self.put(indent, f"if {' and '.join(checks) or 'True'}: {out} = {b} if {b} {before} {a} else {a}")
        self.put(indent, f"else: {out} = EXT([{a}, {b}], {is_min})")
        emit(out, indent)
        return True

    def _summed(self, body: Any, inp: str, indent: int, env: dict[str, str]) -> str:
        """`[body] | add` without the array: each output is added as it comes, in order, as `add` adds the
        array's elements (the same checks and bails), and charged as `add`'s iteration charges the array."""
        total = self.assign(indent, "None")

        def add(item: str, at: int) -> None:
            self.put(at, "s += 1")
            # two ints first (the common case): a null total is never an int, so the order of `add` is kept
            self.put(at, f"if type({total}) is int and type({item}) is int:")
            self.put(at + 1, f"{total} = {total} + {item}")
            self.put(at + 1, f"if not -S < {total} < S: raise B")
            self.put(at, f"elif {total} is None: {total} = {item}")
            self.put(at, f"elif {item} is None: pass")
            self.put(at, "else: raise B")

        self.node(body, inp, indent, env, add)
        self.put(indent, "if s > L: raise B")
        return total

    def n_Comma(self, node: A.Comma, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        self.node(node.left, inp, indent, env, emit)
        self.node(node.right, inp, indent, env, emit)

    def n_Collect(self, node: A.Collect, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        built = self.assign(indent, "[]")
        if node.body is not None:
            self.node(node.body, inp, indent, env, lambda item, at: self.put(at, f"{built}.append({item})"))
        emit(built, indent)

    def n_ObjectCons(self, node: A.ObjectCons, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        if node.entries:
            raise _Decline
        emit(self.assign(indent, "{}"), indent)

    def n_Index(self, node: A.Index, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        key_node = node.key
        key: str | int
        if isinstance(key_node, A.String) and key_node.constant is not None:
            key = key_node.constant
        elif isinstance(key_node, A.Number) and type(key_node.value) is int and -_SAFE < key_node.value < _SAFE:
            key = key_node.value
        elif not node.optional and self.is_one(key_node):
            # a computed key, run first (as jq does) on the same input: `.[length - 2]`, `$o.spec.items[$i]`
            found = self.one(key_node, inp, indent, env)
            self.node(node.target, inp, indent, env, lambda target, at: self._dynamic_index(target, found, at, emit))
            return
        else:
            raise _Decline
        self.node(node.target, inp, indent, env, lambda target, at: self._index(target, key, node.optional, at, emit))

    def _dynamic_index(self, target: str, key: str, indent: int, emit: Emit) -> None:
        out = self.fresh()
        self.put(indent, f"if type({target}) is dict and type({key}) is str:")
        self.put(indent + 1, f"{out} = {target}.get({key})")
        self.put(indent + 1, f"if {out} is None and not SK({target}): raise B")
        self.put(indent, f"elif type({target}) is list and type({key}) is int:")
        self.put(indent + 1, f"{out} = {target}[{key}] if -len({target}) <= {key} < len({target}) else None")
        self.put(indent, f"elif {target} is None and (type({key}) is str or type({key}) is int): {out} = None")
        self.put(indent, "else: raise B")  # floats, slices by object, errors: the current path
        emit(out, indent)

    def _index(self, target: str, key: str | int, optional: bool, indent: int, emit: Emit) -> None:
        if isinstance(key, str) and not optional and (target, key) in self.indexed:
            emit(self.indexed[target, key][0], indent)
            return
        out = self.fresh()
        if isinstance(key, str):
            name = self.constant(key)
            self.put(indent, f"if type({target}) is dict:")
            self.put(indent + 1, f"{out} = {target}.get({name})")
            # a key normalised to this name (YAML `1:`) may be there: only the normalised form tells
            self.put(indent + 1, f"if {out} is None and not SK({target}): raise B")
            wrong = ("list", "str", "int", "bool")  # jq errors on these (`.a?` gives nothing)
        else:
            self.put(indent, f"if type({target}) is list:")
            self.put(indent + 1, f"{out} = {target}[{key}] if -len({target}) <= {key} < len({target}) else None")
            wrong = ("dict", "str", "int", "bool")
        self.put(indent, f"elif {target} is None:")
        self.put(indent + 1, f"{out} = None")
        if optional:
            self.put(indent, f"elif {' or '.join(f'type({target}) is {kind}' for kind in wrong)}:")
            self.put(indent + 1, f"{out} = BAIL")  # no output
        self.put(indent, "else: raise B")
        if optional:
            self.put(indent, f"if {out} is not BAIL:")
            self.put(indent + 1, "pass")
            emit(out, indent + 1)
        else:
            if isinstance(key, str):
                self.indexed[target, key] = (out, indent)
            emit(out, indent)

    def n_Iterate(self, node: A.Iterate, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        self.node(node.target, inp, indent, env, lambda target, at: self._iterate(target, node.optional, at, emit))

    def _elements(self, target: str, indent: int) -> str:
        """The elements `.[]` of `target` visits, charged; bails for anything but an array or an object."""
        elements = self.fresh()
        self.put(indent, f"if type({target}) is list: {elements} = {target}")
        self.put(indent, f"elif type({target}) is dict: {elements} = SV({target})")
        self.put(indent, "else: raise B")
        self.charge(elements, indent)
        return elements

    def _iterate(self, target: str, optional: bool, indent: int, emit: Emit) -> None:
        if optional:  # `[]?` on a scalar gives nothing (no elements, nothing charged); anything else bails
            elements = self.fresh()
            self.put(indent, f"if type({target}) is list: {elements} = {target}")
            self.put(indent, f"elif type({target}) is dict: {elements} = SV({target})")
            self.put(
                indent,
                f"elif {target} is None or type({target}) is str or type({target}) is int "
                f"or type({target}) is bool: {elements} = ()",
            )
            self.put(indent, "else: raise B")
            self.charge(elements, indent)
        else:
            elements = self._elements(target, indent)
        item = self.fresh()
        self.put(indent, f"for {item} in {elements}:")
        self.put(indent + 1, "pass")
        emit(item, indent + 1)

    def n_Binary(self, node: A.Binary, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        op = node.op
        if op == "//":
            self._alternative(node, inp, indent, env, emit)
        elif op in ("and", "or"):
            self._logic(node, inp, indent, env, emit)
        elif op in ("+", "-", "*") or op in _COMPARISONS:
            # jq runs the right operand first, as the outer loop
            def right(b: str, at: int) -> None:
                self.node(node.left, inp, at, env, lambda a, at2: self._operator(op, a, b, at2, emit))

            self.node(node.right, inp, indent, env, right)
        else:
            raise _Decline

    def _operator(self, op: str, a: str, b: str, indent: int, emit: Emit) -> None:
        out = self.fresh()
        if op in ("+", "-", "*"):
            self.put(indent, f"if type({a}) is int and type({b}) is int:")
            self.put(indent + 1, f"{out} = {a} {op} {b}")
            self.put(indent + 1, f"if not -S < {out} < S: raise B")  # the engine computes in doubles there
            if op == "+":  # null is the identity of `+`
                self.put(indent, f"elif {a} is None: {out} = {b}")
                self.put(indent, f"elif {b} is None: {out} = {a}")
            else:  # `-` and `*` give a safe int or bail: an output needs no finishing, a comparison no checks
                self.known.add(out)
            self.put(indent, "else: raise B")
            emit(out, indent)
            return
        self.known.add(out)
        if op in ("==", "!="):
            negate = "not " if op == "!=" else ""
            if a in self.known and b in self.known:
                self.put(indent, f"{out} = {negate}(type({a}) is type({b}) and {a} == {b})")
            else:
                self.put(indent, f"{out} = {negate}EQ({a}, {b})")
        else:
            # two safe ints (counts, replicas: the common case) compare directly; anything else takes the checks
            # and the engine's order below, as before
            ints = [f"type({name}) is int" for name in (a, b) if type(self.constants.get(name)) is not int]
            ints += [f"-S < {name} < S" for name in (a, b) if name not in self.known]
            self.put(indent, f"if {' and '.join(ints) or 'True'}: {out} = {a} {op} {b}")
            self.put(indent, "else:")
            self.simple(a, indent + 1)
            self.simple(b, indent + 1)
            self.put(indent + 1, f"if type({a}) is type({b}) and (type({a}) is int or type({a}) is str):")
            self.put(indent + 2, f"{out} = {a} {op} {b}")
            self.put(indent + 1, f"else: {out} = KEY({a}) {op} KEY({b})")
        emit(out, indent)

    def _alternative(self, node: A.Binary, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        if self.is_one(node.left) and self.is_one(node.right):
            out = self.assign(indent, self.one(node.left, inp, indent, env))
            if out in self.known:
                self.put(indent, f"if {out} is None or {out} is False:")
            else:  # an int (`.replicas // 1`: the common case) is kept at once; a float may be NaN (null normalised)
                self.put(indent, f"if type({out}) is int: pass")
                self.put(indent, f"elif type({out}) is float: raise B")
                self.put(indent, f"elif {out} is None or {out} is False:")
            self.put(indent + 1, f"{out} = {self.one(node.right, inp, indent + 1, env)}")
            emit(out, indent)
            return
        found = self.assign(indent, "False")

        def left(a: str, at: int) -> None:
            self.truthy_check(a, at)
            self.put(at, f"if {a} is not None and {a} is not False:")
            self.put(at + 1, f"{found} = True")
            emit(a, at + 1)

        self.node(node.left, inp, indent, env, left)
        self.put(indent, f"if not {found}:")
        self.put(indent + 1, "pass")
        self.node(node.right, inp, indent + 1, env, emit)

    def _logic(self, node: A.Binary, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        is_and = node.op == "and"
        if self.is_one(node.left) and self.is_one(node.right):
            a = self.one(node.left, inp, indent, env)
            self.truthy_check(a, indent)
            out = self.fresh()
            self.known.add(out)
            decided = f"{a} is None or {a} is False" if is_and else f"{a} is not None and {a} is not False"
            self.put(indent, f"if {decided}: {out} = {not is_and!r}")
            self.put(indent, "else:")
            b = self.one(node.right, inp, indent + 1, env)
            self.truthy_check(b, indent + 1)
            self.put(indent + 1, f"{out} = {b} is not None and {b} is not False")
            emit(out, indent)
            return

        def left(a: str, at: int) -> None:
            self.truthy_check(a, at)
            decided = f"{a} is None or {a} is False" if is_and else f"{a} is not None and {a} is not False"
            self.put(at, f"if {decided}:")
            emit(repr(not is_and), at + 1)
            self.put(at, "else:")
            self.put(at + 1, "pass")

            def right(b: str, at2: int) -> None:
                self.truthy_check(b, at2)
                emit(self.scalar(at2, f"{b} is not None and {b} is not False"), at2)

            self.node(node.right, inp, at + 1, env, right)

        self.node(node.left, inp, indent, env, left)

    def n_If(self, node: A.If, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        self._branches(
            [(node.cond, node.then), *node.elifs], node.otherwise, inp=inp, indent=indent, env=env, emit=emit
        )

    def _branches(
        self,
        branches: list[tuple[Any, Any]],
        otherwise: Any,
        *,
        inp: str,
        indent: int,
        env: dict[str, str],
        emit: Emit,
    ) -> None:
        if not branches:
            if otherwise is None:
                emit(inp, indent)
            else:
                self.node(otherwise, inp, indent, env, emit)
            return
        (cond, then), rest = branches[0], branches[1:]
        ones = all(self.is_one(part) for pair in branches for part in pair)
        if ones and (otherwise is None or self.is_one(otherwise)):
            out = self.fresh()
            self._one_branches(branches, otherwise, inp=inp, indent=indent, env=env, out=out)
            emit(out, indent)
            return

        def test(c: str, at: int) -> None:
            self.truthy_check(c, at)
            self.put(at, f"if {c} is not None and {c} is not False:")
            self.node(then, inp, at + 1, env, emit)
            self.put(at, "else:")
            self.put(at + 1, "pass")
            self._branches(rest, otherwise, inp=inp, indent=at + 1, env=env, emit=emit)

        self.node(cond, inp, indent, env, test)

    def _one_branches(
        self,
        branches: list[tuple[Any, Any]],
        otherwise: Any,
        *,
        inp: str,
        indent: int,
        env: dict[str, str],
        out: str,
    ) -> None:
        if not branches:
            value = inp if otherwise is None else self.one(otherwise, inp, indent, env)
            self.put(indent, f"{out} = {value}")
            return
        (cond, then), rest = branches[0], branches[1:]
        c = self.one(cond, inp, indent, env)
        self.truthy_check(c, indent)
        self.put(indent, f"if {c} is not None and {c} is not False:")
        self.put(indent + 1, f"{out} = {self.one(then, inp, indent + 1, env)}")
        self.put(indent, "else:")
        self._one_branches(rest, otherwise, inp=inp, indent=indent + 1, env=env, out=out)

    def n_Bind(self, node: A.Bind, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        if len(node.patterns) != 1 or not isinstance(node.patterns[0], A.VarPattern):
            raise _Decline
        name = node.patterns[0].name

        def body(value: str, at: int) -> None:
            self.node(node.body, inp, at, {**env, name: value}, emit)

        self.node(node.source, inp, indent, env, body)

    def n_Call(self, node: A.Call, inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        method = getattr(self, "call_" + node.name + "_" + str(len(node.args)), None)
        if method is None:
            raise _Decline
        method(node.args, inp, indent, env, emit)

    def call_empty_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self.put(indent, "pass")

    def call_not_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self.truthy_check(inp, indent)
        emit(self.scalar(indent, f"{inp} is None or {inp} is False"), indent)

    def call_length_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        out = self.fresh()
        self.put(indent, f"if type({inp}) is list or type({inp}) is str: {out} = len({inp})")
        self.put(indent, f"elif type({inp}) is dict and SK({inp}): {out} = len({inp})")
        self.put(indent, f"elif {inp} is None: {out} = 0")
        self.put(indent, f"elif type({inp}) is int: {out} = abs({inp})")
        self.put(indent, "else: raise B")
        emit(out, indent)

    def call_select_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        def test(c: str, at: int) -> None:
            self.truthy_check(c, at)
            self.put(at, f"if {c} is not None and {c} is not False:")
            emit(inp, at + 1)

        self.node(args[0], inp, indent, env, test)

    def _quantifier(
        self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], *, emit: Emit, want: bool
    ) -> None:
        """`any(f)` / `all(f)` over the input's elements: the first element that decides stops the loop, as the
        closures stop (an output after the deciding one is still evaluated and may only bail)."""
        elements = self._elements(inp, indent)
        found = self.scalar(indent, repr(not want))
        item = self.fresh()
        self.put(indent, f"for {item} in {elements}:")

        def test(c: str, at: int) -> None:
            self.truthy_check(c, at)
            self.put(at, f"if {'' if want else 'not '}({c} is not None and {c} is not False): {found} = {want!r}")

        if args:
            self.node(args[0], item, indent + 1, env, test)
        else:
            test(item, indent + 1)
        self.put(indent + 1, f"if {found} is {want!r}: break")
        emit(found, indent)

    def call_any_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._quantifier(args, inp, indent, env, emit=emit, want=True)

    def call_all_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._quantifier(args, inp, indent, env, emit=emit, want=False)

    def call_any_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._quantifier((), inp, indent, env, emit=emit, want=True)

    def call_all_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._quantifier((), inp, indent, env, emit=emit, want=False)

    def call_IN_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:  # noqa: N802
        # `any(s == .; .)`: the first equal output of s decides
        self.simple(inp, indent)
        found = self.scalar(indent, "False")

        def test(x: str, at: int) -> None:
            self.put(at, f"if not {found}:")
            self.simple(x, at + 1)
            self.put(at + 1, f"if type({x}) is type({inp}) and {x} == {inp}: {found} = True")

        self.node(args[0], inp, indent, env, test)
        emit(found, indent)

    def call_add_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        elements = self._elements(inp, indent)
        total = self.assign(indent, "None")
        item = self.fresh()
        self.put(indent, f"for {item} in {elements}:")
        self.put(indent + 1, f"if {total} is None: {total} = {item}")
        self.put(indent + 1, f"elif {item} is None: pass")
        self.put(indent + 1, f"elif type({total}) is int and type({item}) is int:")
        self.put(indent + 2, f"{total} = {total} + {item}")
        self.put(indent + 2, f"if not -S < {total} < S: raise B")
        self.put(indent + 1, "else: raise B")
        emit(total, indent)

    def call_map_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        elements = self._elements(inp, indent)
        built = self.assign(indent, "[]")
        item = self.fresh()
        self.put(indent, f"for {item} in {elements}:")
        self.node(args[0], item, indent + 1, env, lambda out, at: self.put(at, f"{built}.append({out})"))
        emit(built, indent)

    def call_first_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._index(inp, 0, False, indent, emit)

    def call_last_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._index(inp, -1, False, indent, emit)

    def call_ascii_downcase_0(
        self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit
    ) -> None:
        emit(self.scalar(indent, f"ASC({inp}, False)"), indent)

    def call_ascii_upcase_0(
        self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit
    ) -> None:
        emit(self.scalar(indent, f"ASC({inp}, True)"), indent)

    def _affix(
        self, method: str, args: tuple[Any, ...], inp: str, indent: int, *, env: dict[str, str], emit: Emit
    ) -> None:
        def test(affix: str, at: int) -> None:
            self.put(at, f"if type({inp}) is not str or type({affix}) is not str: raise B")
            emit(self.scalar(at, f"{inp}.{method}({affix})"), at)

        self.node(args[0], inp, indent, env, test)

    def call_startswith_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._affix("startswith", args, inp, indent, env=env, emit=emit)

    def call_endswith_1(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self._affix("endswith", args, inp, indent, env=env, emit=emit)

    def call_min_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self.put(indent, f"if type({inp}) is list: s += len({inp})")
        self.put(indent, "if s > L: raise B")
        emit(self.scalar(indent, f"EXT({inp}, True)"), indent)

    def call_max_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        self.put(indent, f"if type({inp}) is list: s += len({inp})")
        self.put(indent, "if s > L: raise B")
        emit(self.scalar(indent, f"EXT({inp}, False)"), indent)

    def call_type_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        out = self.fresh()
        self.known.add(out)
        for test, name in _TYPE_NAMES:
            self.put(indent, f"{'if' if name == 'null' else 'elif'} {test.format(inp)}: {out} = {self.constant(name)}")
        self.put(indent, "else: raise B")
        emit(out, indent)

    def call_tostring_0(self, args: tuple[Any, ...], inp: str, indent: int, env: dict[str, str], emit: Emit) -> None:
        out = self.fresh()
        self.put(indent, f"if type({inp}) is str: {out} = {inp}")
        self.put(indent, f"elif {inp} is None: {out} = {self.constant('null')}")
        self.put(indent, f"elif {inp} is True: {out} = {self.constant('true')}")
        self.put(indent, f"elif {inp} is False: {out} = {self.constant('false')}")
        self.put(indent, f"elif type({inp}) is int and -S < {inp} < S: {out} = str({inp})")
        self.put(indent, "else: raise B")
        emit(out, indent)


# calls that give one output whatever their arguments give (or fail)
_ONE_CALLS: Final = frozenset(
    {
        "not/0",
        "length/0",
        "add/0",
        "map/1",
        "any/0",
        "all/0",
        "any/1",
        "all/1",
        "IN/1",
        "first/0",
        "last/0",
        "ascii_downcase/0",
        "ascii_upcase/0",
        "type/0",
        "tostring/0",
        "min/0",
        "max/0",
    }
)


def _is_add(node: Any) -> bool:
    return type(node) is A.Call and node.name == "add" and not node.args


def _is_constant(node: Any) -> bool:
    """A literal that reads no input (what `_alternative` may evaluate on another input than the pipe's)."""
    return type(node) in (A.Literal, A.Number) or (type(node) is A.String and node.constant is not None)


_COMPARISONS: Final = ("==", "!=", "<", "<=", ">", ">=")
_TYPE_NAMES: Final = (
    ("{0} is None", "null"),
    ("type({0}) is bool", "boolean"),
    ("type({0}) is int", "number"),
    ("type({0}) is str", "string"),
    ("type({0}) is list", "array"),
    ("type({0}) is dict", "object"),
)


# --- programs --------------------------------------------------------------------------------------------------


class _Body(NamedTuple):
    """One expression's generated block, and whether every output it appends is a name the generator knows to
    hold a null, a boolean, a string or a safe int (then `_finish` has nothing to check or normalise)."""

    lines: list[str]
    scalars: bool


def _tree(expr: str) -> Any:
    """The parse tree of an expression the generator may cover (the engine runs it in process), else None."""
    info = engine.compile_expression(expr)
    if info.fast is None and info.compiled is None:
        return None  # the engine does not run it in process: neither does this
    try:
        return parse(expr)
    except (RecursionError, MemoryError, JqError):
        return None


_MAX_SHARED_HEIGHT: Final = 48  # a shared subtree is hashed when counted: only small ones are


def _children(node: Any) -> list[Any]:
    found: list[Any] = []
    pending = list(A.fields_of(node))
    while pending:
        value = pending.pop()
        if A.is_node(value):
            found.append(value)
        elif type(value) is tuple or type(value) is list:
            pending.extend(value)
    return found


def _shared_subtrees(trees: Sequence[Any]) -> dict[int, int]:
    """The subtrees the batch computes more than once on the root, worth a memo: for each occurrence (by the
    node's id in these trees) the memo key of its value. Only subtrees that give one output, read no variable
    and do more than one step are taken; whether an occurrence is really computed on the root is decided where
    it is generated (the input is `v`)."""
    probe = _Generator({})
    occurrences: list[Any] = []
    heights: dict[int, tuple[int, bool]] = {}  # id -> (height, reads a variable)
    try:
        for tree in trees:
            stack: list[tuple[Any, bool]] = [(tree, False)]
            while stack:
                node, done = stack.pop()
                kids = _children(node)
                if not done:
                    stack.append((node, True))
                    stack.extend((kid, False) for kid in kids)
                    continue
                height = 1 + max((heights[id(kid)][0] for kid in kids), default=0)
                reads_var = type(node) in (A.Var, A.VarNoCopy) or any(heights[id(kid)][1] for kid in kids)
                heights[id(node)] = (height, reads_var)
                if height <= _MAX_SHARED_HEIGHT and not reads_var and _worth_sharing(node, probe):
                    occurrences.append(node)
        counts: dict[Any, int] = {}
        for node in occurrences:
            counts[node] = counts.get(node, 0) + 1
        keys: dict[Any, int] = {}
        return {id(node): keys.setdefault(node, len(keys)) for node in occurrences if counts[node] > 1}
    except RecursionError:
        return {}


def _worth_sharing(node: Any, probe: _Generator) -> bool:
    kind = type(node)
    if kind in (A.Identity, A.Literal, A.Number, A.String, A.Var, A.VarNoCopy):
        return False
    if kind is A.Index and type(node.target) is A.Identity:
        return False  # one dict read: the memo would cost as much
    return probe.is_one(node)


def _expression_lines(
    expr: str, constants: dict[str, Any], *, tree: Any = None, shared: dict[int, int] | None = None
) -> _Body | None:
    """The body of one expression's block (outputs appended to `o`), or None when it is not generated. `tree`:
    its parse tree when the caller has it (`_tree`); `shared`: the batch's shared subtrees."""
    if tree is None:
        tree = _tree(expr)
        if tree is None:
            return None
    try:
        generator = _Generator(dict(constants), shared)
        generator.put(0, "s = 0")
        generator.put(0, "o = []")
        unknown: list[str] = []

        def output(value: str, indent: int) -> None:
            if value not in generator.known:
                unknown.append(value)
            generator.put(indent, f"o.append({value})")
            generator.put(indent, f"if len(o) >= {MAX_RESULTS}: raise B")

        generator.node(tree, "v", 0, {}, output)
        body = _Body(generator.lines, not unknown)
    except (_Decline, RecursionError, MemoryError, JqError):
        return None
    constants.update(generator.constants)
    return body


def _compiles(body: _Body) -> bool:
    """Whether one expression's block compiles alone (a deep one may pass Python's limit of nested blocks)."""
    try:
        compile(_function_source([body]), "<jq>", "exec")
    except (RecursionError, SyntaxError, MemoryError):
        return False
    return True


def _function_source(bodies: Sequence[_Body | None]) -> str:
    out = ["def run(v):", "    r = []", "    m = {}"]
    for body in bodies:
        if body is None:
            out.append("    r.append(BAIL)")
            continue
        out.append("    try:")
        out.extend("        " + line for line in body.lines)
        # outputs known to be plain scalars are what `_finish` would give back unchanged
        out.append("        r.append(o)" if body.scalars else "        r.append(FIN(o))")
        out.append("    except Exception:")  # _Bail, or anything unforeseen: the current path decides
        out.append("        r.append(BAIL)")
    out.append("    return r")
    return "\n".join(out) + "\n"


def _functions_source(bodies: Sequence[_Body | None]) -> str:
    """One function `f<i>(v, m, N=FIN)` per generated expression, giving its outputs or `BAIL` (`m`: the memo of
    the shared subtrees, one per evaluation of the batch; `N`: what finishes the outputs, `_finish`, or
    `finish_read` for a reader that ignores a list holding containers), `F` the tuple of them (None where not
    generated), and `run(v)`, all of them in order."""
    out: list[str] = []
    for index, body in enumerate(bodies):
        if body is None:
            continue
        out.append(f"def f{index}(v, m, N=FIN):")
        out.append("    try:")
        out.extend("        " + line for line in body.lines)
        out.append("        return o" if body.scalars else "        return N(o)")
        out.append("    except Exception:")
        out.append("        return BAIL")
    names = [f"f{index}" if body is not None else "None" for index, body in enumerate(bodies)]
    out.append(f"F = ({', '.join(names)},)" if names else "F = ()")
    out.append("def run(v):")
    out.append("    m = {}")
    out.append("    return [BAIL if f is None else f(v, m) for f in F]")
    return "\n".join(out) + "\n"


class BatchProgram:
    """One generated function for a batch of expressions: `run(obj)` gives a list with, per expression, its
    outputs or `BAIL` (not covered, or bailed on this object). With `lazy`, each expression is a function of its
    own as well (`functions[i](obj, memo)`, None where not covered), for a reader that evaluates only the
    expressions it consults (the status plan: `resolve.status_plan`); `run` then calls them in turn."""

    __slots__ = ("covered", "exprs", "functions", "run", "source")

    def __init__(self, exprs: tuple[str, ...], *, lazy: bool = False) -> None:
        constants: dict[str, Any] = {}
        trees = [_tree(expr) for expr in exprs]
        shared = _shared_subtrees([tree for tree in trees if tree is not None])
        bodies = [
            None if tree is None else _expression_lines(expr, constants, tree=tree, shared=shared)
            for expr, tree in zip(exprs, trees, strict=True)
        ]
        source_of = _functions_source if lazy else _function_source
        # Compiled once as a whole (compiling is most of what a program costs); only when that fails are the
        # blocks compiled one by one, to leave out the ones Python refuses.
        source = source_of(bodies)
        try:
            code = compile(source, "<jq batch>", "exec")
        except (RecursionError, SyntaxError, MemoryError):
            bodies = [body if body is not None and _compiles(body) else None for body in bodies]
            source = source_of(bodies)
            code = compile(source, "<jq batch>", "exec")
        self.exprs = exprs
        self.covered = tuple(body is not None for body in bodies)
        self.source = source
        namespace: dict[str, Any] = {**_GLOBALS, **constants}
        exec(code, namespace)  # the source is built from our tree only
        self.run: Callable[[Any], list[Any]] = namespace["run"]
        self.functions: tuple[Callable[[Any, dict[int, Any]], Any] | None, ...] = namespace.get("F", ())


@functools.lru_cache(maxsize=256)
def batch_program(exprs: tuple[str, ...]) -> BatchProgram:
    """The generated program of a batch (built and compiled once per process per batch). Bounded: a program of a
    large group is tens of kilobytes of code, and a definition has two groups (structure, status)."""
    return BatchProgram(exprs)


@functools.lru_cache(maxsize=256)
def expression_functions(exprs: tuple[str, ...]) -> BatchProgram:
    """The generated program of a batch with a function per expression (`BatchProgram(lazy=True)`), once per
    process per batch."""
    return BatchProgram(exprs, lazy=True)


def stored_program(expr: str) -> tuple[bytes, dict[str, Any]] | None:
    """The program of `expr` alone, to be stored (`jq.stored`): the marshalled code of the module that defines its
    function `f0(v, m, N=FIN)` (`expression_functions`' form), and the constants that function reads as its
    globals; None when the generator does not cover it, or Python refuses its code."""
    tree = _tree(expr)
    if tree is None:
        return None
    constants: dict[str, Any] = {}
    body = _expression_lines(expr, constants, tree=tree, shared=_shared_subtrees([tree]))
    if body is None:
        return None
    try:
        code = compile(_functions_source([body]), "<jq stored>", "exec")
    except (RecursionError, SyntaxError, MemoryError):
        return None
    return marshal.dumps(code), constants


def generated_source(exprs: Sequence[str]) -> str:
    """The Python source generated for a batch (for reading and tests)."""
    return batch_program(tuple(exprs)).source


def uncovered(exprs: Sequence[str]) -> list[str]:
    """The expressions of `exprs` the generator does not cover (they always take the current path)."""
    program = batch_program(tuple(exprs))
    return [expr for expr, covered in zip(program.exprs, program.covered, strict=True) if not covered]
