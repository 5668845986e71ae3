"""`wmap validate FILE... [--against OBJECT]`: check Karta definitions, and optionally try one on a sample object.

stdout: `OK: <name>` for each valid definition; `INVALID: <name> (<source>)` with every finding indented below it
(`error: <YAML path>: <message>`). Warnings of valid definitions go to stderr. Exit 0 when every definition is valid
(warnings allowed), 1 when one is not or a directory below one given cannot be searched (a warning names it; the
rest is checked), 2 when a file cannot be read or is not YAML/JSON.

`--against OBJECT.yaml` then resolves the object through the definition covering its kind and reports what a
definition author needs: the instances and pod specs each component finds, the replicas, which statuses match, the
extraction errors, and the resulting tree (`wmap describe`); see `commands.validate_against`. Extraction errors are
exit 1.
"""

from __future__ import annotations

import click

from workload_map.cli.context import state
from workload_map.cli.errors import EXIT_OK, EXIT_USAGE, CLIError, UsageError
from workload_map.cli.safe import MESSAGE_LIMIT, safe_text
from workload_map.validation import ValidationReport, check_files

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

Exit 0 when every definition is valid (warnings go to stderr), 1 when one is invalid, the sample does not resolve
cleanly or a subdirectory cannot be searched (a partial result), 2 when a file cannot be read or is not YAML/JSON.
"""


def _summary(report: ValidationReport) -> tuple[list[str], int]:
    """Problem lines for stderr and the exit code."""
    problems = [f"{f.path}: {f.problem}" for f in report.files if f.problem and not f.partial]
    return problems, report.exit_code


def _print_report(report: ValidationReport) -> None:
    out = state().stdout
    for file_report in report.files:
        for definition in file_report.definitions:
            if definition.valid:
                out.write(f"OK: {safe_text(definition.name)}\n")
                for finding in definition.warnings:
                    state().warn(f"{definition.name}: {finding.path + ': ' if finding.path else ''}{finding.message}")
            else:
                out.write(f"INVALID: {safe_text(definition.name)} ({safe_text(definition.source)})\n")
                for finding in definition.findings:
                    out.write(f"  {safe_text(finding, MESSAGE_LIMIT)}\n")


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
    report = check_files(list(files))
    _print_report(report)
    problems, code = _summary(report)
    unsearched = [f for f in report.files if f.partial]
    for skipped in unsearched:  # a partial result: named, the rest was checked (exit 1)
        state().warn(f"{skipped.path}: {skipped.problem}")
    invalid = [d for d in report.definitions if not d.valid]
    against_code = EXIT_OK
    if against is not None and code != EXIT_USAGE:
        # Imported only for --against: resolving and rendering the sample (workload_map.resolve and .view) would
        # add ~35 ms to every `wmap validate FILE`.
        from workload_map.cli.commands.validate_against import against_sample

        against_code = against_sample(report, against)
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
    if not messages:  # only directories that could not be searched
        count = len(unsearched)
        messages.append(
            f"the result is partial: {count} director{'ies' if count != 1 else 'y'} could not be searched "
            "(see the warnings)"
        )
    for message in messages[:-1]:
        state().stderr.write(f"error: {safe_text(message, MESSAGE_LIMIT)}\n")
    raise CLIError(messages[-1], exit_code=code if code != EXIT_OK else against_code)
