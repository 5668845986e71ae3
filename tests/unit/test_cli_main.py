"""The root command: --version, help with exit codes, unknown commands, the config file and WMAP_OUTPUT, shell
completion (click's scripts and the kubectl plugin protocol), and the lazy command loading."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, Result, Wmap, invoke, run_installed
from workload_map import __version__
from workload_map.cli.completion import cobra_complete

# --- root ---------------------------------------------------------------------------------------------------


def test_version_is_the_bare_version_and_a_newline(wmap: Wmap) -> None:
    assert wmap("--version") == Result(0, f"{__version__}\n", "")


def test_no_arguments_prints_help_and_exit_codes_and_exits_0(wmap: Wmap) -> None:
    result = wmap()
    assert result.code == 0
    assert result.stdout.startswith("Usage: wmap [OPTIONS] COMMAND [ARGS]...\n")  # the same with every click
    for line in ("0  success", "2  usage", "3  workload not found", "4  no definition covers"):
        assert line in result.stdout
    assert all(name in result.stdout for name in ("describe", "definitions", "validate", "completion"))


def test_an_unknown_command_is_exit_2_with_a_suggestion(wmap: Wmap) -> None:
    result = wmap("descrbe")
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        'error: unknown command "descrbe" for "wmap"',
        'hint: did you mean "describe"? run "wmap --help" for the commands',
    ]


def test_an_unknown_flag_is_exit_2_with_a_usage_hint(wmap: Wmap) -> None:
    result = wmap("describe", "--nope")
    assert result.code == 2
    first, hint = result.stderr.splitlines()
    # click's own wording: "no such option: --nope" before 8.4, "no such option '--nope'" after, then maybe a
    # "Did you mean ...?" when a flag is close
    assert first.startswith("error: no such option") and "--nope" in first
    assert hint == 'hint: run "wmap describe --help" for usage'


def test_kubectl_plugin_names_itself_kubectl_wmap(tmp_path: Path) -> None:
    result = invoke(["describe", "--help"], home=tmp_path, prog="kubectl wmap")
    assert result.stdout.startswith("Usage: kubectl wmap describe")


def test_version_and_help_import_no_command_module_and_no_rich() -> None:
    code = (
        "import sys\n"
        "from workload_map.cli.main import run\n"
        "run(['--version'])\n"
        "assert 'click' not in sys.modules, 'click imported for --version'\n"
        "run(['--help'])\n"
        "loaded = [m for m in sys.modules if m.startswith('workload_map.cli.commands.') or m.startswith('rich')]\n"
        "assert not loaded, loaded\n"
        "heavy = [m for m in ('workload_map.catalog', 'workload_map.resolve', 'yaml') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr


def test_json_describe_imports_no_rich_and_no_kubernetes_client(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from workload_map.cli.main import run\n"
        "assert run(['describe', '-f', 'examples/pytorchjob.yaml', '-o', 'json']) == 0\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('rich', 'lightkube', 'httpx', 'kubernetes')]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr


# --- config file and environment ----------------------------------------------------------------------------


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".config" / "wmap" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def is_json(result: Result) -> bool:
    try:
        json.loads(result.stdout)
    except ValueError:
        return False
    return True


def test_output_precedence_is_flag_then_env_then_config_section_then_global(wmap: Wmap, tmp_path: Path) -> None:
    args = ("describe", "-f", "examples/pytorchjob.yaml")
    assert not is_json(wmap(*args))
    config(tmp_path, "output: json\n")
    assert is_json(wmap(*args))
    config(tmp_path, "output: json\ndescribe: {output: yaml}\n")
    assert wmap(*args).stdout.startswith("schemaVersion: workloadmap.io/view/v1\n")
    assert is_json(wmap(*args, env={"WMAP_OUTPUT": "json"}))
    assert wmap(*args, "-o", "tree", env={"WMAP_OUTPUT": "json"}).stdout.startswith("PyTorchJob/llama-finetune")


def test_explicit_config_file_and_wmap_config(wmap: Wmap, tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.yaml"
    path.write_text("definitions: {output: json}\n")
    assert is_json(wmap("--config", str(path), "definitions"))
    assert is_json(wmap("definitions", env={"WMAP_CONFIG": str(path)}))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("outptu: json\n", "unknown key 'outptu'"),
        ("describe: {format: json}\n", "unknown key describe.format"),
        ("output: jsn\n", "output is 'jsn'"),
        ("output: [json\n", "invalid YAML at line"),
        ("- json\n", "must be a mapping"),
    ],
)
def test_a_bad_config_file_is_exit_2_naming_the_problem(wmap: Wmap, tmp_path: Path, text: str, needle: str) -> None:
    config(tmp_path, text)
    result = wmap("describe", "-f", "examples/pytorchjob.yaml")
    assert result.code == 2 and result.stdout == ""
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_a_bad_config_never_blocks_help_version_or_validate(wmap: Wmap, tmp_path: Path) -> None:
    config(tmp_path, "nonsense: 1\n")
    assert wmap("--version").code == 0 and wmap("--help").code == 0
    assert wmap("validate", "tests/fixtures/definitions/valid/pyflow.yaml").code == 0


def test_a_missing_explicit_config_is_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("--config", str(tmp_path / "nope.yaml"), "definitions")
    assert result.code == 2 and "does not exist" in result.stderr


def test_wmap_output_a_command_cannot_print_is_exit_2(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "examples/pytorchjob.yaml", env={"WMAP_OUTPUT": "wide"})
    assert result.code == 2 and "$WMAP_OUTPUT is 'wide', which wmap describe does not print" in result.stderr


def test_a_global_output_of_table_is_tree_for_describe(wmap: Wmap, tmp_path: Path) -> None:
    config(tmp_path, "output: table\n")
    assert wmap("describe", "-f", "examples/pytorchjob.yaml").stdout.startswith("PyTorchJob/llama-finetune")
    assert wmap("definitions").stdout.startswith("NAME ")


# --- completion -----------------------------------------------------------------------------------------------


def complete(*words: str) -> list[str]:
    out = io.StringIO()
    assert cobra_complete(list(words), out) == 0
    return out.getvalue().splitlines()


def test_kubectl_plugin_completion_offers_commands_then_a_directive() -> None:
    lines = complete("de")
    assert [line.split("\t")[0] for line in lines[:-1]] == ["describe", "definitions"]
    assert lines[-1] == ":4"


def test_kubectl_plugin_completion_offers_output_formats_and_manifest_files() -> None:
    assert complete("describe", "-o", "") == ["tree", "json", "yaml", ":4"]
    assert complete("describe", "-f", "") == ["yaml", "yml", "json", ":8"]


def test_completion_scripts_for_each_shell(wmap: Wmap) -> None:
    assert "_WMAP_COMPLETE=bash_complete" in wmap("completion", "bash").stdout
    assert "compdef wmap" in wmap("completion", "zsh").stdout
    assert "_WMAP_COMPLETE=fish_complete" in wmap("completion", "fish").stdout
    assert "Register-ArgumentCompleter -Native -CommandName wmap" in wmap("completion", "powershell").stdout
    assert wmap("completion", "tcsh").code == 2


def test_the_bash_script_calls_back_into_wmap(wmap: Wmap) -> None:
    # in this process, with a text-only stdout (io.StringIO): click 8.4.1+ would write its answer as bytes there
    result = wmap(env={"_WMAP_COMPLETE": "bash_complete", "COMP_WORDS": "wmap valid", "COMP_CWORD": "1"})
    assert result.code == 0 and result.stdout == "plain,validate\n"


def test_the_installed_wmap_answers_each_shells_completion_callback(tmp_path: Path) -> None:
    def answer(shell: str, words: str, cword: str) -> Result:
        env = {"_WMAP_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
        return run_installed([], home=tmp_path, env=env)

    assert answer("bash", "wmap describe -o ", "3") == Result(0, "plain,tree\nplain,json\nplain,yaml\n", "")
    assert answer("zsh", "wmap describe -o ", "3") == Result(0, "plain\ntree\n_\nplain\njson\n_\nplain\nyaml\n_\n", "")
    fish = answer("fish", "wmap describe -o j", "j")  # the line format is click's own and changed in 8.4.0-8.4.1
    assert fish.code == 0 and fish.stderr == "" and "json" in fish.stdout and "yaml" not in fish.stdout
    assert answer("tcsh", "wmap ", "1").code == 1


# --- shared options for cluster commands ----------------------------------------------------------------------


def test_connection_options_reach_a_command_as_one_value() -> None:
    import click

    from workload_map.cli.options import ConnectionOptions, connection_options

    seen: list[ConnectionOptions] = []

    @click.command()
    @connection_options
    def probe(connection: ConnectionOptions) -> None:
        seen.append(connection)

    probe.main(["-n", "ml-team", "--context", "prod", "--insecure-skip-tls-verify"], standalone_mode=False)
    assert seen == [ConnectionOptions(namespace="ml-team", context="prod", insecure_skip_tls_verify=True)]
    assert "--kubeconfig" in probe.get_help(click.Context(probe))
