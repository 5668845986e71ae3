"""Hostile and broken input at the CLI (issue 16): what `wmap` prints is terminal-safe and bounded, every input is
read through the one bounded reader, closed streams and odd values end cleanly, and a bad document or a stopped
definition leaves the rest of the output intact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import EXAMPLES, REPO, Result, Wmap, invoke

CONTROL = [chr(c) for c in range(0x20) if c != 0x0A] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
PREFIXES = ("error: ", "hint: ", "warning: ")


@pytest.fixture
def wmap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Wmap:
    monkeypatch.chdir(REPO)

    def call(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> Result:
        return invoke(args, home=tmp_path, stdin=stdin, env=env)

    return call


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def assert_terminal_safe(text: str) -> None:
    raw = [char for char in CONTROL if char in text]
    assert not raw, f"raw control characters {raw!r} in {text[:300]!r}"


EVIL_NAME = '"evil\\e]0;pwned\\a\\e[2J\\nerror: forged\\x9b\\u202e"'


def evil_pytorchjob(tmp_path: Path) -> str:
    text = (EXAMPLES / "pytorchjob.yaml").read_text(encoding="utf-8")
    text = text.replace("name: llama-finetune\n", f"name: {EVIL_NAME}\n", 1)
    text = text.replace("namespace: ml-team", 'namespace: "ns\\e[31m\\x85"')
    return write(tmp_path / "evil.yaml", text)


# --- 1. rendering -----------------------------------------------------------------------------------------------


def test_names_with_escape_sequences_are_printed_escaped_in_the_tree(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("describe", "-f", evil_pytorchjob(tmp_path))
    assert result.code == 0, result.stderr
    assert_terminal_safe(result.output)
    first = result.stdout.splitlines()[0]
    assert first.startswith("PyTorchJob/evil\\x1b]0;pwned\\x07\\x1b[2J\\nerror: forged\\x9b\\u202e")
    assert "namespace: ns\\x1b[31m\\x85" in first
    assert not any(line.startswith("error:") for line in result.stdout.splitlines())


def test_machine_output_carries_no_raw_control_characters(wmap: Wmap, tmp_path: Path) -> None:
    path = evil_pytorchjob(tmp_path)
    as_json = wmap("describe", "-f", path, "-o", "json")
    as_yaml = wmap("describe", "-f", path, "-o", "yaml")
    assert as_json.code == as_yaml.code == 0
    assert_terminal_safe(as_json.stdout)
    assert_terminal_safe(as_yaml.stdout)
    name = "evil\x1b]0;pwned\x07\x1b[2J\nerror: forged\x9b\u202e"
    assert json.loads(as_json.stdout)["name"] == name
    assert yaml.safe_load(as_yaml.stdout)["name"] == name


def test_warnings_and_errors_escape_what_they_quote_and_stay_one_line(wmap: Wmap, tmp_path: Path) -> None:
    uncovered = (
        "apiVersion: example.com/v1\nkind: Crunch\nmetadata: {name: "
        + EVIL_NAME
        + "}\nspec: {template: {spec: {containers: [{name: a, image: b}]}}}\n"
    )
    stream = write(tmp_path / "stream.yaml", uncovered + "---\n" + (EXAMPLES / "pytorchjob.yaml").read_text())
    warned = wmap("describe", "-f", stream)
    assert warned.code == 0
    assert_terminal_safe(warned.stderr)
    assert [line for line in warned.stderr.splitlines() if line.startswith("warning: ")]
    alone = wmap("describe", "-f", write(tmp_path / "alone.yaml", uncovered.replace("Crunch", "Cr\\x1b[2Jnch")))
    alone_kind = wmap("describe", "-f", write(tmp_path / "kind.yaml", uncovered.replace("Crunch", '"Cr\\e[2Jnch"')))
    for result in (alone, alone_kind):
        assert result.code == 4
        assert_terminal_safe(result.stderr)
        assert all(line.startswith(PREFIXES) for line in result.stderr.splitlines()), result.stderr


def test_a_file_name_with_control_characters_is_escaped_in_the_error(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("describe", "-f", str(tmp_path / "a\x1b]0;x\x07\nerror: forged.yaml"))
    assert result.code == 1
    assert_terminal_safe(result.stderr)
    assert all(line.startswith(PREFIXES) for line in result.stderr.splitlines()), result.stderr


def test_a_huge_message_is_one_bounded_line_with_the_count_of_what_was_cut(wmap: Wmap, tmp_path: Path) -> None:
    kind = "K" * 3_000_000
    path = write(
        tmp_path / "big.yaml",
        f"apiVersion: example.com/v1\nkind: {kind}\nmetadata: {{name: x}}\n"
        "spec: {template: {spec: {containers: [{name: a, image: b}]}}}\n",
    )
    result = wmap("describe", "-f", path)
    assert result.code == 4
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: no definition covers example.com/v1/KKK")
    assert lines[0].endswith("more characters)") and len(lines[0]) < 5000
    assert len(result.stderr) < 10_000


def test_a_huge_name_in_the_tree_is_cut_with_a_count(wmap: Wmap, tmp_path: Path) -> None:
    text = (EXAMPLES / "pytorchjob.yaml").read_text(encoding="utf-8")
    path = write(tmp_path / "long.yaml", text.replace("name: llama-finetune\n", f"name: {'n' * 1_000_000}\n", 1))
    result = wmap("describe", "-f", path)
    assert result.code == 0
    first = result.stdout.splitlines()[0]
    assert len(first) < 5000 and first.endswith("more characters)")
    assert max(len(line) for line in result.stdout.splitlines()) < 5000
