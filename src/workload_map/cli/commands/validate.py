"""`wmap validate FILE... [--against OBJECT]`: check Karta definitions, and optionally try one on a sample object.

stdout: `OK: <name>` for each valid definition; `INVALID: <name> (<source>)` with every finding indented below it
(`error: <YAML path>: <message>`). Warnings of valid definitions go to stderr. Exit 0 when every definition is valid
(warnings allowed), 1 when one is not, 2 when a file cannot be read or is not YAML/JSON.

`--against OBJECT.yaml` then resolves the object through the definition covering its kind and reports what a
definition author needs: the instances and pod specs each component finds, the replicas, which statuses match, the
extraction errors, and the resulting tree (`wmap describe`). Extraction errors are exit 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from workload_map.cli.context import state
from workload_map.cli.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CLIError, NoDefinition, UsageError

if TYPE_CHECKING:
    from workload_map.cli.manifests import Manifest
    from workload_map.cli.render.text import Line
    from workload_map.model import Karta
    from workload_map.resolve import Resolution
    from workload_map.validation import ValidationReport

_HELP = """\
Check Karta definition files: schema, required fields, jq expressions, every rule at once, each finding with its
YAML field path. FILE may be a directory (every *.yaml, *.yml, *.json in it) or - for stdin.

\b
Examples:
  wmap validate my-karta.yaml
  wmap validate definitions/
  wmap definitions kubeflow-org-pytorchjob-v1 -o yaml | wmap validate -
  wmap validate my-karta.yaml --against my-workload.yaml

With --against, the sample object is resolved through the definition for its kind, and the instances, pod specs,
replicas, matching statuses, extraction errors and resulting tree are shown.

Exit 0 when every definition is valid (warnings go to stderr), 1 when one is invalid or the sample does not resolve
cleanly, 2 when a file cannot be read or is not YAML/JSON.
"""


def _summary(report: ValidationReport) -> tuple[list[str], int]:
    """Problem lines for stderr and the exit code."""
    problems = [f"{f.path}: {f.problem}" for f in report.files if f.problem]
    return problems, report.exit_code


def _print_report(report: ValidationReport) -> None:
    out = state().stdout
    for file_report in report.files:
        for definition in file_report.definitions:
            if definition.valid:
                out.write(f"OK: {definition.name}\n")
                for finding in definition.warnings:
                    state().warn(f"{definition.name}: {finding.path + ': ' if finding.path else ''}{finding.message}")
            else:
                out.write(f"INVALID: {definition.name} ({definition.source})\n")
                for finding in definition.findings:
                    out.write(f"  {finding}\n")


def _pick_definition(report: ValidationReport, sample: Manifest) -> Karta:
    from workload_map.model import GVK

    wanted = GVK.from_api_version(sample.api_version, sample.kind)
    candidates = [
        d
        for d in report.definitions
        if d.karta is not None
        and d.karta.root_gvk is not None
        and d.karta.root_gvk.group == wanted.group
        and d.karta.root_gvk.kind == wanted.kind
    ]
    if not candidates:
        listed = ", ".join(sorted({f"{d.karta.root_gvk}" for d in report.definitions if d.karta and d.karta.root_gvk}))
        raise NoDefinition(
            f"no definition given covers {sample.gvk_text} ({sample.label})",
            hint=f"the definitions cover: {listed}" if listed else None,
        )
    exact = [d for d in candidates if d.karta is not None and d.karta.root_gvk == wanted]
    chosen = (exact or candidates)[0]
    if not chosen.valid:
        raise CLIError(
            f"definition {chosen.name!r} is invalid, so {sample.label} cannot be resolved through it",
            hint="fix the errors listed above first",
        )
    assert chosen.karta is not None
    return chosen.karta


def _read_sample(path: str) -> Manifest:
    from workload_map.cli.manifests import read_manifests

    manifests = read_manifests([path])
    documents = [m for m in manifests.documents if m.has_type]
    if not documents:
        raise UsageError(f"--against {path}: no Kubernetes object (a document with apiVersion and kind)")
    if len(documents) > 1:
        raise UsageError(
            f"--against {path} holds {len(documents)} objects; give one sample workload",
        )
    return documents[0]


def _component_rows(karta: Karta, resolution: Resolution) -> list[list[Line]]:
    from workload_map.cli.render.text import seg

    rows = [[seg(title, "heading") for title in ("COMPONENT", "INSTANCES", "POD SPEC", "REPLICAS")]]
    for component in karta.components:
        resolved = resolution.components.get(component.name)
        if resolved is None:
            continue
        shapes: list[str] = []
        replicas: list[str] = []
        for instance in resolved.instances.values():
            if instance.pod_template_spec is not None:
                shapes.append("template")
            elif instance.pod_spec is not None:
                shapes.append("podSpec")
            elif instance.fragmented_pod_spec is not None:
                shapes.append("fragmented")
            if instance.scale is not None:
                scale = instance.scale
                value = scale.replicas if scale.replicas is not None else scale.min_replicas
                replicas.append("-" if value is None else str(value))
        ids = [key for key in resolved.instance_ids if key]
        count = f"{len(resolved.instances)}" + (f" ({', '.join(ids)})" if ids else "")
        shape = ", ".join(sorted(set(shapes))) or ("missing" if resolved.has_pod_definition else "-")
        rows.append(
            [
                seg(component.name, "title"),
                seg(count, "warn" if not resolved.instances else ""),
                seg(shape, "warn" if shape == "missing" else ""),
                seg(", ".join(replicas) or "-"),
            ]
        )
    return rows


def _status_lines(karta: Karta, resolution: Resolution) -> list[Line]:
    from workload_map.cli.render.text import PHASE_STYLES

    status = resolution.status
    definition = karta.root.status_definition
    if definition is None or status is None:
        return [[("Statuses: ", "heading"), ("the root component has no statusDefinition", "muted")]]
    lines: list[Line] = [[("Statuses:", "heading")]]
    unmapped: list[str] = []
    for phase, matchers in definition.status_mappings.entries():
        if not matchers:
            unmapped.append(phase)
            continue
        matched = phase in status.phases
        note = "matches" + (" (primary)" if phase == status.phase else "") if matched else "no match"
        lines.append(
            [
                (f"  {phase:<14}", PHASE_STYLES.get(phase, "") if matched else "muted"),
                (note, "" if matched else "muted"),
            ]
        )
    if unmapped:
        lines.append([("  not mapped: " + ", ".join(unmapped), "muted")])
    conditions = ", ".join(f"{c.type}={c.status}" for c in status.conditions) or "none"
    raw = status.raw_phase if status.raw_phase is not None else "(no phaseDefinition)"
    lines.append([(f"  raw phase: {raw or '(empty)'}; conditions: {conditions}", "muted")])
    return lines


def _against(report: ValidationReport, path: str) -> int:
    from workload_map.cli.jqmode import definition_policy
    from workload_map.cli.render.text import align, write_lines
    from workload_map.cli.render.tree import Origin, TreeOptions, render_workload
    from workload_map.resolve import ResolveError, Workload
    from workload_map.view import build_view

    sample = _read_sample(path)
    karta = _pick_definition(report, sample)
    try:
        policy = definition_policy(karta.name, "local")  # the definition files given on the command line
        workload = Workload(karta, sample.value, policy=policy)
        resolution = workload.resolve()
        view = build_view(resolution, origin="local")
    except ResolveError as exc:
        raise CLIError(f"{sample.label}: {exc}") from None
    out = state().stdout
    color = state().color(out)
    lines: list[Line] = [
        [],
        [("Against ", "heading"), (f"{sample.label}: {sample.kind}/{sample.name or '?'}", "title")],
        [("  through ", "muted"), (karta.name, "")],
        [],
        *align(_component_rows(karta, resolution)),
        [],
        *_status_lines(karta, resolution),
        [],
    ]
    if resolution.errors:
        lines.append([(f"Extraction errors ({len(resolution.errors)}):", "bad")])
        lines += [[(f"  {error}", "")] for error in resolution.errors]
    else:
        lines.append([("Extraction: ", "heading"), ("no errors", "ok")])
    lines += [[], [("View:", "heading")]]
    options = TreeOptions(width=state().width(out), unicode=False)
    lines += render_workload(view, options, Origin(source=sample.label, manifest_status=sample.has_status))
    write_lines(lines, out, color=color)
    for error in view.errors:
        if all(str(error) != str(e) for e in resolution.errors):
            state().warn(str(error))
    return EXIT_ERROR if resolution.errors else EXIT_OK


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("files", nargs=-1, required=True, metavar="FILE...", type=click.Path())
@click.option(
    "--against",
    metavar="OBJECT",
    type=click.Path(),
    help="A sample workload manifest to resolve through the definition for its kind.",
)
def validate(files: tuple[str, ...], against: str | None) -> None:
    if files.count("-") + (against == "-") > 1:
        raise UsageError("only one input can be read from stdin (-)")
    from workload_map.validation import check_files

    report = check_files(list(files))
    _print_report(report)
    problems, code = _summary(report)
    invalid = [d for d in report.definitions if not d.valid]
    against_code = EXIT_OK
    if against is not None and code != EXIT_USAGE:
        against_code = _against(report, against)
    if code == EXIT_OK and against_code == EXIT_OK:
        return
    state().stdout.flush()
    messages = list(problems)
    if invalid:
        total = len(report.definitions)
        if len(invalid) == 1:
            errors = len(invalid[0].errors)
            messages.append(f"definition {invalid[0].name!r} is invalid ({errors} error{'s' * (errors != 1)})")
        else:
            messages.append(f"{len(invalid)} of {total} definitions are invalid")
    if against_code != EXIT_OK and against is not None:
        messages.append(f"{against} does not resolve cleanly through the definition")
    for message in messages[:-1]:
        state().stderr.write(f"error: {message}\n")
    raise CLIError(messages[-1], exit_code=code if code != EXIT_OK else against_code)
