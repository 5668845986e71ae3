"""Generated programs kept from an earlier process: for each expression of the built-in catalog that the generator
covers, the function `jq.codegen` generates for it alone, compiled, marshalled and stored with the catalog's blob
(`workload_map.catalog.precompiled`), and handed here when its definition is decoded.

`jq.generated.evaluate_batch` runs them on the first objects of a definition, before a batch is worth generating
(`GENERATE_AFTER`): so a `describe -f` of a catalog workload never imports the generator or the closure compiler
(`jq.compiler` alone was ~5 million instructions of it, and compiling the closures ~1.4 million; issue 19:
start-up). What a stored program answers is what the generated one answers (the same code, from the same tree),
and it bails where that one bails: the expression is then evaluated the current way.

A stored program is what this package's generator gave for the text when the blob was built: the blob's key
covers the modules that decide it (the validator's stamp of every jq module, or `program_stamp`) and the
interpreter's bytecode magic number, so a changed generator or another Python means a new blob, never old code.
Marshalled code is trusted as Python trusts a `__pycache__` file: the catalog hands programs over only from a blob
owned by the user running the command and not writable by anyone else (`precompiled._trusted`). A program that does
not read back as one function (a damaged blob) is dropped, and the expression evaluated as without it.

The stored form, per text: `[code, constants]`, `code` the marshalled module code that defines `f0(v, m, N)`
(`codegen._functions_source` of the one expression), `constants` its globals `K1`, `K2`, ... (strings and ints).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping, Sequence
from types import CodeType, FunctionType
from typing import Any, Final

from workload_map.jq.runtime import GLOBALS
from workload_map.jq.trees import module_stamp

__all__ = ["Program", "forget", "program", "program_stamp", "programs", "remember"]

Program = Callable[..., Any]
"""`f(obj, memo, finish=jq.finish.finish)`: the expression's outputs on `obj` read in place, or `BAIL` (as
`codegen`'s functions; `finish` is what outputs holding containers go through)."""

_stored: dict[str, Any] = {}  # text -> stored form, not read yet
_loaded: dict[str, Program | None] = {}
# the modules whose code decides a program (the trees it is generated from are the parser's: `trees.tree_stamp`)
_PROGRAM_MODULES: Final = ("codegen.py", "engine.py", "finish.py", "runtime.py", "stored.py")
_CONSTANT_TYPES: Final = (str, int)


def _is_constant_name(name: str) -> bool:
    return name[:1] == "K" and name[1:].isascii() and name[1:].isdigit()


def remember(found: Mapping[str, Any]) -> None:
    """Programs (text -> stored form) generated in an earlier process, read back when first asked for."""
    _stored.update(found)


def program(expr: str) -> Program | None:
    """The stored program of `expr`, or None."""
    found = _loaded.get(expr)
    if found is None and expr in _stored:
        found = _loaded[expr] = _read(_stored.pop(expr))
    return found


def programs(exprs: Sequence[str]) -> list[Program | None] | None:
    """The stored program of each of `exprs` (None where there is none); None when none of them has one."""
    found = [program(expr) for expr in exprs]
    return None if all(each is None for each in found) else found


def _read(stored: Any) -> Program | None:
    """The function of a stored form; None when it is not one (then the expression runs as without it)."""
    if type(stored) is not list or len(stored) != 2 or type(stored[0]) is not bytes or type(stored[1]) is not dict:
        return None
    constants: dict[Any, Any] = stored[1]
    if not all(
        type(name) is str and _is_constant_name(name) and type(value) in _CONSTANT_TYPES
        for name, value in constants.items()
    ):
        return None  # only the generator's names (K1, K2, ...): never one of the runtime's globals
    try:
        code = marshal.loads(stored[0])
        if type(code) is not CodeType:
            return None
        namespace: dict[str, Any] = {**GLOBALS, **constants}
        exec(code, namespace)  # generated from our own tree when the blob was built (see the module's docstring)
    except Exception:  # a damaged program: anything marshal or the module's code raises
        return None
    program = namespace.get("f0")
    return program if type(program) is FunctionType else None


def forget() -> None:
    """Drop every remembered program (tests, and benchmarks that time the other paths)."""
    _stored.clear()
    _loaded.clear()


def program_stamp() -> bytes | None:
    """(name, size, mtime) of the modules that decide a program, as Python's bytecode cache judges a source file;
    None when they cannot be read (then no programs are stored)."""
    return module_stamp(_PROGRAM_MODULES)
