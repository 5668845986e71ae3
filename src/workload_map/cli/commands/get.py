"""`wmap get TYPE [NAME]` and `wmap get --all-types`: workloads of a cluster, one row each, with their phase.

One LIST per type (per page of `--chunk-size`), never a read per object; a named workload is one GET. Each object
is resolved through its definition (spec and status only: `get` never reads pods). `--all-types` lists every type
a definition covers and the cluster serves, and keeps only top-level workloads (kli-cli §3.3): an object whose
controller chain reaches another covered type (a Job of a JobSet, a Pod of a ReplicaSet of a Deployment) is left
out; an uncovered owner (a ReplicationController) is read with one metadata LIST per owner kind.

Output (kubectl-like): `NAME [NAMESPACE] [TYPE] PHASE AGE`; `-o wide` adds `PODS GPU COMPONENTS ORIGIN`
computed from the spec (desired pods, requested GPUs); `-o json|yaml` an envelope `{"items": [...], "count": N}`,
or the bare item for `TYPE NAME`. See docs/live.md.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

import click
import msgspec

from workload_map._io import InputError, read_input_text
from workload_map.catalog import Resolved
from workload_map.cli.clusters import ClusterAnswer, cluster_deadline, context_names, each_context
from workload_map.cli.complete_args import complete_target
from workload_map.cli.context import state
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.heap import KeptRows
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.live import LiveSession, live_session, parse_target, translate_errors
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    cache_dir_option,
    chunk_size_option,
    definitions_option,
    multi_cluster_options,
    output_option,
    poll_interval_option,
    resolve_output,
)
from workload_map.cli.pipeline import ResolvedWorkload, admitted_workload, resolve_object
from workload_map.cli.render import machine
from workload_map.cli.render.fmt import age
from workload_map.cli.render.templated import TEMPLATED, JSONPathError, TemplatedFormat, parse_format
from workload_map.cli.render.text import (
    PHASE_STYLES,
    Cell,
    align_with_notes,
    seg,
    shown_text,
    write_lines,
    write_table,
)
from workload_map.cli.safe import safe_text
from workload_map.cluster import ClusterError, Forbidden, NotServed, ResolvedType, top_level
from workload_map.cluster.labels import selector_problem
from workload_map.jq import EvaluationPolicy
from workload_map.model import PRIMARY_PHASE_PRECEDENCE, UNDEFINED
from workload_map.resolve import ResolveError

if TYPE_CHECKING:
    from workload_map.view import WorkloadView

# The view layer (`cli.views`, `render.shape`) is imported by `-o wide` and `-o json|yaml` only, the terminal
# fitting (`render.columns`) on a terminal only: a plain `get` piped or captured reads the status alone (issue 19).

OUTPUT = OutputSpec("get", ("table", "wide", "json", "yaml", "name"), templated=TEMPLATED)
# On a narrow terminal the table loses these first (NAME and PHASE always stay), kubectl's low-priority columns.
DROP_FIRST = ("ORIGIN", "COMPONENTS", "GPU", "PODS", "AGE", "TYPE", "NAMESPACE")
LIST_WORKERS = 4
MAX_COMPONENTS_SHOWN = 3


def phase_choices() -> tuple[str, ...]:
    return (*PRIMARY_PHASE_PRECEDENCE, UNDEFINED)


def parse_phases(values: Sequence[str]) -> frozenset[str]:
    """`--phase` values (repeatable, comma lists, any case) in their canonical spelling; exit 2 for others."""
    canonical = {phase.lower(): phase for phase in phase_choices()}
    chosen: set[str] = set()
    for value in values:
        for part in value.split(","):
            word = part.strip()
            if not word:
                continue
            phase = canonical.get(word.lower())
            if phase is None:
                raise UsageError(
                    f"--phase {word!r}: invalid value: must be one of {', '.join(phase_choices())}",
                )
            chosen.add(phase)
    return frozenset(chosen)


class Row(msgspec.Struct):
    """One workload of the result."""

    obj: dict[str, Any]
    type_label: str
    name: str
    namespace: str
    kind: str
    api_version: str
    uid: str
    created_at: str | None
    definition: str
    origin: str
    phase: str
    phases: tuple[str, ...]
    view: WorkloadView | None = None

    def to_dict(self) -> dict[str, Any]:
        from workload_map.view.types import identity_dict

        return identity_dict(self)


def make_rows(
    objects: Sequence[dict[str, Any]], definition: Resolved, type_label: str, *, wide: bool, listed: bool = False
) -> tuple[list[Row], list[str]]:
    """Resolve each object through the definition (spec and status only); a failure skips it with a warning.
    `listed`: the objects are a LIST's items as `workload_map.cluster` decoded them (each checked for nesting), so
    they are given to `Workload` with `from_json=True` (no plain-JSON check per object), and in the console script
    they and their rows are kept out of the cyclic collector's sight as the rows are built (`cli.heap.KeptRows`)."""
    policy = definition_policy(definition.karta.name, definition.origin)
    return _make_rows(objects, definition, type_label, wide=wide, policy=policy, listed=listed)


def _make_rows(
    objects: Sequence[dict[str, Any]],
    definition: Resolved,
    type_label: str,
    *,
    wide: bool,
    policy: EvaluationPolicy,
    listed: bool = False,
) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    warnings: list[str] = []
    validate = True
    viewer: Callable[[ResolvedWorkload], WorkloadView] | None = None
    if wide:  # the view layer, for -o wide only
        from workload_map.cli.views import view_of

        viewer = view_of
    # a LIST's items and their rows live until the command exits: the console script freezes them (cli.heap)
    kept = KeptRows() if listed else None
    for obj in objects:
        metadata = obj.get("metadata") or {}
        kind = str(obj.get("kind") or type_label)
        name = str(metadata.get("name") or "")
        try:
            row = _row(
                obj,
                definition,
                type_label,
                metadata=metadata,
                kind=kind,
                name=name,
                policy=policy,
                validate=validate,
                listed=listed,
                view_of=viewer,
            )
        except ResolveError as exc:
            warnings.append(f"could not resolve {kind}/{name}: {exc}")
            continue
        validate = False  # one definition: validated once
        rows.append(row)
        if kept is not None:
            kept.built()  # the workload's resolution is gone with _row's frame: only the row is kept
    if kept is not None:
        kept.close()
    return rows, warnings


def _row(
    obj: dict[str, Any],
    definition: Resolved,
    type_label: str,
    *,
    metadata: dict[str, Any],
    kind: str,
    name: str,
    policy: EvaluationPolicy,
    validate: bool,
    listed: bool,
    view_of: Callable[[ResolvedWorkload], WorkloadView] | None,
) -> Row:
    """One object's row, with its view when given `view_of` (`-o wide`: `cli.views.view_of`); raises
    `ResolveError`."""
    view: WorkloadView | None = None
    if view_of is not None:
        resolved = resolve_object(
            definition.karta,
            obj,
            label=f"{kind}/{name}",
            origin=definition.origin,
            policy=policy,
            validate=validate,
            from_json=listed,
        )
        view = view_of(resolved)
        phase, phases = view.phase, view.phases
    else:  # the status alone: no Resolution is taken
        workload = admitted_workload(definition.karta, obj, policy=policy, validate=validate, from_json=listed)
        status = workload.root.status
        if status is None:
            phase, phases = "Undefined", ("Undefined",)
        else:
            phase = status.phase
            phases = (status.phase, *(p for p in status.phases if p != status.phase))
    created = metadata.get("creationTimestamp")
    return Row(
        obj=obj,
        type_label=type_label,
        name=name,
        namespace=str(metadata.get("namespace") or ""),
        kind=kind,
        api_version=str(obj.get("apiVersion") or ""),
        uid=str(metadata.get("uid") or ""),
        created_at=created if isinstance(created, str) and created else None,
        definition=definition.karta.name,
        origin=definition.origin,
        phase=phase,
        phases=tuple(phases),
        view=view,
    )


def _keep(row: Row, phases: frozenset[str]) -> bool:
    return not phases or any(phase in phases for phase in row.phases)


def sort_rows(rows: list[Row]) -> list[Row]:
    """Newest first, then by kind, then by name (kli-cli §3.1 step 8)."""
    ordered = sorted(rows, key=lambda row: (row.kind, row.namespace, row.name))
    return sorted(ordered, key=lambda row: row.created_at or "", reverse=True)


# --- reading ----------------------------------------------------------------------------------------------------


def _one_type(
    session: LiveSession,
    *,
    token: str,
    name: str | None,
    namespace: str | None,
    selector: str | None,
    chunk_size: int,
    wide: bool,
) -> list[Row] | None:
    """The rows of one type; None when the type is not installed (a warning says so)."""
    rtype = session.resolve(token)
    with translate_errors():
        if name is not None:
            objects = [session.cluster.get_object(rtype, name, namespace=namespace or session.namespace)]
        else:
            try:
                objects = session.cluster.list_objects(
                    rtype, namespace=namespace, selector=selector, chunk_size=chunk_size
                ).items
            except NotServed as exc:
                state().warn(exc.message)
                return None
    rows, warnings = make_rows(objects, rtype.definition, rtype.kind, wide=wide, listed=name is None)
    for message in warnings:
        state().warn(message)
    return rows


def _all_types(
    session: LiveSession,
    *,
    namespace: str | None,
    selector: str | None,
    phases: frozenset[str],
    chunk_size: int,
    wide: bool,
) -> list[Row]:
    registry = session.registry
    with translate_errors():
        document = session.cluster.discovery_document()
    covered: set[tuple[str, str]] = set()
    for entry in registry.effective():
        gvk = entry.gvk
        if gvk is not None and gvk.kind and gvk.version:
            covered.add((gvk.group, gvk.kind))
    shared = Counter(kind for _, kind in covered)
    targets: list[tuple[str, ResolvedType]] = []
    for group, kind in sorted(covered):
        resource = document.preferred(group, kind)
        if resource is None or not resource.can("list"):
            continue  # not served: skipped silently, as upstream
        definition = registry.for_gvk(group, resource.version, kind)
        if definition is None:
            state().warn(f"not listing {kind}: no definition for {resource.api_version}")
            continue
        label = kind if shared[kind] == 1 else f"{kind}.{group}" if group else kind
        targets.append((label, ResolvedType(kind.lower(), definition, group, resource.version, kind, resource)))

    def read(target: tuple[str, ResolvedType]) -> tuple[str, ResolvedType, list[dict[str, Any]] | ClusterError]:
        label, rtype = target
        try:
            items = session.cluster.list_objects(rtype, namespace=namespace, selector=selector, chunk_size=chunk_size)
        except (Forbidden, NotServed) as exc:
            return label, rtype, exc
        return label, rtype, items.items

    from concurrent.futures import ThreadPoolExecutor  # only --all-types lists concurrently (issue 19: start-up)

    rows: list[Row] = []
    with translate_errors(), ThreadPoolExecutor(max_workers=LIST_WORKERS) as pool:
        results = list(pool.map(read, targets))
    for label, rtype, outcome in results:
        if isinstance(outcome, NotServed):
            continue
        if isinstance(outcome, ClusterError):
            state().warn(f"not allowed to list {rtype.kind}, so the result leaves it out ({outcome.message})")
            continue
        found, warnings = make_rows(outcome, rtype.definition, label, wide=wide, listed=True)
        for message in warnings:
            state().warn(message)
        rows.extend(row for row in found if _keep(row, phases))
    if not rows:
        return rows
    with translate_errors():
        loader = session.cluster.owner_loader(all_namespaces=namespace is None)
        result = top_level([(row.kind, row.obj) for row in rows], covered, loader)
    for message in result.warnings:
        state().warn(message)
    kept = {id(obj) for obj in result.kept}
    return [row for row in rows if id(row.obj) in kept]


# --- output -----------------------------------------------------------------------------------------------------


def _components_cell(view: WorkloadView | None) -> str:
    if view is None or not view.components:
        return "<none>"
    from workload_map.cli.render.shape import shape

    # the tree's top-level rows (cli/render/shape.py): `driver(1),workers(8)`, not a lone `replicatedjob(9)`
    parts = [f"{row.name}({row.node.replicas.desired})" for row in shape(view)]
    shown = parts[:MAX_COMPONENTS_SHOWN]
    if len(parts) > len(shown):
        shown.append(f"+{len(parts) - len(shown)} more")
    return ",".join(shown)


def object_name(row: Row) -> str:
    """kubectl's `-o name` form: `kind.group/name` (`pytorchjob.kubeflow.org/llama`, `deployment.apps/web`,
    `pod/x` for the core group)."""
    group = row.api_version.rpartition("/")[0]
    resource = f"{row.kind.lower()}.{group}" if group else row.kind.lower()
    return f"{resource}/{row.name}"


def table_headers(*, wide: bool, namespaces: bool, types: bool) -> list[str]:
    headers = ["NAME", *(["NAMESPACE"] if namespaces else []), *(["TYPE"] if types else []), "PHASE", "AGE"]
    if wide:
        headers += ["PODS", "GPU", "COMPONENTS", "ORIGIN"]
    return headers


def render_table(rows: Sequence[Row], *, wide: bool, namespaces: bool, types: bool, headers_row: bool = True) -> None:
    headers = table_headers(wide=wide, namespaces=namespaces, types=types)
    table: list[list[Cell]] = [[seg(title, "heading") for title in headers]] if headers_row else []
    ages = Ages()
    table += [row_cells(row, wide=wide, namespaces=namespaces, types=types, ages=ages) for row in rows]
    out = state().stdout
    fitted, left_out = fit_terminal(table, headers)
    write_table(fitted, out, color=state().color(out), padding=3, min_width=6)
    if left_out:  # after the table, as warnings are, so it stays on screen below what it explains
        state().note(left_out)


class Ages:
    """The AGE cells of one table: the clock read once, each creationTimestamp's age worked out once (a LIST
    made by one apply holds a few distinct seconds among thousands of rows)."""

    def __init__(self) -> None:
        self._now = datetime.datetime.now(datetime.timezone.utc)
        self._shown: dict[str | None, str] = {}

    def of(self, timestamp: str | None) -> str:
        shown = self._shown.get(timestamp)
        if shown is None:
            shown = self._shown[timestamp] = age(timestamp, self._now)
        return shown


def row_cells(row: Row, *, wide: bool, namespaces: bool, types: bool, ages: Ages | None = None) -> list[Cell]:
    """One row's cells, in the order of `table_headers` (the AGE from `ages` when given, else from the clock now)."""
    phase_cell: Cell = []
    for index, phase in enumerate(row.phases):
        if index:
            phase_cell.append((",", ""))
        phase_cell.append((phase, PHASE_STYLES.get(phase, "")))
    cells: list[Cell] = [seg(row.name)]
    if namespaces:
        cells.append(seg(row.namespace or "<none>"))
    if types:
        cells.append(seg(row.type_label))
    cells += [phase_cell, seg(ages.of(row.created_at) if ages is not None else age(row.created_at))]
    if wide:
        view = row.view
        cells += [
            seg(str(view.replicas.desired) if view else "?"),
            seg(str(view.resources.gpus) if view else "?"),
            seg(_components_cell(view)),
            seg(row.origin),
        ]
    return cells


def _on_terminal(out: IO[str]) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


def fit_terminal(table: list[list[Cell]], headers: Sequence[str]) -> tuple[list[list[Cell]], str]:
    """On a terminal, `table` within its width (`columns.fit_table`: the `DROP_FIRST` columns left out first,
    then the widest cells cut) and a note naming the columns left out ("" for none); elsewhere (a pipe, a file)
    unchanged."""
    out = state().stdout
    if not _on_terminal(out) or not table:
        return table, ""
    from workload_map.cli.render.columns import fit_table

    width = state().width(out)
    texts = [[shown_text(cell) for cell in row] for row in table]  # as wide as printed: escapes included
    order = [headers.index(name) for name in DROP_FIRST if name in headers]
    fitted, dropped = fit_table(texts, width, order)
    if not dropped and fitted == texts:
        return table, ""
    kept = [index for index in range(len(headers)) if index not in dropped]
    result = [
        [table[r][index] if fitted[r][k] == texts[r][index] else seg(fitted[r][k]) for k, index in enumerate(kept)]
        for r in range(len(table))
    ]
    names = ", ".join(headers[index] for index in dropped)
    return result, f"left out to fit {width} columns: {names}" if dropped else ""


def _read_format_file(path: str) -> str:
    try:
        return read_input_text(path)[1]
    except InputError as exc:
        raise UsageError(f"-o: {exc.source}: {exc.message}") from None


def templated_format(fmt: str) -> TemplatedFormat | None:
    """`-o jsonpath=...`, `-o custom-columns=...` (and their `-file` forms) parsed, before the cluster is read;
    a bad template is exit 2 naming what is wrong."""
    try:
        return parse_format(fmt, _read_format_file)
    except JSONPathError as exc:
        raise UsageError(str(exc), hint='kubectl\'s JSONPath: docs/cli.md, "wmap get -o jsonpath"') from None


def write_templated(rows: Sequence[Row], printer: TemplatedFormat, *, bare: bool, headers_row: bool) -> None:
    """A JSONPath template over the `-o json` document (the bare item for `TYPE NAME`), or the custom columns
    over each row's JSON form."""
    out = state().stdout
    if not printer.is_columns:
        document: Any = rows[0].to_dict() if bare and len(rows) == 1 else _envelope(rows)
        printer.write(document, out)
        return
    cells = printer.cells([row.to_dict() for row in rows])
    table: list[list[Cell]] = [
        [seg(text, "heading" if index == 0 else "") for text in row] for index, row in enumerate(cells)
    ]
    if not headers_row:
        table = table[1:]
    write_table(fit_terminal(table, ())[0], out, color=state().color(out), padding=3)


def _envelope(rows: Sequence[Row]) -> dict[str, Any]:
    return {"items": [row.to_dict() for row in rows], "count": len(rows)}


def render(
    rows: Sequence[Row],
    fmt: str,
    *,
    bare: bool,
    namespaces: bool,
    types: bool,
    empty_note: str,
    headers_row: bool = True,
    printer: TemplatedFormat | None = None,
) -> None:
    out = state().stdout
    if fmt == "name":
        for row in rows:
            out.write(safe_text(object_name(row)) + "\n")  # names come from the cluster: never raw
        return
    if fmt in ("json", "yaml"):
        if bare and len(rows) == 1:
            machine.write(rows[0].to_dict(), fmt, out)
        else:
            machine.write(_envelope(rows), fmt, out)
        return
    if printer is not None:
        write_templated(rows, printer, bare=bare, headers_row=headers_row)
        return
    if not rows:
        if empty_note:  # not when the type is not installed: the warning says why there is nothing
            state().note(empty_note)
        return
    render_table(rows, wide=fmt == "wide", namespaces=namespaces, types=types, headers_row=headers_row)


# --- -w: the table, then a row per change ------------------------------------------------------------------------


def watch_rows(
    session: LiveSession,
    *,
    token: str,
    name: str | None,
    namespace: str | None,
    selector: str | None,
    phases: frozenset[str],
    chunk_size: int,
    poll_interval: float,
    fmt: str,
    headers_row: bool,
    printer: TemplatedFormat | None = None,
) -> None:
    """`get TYPE -w` (kubectl's meaning): the rows of the first LIST, then one row per change (a deleted workload's
    last state too); with -o json|yaml, one event per object (`{"type": "ADDED", "object": {...}}`), the first LIST's
    objects as ADDED. One LIST + WATCH of the type, resumed, re-listed and retried as `wmap watch` is."""
    # the event loop and the async cluster shell, only for -w: a plain `get` never loads them (issue 19: start-up)
    from workload_map.cli.commands.watch_loop import open_watch, run_until_interrupted, workload_resource

    rtype = session.resolve(token)
    scope = namespace if name is None else (namespace or session.namespace)
    with translate_errors():
        resource = workload_resource(rtype, namespace=scope, name=name, selector=selector)
    out = state().stdout
    columns = {"namespaces": resource.namespace is None and rtype.resource is not None and rtype.resource.namespaced}

    def rows_of(objects: Sequence[dict[str, Any]]) -> list[Row]:
        rows, warnings = make_rows(list(objects), rtype.definition, rtype.kind, wide=fmt == "wide")
        for message in warnings:
            state().warn(message)
        state().flush_warnings()
        return [row for row in rows if _keep(row, phases)]

    def emit(change_type: str, rows: Sequence[Row], *, first: bool) -> None:
        if fmt in ("json", "yaml"):
            for row in rows:
                event = {"type": change_type, "object": row.to_dict()}
                out.write(machine.to_json_line(event) if fmt == "json" else "---\n" + machine.to_yaml(event))
        elif rows or not first:
            render(
                rows,
                fmt,
                bare=False,
                empty_note="",
                namespaces=columns["namespaces"],
                types=False,
                headers_row=headers_row and first,
                printer=printer,
            )
        out.flush()

    async def main() -> None:
        async with open_watch(
            session, resource, with_pods=False, chunk_size=chunk_size, poll_interval=poll_interval
        ) as (live, updates):
            async for update in updates:
                if update.initial:
                    rows = sort_rows(rows_of(list(live.workloads.store)))
                    if not rows and fmt not in ("json", "yaml", "name"):
                        where = "in any namespace" if resource.namespace is None else f"in namespace {scope}"
                        state().note(f"No workloads found {where}.")
                    emit("ADDED", rows, first=True)
                    continue
                for change in update.workload_changes:
                    emit(change.type, rows_of([change.object]), first=False)

    run_until_interrupted(main)


# --- the command ------------------------------------------------------------------------------------------------

_HELP = """\
List workloads of a cluster with their phase.

TYPE is any spelling kubectl takes (pytorchjob, pytorchjobs, PyTorchJob, pytorchjobs.kubeflow.org,
pytorchjob.v1.kubeflow.org, a short name) of a type a Karta definition covers. With NAME (TYPE/NAME or TYPE NAME),
one workload. --all-types lists every covered type at once, top-level workloads only (a Job of a JobSet, or the
Pods of a Deployment, are not listed again).

\b
Examples:
  wmap get pytorchjobs
  wmap get jobset/preprocess -o yaml
  wmap get --all-types -A
  wmap get rayclusters -l team=research --phase Running,Degraded -o wide
  wmap get jobsets -w
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, metavar="[TYPE[/NAME] [NAME]]", shell_complete=complete_target)
@click.option("--all-types", is_flag=True, help="List every type a definition covers (top-level workloads only).")
@click.option("-A", "--all-namespaces", is_flag=True, help="List across all namespaces (adds a NAMESPACE column).")
@click.option(
    "-w", "--watch", "watch", is_flag=True, help="After the list, print a row for each change (Ctrl-C stops)."
)
@poll_interval_option
@click.option("--no-headers", "no_headers", is_flag=True, help="Table output without the header row (as kubectl).")
@click.option("-l", "--selector", metavar="SELECTOR", help="Label selector on the workloads (e.g. team=web,tier!=db).")
@click.option(
    "--phase",
    "phases",
    multiple=True,
    metavar="PHASE",
    help="Only workloads in this phase (repeatable, or a comma list; any case): "
    "Failed, Completed, Suspended, Suspending, Resuming, Degraded, Running, Initializing, Undefined.",
)
@chunk_size_option
@output_option(OUTPUT)
@definitions_option
@cache_dir_option
@multi_cluster_options
def get(
    *,
    args: tuple[str, ...],
    all_types: bool,
    all_namespaces: bool,
    watch: bool,
    poll_interval: float,
    no_headers: bool,
    selector: str | None,
    phases: tuple[str, ...],
    chunk_size: int,
    output: str | None,
    definition_paths: tuple[str, ...],
    cache_dir: str | None,
    connection: ConnectionOptions,
) -> None:
    fmt = resolve_output(OUTPUT, output)
    printer = templated_format(fmt)
    wanted = parse_phases(phases)
    if selector is not None:
        problem = selector_problem(selector)
        if problem:
            raise UsageError(f"--selector: {problem}")
    token: str | None = None
    name: str | None = None
    if all_types:
        if args:
            raise UsageError("--all-types cannot be combined with a TYPE")
        if watch:
            raise UsageError("--watch takes one TYPE, not --all-types", hint="e.g. wmap get jobsets -w")
    else:
        if not args:
            raise UsageError("a TYPE is required, or --all-types", hint="e.g. wmap get pytorchjobs")
        token, name = parse_target(args, name_required=False, command="get")
        if name is not None and selector:
            raise UsageError("--selector cannot be combined with a NAME")
        if name is not None and all_namespaces:
            raise UsageError("a NAME cannot be looked up across all namespaces (-A)", hint="give -n NAMESPACE")
    wide = fmt == "wide"
    contexts = context_names(connection)
    if len(contexts) > 1 or connection.all_contexts:
        if watch:
            raise UsageError("--watch reads one cluster: give one --context")
        # a JSONPath template runs over the -o json document, which is keyed by cluster here; custom columns (one
        # row per item, no CLUSTER column) and names (no cluster in them) would hide which cluster a row is from
        if fmt not in MANY_CLUSTER_FORMATS and (printer is None or printer.is_columns):
            many_formats = ", ".join(MANY_CLUSTER_FORMATS)
            raise UsageError(f"-o {fmt} reads one cluster: with several, use -o {many_formats} or jsonpath=...")
        many = _many_clusters(
            contexts,
            connection,
            token=token,
            name=name,
            all_namespaces=all_namespaces,
            selector=selector,
            phases=wanted,
            chunk_size=chunk_size,
            wide=wide,
            cache_dir=cache_dir,
            definition_paths=definition_paths,
        )
        if printer is not None:
            printer.write({"clusters": _cluster_documents(many)}, state().stdout)
            return
        _render_many(many, fmt, namespaces=all_namespaces, types=token is None, headers_row=not no_headers)
        return
    with live_session(
        connection, cache_dir=cache_dir, definition_paths=definition_paths, chunk_size=chunk_size
    ) as session:
        namespace = None if all_namespaces else session.namespace
        if watch and token is not None:
            watch_rows(
                session,
                token=token,
                name=name,
                namespace=namespace,
                selector=selector,
                phases=wanted,
                chunk_size=chunk_size,
                poll_interval=poll_interval,
                fmt=fmt,
                headers_row=not no_headers,
                printer=printer,
            )
            return
        rows, listed = _listed_rows(
            session,
            token=token,
            name=name,
            namespace=namespace,
            selector=selector,
            phases=wanted,
            chunk_size=chunk_size,
            wide=wide,
        )
        where = "in any namespace" if namespace is None else f"in namespace {namespace}"
        render(
            rows,
            fmt,
            bare=name is not None,
            namespaces=namespace is None,
            types=token is None,
            empty_note=f"No workloads found {where}." if listed else "",
            headers_row=not no_headers,
            printer=printer,
        )


def _listed_rows(
    session: LiveSession,
    *,
    token: str | None,
    name: str | None,
    namespace: str | None,
    selector: str | None,
    phases: frozenset[str],
    chunk_size: int,
    wide: bool,
) -> tuple[list[Row], bool]:
    """The sorted rows of one cluster: every covered type (no `token`) or one type, kept by `phases`; and whether
    anything was listed (False when `_one_type` had nothing to list and has said why: no "No workloads" note)."""
    if token is None:
        rows = _all_types(
            session, namespace=namespace, selector=selector, phases=phases, chunk_size=chunk_size, wide=wide
        )
        return sort_rows(rows), True
    found = _one_type(
        session, token=token, name=name, namespace=namespace, selector=selector, chunk_size=chunk_size, wide=wide
    )
    return sort_rows([row for row in found or () if _keep(row, phases)]), found is not None


# --- several clusters: --context A --context B, --all-contexts (issue 24) ---------------------------------------

MANY_CLUSTER_FORMATS = ("table", "wide", "json", "yaml")


def _many_clusters(
    contexts: Sequence[str],
    connection: ConnectionOptions,
    *,
    token: str | None,
    name: str | None,
    all_namespaces: bool,
    selector: str | None,
    phases: frozenset[str],
    chunk_size: int,
    wide: bool,
    cache_dir: str | None,
    definition_paths: tuple[str, ...],
) -> list[ClusterAnswer[list[Row]]]:
    """The rows of each context's cluster, asked concurrently (`cli.clusters.each_context`), each with its own
    session (definitions: local > that cluster's > catalog) and deadline; a cluster that fails is its answer's
    error."""

    def ask(context: str) -> list[Row]:
        one = msgspec.structs.replace(connection, context=context, contexts=(), all_contexts=False)
        with live_session(
            one, cache_dir=cache_dir, definition_paths=definition_paths, chunk_size=chunk_size
        ) as session:
            rows, _ = _listed_rows(
                session,
                token=token,
                name=name,
                namespace=None if all_namespaces else session.namespace,
                selector=selector,
                phases=phases,
                chunk_size=chunk_size,
                wide=wide,
            )
            return rows

    answers = each_context(contexts, ask, deadline=cluster_deadline(connection))
    for answer in answers:
        if answer.error is not None:
            state().warn(f"cluster {answer.context}: {answer.error}")
    if all(answer.error is not None for answer in answers):
        raise CLIError("no cluster could be read")
    return answers


def _cluster_documents(answers: Sequence[ClusterAnswer[list[Row]]]) -> dict[str, Any]:
    """`{NAME: {"items": [...], "count": N} | {"error": MESSAGE}}`: the clusters of the -o json document."""
    return {
        answer.context: _envelope(answer.value or []) if answer.error is None else {"error": answer.error}
        for answer in answers
    }


def _render_many(
    answers: Sequence[ClusterAnswer[list[Row]]], fmt: str, *, namespaces: bool, types: bool, headers_row: bool
) -> None:
    """One table with a CLUSTER column (a cluster that could not be read is a row saying why), or JSON/YAML keyed
    by cluster: `{"clusters": {NAME: {"items": [...], "count": N} | {"error": MESSAGE}}}`."""
    out = state().stdout
    if fmt in ("json", "yaml"):
        machine.write({"clusters": _cluster_documents(answers)}, fmt, out)
        return
    wide = fmt == "wide"
    headers = ["CLUSTER", *table_headers(wide=wide, namespaces=namespaces, types=types)]
    table: list[list[Cell]] = [[seg(title, "heading") for title in headers]] if headers_row else []
    notes: dict[int, Cell] = {}  # a cluster that could not be read: its row's message, not a column's width
    ages = Ages()
    for answer in answers:
        cluster = seg(safe_text(answer.context))
        if answer.error is not None:
            notes[len(table)] = seg(f"(not read: {safe_text(answer.error)})", "warn")
            table.append([cluster, *([seg("")] * (len(headers) - 1))])  # as wide as the others: fit_terminal
            continue
        table += [
            [cluster, *row_cells(row, wide=wide, namespaces=namespaces, types=types, ages=ages)]
            for row in answer.value or []
        ]
    fitted, left_out = fit_terminal(table, headers)
    line_width = state().width(out) if _on_terminal(out) else None  # the whole message is a warning on stderr
    write_lines(
        align_with_notes(fitted, notes, padding=3, min_width=6, line_width=line_width), out, color=state().color(out)
    )
    if left_out:
        state().note(left_out)
