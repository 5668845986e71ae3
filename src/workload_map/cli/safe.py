"""Terminal-safe text: every untrusted string the CLI prints goes through here once, at the boundary.

Names, phases, reasons, jq error messages and file names come from manifests and cluster `Karta` objects that
anyone with write access to a cluster wrote. Printed raw, an escape sequence in them could set the terminal's
title, clear the screen, move the cursor or forge an `error:` line; a 50 MB message would be one 50 MB line.

`safe_text(text)` makes one field safe: control characters (C0, including newline and tab, DEL, C1), the Unicode
line and paragraph separators, bidirectional overrides and lone surrogates are written visibly as `\\x1b`,
`\\n`, `\\u202e`, ...; text longer than `limit` characters is cut, with the count of what was left out
(`... (49,999,950 more characters)`). An ESC is escaped like any other control character, so an ANSI sequence
reaches the terminal as harmless text (`\\x1b]0;title\\x07`).

`safe_lines(text)` keeps the newlines of a multi-line layout and makes each line safe. The text renderers
(`render.text.write_lines`), the error and warning printer (`errors.report_exception`, `context.State`) and the
commands that write plain lines use these; JSON is escaped by its encoder and YAML by its emitter.
"""

from __future__ import annotations

import re
from typing import Final

from workload_map._regex import LazyPattern

__all__ = ["FIELD_LIMIT", "LINE_LIMIT", "MESSAGE_LIMIT", "safe_lines", "safe_text"]

FIELD_LIMIT: Final = 1000  # one name or file name in a plain line
LINE_LIMIT: Final = 4000  # one line of a tree or table (cut with the count of the rest)
MESSAGE_LIMIT: Final = 2000  # one error, hint, warning or notice line

# C0 (0x00-0x1f), DEL and C1 (0x7f-0x9f), the line/paragraph separators, bidirectional embeddings, overrides and
# isolates, the zero-width no-break space / BOM, and lone surrogates (from undecodable bytes).
_UNSAFE: Final = LazyPattern("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe_text(text: object, limit: int | None = FIELD_LIMIT) -> str:
    """`text` as one line a terminal shows as it is: control characters escaped, at most `limit` characters of
    the original kept (None: no cut), then `... (N more characters)`."""
    value = text if isinstance(text, str) else str(text)
    tail = ""
    if limit is not None and len(value) > limit:
        tail = f"... ({len(value) - limit:,} more characters)"
        value = value[:limit]
    # an ASCII text is unsafe exactly where it is not printable (C0 controls, DEL): answered without compiling the
    # pattern (~0.5 ms of a start, issue 19)
    if not (value.isascii() and value.isprintable()) and _UNSAFE.search(value):
        value = _UNSAFE.sub(_escape, value)
    return value + tail


def safe_lines(text: object, limit: int | None = MESSAGE_LIMIT) -> str:
    """`text` with its newlines kept (a multi-line layout) and each line made safe by `safe_text`; at most
    `limit` characters in all before the cut."""
    value = text if isinstance(text, str) else str(text)
    tail = ""
    if limit is not None and len(value) > limit:
        tail = f"... ({len(value) - limit:,} more characters)"
        value = value[:limit]
    return "\n".join(safe_text(line, None) for line in value.split("\n")) + tail
