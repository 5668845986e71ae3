"""Kubernetes name rules for pod groups: DNS-1123 subdomains and labels, and turning key values into names.

A PodGroup's name must be a DNS-1123 subdomain (at most 253 characters of `[a-z0-9.-]`, alphanumeric at both ends
and around each dot). Sub-group, PodSet and template names must be DNS-1123 labels (at most 63 characters of
`[a-z0-9-]`, alphanumeric at both ends). The messages below follow the API server's wording closely enough that a
user recognises them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Final

from workload_map._regex import LazyPattern
from workload_map.errors import ArgumentTypeError

__all__ = [
    "DNS1123_LABEL_MAX",
    "DNS1123_SUBDOMAIN_MAX",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "join_name",
    "to_dns1123_label",
]

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253

_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE: Final = LazyPattern(_LABEL)
_SUBDOMAIN_RE: Final = LazyPattern(rf"{_LABEL}(\.{_LABEL})*")
_INVALID_RUN: Final = LazyPattern(r"[^a-z0-9]+")


def dns1123_subdomain_errors(name: str) -> list[str]:
    """Why `name` is not a DNS-1123 subdomain (`[]` when it is)."""
    errors: list[str] = []
    if len(name) > DNS1123_SUBDOMAIN_MAX:
        errors.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if _SUBDOMAIN_RE.fullmatch(name) is None:
        errors.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'example.com')"
        )
    return errors


def dns1123_label_errors(name: str) -> list[str]:
    """Why `name` is not a DNS-1123 label (`[]` when it is)."""
    errors: list[str] = []
    if len(name) > DNS1123_LABEL_MAX:
        errors.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if _LABEL_RE.fullmatch(name) is None:
        errors.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
            "and end with an alphanumeric character (e.g. 'my-name')"
        )
    return errors


def _need_text(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise ArgumentTypeError(what, "a str", value)


def is_dns1123_subdomain(name: str) -> bool:
    _need_text(name, "name")
    return not dns1123_subdomain_errors(name)


def is_dns1123_label(name: str) -> bool:
    _need_text(name, "name")
    return not dns1123_label_errors(name)


def to_dns1123_label(text: str, *, max_length: int = DNS1123_LABEL_MAX) -> str:
    """`text` made a DNS-1123 label: lowercased, every run of other characters turned into one `-`, trimmed of
    leading/trailing `-`; longer than `max_length` -> cut and suffixed with 8 hex digits of its SHA-256, so two
    long names stay apart. `""` when nothing usable is left.
    """
    _need_text(text, "text")
    label = _INVALID_RUN.sub("-", text.lower()).strip("-")
    if len(label) <= max_length:
        return label
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    head = label[: max_length - len(digest) - 1].rstrip("-")
    return f"{head}-{digest}" if head else digest


def join_name(parts: Iterable[str], *, max_length: int = DNS1123_LABEL_MAX) -> str:
    """The non-empty `parts` joined with `-` and made a DNS-1123 label (see `to_dns1123_label`)."""
    return to_dns1123_label("-".join(part for part in parts if part), max_length=max_length)
