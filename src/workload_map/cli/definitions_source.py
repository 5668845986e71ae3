"""The definitions a command works with, in one `DefinitionRegistry`: local files (`--definitions`), the cluster
(when a cluster command supplies a source), and the built-in catalog.

For one root GVK the precedence is local > cluster > catalog (`workload_map.catalog`); a workload of another
version of the same group and kind falls back to a definition for that group and kind.

Local definitions are checked up front: a file that cannot be read or is not YAML is exit 2, a definition that does
not load or has validation errors is exit 1, each with the file and YAML field path, so a bad definition never shows
up later as a confusing resolution error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workload_map.catalog import DefinitionRegistry, builtin_registry
from workload_map.cli.errors import CLIError, UsageError
from workload_map.model import Karta

if TYPE_CHECKING:  # for annotations only: a Protocol class is ~0.3 million instructions to make (issue 19)
    from typing import Protocol

    from workload_map.cli.context import Reporter
    from workload_map.validation import Finding

    class ClusterDefinitionSource(Protocol):
        """Where a cluster command gets the cluster's Karta objects (implemented by the cluster layer's CLI glue).

        `load()` returns the definitions and the warnings to show (an unreachable cluster, a missing CRD, a skipped
        item); it should not raise for those, so the catalog still works without a cluster.
        """

        def load(self) -> tuple[list[Karta], list[str]]: ...


def load_local_definitions(paths: Sequence[str]) -> list[Karta]:
    """Every definition in the files and directories of `--definitions`, loaded and validated strictly."""
    found: list[Karta] = []
    if not paths:
        return found
    # only with --definitions: the validation layer (and the jq checks it imports) is no part of `describe -f`
    from pathlib import Path

    from workload_map.model import DefinitionError, scan_definitions
    from workload_map.validation import errors, validate

    for raw in paths:
        if raw != "-" and not Path(raw).exists():
            raise UsageError(
                f"--definitions {raw}: no such file or directory", hint="give a definition file or a directory of them"
            )
        result = scan_definitions(Path(raw))
        if not result.items:
            raise UsageError(
                f"--definitions {raw}: no definitions found",
                hint="a directory is searched for *.yaml, *.yml and *.json files holding kind: Karta",
            )
        for label, item in result.items:
            if isinstance(item, DefinitionError):
                if item.unreadable:
                    raise UsageError(f"--definitions {item}")
                raise CLIError(f"--definitions {item}", hint=f'run "wmap validate {raw}" to see every finding')
            assert isinstance(item, Karta)
            problems = errors(validate(item))
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise CLIError(
                    f"--definitions {label}: definition {item.name!r} is invalid: {_finding(problems[0])}{more}",
                    hint=f'run "wmap validate {raw}" to see every finding',
                )
            found.append(item)
    return found


def _finding(finding: Finding) -> str:
    return f"{finding.path}: {finding.message}" if finding.path else finding.message


def build_registry(
    local_paths: Sequence[str] = (),
    *,
    report: Reporter,
    cluster: ClusterDefinitionSource | None = None,
    catalog: bool = True,
) -> DefinitionRegistry:
    """A registry with the local definitions, the cluster's (if a source is given) and the built-in catalog.

    The cluster source's warnings and the registry's (two definitions of one origin for the same kind) go to
    `report`.
    """
    # the catalog's definitions held first (each decoded only when a lookup hands it out: catalog.builtin_registry);
    # the order of origins added changes no lookup, as precedence decides
    registry = builtin_registry() if catalog else DefinitionRegistry()
    local = load_local_definitions(local_paths)
    if local:
        registry.add("local", local)
    if cluster is not None:
        definitions, warnings = cluster.load()
        for message in warnings:
            report.warn(message)
        registry.add("cluster", definitions)
    for message in registry.warnings:
        report.warn(message)
    return registry
