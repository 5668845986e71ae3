"""`wmap gang -f FILE`: the gang-scheduling plan of workloads, or the objects a scheduler needs for it.

    wmap gang -f lws.yaml                          # the scheduler-neutral plan (YAML)
    wmap gang -f lws.yaml --format kai --queue q   # KAI PodGroups, one YAML document per object
    wmap gang -f job.yaml --pods pods.yaml         # the plan with each pod's gang

The file and the live form (`wmap gang TYPE/NAME`, `commands.live_gang`) share the pipeline: `cli.pipeline` resolves
the workloads, `cli.plans.gang_documents(workload, pods, options, report)` turns one of them (and its pods, from
`--pods` or the cluster) into the objects to print, and `cli.plans.write_documents(documents, output)` prints them.
See docs/gang.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from workload_map.catalog import DefinitionRegistry
from workload_map.cli.complete_args import complete_target
from workload_map.cli.config import ENV_OUTPUT
from workload_map.cli.context import State, state
from workload_map.cli.definitions_source import build_registry
from workload_map.cli.errors import CLIError, NoDefinition, UsageError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.manifests import NOT_WORKLOADS, Manifest, read_manifests, related_objects
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    cache_dir_option,
    connection_options,
    definitions_option,
    manifest_files_option,
    output_option,
    resolve_output,
    with_files_option,
)
from workload_map.cli.pipeline import (
    Duplicate,
    Failed,
    ResolvedWorkload,
    Uncovered,
    Untyped,
    duplicate_message,
    from_manifests,
    nothing_read,
    unread_error,
)
from workload_map.cli.plans import GangOptions, gang_documents, write_documents
from workload_map.gang import no_gang_reason
from workload_map.pods import OwnerChains

OUTPUT = OutputSpec("gang", ("yaml", "json", "text"), default_help="text (the plan's tree) on a terminal, else yaml")
FORMATS = ("plan", "kai", "volcano", "coscheduling", "kueue", "workload")
NO_DEFINITION_HINT = (
    '"wmap definitions" lists the types Karta definitions cover; add a definition for this one with --definitions FILE'
)

if TYPE_CHECKING:
    from workload_map.cli.context import Reporter


# --- reading the inputs ---------------------------------------------------------------------------------------


def _pods_and_owners(paths: Sequence[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pods (kind Pod) and every other object (their owners: ReplicaSets, Jobs, StatefulSets) of the --pods files."""
    pods: list[dict[str, Any]] = []
    owners: list[dict[str, Any]] = []
    read = read_manifests(paths)
    for bad in read.bad:
        state().partial(str(bad))
    for manifest in read.documents:
        value = manifest.value
        if not isinstance(value, dict):
            continue
        (pods if manifest.kind == "Pod" else owners).append(value)
    if not pods:
        raise UsageError(
            f"--pods {', '.join(paths)}: no Pod objects", hint="give pods as `kubectl get pods -o yaml` prints them"
        )
    return pods, owners


def _uid(value: Mapping[str, Any]) -> str:
    metadata = value.get("metadata")
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    return uid if isinstance(uid, str) else ""


def _scope_pods(
    workloads: Sequence[ResolvedWorkload],
    pods: list[dict[str, Any]],
    owners: list[dict[str, Any]],
    report: Reporter,
) -> list[list[dict[str, Any]]]:
    """The given pods of each workload: all of them for one workload (the caller scoped them), else by owner chain
    (each pod goes to the workload whose UID its chain reaches)."""
    if len(workloads) == 1:
        return [pods]
    uids = [_uid(workload.manifest.value) if workload.manifest else "" for workload in workloads]
    if not all(uids):
        raise UsageError(
            "--pods with several workloads needs metadata.uid on each workload to tell their pods apart",
            hint="plan one workload at a time, or use manifests as `kubectl get -o yaml` prints them",
        )
    chains = OwnerChains(owners, pods=pods)
    scoped: list[list[dict[str, Any]]] = [[] for _ in workloads]
    stray = 0
    for pod in pods:
        root = chains.find_root(pod, {uid: index for index, uid in enumerate(uids)})
        if root is None:
            stray += 1
            continue
        scoped[uids.index(root)].append(pod)
    if stray:
        report.warn(f"{stray} pod{'s' * (stray != 1)} of --pods belong to none of the workloads (owner chain)")
    return scoped


def _related(paths: tuple[str, ...], report: State) -> list[dict[str, Any]]:
    """The `--with` objects (a document that cannot be read is named, and the run ends with exit 1)."""
    objects, bad = related_objects(paths)
    for problem in bad:
        report.partial(str(problem))
    return objects


def _resolve_all(
    manifests: Sequence[Manifest],
    registry: DefinitionRegistry,
    report: Reporter,
    related: Sequence[Mapping[str, Any]] = (),
) -> list[ResolvedWorkload]:
    """The covered workloads of the input (`cli.pipeline`), each under its definition's jq policy (chosen by the
    definition's origin), with the objects they refer to from the input or `related`; uncovered workloads go to
    `report`, or are the error when nothing is covered."""
    found: list[ResolvedWorkload] = []
    uncovered: list[Manifest] = []
    unknown: list[Manifest] = []  # no pod containers, but not a known non-workload kind (a ConfigMap) either
    for item in from_manifests(manifests, registry, definition_policy, related):
        if isinstance(item, Failed):
            raise CLIError(f"{item.manifest.label}: {item.error}")
        if isinstance(item, Uncovered):
            if item.referenced_by is not None:  # a TrainJob's runtime
                continue
            if item.manifest.workload_like:
                uncovered.append(item.manifest)
            elif item.manifest.kind not in NOT_WORKLOADS:
                unknown.append(item.manifest)
        elif isinstance(item, Duplicate):
            report.warn(duplicate_message(item))
        elif not isinstance(item, Untyped):
            found.append(item)
            for note in item.notes:  # a referenced object not in the input
                report.warn(f"{item.label}: {note}")
    for manifest in uncovered:
        name = f' "{manifest.name}"' if manifest.name else ""
        message = f"no definition covers {manifest.gvk_text}{name} ({manifest.label})"
        if not found and len(uncovered) == 1:
            raise NoDefinition(message, hint=NO_DEFINITION_HINT)
        report.warn(message)
    if not found:
        if uncovered:
            raise NoDefinition("no workload of the input is covered by a definition", hint=NO_DEFINITION_HINT)
        if len(unknown) == 1:  # a custom resource whose pods we cannot see: say what to do, as describe does
            manifest = unknown[0]
            name = f' "{manifest.name}"' if manifest.name else ""
            message = f"no definition covers {manifest.gvk_text}{name} ({manifest.label})"
            raise NoDefinition(message, hint=NO_DEFINITION_HINT)
        if unknown:
            raise NoDefinition("no document of the input is covered by a definition", hint=NO_DEFINITION_HINT)
        raise NoDefinition("no workload in the input", hint="-f reads workload manifests (a PyTorchJob, a JobSet, ...)")
    return found


# --- the command ------------------------------------------------------------------------------------------------

_HELP = """\
Plan gang scheduling for workloads, or print the objects a scheduler needs for it.

Reads workload manifests (-f FILE, a directory, or - for stdin) and works out, from each one's Karta definition,
its gangs: which pods must start together and how many of them at least (min member), with the resources that
takes. --format chooses what is printed:

\b
  plan          the scheduler-neutral plan (default)
  kai           KAI Scheduler PodGroups (scheduling.run.ai/v2alpha2)
  volcano       Volcano PodGroups (scheduling.volcano.sh/v1beta1)
  coscheduling  scheduler-plugins PodGroups (scheduling.x-k8s.io/v1alpha1)
  kueue         Kueue Workloads with their podSets (kueue.x-k8s.io/v1beta1)
  workload      the Kubernetes Workload API (scheduling.k8s.io/v1alpha2, or v1alpha1)

With --pods, each pod's gang is worked out too (from its labels, as KAI's pod grouper does).

\b
Examples:
  wmap gang -f examples/leaderworkerset.yaml
  wmap gang -f examples/jobset.yaml --format kai --queue research
  kubectl get pytorchjob mnist -o yaml | wmap gang -f - --format volcano
  wmap gang -f job.yaml --pods pods.yaml -o json
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, metavar="[TYPE/NAME]", shell_complete=complete_target)
@manifest_files_option("Workload manifest(s): a file, a directory (*.yaml, *.yml, *.json), or - for stdin. Repeatable.")
@click.option(
    "--pods",
    "pod_files",
    multiple=True,
    metavar="FILE|DIR|-",
    type=click.Path(),
    help="The workloads' pods (and their owners: ReplicaSets, Jobs), as `kubectl get pods -o yaml` prints them. "
    "Repeatable.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="plan",
    show_default=True,
    help="What to print: the plan, or the objects of one scheduler.",
)
@output_option(OUTPUT)
@click.option("--queue", metavar="NAME", help="Queue of the PodGroups (KAI, Volcano) or LocalQueue (Kueue).")
@click.option("--priority-class", metavar="NAME", help="PriorityClass of the PodGroups / Workloads.")
@click.option(
    "--priority",
    type=int,
    metavar="N",
    help="Kueue only: the priority value of --priority-class (Kueue requires both on a Workload; without it the "
    "class goes on the pod templates).",
)
@click.option(
    "--schedule-timeout",
    "schedule_timeout",
    type=click.IntRange(min=0),
    metavar="SECONDS",
    help="coscheduling only: scheduleTimeoutSeconds of the PodGroups.",
)
@click.option(
    "--workload-api-version",
    type=click.Choice(("v1alpha2", "v1alpha1")),
    default="v1alpha2",
    show_default=True,
    help="--format workload: scheduling.k8s.io v1alpha2 (Kubernetes 1.36) or v1alpha1 (1.35).",
)
@click.option(
    "--volcano-sub-groups",
    is_flag=True,
    help="--format volcano: the gang's sub-groups as subGroupPolicy (Volcano >= 1.14) instead of minTaskMember.",
)
@click.option(
    "--joined-pods",
    is_flag=True,
    help="With --pods and a scheduler's --format: after its objects, each pod of a gang as given, carrying the "
    "labels and annotations (the Workload API: the spec field) that join it to its gang and sub-group.",
)
@with_files_option
@definitions_option
@cache_dir_option
@connection_options
def gang(
    *,
    args: tuple[str, ...],
    files: tuple[str, ...],
    pod_files: tuple[str, ...],
    fmt: str,
    output: str | None,
    queue: str | None,
    priority_class: str | None,
    priority: int | None,
    schedule_timeout: int | None,
    workload_api_version: str,
    volcano_sub_groups: bool,
    joined_pods: bool,
    definition_paths: tuple[str, ...],
    with_files: tuple[str, ...] = (),
    cache_dir: str | None = None,
    connection: ConnectionOptions | None = None,
) -> None:
    if files and args:
        raise UsageError(f'-f reads the kind from the manifest, so it cannot be combined with "{" ".join(args)}"')
    options = GangOptions(
        format=fmt,
        queue=queue,
        priority_class=priority_class,
        priority=priority,
        schedule_timeout_seconds=schedule_timeout,
        workload_api_version=f"scheduling.k8s.io/{workload_api_version}",
        volcano_sub_groups=volcano_sub_groups,
        joined_pods=joined_pods,
    )
    if joined_pods and fmt == "plan":
        raise UsageError(
            "--joined-pods writes pods for a scheduler",
            hint="add --format kai, volcano, coscheduling, kueue or workload",
        )
    if joined_pods and not pod_files and not args:
        raise UsageError("--joined-pods needs the pods: give --pods FILE")
    if not files:
        if args:  # a live workload: TYPE/NAME or TYPE NAME (docs/live.md)
            # The cluster seam: imported only to go to the cluster, so `gang -f` never loads the cluster layer.
            from workload_map.cli.commands.live_gang import gang_live

            _warn_unused(options, state())
            gang_live(
                args,
                options=options,
                output_format=_output_format(output, fmt),
                connection=connection or ConnectionOptions(),
                cache_dir=cache_dir,
                definition_paths=definition_paths,
                pod_files=pod_files,
                related=_related(with_files, state()),
            )
            return
        raise UsageError("nothing to plan: give -f FILE, a directory, or - for stdin")
    if [*files, *pod_files, *definition_paths, *with_files].count("-") > 1:
        raise UsageError("only one of -f, --pods, --with and --definitions can read stdin (-)")
    output_format = _output_format(output, fmt)
    report = state()
    _warn_unused(options, report)

    manifests = read_manifests(files)
    for bad in manifests.bad:  # named on stderr; the other documents are still planned, then exit 1
        report.partial(str(bad))
    if not manifests.documents:
        raise UsageError(f"{', '.join(files)}: no documents (the input is empty)", hint="-f reads Kubernetes manifests")
    registry = build_registry(definition_paths, report=report)
    workloads = _resolve_all(manifests.documents, registry, report, _related(with_files, report))
    scoped: list[list[dict[str, Any]] | None] = [None] * len(workloads)
    if pod_files:
        pods, owners = _pods_and_owners(pod_files)
        scoped = list(_scope_pods(workloads, pods, owners, report))
    documents: list[dict[str, Any]] = []
    pairs = list(zip(workloads, scoped, strict=True))
    # An object a controller owns (a JobSet's pods in its file) is scheduled with its owner: skipped, with a note,
    # when the stream has something to plan. An object nobody owns (a Deployment beside a JobSet) keeps its own
    # document saying it needs no gang, as it would alone (issue 20: per object, never skipped silently).
    reasons = [no_gang_reason(workload.resolution) for workload, _ in pairs]
    owned = [
        reason is not None and _has_controller(workload) for (workload, _), reason in zip(pairs, reasons, strict=True)
    ]
    if any(reason is None for reason in reasons) and any(owned):
        skipped = [_short(workload) for (workload, _), is_owned in zip(pairs, owned, strict=True) if is_owned]
        shown = ", ".join(skipped[:10]) + (f", and {len(skipped) - 10} more" if len(skipped) > 10 else "")
        one = len(skipped) == 1
        state().note(
            f"skipped {len(skipped)} object{'' if one else 's'} scheduled with {'its' if one else 'their'} owner: "
            f"{shown}"
        )
        pairs = [pair for pair, is_owned in zip(pairs, owned, strict=True) if not is_owned]
    for workload, pods_of in pairs:
        documents.extend(gang_documents(workload, pods_of, options, report))
    write_documents(documents, output_format)
    unread = [_short(workload) for workload, _ in pairs if nothing_read(workload)]
    if unread:  # planned from nothing: the plan is shown, but it is no plan of the workload (exit 1)
        raise unread_error(unread)


def _has_controller(workload: ResolvedWorkload) -> bool:
    """True when the object names a controller among its ownerReferences (the owner schedules it)."""
    value = workload.manifest.value if workload.manifest else None
    metadata = value.get("metadata") if isinstance(value, Mapping) else None
    references = metadata.get("ownerReferences") if isinstance(metadata, Mapping) else None
    if not isinstance(references, list):
        return False
    return any(isinstance(reference, Mapping) and reference.get("controller") is True for reference in references)


def _short(workload: ResolvedWorkload) -> str:
    return workload.manifest.short if workload.manifest else workload.label


def _warn_unused(options: GangOptions, report: Reporter) -> None:
    """Say so when a flag has no field in the chosen format (rather than dropping it silently)."""
    fmt = options.format
    unused: list[str] = []
    if options.queue and fmt in ("plan", "coscheduling", "workload"):
        unused.append("--queue")
    if options.priority_class and fmt in ("plan", "coscheduling", "workload"):
        unused.append("--priority-class")
    if options.priority is not None and fmt != "kueue":
        unused.append("--priority")
    if options.schedule_timeout_seconds is not None and fmt != "coscheduling":
        unused.append("--schedule-timeout")
    if options.volcano_sub_groups and fmt != "volcano":
        unused.append("--volcano-sub-groups")
    if unused:
        report.warn(f"{', '.join(unused)} {'has' if len(unused) == 1 else 'have'} no field in --format {fmt}: ignored")


def _output_format(output: str | None, fmt: str) -> str:
    """`-o`, else `$WMAP_OUTPUT` or the config file, else the plan as a tree on a terminal and YAML elsewhere."""
    chosen = resolve_output(OUTPUT, output)
    if chosen == "text" and fmt != "plan":
        raise UsageError(
            f"-o text shows the plan as a tree; --format {fmt} writes a scheduler's objects",
            hint="print them with -o yaml or -o json",
        )
    nothing_chosen = output is None and not os.environ.get(ENV_OUTPUT) and state().config.output_for("gang") is None
    if nothing_chosen and fmt == "plan" and _is_terminal():
        return "text"
    return chosen


def _is_terminal() -> bool:
    try:
        return bool(state().stdout.isatty())
    except (AttributeError, ValueError):
        return False
