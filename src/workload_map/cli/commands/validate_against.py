"""`wmap validate FILE... --against OBJECT`: the sample object resolved through the definition covering its kind,
and what a definition author needs to see: the instances and pod specs each component finds, the replicas, which
statuses match, the extraction errors, and the resulting tree (as `wmap describe` draws it). Extraction errors are
exit 1.

Its own module, imported by `commands.validate` only for `--against`, so checking definition files never imports
the resolve and view layers. The sample goes through the describe pipeline (`cli.pipeline.resolve_object`, then
`cli.views.view_of`).
"""

from __future__ import annotations

from workload_map.cli.context import state
from workload_map.cli.errors import EXIT_ERROR, EXIT_OK, CLIError, NoDefinition, UsageError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.manifests import Manifest, read_manifests
from workload_map.cli.pipeline import resolve_object
from workload_map.cli.render.text import PHASE_STYLES, Line, align, seg, write_lines
from workload_map.cli.render.tree import TreeOptions, render_workload
from workload_map.cli.views import tree_origin, view_of
from workload_map.model import GVK, Karta
from workload_map.resolve import Resolution, ResolveError
from workload_map.validation import ValidationReport


def _pick_definition(report: ValidationReport, sample: Manifest) -> Karta:
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


def against_sample(report: ValidationReport, path: str) -> int:
    """Resolve the sample workload of `--against PATH` through the definition given for its kind and print what
    a definition author needs; the exit code (1 when the sample has extraction errors)."""
    sample = _read_sample(path)
    karta = _pick_definition(report, sample)
    try:
        workload = resolve_object(
            karta,
            sample.value,
            label=sample.label,
            origin="local",  # the definition files given on the command line
            policy=definition_policy(karta.name, "local"),
            manifest=sample,
        )
        resolution = workload.resolution
        view = view_of(workload)
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
    lines += render_workload(view, options, tree_origin(workload))
    write_lines(lines, out, color=color)
    for error in view.errors:
        if all(str(error) != str(e) for e in resolution.errors):
            state().warn(str(error))
    return EXIT_ERROR if resolution.errors else EXIT_OK
