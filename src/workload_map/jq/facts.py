"""What the static analyses found about expressions in an earlier process, kept with their trees (`jq.trees`): the
parts of the input an expression reads (`engine.compile_expression`'s roots, from `reads`), whether it builds
nesting of its own (`compiler`'s depth check of its outputs) and whether it is a plain path the fast path reads on
the caller's object in place (`fastpath.compile_fast_raw`).

The catalog's precompiled blob (`workload_map.catalog.precompiled`) stores them for every expression of the built-in
definitions whose tree it stores, worked out by `engine.expression_facts` when the blob is built, and hands them
here with the trees when a definition is decoded; `engine` and `compiler` then take them instead of walking the
tree again (the two walks were ~9 million instructions of a `describe -f`; issue 19). A stored fact is what this
code gave for the text's tree when the blob was built, and the blob's key covers the modules that decide them
(`fact_stamp`, or the validator's stamp of every jq module), so a changed analysis means a new blob, never an old
fact. A fact that is not there (or does not read back) is worked out from the tree as usual.

The stored form, per text: `[roots, nests, plain]`, `roots` None (the whole input) or a list of patterns, each a list
of steps (a string key, an int index, or None for every element), `nests` and `plain` booleans (`plain` may be left
out: not known).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from workload_map.jq.trees import module_stamp

if TYPE_CHECKING:
    from workload_map.jq.convert import Roots

__all__ = ["Stored", "fact_stamp", "forget", "nests", "plain", "remember", "roots", "stored"]

Stored = tuple[list[list[str | int | None]] | None, bool] | tuple[list[list[str | int | None]] | None, bool, bool]

_stored: dict[str, Any] = {}  # text -> stored form, not read yet
_read_back: dict[str, tuple[Roots | None, bool, bool | None] | None] = {}
# the modules whose code decides a fact (the trees they are worked out on are the parser's: `trees.tree_stamp`)
_FACT_MODULES: Final = ("compiler.py", "convert.py", "engine.py", "facts.py", "fastpath.py", "reads.py")


def remember(facts: Mapping[str, Any]) -> None:
    """Facts of programs (text -> stored form) worked out in an earlier process, read back when first asked for;
    one that is not of the stored form is then dropped (and the fact worked out as without it)."""
    _stored.update(facts)


def _found(expr: str) -> tuple[Roots | None, bool, bool | None] | None:
    found = _read_back.get(expr)
    if found is None and expr in _stored:
        found = _read_back[expr] = _read(_stored.pop(expr))
    return found


def _read(stored: Any) -> tuple[Roots | None, bool, bool | None] | None:
    # a list read back from a blob, or the tuple `stored` made in this process (the run that builds the blob)
    if type(stored) not in (list, tuple) or len(stored) not in (2, 3) or type(stored[1]) is not bool:
        return None
    plain_path = stored[2] if len(stored) == 3 else None
    if plain_path is not None and type(plain_path) is not bool:
        return None
    patterns = stored[0]
    if patterns is None:
        return None, stored[1], plain_path
    if type(patterns) is not list:
        return None
    kept: set[tuple[str | int | None, ...]] = set()
    for pattern in patterns:
        if type(pattern) is not list or not all(step is None or type(step) in (str, int) for step in pattern):
            return None
        kept.add(tuple(pattern))
    return frozenset(kept), stored[1], plain_path


def roots(expr: str) -> tuple[Roots | None] | None:
    """`(roots,)` for an expression whose roots were remembered (roots None: it may read the whole input), else
    None."""
    found = _found(expr)
    return None if found is None else (found[0],)


def nests(expr: str) -> bool | None:
    """Whether the expression builds nesting of its own, when remembered; else None."""
    found = _found(expr)
    return None if found is None else found[1]


def plain(expr: str) -> bool | None:
    """Whether the expression is a plain path the fast path reads in place (`fastpath.compile_fast_raw` gives a
    reader), when remembered; else None."""
    found = _found(expr)
    return None if found is None else found[2]


def stored(found_roots: Roots | None, builds_nesting: bool, plain_path: bool | None = None) -> Stored:
    """The stored form of an expression's facts (`plain_path` None: not known, left out)."""
    patterns = None if found_roots is None else [list(pattern) for pattern in found_roots]
    return (patterns, builds_nesting) if plain_path is None else (patterns, builds_nesting, plain_path)


def forget() -> None:
    """Drop every remembered fact (tests, and benchmarks that time the analyses themselves)."""
    _stored.clear()
    _read_back.clear()


def fact_stamp() -> bytes | None:
    """(name, size, mtime) of the modules that decide a fact, as Python's bytecode cache judges a source file; None
    when they cannot be read (then no facts are stored)."""
    return module_stamp(_FACT_MODULES)
