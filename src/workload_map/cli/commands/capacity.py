"""`wmap capacity`: per cluster, per accelerator (or `--resource`), what its nodes offer, what running pods request,
and what is free; in total and per node pool (docs/placement.md).

Each cluster is read with two LISTs (nodes, unfinished pods: `cluster.nodes.read_snapshot`); several clusters
(`--context`, repeatable, or `--all-contexts`) are read concurrently, and one that cannot be read is a warning row.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import click

from workload_map.cli.clusters import ClusterAnswer, each_cluster
from workload_map.cli.context import state
from workload_map.cli.errors import CLIError
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    chunk_size_option,
    multi_cluster_options,
    output_option,
    resolve_output,
)
from workload_map.cli.render import machine
from workload_map.cli.render.text import Cell, align_with_notes, seg, write_lines
from workload_map.cli.safe import safe_text
from workload_map.cluster import Cluster
from workload_map.cluster.nodes import read_snapshot
from workload_map.placement import DEFAULT_POOL_LABELS, CapacityReport, ResourceCapacity
from workload_map.placement import capacity as cluster_capacity
from workload_map.resources import NANO, human_amount

OUTPUT = OutputSpec("capacity", ("table", "json", "yaml"))
HEADERS = ("CLUSTER", "POOL", "NODES", "RESOURCE", "ALLOCATABLE", "REQUESTED", "FREE")

_HELP = """\
Show what each cluster has: per accelerator, allocatable, requested by running pods, and free.

One row per cluster and resource ("all" nodes), then one per node pool: the nodes sharing the values of the
--pool-label keys (default: node.kubernetes.io/instance-type and nvidia.com/gpu.product). Resources are every
extended resource (nvidia.com/gpu, MIG slices, ...) some node offers, or the --resource names.

\b
Examples:
  wmap capacity
  wmap capacity --context prod-a --context prod-b
  wmap capacity --all-contexts --resource nvidia.com/gpu --resource cpu -o json
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--pool-label", "pool_labels", multiple=True, metavar="KEY", help="A node label that forms pools.")
@click.option("--resource", "resources", multiple=True, metavar="NAME", help="A resource to show (repeatable).")
@chunk_size_option
@output_option(OUTPUT)
@multi_cluster_options
def capacity(
    *,
    pool_labels: tuple[str, ...],
    resources: tuple[str, ...],
    chunk_size: int,
    output: str | None,
    connection: ConnectionOptions,
) -> None:
    fmt = resolve_output(OUTPUT, output)
    labels = pool_labels or DEFAULT_POOL_LABELS
    wanted = list(resources) or None

    def ask(cluster: Cluster, name: str) -> CapacityReport:
        return cluster_capacity(read_snapshot(cluster, name), pool_labels=labels, resources=wanted)

    answers = each_cluster(connection, ask, chunk_size=chunk_size)
    for answer in answers:
        if answer.error is not None:
            state().warn(f"cluster {answer.context or '(current context)'}: {answer.error}")
    if fmt in ("json", "yaml"):
        machine.write({"clusters": _document(answers)}, fmt, state().stdout)
    else:
        _table(answers)
    if all(answer.error is not None for answer in answers):
        raise CLIError("no cluster could be read")


def _name(answer: ClusterAnswer[CapacityReport]) -> str:
    return answer.value.cluster if answer.value is not None else answer.context or "(current context)"


def _document(answers: list[ClusterAnswer[CapacityReport]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for answer in answers:
        out[_name(answer)] = answer.value.to_dict() if answer.value is not None else {"error": answer.error}
    return out


def _table(answers: list[ClusterAnswer[CapacityReport]]) -> None:
    table: list[list[Cell]] = [[seg(title, "heading") for title in HEADERS]]
    notes: dict[int, Cell] = {}  # a cluster that could not be read: its row's message, not a column's width
    for answer in answers:
        name = safe_text(_name(answer))
        report = answer.value
        if report is None:
            notes[len(table)] = seg(f"(not read: {safe_text(answer.error)})", "warn")
            table.append([seg(name)])
            continue
        if not report.resources:
            table.append([seg(name), seg("all"), seg(str(report.nodes)), seg("(no accelerators)", "muted")])
        for total in report.resources:
            table.append([seg(name), seg("all"), seg(str(report.nodes)), seg(safe_text(total.resource))])
            table[-1] += _amounts(total)
        for pool in report.pools:
            pool_name = safe_text("/".join(value for _, value in pool.labels))
            for total in pool.resources:
                if total.allocatable == 0 and total.requested == 0:
                    continue  # a pool without this resource
                row = [seg(name), seg(pool_name), seg(str(pool.nodes)), seg(safe_text(total.resource))]
                table.append(row + _amounts(total))
    out = state().stdout
    write_lines(align_with_notes(table, notes, padding=3), out, color=state().color(out))


def _amounts(total: ResourceCapacity) -> list[Cell]:
    """Allocatable, requested and free as a person reads them (`2.02Ti`, `47.1` cores); JSON keeps the exact
    quantities."""
    return [
        seg(human_amount(total.resource, Fraction(n, NANO))) for n in (total.allocatable, total.requested, total.free)
    ]
