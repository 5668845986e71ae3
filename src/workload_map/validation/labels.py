"""Kubernetes label key and value syntax (as the API server checks `metadata.labels`)."""

from __future__ import annotations

from workload_map._regex import LazyPattern

_NAME = LazyPattern(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = LazyPattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NAME_CHARS = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)


def label_key_problems(key: str) -> list[str]:
    """Why `key` is not a valid label key: an optional DNS-subdomain prefix and `/`, then a name."""
    problems: list[str] = []
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return ["prefix part must be non-empty"]
    if "/" in prefix:
        return ["a qualified name must have at most one '/'"]
    if prefix:
        if len(prefix) > 253:
            problems.append("prefix part must be no more than 253 characters")
        if not _DNS_SUBDOMAIN.match(prefix):
            problems.append(
                "prefix part must be a lowercase DNS subdomain: alphanumeric characters, '-' or '.', starting and "
                "ending with an alphanumeric character"
            )
    if not name:
        problems.append("name part must be non-empty")
        return problems
    if len(name) > 63:
        problems.append("name part must be no more than 63 characters")
    if not _NAME.match(name):
        problems.append(f"name part {_NAME_CHARS}")
    return problems


def label_value_problems(value: str) -> list[str]:
    """Why `value` is not a valid label value: empty, or a name of at most 63 characters."""
    if not value:
        return []
    problems: list[str] = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _NAME.match(value):
        problems.append(_NAME_CHARS)
    return problems
