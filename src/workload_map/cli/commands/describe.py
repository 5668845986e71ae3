"""`wmap describe -f FILE|DIR|-`: workloads from manifests, resolved offline into the view and rendered.

Every document of the input is looked at. A document a definition covers is described; one that plainly is not a
workload (a ConfigMap, a Service, a document without pod containers, or without a kind at all in a stream) is
skipped and listed on stderr; a workload no definition covers is an error when it is the only document (exit 4,
with upstream's machine-readable error object under -o json|yaml) and a warning in a stream.

Output: one document prints the bare view (as upstream); a stream, a directory or a `List` prints a
`WorkloadViewList` (`items`, `count`, `skipped`, `errors`) under -o json|yaml, and one tree after another plus a
grand total under -o tree. See docs/cli.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli.context import state
from workload_map.cli.errors import (
    EXIT_ERROR,
    EXIT_NO_DEFINITION,
    EXIT_USAGE,
    CLIError,
    NoDefinition,
    UsageError,
)
from workload_map.cli.live import cache_dir_option
from workload_map.cli.manifests import NOT_WORKLOADS, Manifest, Manifests, read_manifests
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    component_limit_option,
    connection_options,
    definitions_option,
    manifest_files_option,
    output_option,
    pod_limit_option,
    resolve_output,
)

if TYPE_CHECKING:
    from workload_map.catalog import DefinitionRegistry
    from workload_map.cli.render.tree import Origin
    from workload_map.view import WorkloadView

OUTPUT = OutputSpec("describe", ("tree", "json", "yaml"), aliases={"table": "tree"})
LIST_KIND = "WorkloadViewList"
NO_DEFINITION_HINT = (
    '"wmap definitions" lists the types Karta definitions cover; add a definition for this one with --definitions FILE'
)
MAX_SKIPPED_LISTED = 10


@dataclass(frozen=True)
class Described:
    """One workload resolved from a manifest (None for a live object): its view, and what the renderer says
    about where it came from."""

    manifest: Manifest | None
    view: WorkloadView
    origin: Origin


@dataclass(frozen=True)
class Problem:
    """A document that could not be described: the exit code it means, a message, and the machine error object."""

    manifest: Manifest
    code: int
    message: str
    payload: dict[str, Any]
    hint: str | None = None
    uncovered: bool = False


@dataclass
class Outcome:
    described: list[Described] = field(default_factory=list)
    skipped: list[tuple[Manifest, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


# --- resolving ----------------------------------------------------------------------------------------------


def _no_definition(manifest: Manifest, *, single: bool) -> Problem:
    name = f' "{manifest.name}"' if manifest.name else ""
    if manifest.kind in NOT_WORKLOADS:
        plainly = "; it is not a workload"
    elif not manifest.workload_like:
        plainly = "; it does not look like a workload (no pod containers)"
    else:
        plainly = ""
    payload: dict[str, Any] = {
        "error": "no_definition_for_type",
        "gvk": manifest.gvk_text,
        "message": "no Karta definition covers this workload type",
        "hint": NO_DEFINITION_HINT,
    }
    if not single:
        payload = {**payload, "source": manifest.label, "name": manifest.name}
    return Problem(
        manifest,
        EXIT_NO_DEFINITION,
        f"no definition covers {manifest.gvk_text}{name} ({manifest.label}){plainly}",
        payload,
        hint=NO_DEFINITION_HINT,
        uncovered=True,
    )


def _broken(manifest: Manifest, code: int, message: str, *, single: bool, hint: str | None = None) -> Problem:
    payload: dict[str, Any] = {"error": "invalid_manifest" if code == EXIT_USAGE else "resolve_failed"}
    payload["message"] = message
    if not single:
        payload["source"] = manifest.label
    return Problem(manifest, code, message, payload, hint=hint)


def describe_manifests(manifests: Manifests, registry: DefinitionRegistry) -> Outcome:
    """Resolve every document through the registry into views (pure: prints nothing, only collects)."""
    from workload_map.cli.jqmode import definition_policy
    from workload_map.cli.render.tree import Origin
    from workload_map.resolve import ResolveError, Workload
    from workload_map.view import build_view

    outcome = Outcome()
    single = manifests.single
    for manifest in manifests.documents:
        if not manifest.has_type:
            if single:
                what = "is not a mapping" if not isinstance(manifest.value, dict) else "declares no apiVersion and kind"
                outcome.problems.append(
                    _broken(
                        manifest,
                        EXIT_USAGE,
                        f"{manifest.label} {what}, so there is nothing to resolve it by",
                        single=True,
                        hint="-f reads Kubernetes objects (as `kubectl get -o yaml` prints them)",
                    )
                )
            else:
                outcome.skipped.append((manifest, "not a Kubernetes object (no apiVersion and kind)"))
            continue
        resolved = registry.for_object(manifest.value)
        if resolved is None:
            if single or manifest.workload_like:
                outcome.problems.append(_no_definition(manifest, single=single))
            else:
                outcome.skipped.append((manifest, "not a workload"))
            continue
        try:
            policy = definition_policy(resolved.karta.name, resolved.origin)
            workload = Workload(resolved.karta, manifest.value, policy=policy)
            view = build_view(workload.resolve(), origin=resolved.origin)
        except ResolveError as exc:
            outcome.problems.append(_broken(manifest, EXIT_ERROR, f"{manifest.label}: {exc}", single=single))
            continue
        for error in view.errors:
            state().warn(f"{view.kind}/{view.name} ({manifest.label}): {error}")
        root = resolved.karta.root_gvk
        origin = Origin(
            source=manifest.label,
            manifest_status=manifest.has_status,
            definition_version=None if resolved.exact or root is None else root.version,
        )
        outcome.described.append(Described(manifest, view, origin))
    return outcome


# --- output -------------------------------------------------------------------------------------------------


def list_document(outcome: Outcome) -> dict[str, Any]:
    """The `WorkloadViewList` printed for a stream, a directory or a List under -o json|yaml."""
    from workload_map.view import SCHEMA_VERSION

    return {
        "schemaVersion": SCHEMA_VERSION,
        "kind": LIST_KIND,
        "count": len(outcome.described),
        "items": [item.view.to_dict() for item in outcome.described],
        "skipped": [
            {
                "source": manifest.label,
                "apiVersion": manifest.api_version,
                "kind": manifest.kind,
                "name": manifest.name,
                "reason": reason,
            }
            for manifest, reason in outcome.skipped
        ],
        "errors": [problem.payload for problem in outcome.problems],
    }


def _sum(views: Sequence[WorkloadView], resource: str) -> Fraction:
    return sum((Fraction(view.resources.requests.get(resource, 0)) for view in views), Fraction(0))


def grand_total(views: Sequence[WorkloadView]) -> str:
    """`Total of 3 workloads: 17 replicas, 105 GPUs, CPU 85, memory 474Gi` (accelerators named too)."""
    from workload_map.cli.render.fmt import accelerator_labels, cpu_text, memory_text

    replicas = sum(view.replicas.desired for view in views)
    gpus = sum(view.resources.gpus for view in views)
    accelerators: dict[str, int] = {}
    for view in views:
        for name, count in view.resources.accelerators.items():
            accelerators[name] = accelerators.get(name, 0) + count
    labels = accelerator_labels(accelerators)
    parts = [
        f"{replicas} replica{'s' * (replicas != 1)}",
        f"{gpus} GPU{'s' * (gpus != 1)}",
        *(f"{labels[name]} {count}" for name, count in sorted(accelerators.items())),
        f"CPU {cpu_text(_sum(views, 'cpu'))}",
        f"memory {memory_text(_sum(views, 'memory'))}",
    ]
    return f"Total of {len(views)} workloads: {', '.join(parts)}"


def render_described(
    described: Sequence[Described], fmt: str, *, pod_limit: int = 0, component_limit: int = 0, bare: bool = True
) -> None:
    """Print views in `fmt` (tree, json or yaml) on stdout: one bare view when `bare` and there is one, else a
    list. Live `describe` (the cluster issue) calls this too."""
    out = state().stdout
    if fmt in ("json", "yaml"):
        from workload_map.cli.render import machine

        if bare and len(described) == 1:
            machine.write(described[0].view.to_dict(), fmt, out)
        else:
            machine.write(list_document(Outcome(described=list(described))), fmt, out)
        return
    from workload_map.cli.render.text import Line, write_lines
    from workload_map.cli.render.tree import TreeOptions, render_workload

    color = state().color(out)
    encoding = (getattr(out, "encoding", "") or "").lower().replace("-", "")
    options = TreeOptions(
        pod_limit=pod_limit,
        component_limit=component_limit,
        width=state().width(out),
        unicode=color and encoding == "utf8",
    )
    lines: list[Line] = []
    for index, item in enumerate(described):
        if index:
            lines += [[], [("---", "glyph")], []]
        lines += render_workload(item.view, options, item.origin)
    if len(described) > 1:
        lines += [[], [("---", "glyph")], [], [(grand_total([item.view for item in described]), "total")]]
    write_lines(lines, out, color=color)


def _skipped_note(skipped: Sequence[tuple[Manifest, str]]) -> str:
    listed = [manifest.short if manifest.kind else manifest.label for manifest, _ in skipped]
    shown = ", ".join(listed[:MAX_SKIPPED_LISTED])
    if len(listed) > MAX_SKIPPED_LISTED:
        shown += f", and {len(listed) - MAX_SKIPPED_LISTED} more"
    count = len(skipped)
    return f"skipped {count} document{'s' * (count != 1)}: {shown}"


# --- the command --------------------------------------------------------------------------------------------

_HELP = """\
Show workloads as a tree of components with replicas, GPUs and resource totals.

Reads Kubernetes manifests (-f FILE, a directory of them, or - for stdin) and resolves each workload through the
Karta definition for its kind, offline: no cluster is needed. Every workload of a multi-document file, a directory
or `helm template` output is described; other documents (ConfigMaps, Services, ...) are skipped and listed on
stderr.

\b
Examples:
  wmap describe -f examples/pytorchjob.yaml
  wmap describe -f examples/ -o json
  helm template ./chart | wmap describe -f -
  kubectl get pytorchjob my-job -o yaml | wmap describe -f -
  wmap describe -f job.yaml --definitions my-karta.yaml

-o json|yaml prints one view for a single document, else a WorkloadViewList with items, count, skipped and errors.
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, metavar="[TYPE/NAME]")
@manifest_files_option(
    "Manifest(s) to describe: a file, a directory (*.yaml, *.yml, *.json, recursively), or - for stdin. Repeatable."
)
@output_option(OUTPUT)
@definitions_option
@pod_limit_option
@component_limit_option(
    0, "Show at most N components under each parent, unhealthy ones first (0: all). Tree output only."
)
@cache_dir_option
@connection_options
def describe(
    *,
    args: tuple[str, ...],
    files: tuple[str, ...],
    output: str | None,
    definition_paths: tuple[str, ...],
    pod_limit: int,
    component_limit: int,
    cache_dir: str | None = None,
    connection: ConnectionOptions | None = None,
) -> None:
    if files and args:
        raise UsageError(
            f'--filename reads the kind from the manifest, so it cannot be combined with "{" ".join(args)}"'
        )
    if not files:
        if args:  # a live workload: TYPE/NAME or TYPE NAME (the cluster issue; docs/live.md)
            from workload_map.cli.commands.live_describe import describe_live

            describe_live(
                args,
                fmt=resolve_output(OUTPUT, output),
                connection=connection or ConnectionOptions(),
                cache_dir=cache_dir,
                definition_paths=definition_paths,
                pod_limit=pod_limit,
                component_limit=component_limit,
            )
            return
        raise UsageError("nothing to describe: give -f FILE, a directory, or - for stdin")
    if [*files, *definition_paths].count("-") > 1:
        raise UsageError("only one of -f and --definitions can read stdin (-)")
    fmt = resolve_output(OUTPUT, output)
    manifests = read_manifests(files)
    if not manifests.documents:
        raise UsageError(f"{', '.join(files)}: no documents (the input is empty)", hint="-f reads Kubernetes manifests")
    from workload_map.cli.definitions_source import build_registry

    registry = build_registry(definition_paths)
    outcome = describe_manifests(manifests, registry)
    machine = fmt in ("json", "yaml")

    if manifests.single:
        if outcome.problems:
            problem = outcome.problems[0]
            if machine and problem.uncovered:
                from workload_map.cli.render import machine as machine_out

                machine_out.write(problem.payload, fmt, state().stdout)
            raise CLIError(problem.message, hint=problem.hint, exit_code=problem.code)
        render_described(outcome.described, fmt, pod_limit=pod_limit, component_limit=component_limit)
        return

    if machine:
        from workload_map.cli.render import machine as machine_out

        machine_out.write(list_document(outcome), fmt, state().stdout)
    elif outcome.described:
        render_described(outcome.described, fmt, pod_limit=pod_limit, component_limit=component_limit, bare=False)
    state().stdout.flush()
    if outcome.skipped:
        state().note(_skipped_note(outcome.skipped))
    for problem in outcome.problems:
        state().warn(problem.message)
    inputs = ", ".join(files)
    broken = [problem for problem in outcome.problems if not problem.uncovered]
    if not outcome.described:
        if broken:
            raise CLIError(broken[0].message, hint=broken[0].hint, exit_code=broken[0].code)
        if outcome.problems:
            raise NoDefinition(f"no workload in {inputs} is covered by a definition", hint=NO_DEFINITION_HINT)
        if all(not manifest.has_type for manifest, _ in outcome.skipped):
            raise UsageError(f"{inputs}: no Kubernetes objects (no document has an apiVersion and kind)")
        raise NoDefinition(f"no workloads in {inputs}, only other objects", hint=NO_DEFINITION_HINT)
    if broken:
        count = len(broken)
        raise CLIError(
            f"{count} document{'s' * (count != 1)} of {inputs} could not be described (see the warnings)",
            exit_code=broken[0].code,
        )
