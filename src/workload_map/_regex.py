"""`LazyPattern`: a regular expression compiled on its first use, not when its module is imported.

Compiling a pattern costs 0.1-4 ms; at module level that is paid by every command that imports the module, whether
or not it ever matches anything (issue 19: start-up). A module keeps its patterns as module constants all the same:

    _NAME: Final = LazyPattern(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
    ...
    if _NAME.fullmatch(text): ...

The first use of a method compiles the pattern and puts the compiled pattern's own bound methods on the instance,
so every later call is the `re.Pattern` method itself, with no wrapper in between (the lexer and the YAML reader
call theirs once per token or scalar). `.compiled` is the `re.Pattern`. Two threads compiling at once is harmless:
both results are equal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, AnyStr, Final, Generic

# what the first use of any of these compiles (the re.Pattern methods and attributes the package uses)
_COMPILED_NAMES: Final = frozenset({"match", "fullmatch", "search", "finditer", "findall", "split", "sub", "subn"})


class LazyPattern(Generic[AnyStr]):
    """A pattern over `str` or `bytes`, compiled by `re.compile(source, flags)` on first use."""

    def __init__(self, source: AnyStr, flags: int = 0) -> None:
        self.source: AnyStr = source
        self.flags: int = flags

    @property
    def pattern(self) -> AnyStr:
        return self.source

    def __getattr__(self, name: str) -> Any:
        # called only for a name the instance does not have yet: before the first use
        if name != "compiled" and name not in _COMPILED_NAMES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        compiled = re.compile(self.source, self.flags)
        for method in _COMPILED_NAMES:
            setattr(self, method, getattr(compiled, method))
        self.compiled = compiled
        return getattr(self, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.source!r}, {self.flags!r})"

    if TYPE_CHECKING:  # the signatures of what __getattr__ hands out (the re.Pattern methods)
        compiled: re.Pattern[AnyStr]

        def match(self, string: AnyStr, pos: int = ..., endpos: int = ...) -> re.Match[AnyStr] | None: ...

        def fullmatch(self, string: AnyStr, pos: int = ..., endpos: int = ...) -> re.Match[AnyStr] | None: ...

        def search(self, string: AnyStr, pos: int = ..., endpos: int = ...) -> re.Match[AnyStr] | None: ...

        def finditer(self, string: AnyStr, pos: int = ..., endpos: int = ...) -> Iterator[re.Match[AnyStr]]: ...

        def findall(self, string: AnyStr, pos: int = ..., endpos: int = ...) -> list[Any]: ...

        def split(self, string: AnyStr, maxsplit: int = ...) -> list[AnyStr | Any]: ...

        def sub(
            self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = ...
        ) -> AnyStr: ...

        def subn(
            self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = ...
        ) -> tuple[AnyStr, int]: ...
