"""Small formatting helpers: quantities a person reads, kubectl-style ages, GVK text, accelerator names."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

from workload_map.resources.human import cpu_text, memory_text

# cpu_text and memory_text live with the quantities (the placement layer's reasons use them too); the CLI's
# renderers read every formatting helper from here.
__all__ = [
    "accelerator_labels",
    "accelerators_text",
    "age",
    "cpu_text",
    "gvk_text",
    "human_duration",
    "memory_text",
    "short_resource",
]


def short_resource(name: str) -> str:
    """`nvidia.com/mig-1g.5gb` -> `mig-1g.5gb`: the part a person reads."""
    return name.rpartition("/")[2] or name


def accelerator_labels(names: Iterable[str]) -> dict[str, str]:
    """A short label per accelerator resource name, falling back to the full name when two would collide."""
    names = sorted(set(names))
    shorts = [short_resource(name) for name in names]
    return {name: (short if shorts.count(short) == 1 else name) for name, short in zip(names, shorts, strict=True)}


def accelerators_text(gpus: int, accelerators: Mapping[str, int], labels: Mapping[str, str]) -> str:
    """`gpu: 8`, `gpu: 8, mig-1g.5gb: 2`, or "" when nothing is requested."""
    parts = [f"gpu: {gpus}"] if gpus else []
    parts += [f"{labels.get(name, name)}: {count}" for name, count in sorted(accelerators.items()) if count]
    return ", ".join(parts)


def gvk_text(api_version: str, kind: str) -> str:
    """`group/version/Kind`, `v1/Pod` for the core group (upstream's FormatGVK)."""
    return f"{api_version}/{kind}" if api_version else kind


def human_duration(seconds: float) -> str:
    """kubectl's age format: `45s`, `3m20s`, `2h`, `5d`, `2y`."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: str | None, now: datetime.datetime | None = None) -> str:
    """The age of an RFC 3339 timestamp (`<unknown>` when absent or unreadable)."""
    if not timestamp:
        return "<unknown>"
    try:
        when = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    current = now or datetime.datetime.now(datetime.timezone.utc)
    return human_duration((current - when).total_seconds())
