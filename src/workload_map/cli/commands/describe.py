"""`wmap describe`: the click command. Its work (files, and the hand-off to the live half for TYPE/NAME) is
`commands.describe_files.describe_run`, which the run without click (`cli.quick`) calls too.
"""

from __future__ import annotations

import click

from workload_map.cli.commands.describe_files import (
    COMPONENT_LIMIT_DEFAULT,
    OUTPUT,
    DescribeArgs,
    describe_run,
)
from workload_map.cli.complete_args import complete_target
from workload_map.cli.options import (
    ConnectionOptions,
    cache_dir_option,
    component_limit_option,
    connection_options,
    definitions_option,
    manifest_files_option,
    output_option,
    pod_limit_option,
    with_files_option,
)

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
@click.argument("args", nargs=-1, metavar="[TYPE/NAME]", shell_complete=complete_target)
@manifest_files_option(
    "Manifest(s) to describe: a file, a directory (*.yaml, *.yml, *.json, recursively), or - for stdin. Repeatable."
)
@with_files_option
@output_option(OUTPUT)
@definitions_option
@pod_limit_option
@component_limit_option(
    COMPONENT_LIMIT_DEFAULT,
    "Show at most N components under each parent, unhealthy ones first (0: all). Tree output only.",
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
    with_files: tuple[str, ...] = (),
    cache_dir: str | None = None,
    connection: ConnectionOptions | None = None,
) -> None:
    describe_run(
        DescribeArgs(
            args=args,
            files=files,
            output=output,
            definition_paths=definition_paths,
            pod_limit=pod_limit,
            component_limit=component_limit,
            with_files=with_files,
            cache_dir=cache_dir,
            connection=connection or ConnectionOptions(),
        )
    )
