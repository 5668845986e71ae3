"""`wmap definitions [NAME]`: the definitions in use (built-in catalog, the cluster's Kartas when a kubeconfig is
configured, and --definitions), as a table or as the Karta objects themselves (-o yaml|json, loadable back with
`load_definitions` or `kubectl apply -f`).

The cluster is optional here: with no kubeconfig at all it is left out silently; a configured one that cannot be
used or reached is a warning, and the other definitions are still listed (exit 0), as upstream."""

from __future__ import annotations

from typing import Any

import click

from workload_map.catalog import Entry
from workload_map.cli.context import state
from workload_map.cli.definitions_source import build_registry
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    component_limit_option,
    connection_options,
    definitions_option,
    output_option,
    resolve_output,
)
from workload_map.cli.render import machine
from workload_map.cli.render.text import align, seg, write_lines
from workload_map.model import Karta, to_dict

OUTPUT = OutputSpec("definitions", ("table", "json", "yaml"))
COLUMNS = ("NAME", "GROUP/VERSION/KIND", "COMPONENTS", "STATUSES", "SUSPEND", "GANG", "ORIGIN")


def gvk_cell(karta: Karta) -> str:
    """`group/version/Kind` (`v1/Pod` for the core group), `<none>` without a root kind."""
    gvk = karta.root_gvk
    if gvk is None or not gvk.kind:
        return "<none>"
    return f"{gvk.api_version}/{gvk.kind}"


def components_cell(karta: Karta, limit: int) -> str:
    """The root, then the children in declared order; at most `limit` children (0: all), then `+N more`."""
    children = [component.name for component in karta.children]
    shown = children if not limit or len(children) <= limit else children[:limit]
    cell = ", ".join([karta.root.name, *shown])
    if len(shown) < len(children):
        cell += f", +{len(children) - len(shown)} more"
    return cell


def statuses_cell(karta: Karta) -> str:
    """How many of the 8 phases the root's status mappings can report (`-` for none)."""
    status = karta.root.status_definition
    count = sum(1 for _, matchers in status.status_mappings.entries() if matchers) if status else 0
    return f"{count}/8" if count else "-"


def suspend_cell(karta: Karta) -> str:
    return "yes" if any(component.suspend_definition for component in karta.components) else "no"


def gang_cell(karta: Karta) -> str:
    gang = karta.gang_scheduling
    if gang is None:
        return "no"
    if gang.pod_group is not None:  # the KAI-native form wins when both are set (karta-spec §8)
        count = len(gang.pod_group.sub_groups or ())
        return f"{count} sub-group{'s' * (count != 1)}" if count else "1 gang"
    count = len(gang.pod_groups or ())
    return f"{count} group{'s' * (count != 1)}"


def _listed(entries: list[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda entry: (entry.name, entry.origin))


def _filter_text(group: str | None, kind: str | None, version: str | None) -> str:
    if kind is None:
        return group or "core"
    if version is None:
        return f"{group}/{kind}" if group else kind
    return f"{group}/{version}/{kind}" if group else f"{version}/{kind}"


def _check_filters(name: str | None, group: str | None, kind: str | None, version: str | None) -> None:
    if name is not None and group is not None:
        raise UsageError("a NAME and --group address the same definition; give one or the other")
    if kind is not None and group is None:
        raise UsageError(
            "--kind needs --group", hint='for example --group kubeflow.org --kind PyTorchJob (--group "" is core)'
        )
    if version is not None and kind is None:
        raise UsageError(
            "--version needs --kind", hint="for example --group jobset.x-k8s.io --kind JobSet --version v1alpha2"
        )
    if kind is not None and not kind.strip():
        raise UsageError("--kind is empty")
    if version is not None and not version.strip():
        raise UsageError("--version is empty")


_HELP = """\
List the Karta definitions in use: the built-in catalog, the cluster's Karta objects (when a kubeconfig is
configured) and any --definitions, or print one (NAME).

For the same kind a local definition wins over the cluster's, which wins over the built-in one (ORIGIN says which
is in use). Without a kubeconfig the cluster is left out silently; one that cannot be reached is a warning, and
the rest is still listed. COMPONENTS lists the root and its children,
STATUSES how many of the 8 phases the definition can report, SUSPEND whether it can suspend and resume the
workload, GANG whether it declares gang scheduling.

\b
Examples:
  wmap definitions
  wmap definitions --group kubeflow.org --kind PyTorchJob
  wmap definitions --group "" --kind Pod          (the core group)
  wmap definitions kubeflow-org-pytorchjob-v1 -o yaml > pytorchjob-karta.yaml

-o json|yaml prints Karta objects: one bare for NAME, else a `kind: List` (both load back with
`wmap --definitions` and `kubectl apply -f`).
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("name", required=False)
@click.option(
    "--group", default=None, metavar="GROUP", help='Only definitions of this API group ("" is the core group).'
)
@click.option("--kind", default=None, metavar="KIND", help="Only this kind (needs --group; any case).")
@click.option("--version", "version", default=None, metavar="VERSION", help="Only this version (needs --kind).")
@output_option(OUTPUT)
@definitions_option
@component_limit_option(3, "Show at most N child components in COMPONENTS (0: all). Table output only.")
@connection_options
def definitions(
    *,
    name: str | None,
    group: str | None,
    kind: str | None,
    version: str | None,
    output: str | None,
    definition_paths: tuple[str, ...],
    component_limit: int,
    connection: ConnectionOptions | None = None,
) -> None:
    _check_filters(name, group, kind, version)
    fmt = resolve_output(OUTPUT, output)
    # The cluster seam: the cluster layer is imported only here, where the cluster's definitions are read.
    from workload_map.cli.live import optional_cluster_source

    cluster = optional_cluster_source(connection or ConnectionOptions())
    registry = build_registry(definition_paths, report=state(), cluster=cluster)
    entries: list[Entry]
    if name is not None:
        found = registry.by_name(name)
        if found is None:
            raise CLIError(
                f'no Karta definition named "{name}"', hint='run "wmap definitions" to see what is available'
            )
        entries = [entry for entry in registry.all() if entry.karta is found.karta] or []
    else:
        entries = registry.effective() + [entry for entry in registry.all() if entry.gvk is None]
        if group is not None:
            wanted_kind = kind.lower() if kind is not None else None
            entries = [
                entry
                for entry in entries
                if entry.gvk is not None
                and entry.gvk.group == group
                and (wanted_kind is None or entry.gvk.kind.lower() == wanted_kind)
                and (version is None or entry.gvk.version == version)
            ]
            if not entries:
                raise CLIError(
                    f'no Karta definition covers "{_filter_text(group, kind, version)}"',
                    hint='run "wmap definitions" to see what is available',
                )
    entries = _listed(entries)

    out = state().stdout
    if fmt in ("json", "yaml"):
        value: Any
        if name is not None:
            value = to_dict(entries[0].karta)
        else:
            value = {"apiVersion": "v1", "kind": "List", "items": [to_dict(entry.karta) for entry in entries]}
        machine.write(value, fmt, out)
        return
    if not entries:
        state().note("No Karta definitions found.")
        return
    rows = [[seg(title, "heading") for title in COLUMNS]]
    for entry in entries:
        karta = entry.karta
        rows.append(
            [
                seg(entry.name, "title"),
                seg(gvk_cell(karta)),
                seg(components_cell(karta, component_limit)),
                seg(statuses_cell(karta)),
                seg(suspend_cell(karta)),
                seg(gang_cell(karta)),
                seg(entry.origin, "accent" if entry.origin != "catalog" else "muted"),
            ]
        )
    write_lines(align(rows, padding=2), out, color=state().color(out))
