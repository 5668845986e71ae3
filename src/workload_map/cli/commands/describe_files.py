"""`wmap describe -f FILE|DIR|-`: workloads from manifests, resolved offline into the view and rendered (the command's
work, without click: `commands.describe` declares its options over `describe_run`, and the run without click,
`cli.quick`, calls `describe_run` with the same `DescribeArgs` for the common `describe -f FILE -o FORMAT`).

Every document of the input is looked at. A document a definition covers is described; one that plainly is not a
workload (a ConfigMap, a Service, a document without pod containers, or without a kind at all in a stream) is
skipped and listed on stderr; a workload no definition covers is an error when it is the only document (exit 4,
with upstream's machine-readable error object under -o json|yaml) and a warning in a stream.

Output: one document prints the bare view (as upstream); a stream, a directory or a `List` prints a
`WorkloadViewList` (`items`, `count`, `skipped`, `errors`) under -o json|yaml, and one tree after another plus a
grand total under -o tree. See docs/cli.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.catalog import DefinitionRegistry
from workload_map.cli.context import state
from workload_map.cli.definitions_source import build_registry
from workload_map.cli.errors import (
    EXIT_ERROR,
    EXIT_NO_DEFINITION,
    EXIT_USAGE,
    CLIError,
    NoDefinition,
    UsageError,
)
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.manifests import NOT_WORKLOADS, Manifest, Manifests, read_manifests, related_objects
from workload_map.cli.option_values import POD_LIMIT_DEFAULT, ConnectionOptions, OutputSpec, resolve_output
from workload_map.cli.pipeline import (
    Duplicate,
    Failed,
    ResolvedWorkload,
    Uncovered,
    Untyped,
    duplicate_message,
    from_manifests,
    unread_error,
)
from workload_map.cli.render import machine
from workload_map.cli.views import Described, tree_origin, view_list, view_of, write_views

if TYPE_CHECKING:
    from workload_map.cli.context import Reporter
    from workload_map.cli.pipeline import PolicyFor

OUTPUT = OutputSpec("describe", ("tree", "json", "yaml"), aliases={"table": "tree"})
NO_DEFINITION_HINT = (
    'write a Karta definition for this type (docs/definitions.md, "A first definition"), check it with "wmap '
    'validate DEF.yaml --against FILE" and pass it with --definitions DEF.yaml; "wmap definitions" lists the types '
    "already covered"
)
MAX_SKIPPED_LISTED = 10
COMPONENT_LIMIT_DEFAULT = 0  # --component-limit: every component shown


class Problem(msgspec.Struct, frozen=True):
    """A document that could not be described: the exit code it means, a message, and the machine error object."""

    manifest: Manifest
    code: int
    message: str
    payload: dict[str, Any]
    hint: str | None = None
    uncovered: bool = False


class Outcome(msgspec.Struct):
    described: list[Described] = msgspec.field(default_factory=list)
    skipped: list[tuple[Manifest, str]] = msgspec.field(default_factory=list)
    problems: list[Problem] = msgspec.field(default_factory=list)
    unread: list[str] = msgspec.field(
        default_factory=list
    )  # workloads none of whose pod-holding components could be read


# --- resolving ----------------------------------------------------------------------------------------------


def _no_definition(manifest: Manifest, *, single: bool) -> Problem:
    name = f' "{manifest.name}"' if manifest.name else ""
    if manifest.kind in NOT_WORKLOADS:
        plainly = "; it is not a workload"
    elif not manifest.workload_like and "." not in manifest.api_version.partition("/")[0]:
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


def describe_manifests(
    manifests: Manifests,
    registry: DefinitionRegistry,
    *,
    policy_for: PolicyFor,
    report: Reporter,
    related: Sequence[Mapping[str, Any]] = (),
) -> Outcome:
    """Resolve every document through the registry into views (`cli.pipeline`, then `cli.views`): prints nothing;
    the views' extraction errors go to `report`, and the jq policy of each definition comes from `policy_for`.
    `related` are objects the workloads may refer to (`--with`), besides the input's own documents."""
    outcome = Outcome()
    single = manifests.single
    for found in from_manifests(manifests.documents, registry, policy_for, related):
        if isinstance(found, Untyped):
            manifest = found.manifest
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
        elif isinstance(found, Uncovered):
            if found.referenced_by is not None:  # a TrainJob's runtime: read for its roles, not a workload
                outcome.skipped.append((found.manifest, f"referenced by {found.referenced_by}"))
            elif single or found.manifest.workload_like:
                outcome.problems.append(_no_definition(found.manifest, single=single))
            else:
                outcome.skipped.append((found.manifest, "not a workload"))
        elif isinstance(found, Failed):
            message = f"{found.manifest.label}: {found.error}"
            outcome.problems.append(_broken(found.manifest, EXIT_ERROR, message, single=single))
        elif isinstance(found, Duplicate):
            report.warn(duplicate_message(found))
        else:
            view = view_of(found)
            for note in found.notes:
                report.warn(f"{view.kind}/{view.name} ({found.label}): {note}")
            for error in view.errors:
                report.warn(f"{view.kind}/{view.name} ({found.label}): {error}")
            outcome.described.append(Described(view, tree_origin(found)))
            if _nothing_read(found, view.errors):
                outcome.unread.append(f"{view.kind}/{view.name} ({found.label})")
    return outcome


def _nothing_read(found: ResolvedWorkload, errors: Sequence[Any]) -> bool:
    """Whether every component that holds pods failed to read its pod spec or replicas: the workload is shown, but
    nothing of it was read (exit 1)."""
    holders = {component.name for component in found.resolution.karta.components if component.has_pod_definition}
    failed = {
        error.component
        for error in errors
        if str(getattr(error, "field", "")).startswith(("specDefinition", "scaleDefinition"))
    }
    return bool(holders) and holders <= failed


def _raise_if_unread(outcome: Outcome) -> None:
    if outcome.unread:
        raise unread_error(outcome.unread)


# --- output -------------------------------------------------------------------------------------------------


def list_document(outcome: Outcome) -> dict[str, Any]:
    """The `WorkloadViewList` printed for a stream, a directory or a List under -o json|yaml."""
    skipped = [
        {
            "source": manifest.label,
            "apiVersion": manifest.api_version,
            "kind": manifest.kind,
            "name": manifest.name,
            "reason": reason,
        }
        for manifest, reason in outcome.skipped
    ]
    return view_list(
        [item.view for item in outcome.described], skipped, [problem.payload for problem in outcome.problems]
    )


def _skipped_note(skipped: Sequence[tuple[Manifest, str]]) -> str:
    listed = [manifest.short if manifest.kind else manifest.label for manifest, _ in skipped]
    shown = ", ".join(listed[:MAX_SKIPPED_LISTED])
    if len(listed) > MAX_SKIPPED_LISTED:
        shown += f", and {len(listed) - MAX_SKIPPED_LISTED} more"
    count = len(skipped)
    return f"skipped {count} document{'s' * (count != 1)}: {shown}"


# --- the command --------------------------------------------------------------------------------------------


class DescribeArgs(msgspec.Struct, frozen=True):
    """The values `wmap describe` runs with, as click passes them: each default is what the option gives when it
    is left out (the click options take theirs from the same constants, so the two paths cannot drift apart)."""

    args: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    output: str | None = None  # -o as given, in the command's spelling (OUTPUT.normalise); None: not given
    definition_paths: tuple[str, ...] = ()
    pod_limit: int = POD_LIMIT_DEFAULT
    component_limit: int = COMPONENT_LIMIT_DEFAULT
    with_files: tuple[str, ...] = ()
    cache_dir: str | None = None
    connection: ConnectionOptions = msgspec.field(default_factory=ConnectionOptions)  # the flags, none given


def describe_run(given: DescribeArgs) -> None:
    """`wmap describe` with its options' values: a live workload (TYPE/NAME) or the files of -f."""
    args, files, output = given.args, given.files, given.output
    definition_paths, pod_limit, component_limit = given.definition_paths, given.pod_limit, given.component_limit
    with_files, cache_dir, connection = given.with_files, given.cache_dir, given.connection
    if files and args:
        raise UsageError(
            f'--filename reads the kind from the manifest, so it cannot be combined with "{" ".join(args)}"'
        )
    if not files:
        if args:  # a live workload: TYPE/NAME or TYPE NAME (docs/live.md)
            # The cluster seam: imported only to go to the cluster, so `describe -f` never loads the cluster layer.
            from workload_map.cli.commands.live_describe import describe_live

            describe_live(
                args,
                related=_related(with_files),
                fmt=resolve_output(OUTPUT, output),
                connection=connection,
                cache_dir=cache_dir,
                definition_paths=definition_paths,
                pod_limit=pod_limit,
                component_limit=component_limit,
            )
            return
        raise UsageError("nothing to describe: give -f FILE, a directory, or - for stdin")
    if [*files, *definition_paths, *with_files].count("-") > 1:
        raise UsageError("only one of -f, --with and --definitions can read stdin (-)")
    fmt = resolve_output(OUTPUT, output)
    manifests = read_manifests(files)
    for bad in manifests.bad:  # named on stderr; the other documents are still described, then exit 1
        state().partial(str(bad))
    if not manifests.documents:
        raise UsageError(f"{', '.join(files)}: no documents (the input is empty)", hint="-f reads Kubernetes manifests")
    registry = build_registry(definition_paths, report=state())
    outcome = describe_manifests(
        manifests, registry, policy_for=definition_policy, report=state(), related=_related(with_files)
    )
    machine_output = fmt in ("json", "yaml")

    if manifests.single:
        if outcome.problems:
            problem = outcome.problems[0]
            if machine_output and problem.uncovered:
                machine.write(problem.payload, fmt, state().stdout)
            raise CLIError(problem.message, hint=problem.hint, exit_code=problem.code)
        write_views(outcome.described, fmt, pod_limit=pod_limit, component_limit=component_limit)
        _raise_if_unread(outcome)
        return

    if machine_output:
        machine.write(list_document(outcome), fmt, state().stdout)
    elif outcome.described:
        write_views(outcome.described, fmt, pod_limit=pod_limit, component_limit=component_limit, bare=False)
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
    _raise_if_unread(outcome)


def _related(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    """The objects of the `--with` inputs; a document that cannot be read is named, and the run ends with exit 1
    once the rest is described."""
    objects, bad = related_objects(paths)
    for problem in bad:
        state().partial(str(problem))
    return objects
