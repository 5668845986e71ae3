"""Lone UTF-16 surrogates: what JSON text can escape (`"\\ud800"`) and Python's readers keep, but UTF-8 cannot hold.

`json.loads` and PyYAML turn an unpaired `\\uD800`-`\\uDFFF` escape into a lone surrogate code point. msgspec, which
encodes every document jq is given and every output written, refuses one, as UTF-8 has no form for it. The
Kubernetes API server never holds one: Go's `encoding/json` decodes each unpaired surrogate escape as U+FFFD, so an
object a cluster hands back has the replacement character where its text had the escape (and gojq, upstream's jq,
reads one the same way). A copy made here gives the same: one U+FFFD per lone surrogate.
"""

from __future__ import annotations

from typing import Final

from workload_map._regex import LazyPattern

REPLACEMENT: Final = "\ufffd"

_LONE: Final = LazyPattern("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a surrogate code point (a str made from valid UTF-8 never does)."""
    return not text.isascii() and _LONE.search(text) is not None


def replace_lone_surrogates(text: str) -> str:
    """`text` with each surrogate code point replaced by U+FFFD, as Go's JSON decoder reads an unpaired escape."""
    return _LONE.sub(REPLACEMENT, text) if has_lone_surrogate(text) else text
