"""The static jq checks of a definition: every jq field parses and passes the safety check (karta-spec §9.3).

The parsing and the safety rules are the jq layer's (`workload_map.jq.safety.check_safety`, our own parser, no
libjq compile); this module walks the definition's jq fields and turns each result into a finding at the
field's YAML path. Results are cached per expression: definitions repeat the same selectors a lot.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from workload_map.errors import ArgumentTypeError
from workload_map.jq.errors import JqError, JqParseError
from workload_map.jq.safety import check_safety
from workload_map.model import Karta, jq_fields
from workload_map.validation.findings import ERROR, Finding

# Longer expressions are refused before parsing: no real definition comes near, a hostile one could.
MAX_EXPRESSION_LENGTH = 64 * 1024


def shorten(expression: str, limit: int = 80) -> str:
    """The expression on one line, cut to `limit` characters for a message."""
    flat = " ".join(expression.split())
    flat = "".join(c if c.isprintable() else repr(c)[1:-1] for c in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def expression_problems(expression: str) -> tuple[tuple[str, str], ...]:
    """(rule, message) for each problem of one expression; empty when it parses and is safe."""
    if not isinstance(expression, str):
        raise ArgumentTypeError("a jq expression", "a string", expression)
    return _expression_problems(expression)


@lru_cache(maxsize=8192)
def _expression_problems(expression: str) -> tuple[tuple[str, str], ...]:
    if len(expression) > MAX_EXPRESSION_LENGTH:
        return (
            (
                "jq-too-long",
                f"jq expression is {len(expression):,} characters long; expressions over "
                f"{MAX_EXPRESSION_LENGTH // 1024} KiB are refused",
            ),
        )
    shown = shorten(expression)
    try:
        reasons = check_safety(expression)
    except JqParseError as exc:
        return (("jq-parse", f"failed to parse JQ expression '{shown}': {exc.message}"),)
    except JqError as exc:
        return (("jq-unsafe", f"JQ expression '{shown}' failed validation: {exc.message}"),)
    except RecursionError:
        return (("jq-parse", f"failed to parse JQ expression '{shown}': nested too deeply"),)
    return tuple(("jq-unsafe", f"JQ expression '{shown}' failed validation: {reason}") for reason in reasons)


def jq_findings(karta: Karta) -> Iterator[Finding]:
    """A finding for each jq field that does not parse or is not safe."""
    for path, expression in jq_fields(karta):
        for rule, message in expression_problems(expression):
            yield Finding(ERROR, path, message, rule)
