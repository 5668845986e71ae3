"""PowerShell completion (issue 21): the script, the call back, and the completer used on click releases that have
none of their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.shell_completion import CompletionItem

from tests.cli.helpers import invoke
from workload_map.cli.root import COMPLETE_VAR, cli
from workload_map.cli.shells import PowerShellComplete


def test_the_script_registers_a_native_argument_completer(tmp_path: Path) -> None:
    result = invoke(["completion", "powershell"], home=tmp_path)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("Register-ArgumentCompleter -Native -CommandName wmap")
    assert COMPLETE_VAR in result.stdout


def test_the_call_back_offers_commands_and_choices(tmp_path: Path) -> None:
    commands = invoke(
        [], home=tmp_path, env={"COMP_WORDS": "wmap ge", "COMP_CWORD": "1", COMPLETE_VAR: "powershell_complete"}
    )
    assert commands.code == 0 and "get" in commands.stdout.split()
    formats = invoke(
        [],
        home=tmp_path,
        env={"COMP_WORDS": "wmap gang --format ", "COMP_CWORD": "3", COMPLETE_VAR: "powershell_complete"},
    )
    assert {"kai", "volcano", "kueue"} <= set(formats.stdout.split())


def test_our_completer_reads_the_line_and_the_word_and_formats_a_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMP_WORDS", "wmap gang --format vo")
    monkeypatch.setenv("COMP_CWORD", "vo")
    completer = PowerShellComplete(cli, {}, "wmap", COMPLETE_VAR)
    assert completer.get_completion_args() == (["gang", "--format"], "vo")
    assert [item.value for item in completer.get_completions(["gang", "--format"], "vo")] == ["volcano"]
    assert completer.format_completion(CompletionItem("volcano", help="Volcano")) == "plain\tvolcano\tVolcano"
    assert "Register-ArgumentCompleter" in completer.source()
