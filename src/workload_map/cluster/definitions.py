"""Karta definitions stored in the cluster: one cluster-scoped LIST of `kartas.run.ai` (`run.ai/v1alpha1`).

Never fatal (the built-in catalog still works without them), but never silent when something is wrong:

| condition | what the caller is told |
|---|---|
| the CRD is not installed (404) | a note (shown with `--debug`): most clusters do not have it, as upstream is silent |
| forbidden (403) | a warning naming the permission to ask for |
| unreachable, or another error | a warning with the cause |
| one Karta does not load or is invalid | a warning naming it; the others are used |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cluster.errors import ClusterError, Forbidden, NotFound

if TYPE_CHECKING:
    from workload_map.cluster.client import ApiClient
    from workload_map.cluster.core import Op
    from workload_map.model import Karta

KARTAS_PATH = "/apis/run.ai/v1alpha1/kartas"
KARTA_RESOURCE = "kartas.run.ai"


class ClusterDefinitions(msgspec.Struct):
    """What the cluster holds: the usable definitions, warnings to show, notes for `--debug`, and the outcome
    (`ok`, `absent`, `forbidden`, `unreachable`, `error`)."""

    definitions: list[Karta] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    state: str = "ok"
    error: ClusterError | None = None


def parse_cluster_kartas(items: list[dict[str, Any]]) -> ClusterDefinitions:
    """Load and validate the items of a Karta LIST; a bad one is skipped with a warning naming it."""
    from workload_map.model import DefinitionError, karta_from_dict
    from workload_map.validation import errors, validate

    result = ClusterDefinitions()
    for item in items:
        name = str((item.get("metadata") or {}).get("name") or "?")
        try:
            karta = karta_from_dict(item, f'Karta "{name}"')
        except DefinitionError as exc:
            where = f" at {exc.path}" if exc.path else ""
            result.warnings.append(f'skipping Karta definition "{name}" from the cluster{where}: {exc.message}')
            continue
        problems = errors(validate(karta))
        if problems:
            first = problems[0]
            where = f"{first.path}: " if first.path else ""
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            result.warnings.append(f'skipping Karta definition "{name}" from the cluster: {where}{first.message}{more}')
            continue
        result.definitions.append(karta)
    return result


def definitions_op(*, chunk_size: int = 500) -> Op[ClusterDefinitions]:
    """LIST the cluster's Karta objects (see the module docstring); never raises a `ClusterError`. Sans-I/O."""
    from workload_map.cluster.core import Operation, list_op

    try:
        listed = yield from list_op(KARTAS_PATH, op=Operation("list", KARTA_RESOURCE), chunk_size=chunk_size)
    except NotFound:
        return ClusterDefinitions(
            notes=[f"the {KARTA_RESOURCE} CRD is not installed; using the built-in and local definitions only"],
            state="absent",
        )
    except Forbidden as exc:
        who = f" (as user {exc.user})" if exc.user else ""
        return ClusterDefinitions(
            warnings=[
                f"not allowed to list {KARTA_RESOURCE}{who}; showing built-in definitions only. Ask a cluster "
                f'administrator for "list" permission on {KARTA_RESOURCE} to include cluster definitions.'
            ],
            state="forbidden",
            error=exc,
        )
    except ClusterError as exc:
        from workload_map.cluster.errors import Unreachable

        return ClusterDefinitions(
            warnings=[
                f"could not read Karta definitions from the cluster: {exc.message}; showing built-in definitions only"
            ],
            state="unreachable" if isinstance(exc, Unreachable) else "error",
            error=exc,
        )
    result = parse_cluster_kartas(listed.items)
    result.notes.append(f"{len(result.definitions)} Karta definition(s) from the cluster")
    return result


def load_cluster_definitions(client: ApiClient, *, chunk_size: int = 500) -> ClusterDefinitions:
    """`definitions_op` over a blocking client."""
    return client.run(definitions_op(chunk_size=chunk_size))


class ClusterDefinitionSource:
    """The CLI's `ClusterDefinitionSource` (`load() -> (definitions, warnings)`) over one client. Notes (the CRD
    is absent) go to `log` when given. The last result stays in `.result`."""

    def __init__(self, client: ApiClient, *, log: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.log = log
        self.result: ClusterDefinitions | None = None

    def load(self) -> tuple[list[Karta], list[str]]:
        self.result = load_cluster_definitions(self.client)
        if self.log is not None:
            for note in self.result.notes:
                self.log(note)
        return self.result.definitions, self.result.warnings
