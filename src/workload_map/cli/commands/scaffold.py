"""`wmap scaffold --crd CRD.yaml [--kind K] [--version V]`: a draft Karta definition from a CRD's schema.

stdout: the draft (YAML with `# TODO:` comments, `workload_map.model.scaffold`); stderr: one line saying what was
found and how many TODOs are left. The draft is validated before it is printed: a draft that does not validate is a
bug here and exits 1 with the findings. Exit 2 when the file cannot be read, is not YAML, holds no CRD, or --kind or
--version is needed or names nothing; exit 1 when the schema shows no pod template (docs/scaffold.md).
"""

from __future__ import annotations

import click

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.safe import MESSAGE_LIMIT, safe_text
from workload_map.model import loads_definitions
from workload_map.model.scaffold import ScaffoldError, scaffold, select_crd
from workload_map.model.yamlio import DocumentError, read_documents
from workload_map.validation import errors, validate

_HELP = """\
Draft a Karta definition from a CustomResourceDefinition's OpenAPI schema: its pod templates (the PodTemplateSpec
or PodSpec shape), replica fields near them, the status conditions or phase, and a suspend field. Where the schema
cannot say (which labels the operator puts on pods, which object it creates, what each phase means), the draft has
a `# TODO:` comment for a person to settle.

\b
Examples:
  wmap scaffold --crd config/crd/bases/example.org_trainjobs.yaml > trainjob-karta.yaml
  kubectl get crd trainjobs.example.org -o yaml | wmap scaffold --crd -
  wmap scaffold --crd all-crds.yaml --kind TrainJob --version v1beta1

Then settle each TODO and run `wmap validate trainjob-karta.yaml --against my-trainjob.yaml`.

Exit 0 with the draft on stdout; 1 when the schema shows no pod template; 2 when the file cannot be read or holds
no CRD, or --kind or --version is needed or names nothing.
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--crd", "crd_path", required=True, metavar="FILE", type=click.Path(), help="The CRD manifest (- for stdin)."
)
@click.option("--kind", metavar="KIND", help="Which CRD of the file, by its kind (when it holds several).")
@click.option("--version", "version", metavar="VERSION", help="Which version of the CRD (when it serves several).")
def scaffold_command(crd_path: str, kind: str | None, version: str | None) -> None:
    try:
        documents = read_documents(crd_path)
    except DocumentError as exc:
        raise UsageError(str(exc)) from None
    label = "standard input" if crd_path == "-" else crd_path
    try:
        crd = select_crd([d.value for d in documents], kind, source=label)
        draft = scaffold(crd, version)
    except ScaffoldError as exc:
        no_template = exc.message.startswith("no pod template")
        raise CLIError(exc.message, hint=exc.hint, exit_code=1 if no_template else 2) from None
    findings = errors(validate(loads_definitions(draft.text, source="the draft")[0]))
    if findings:  # the drafts are made to validate: a finding here is a bug in the scaffold
        for finding in findings:
            state().stderr.write(f"{safe_text(finding, MESSAGE_LIMIT)}\n")
        raise CLIError(f"the draft for {draft.crd} does not validate (a bug in wmap scaffold: please report it)")
    state().stdout.write(draft.text)
    components = ", ".join(site.component for site in draft.templates)
    state().stderr.write(
        f"drafted {safe_text(draft.kind)} {safe_text(draft.version)} with {len(draft.templates)} pod-bearing "
        f"component{'s' * (len(draft.templates) != 1)} ({safe_text(components, MESSAGE_LIMIT)}); "
        f"{draft.todos} TODO comment{'s' * (draft.todos != 1)} to settle\n"
    )
