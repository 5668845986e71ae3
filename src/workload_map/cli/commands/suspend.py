"""`wmap suspend TYPE/NAME` and `wmap resume TYPE/NAME`: the definition's suspend (resume) actions, sent as one
JSON merge patch.

The workload is read (one GET), its definition's `suspendActions` (`resumeActions`) are applied to it
(`Workload.suspend()` / `.resume()`), and the difference is sent as a merge patch
(`Content-Type: application/merge-patch+json`) carrying the `resourceVersion` that was read, so a concurrent change
is never overwritten: the server answers 409 and the command reads the object again and retries (3 times).

* Already suspended (resumed): the actions change nothing; said on stderr, exit 0, no PATCH.
* A type whose definition has no `suspendDefinition`: exit 1, "X has no suspend support in its definition"; the
  hint names `wmap suspend KIND/NAME` of an object it follows whose definition has suspend support (a MiniCluster's
  Job).
* `--dry-run` (`--dry-run=client`): print the patch on stdout, send nothing. `--dry-run=server`: send it with
  `dryRun=All` (the server validates it, admission runs, nothing is stored).
"""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.complete_args import complete_target
from workload_map.cli.context import state
from workload_map.cli.errors import CLIError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.live import LiveSession, live_session, parse_target, translate_errors
from workload_map.cli.options import ConnectionOptions, cache_dir_option, connection_options, definitions_option
from workload_map.cli.render import machine
from workload_map.cli.safe import safe_text
from workload_map.cluster import Conflict, ResolvedType
from workload_map.jq import EvaluationPolicy
from workload_map.resolve import ResolveError, Workload
from workload_map.resolve.references import references_of

DRY_RUN_CHOICES = ("none", "client", "server")
CONFLICT_RETRIES = 3


class _DryRunCommand(click.Command):
    """`--dry-run` alone means `--dry-run=client`, also when a TYPE/NAME follows it (kubectl's behaviour)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        fixed: list[str] = []
        rest = False
        for index, arg in enumerate(args):
            if arg == "--":
                rest = True
            following = args[index + 1] if index + 1 < len(args) else None
            if not rest and arg == "--dry-run" and following not in DRY_RUN_CHOICES:
                fixed.append("--dry-run=client")
            else:
                fixed.append(arg)
        return super().parse_args(ctx, fixed)


def _apply(workload: Workload, verb: str) -> dict[str, Any]:
    try:
        if verb == "suspend":
            workload.suspend()
        else:
            workload.resume()
    except ResolveError as exc:
        ref = workload.object_ref
        raise CLIError(f"{ref.kind}/{ref.name}: cannot {verb}: {exc}") from None
    return workload.merge_patch()


def _suspendable_reference(
    session: LiveSession, rtype: ResolvedType, obj: dict[str, Any], verb: str, policy: EvaluationPolicy
) -> str | None:
    """The hint for a type without suspend support that follows an object whose own definition has it (a
    MiniCluster's Job, which Kueue suspends): `wmap suspend job/<name>`. From the definition's references and the
    referenced type's definition, so no kind is named here."""
    references, _ = references_of(rtype.definition.karta, obj, policy=policy)  # problems: no hint from them
    for reference in references:
        chosen = session.registry.for_gvk(reference.group, reference.version, reference.kind)
        if chosen is None or not any(c.suspend_definition for c in chosen.karta.components):
            continue
        target = f"{reference.kind.lower()}/{reference.object_name}"
        return (
            f"the {safe_text(reference.kind)} it follows (reference {safe_text(reference.name)}) has suspend support "
            f"in its own definition: wmap {verb} {safe_text(target)}"
        )
    return None


def _patch_once(
    session: LiveSession,
    rtype: ResolvedType,
    *,
    name: str,
    namespace: str,
    verb: str,
    dry_run: str,
    policy: EvaluationPolicy,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(patch, the object the server returned or None when nothing was sent)."""
    obj = session.cluster.get_object(rtype, name, namespace=namespace)
    workload = Workload(rtype.definition.karta, obj, policy=policy)
    if not workload.can_suspend:
        raise CLIError(
            f"{rtype.kind} has no suspend support in its definition {rtype.definition.karta.name!r}",
            hint=_suspendable_reference(session, rtype, obj, verb, policy)
            or "a definition tells how to suspend a type in a component's suspendDefinition",
        )
    patch = _apply(workload, verb)
    if not patch:
        return patch, None
    resource_version = (obj.get("metadata") or {}).get("resourceVersion")
    if resource_version:
        patch.setdefault("metadata", {})["resourceVersion"] = resource_version
    if dry_run == "client":
        return patch, None
    returned = session.cluster.merge_patch(rtype, name, patch, namespace=namespace, dry_run=dry_run == "server")
    return patch, returned


def run_suspend(
    verb: str,
    args: tuple[str, ...],
    *,
    dry_run: str,
    definition_paths: tuple[str, ...],
    cache_dir: str | None,
    connection: ConnectionOptions,
) -> None:
    token, name = parse_target(args, name_required=True, command=verb)
    assert name is not None
    done = "suspended" if verb == "suspend" else "resumed"
    with live_session(connection, cache_dir=cache_dir, definition_paths=definition_paths) as session:
        rtype = session.resolve(token)
        namespace = session.namespace
        policy = definition_policy(rtype.definition.karta.name, rtype.definition.origin)
        with translate_errors():
            for attempt in range(CONFLICT_RETRIES + 1):
                try:
                    patch, returned = _patch_once(
                        session, rtype, name=name, namespace=namespace, verb=verb, dry_run=dry_run, policy=policy
                    )
                    break
                except Conflict:
                    if attempt == CONFLICT_RETRIES:
                        raise
        what = f"{rtype.kind}/{name}"
        if not patch:
            state().note(f"{what} is already {done} (its definition's {verb} actions change nothing)")
            return
        if dry_run == "client":
            machine.write(patch, "json", state().stdout)
            state().note(f"{what} would be {done} with this merge patch (dry run: nothing was sent)")
            return
        suffix = " (server dry run: nothing was stored)" if dry_run == "server" else ""
        state().stdout.write(f"{safe_text(what)} {done}{suffix}\n")
        if returned is not None and dry_run == "none":
            check = Workload(rtype.definition.karta, returned, validate=False, policy=policy)
            missing = bool(_apply(check, verb))
            if missing:
                state().warn(f"{what}: the stored object does not carry every {verb} setting (an admission webhook?)")


def _dry_run_option(f: Any) -> Any:
    return click.option(
        "--dry-run",
        type=click.Choice(DRY_RUN_CHOICES),
        default="none",
        show_default=True,
        metavar="[client|server]",
        help="client (or --dry-run alone): print the merge patch and send nothing; server: send it with "
        "dryRun=All (validated by the server, not stored).",
    )(f)


_SUSPEND_HELP = """\
Suspend a workload through its definition's suspend actions (e.g. spec.suspend: true for a JobSet).

\b
Examples:
  wmap suspend jobset/preprocess -n ml
  wmap suspend pytorchjob llama --dry-run
"""

_RESUME_HELP = """\
Resume a workload through its definition's resume actions (e.g. spec.suspend: false for a JobSet).

\b
Examples:
  wmap resume jobset/preprocess -n ml
  wmap resume raycluster/research --dry-run=server
"""


def _verb_command(verb: str, help_text: str) -> click.Command:
    """The `wmap suspend` or `wmap resume` command: the same arguments and options, run as `run_suspend(verb, ...)`."""

    @click.command(verb, cls=_DryRunCommand, help=help_text, context_settings={"help_option_names": ["-h", "--help"]})
    @click.argument("args", nargs=-1, metavar="TYPE/NAME", shell_complete=complete_target)
    @_dry_run_option
    @definitions_option
    @cache_dir_option
    @connection_options
    def command(
        *,
        args: tuple[str, ...],
        dry_run: str,
        definition_paths: tuple[str, ...],
        cache_dir: str | None,
        connection: ConnectionOptions,
    ) -> None:
        run_suspend(
            verb, args, dry_run=dry_run, definition_paths=definition_paths, cache_dir=cache_dir, connection=connection
        )

    return command


suspend = _verb_command("suspend", _SUSPEND_HELP)
resume = _verb_command("resume", _RESUME_HELP)
