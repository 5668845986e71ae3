"""Error classes of the jq engine.

Three classes mirror upstream's (parse, compile, runtime) so callers can tell a broken definition from a
broken object; each carries the expression and, when the caller knows it, the definition's YAML field path.
"""

from __future__ import annotations

from workload_map.errors import WorkloadMapError


class JqError(WorkloadMapError):
    """Base of every jq failure: carries the expression and the definition field it came from."""

    kind = "jq error"

    def __init__(self, expression: str, message: str, field_path: str | None = None) -> None:
        self.expression = expression
        self.message = message
        self.field_path = field_path
        super().__init__(self._render())

    def _render(self) -> str:
        where = f" at {self.field_path}" if self.field_path else ""
        return f"{self.kind} in {self.expression!r}{where}: {self.message}"

    def with_field_path(self, field_path: str) -> JqError:
        """The same error, placed at a definition field (keeps the class)."""
        clone = type(self).__new__(type(self))
        JqError.__init__(clone, self.expression, self.message, field_path)
        return clone


class JqParseError(JqError):
    """The expression is not valid jq."""

    kind = "cannot parse jq expression"


class JqCompileError(JqError):
    """The expression parses but cannot be compiled (an undefined function, a bad arity)."""

    kind = "cannot compile jq expression"


class JqRuntimeError(JqError):
    """Evaluation failed on this input (iterating null, `error(...)`, too many results, a deadline)."""

    kind = "jq execution error"


class JqLimitError(JqRuntimeError):
    """Evaluation hit a containment limit: the output cap, the deadline or the memory cap."""

    kind = "jq limit exceeded"


class UnsafeExpressionError(JqError):
    """The static safety check rejected the expression (mutation, unbounded output, environment access)."""

    kind = "unsafe jq expression"


class InProcessStopError(JqLimitError):
    """A compiled evaluation was stopped: past the step budget, nested past Python's recursion limit, or with an
    output nested past `MAX_DEPTH` levels.

    A stop, as the worker's deadline and memory cap are (the Document appends it to its policy's `stops`), and not
    an ordinary jq error such as the output cap."""


class NotPlainError(WorkloadMapError):
    """A raw evaluation (`fastpath.compile_fast_raw`, or a stored program read in place) met a value its normalised
    form may read differently: a key that is not a string, a NaN or an infinity, a tuple, a set, a timestamp or
    another non-JSON value where the path looks at it. The caller evaluates on the normalised tree instead
    (`convert.normalize`)."""
