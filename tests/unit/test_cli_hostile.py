"""Hostile and broken input at the CLI (issue 16): what `wmap` prints is terminal-safe and bounded, every input is
read through the one bounded reader, closed streams and odd values end cleanly, and a bad document or a stopped
definition leaves the rest of the output intact."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import EXAMPLES, REPO, Wmap, clean_env, executable, write

CONTROL = [chr(c) for c in range(0x20) if c != 0x0A] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
PREFIXES = ("error: ", "hint: ", "warning: ")


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


def test_the_gang_tree_escapes_names_roles_and_pods(wmap: Wmap, tmp_path: Path) -> None:
    """`wmap gang -o text` prints the workload's name, its roles (from the spec) and the pods' names (from --pods):
    all of them escaped, never a raw control character."""
    job = yaml.safe_load((EXAMPLES / "jobset.yaml").read_text(encoding="utf-8"))
    job["metadata"]["name"] = "evil\x1b]0;pwned\x07"
    job["spec"]["replicatedJobs"][1]["name"] = "w\x1b[2J\x9b"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p\x1b[31m\u202e",
            "namespace": "ml-team",
            "labels": {  # the JobSet's pod without its job index: listed as unplaced, by name
                "jobset.sigs.k8s.io/jobset-name": job["metadata"]["name"],
                "jobset.sigs.k8s.io/replicatedjob-name": job["spec"]["replicatedJobs"][1]["name"],
            },
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u", "controller": True}],
        },
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    manifest = write(tmp_path / "evil-jobset.yaml", yaml.safe_dump(job))
    pods = write(tmp_path / "evil-pods.yaml", yaml.safe_dump(pod))
    result = wmap("gang", "-f", manifest, "--pods", pods, "-o", "text")
    assert result.code == 0, result.stderr
    assert_terminal_safe(result.output)
    assert "evil\\x1b]0;pwned\\x07" in result.stdout.splitlines()[0]
    assert "replicatedjob w\\x1b[2J\\x9b" in result.stdout
    assert "unplaced p\\x1b[31m\\u202e: " in result.stdout


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


# --- 2. the bounded reader ----------------------------------------------------------------------------------------


def test_dev_zero_is_a_one_line_error_naming_the_file_and_the_limit(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "/dev/zero")
    assert result.code == 1
    assert result.stderr.splitlines() == [
        "error: /dev/zero: input is larger than the 64 MiB limit; inputs over it are refused"
    ]
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("validate", "/dev/zero"), 2),
        (("describe", "-f", str(EXAMPLES / "pytorchjob.yaml"), "--definitions", "/dev/zero"), 2),
        (("gang", "-f", str(EXAMPLES / "pytorchjob.yaml"), "--pods", "/dev/zero"), 1),
        (("--config", "/dev/zero", "describe", "-f", str(EXAMPLES / "pytorchjob.yaml")), 2),
    ],
)
def test_every_file_option_reads_through_the_bounded_reader(wmap: Wmap, args: tuple[str, ...], code: int) -> None:
    result = wmap(*args)
    assert result.code == code, result.stderr
    assert "/dev/zero" in result.stderr and "64 MiB limit" in result.stderr
    assert "internal error" not in result.stderr


def test_a_fifo_without_a_writer_is_an_error_after_its_time_budget(
    wmap: Wmap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workload_map.model import yamlio

    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    monkeypatch.setitem(yamlio.read_source_text.__kwdefaults__, "timeout", 0.3)  # the 30 s budget, shortened
    result = wmap("describe", "-f", str(fifo))
    assert result.code == 1
    assert result.stderr.splitlines() == [
        f"error: {fifo}: cannot be read: no end of input within 0.3 s (a FIFO or pipe without a writer?)"
    ]


# --- 3. closed streams and odd values -----------------------------------------------------------------------------


def shell(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", command],
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        cwd=REPO,
        timeout=60,
        check=False,
    )


def test_a_closed_stdout_is_exit_1_with_a_message_and_no_traceback(tmp_path: Path) -> None:
    done = shell(f'"{executable()}" describe -f examples/pytorchjob.yaml >&-', tmp_path)
    assert done.returncode == 1
    assert done.stderr == "error: standard output is closed; nothing can be printed\n"


def test_a_closed_stdin_is_a_clean_error(tmp_path: Path) -> None:
    done = shell(f'"{executable()}" describe -f - <&-', tmp_path)
    assert done.returncode == 1
    assert done.stderr == "error: <stdin>: cannot be read: standard input is closed\n"


def test_a_usage_error_with_stderr_closed_is_still_exit_2(tmp_path: Path) -> None:
    done = shell(f'"{executable()}" --jq-deadline x describe -f examples/pytorchjob.yaml 2>&-', tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""


def test_a_huge_deadline_is_a_usage_error(wmap: Wmap) -> None:
    result = wmap("--jq-deadline", "1e12", "describe", "-f", str(EXAMPLES / "pytorchjob.yaml"))
    assert result.code == 2
    assert result.stderr.startswith("error: --jq-deadline is '1e12'; give at most 86400 seconds")
    assert "Overflow" not in result.output


def test_an_empty_file_name_is_a_usage_error_not_the_current_directory(wmap: Wmap) -> None:
    result = wmap("describe", "-f", "")
    assert result.code == 2
    assert result.stderr.startswith("error: -f '' names no file")
    assert result.stdout == ""


# --- 4. partial results ---------------------------------------------------------------------------------------


def test_a_bad_document_names_itself_and_the_others_are_still_shown(wmap: Wmap, tmp_path: Path) -> None:
    example = (EXAMPLES / "pytorchjob.yaml").read_text(encoding="utf-8")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    other = example.replace("name: llama-finetune\n", "name: llama-other\n", 1)
    stream = "a: [1\nb: 2\n---\n" + example + "---\na: 1\na: 2\n---\n" + bomb + "---\n" + other
    path = write(tmp_path / "partial.yaml", stream)
    result = wmap("describe", "-f", path, "-o", "json")
    assert result.code == 1, result.stderr
    listed = json.loads(result.stdout)
    assert listed["kind"] == "WorkloadViewList" and listed["count"] == 2
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert [line.split(":")[1].strip() for line in warnings] == [
        f"{path} (document 1)",
        f"{path} (document 3)",
        f"{path} (document 4)",
    ]
    assert "error: 3 input documents or files could not be read; the output shows the others" in result.stderr
    tree = wmap("describe", "-f", path)
    assert tree.code == 1
    assert "PyTorchJob/llama-finetune " in tree.stdout and "PyTorchJob/llama-other " in tree.stdout


def test_a_single_document_that_is_not_yaml_is_still_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("describe", "-f", write(tmp_path / "bad.yaml", "a: [1\nb: 2\n"))
    assert result.code == 2 and result.stderr.startswith("error: ")


# --- 5. contained evaluation: deaths, stops once, the budget ----------------------------------------------------


def _crunch_definition(tmp_path: Path, name: str, kind: str, expression: str) -> str:
    from tests.unit.test_cli_jq_mode import SLOW_KARTA

    karta = copy.deepcopy(SLOW_KARTA)
    karta["metadata"]["name"] = name
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    root["kind"]["kind"] = kind
    root["statusDefinition"]["statusMappings"]["running"][0]["byExpression"]["expression"] = expression
    return write(tmp_path / f"{name}.yaml", yaml.safe_dump(karta))


def _crunches(tmp_path: Path, *kinds: str, points: int = 1000) -> str:
    from tests.unit.test_cli_jq_mode import CRUNCH

    documents = []
    for index, kind in enumerate(kinds):
        document = copy.deepcopy(CRUNCH)
        document["kind"], document["metadata"]["name"] = kind, f"big{index}"
        document["spec"]["points"] = list(range(points))
        documents.append(document)
    return write(tmp_path / "crunches.yaml", yaml.safe_dump_all(documents))


@pytest.fixture
def contained(wmap: Wmap) -> Iterator[Wmap]:
    from workload_map.jq import worker

    yield wmap
    worker.shutdown()


posix_only = pytest.mark.skipif(os.name != "posix", reason="the jq worker tests need POSIX")


@posix_only
def test_a_definition_that_kills_the_worker_is_an_error_naming_it_and_not_evaluated_again(
    contained: Wmap, tmp_path: Path
) -> None:
    karta = _crunch_definition(tmp_path, "example-com-crunch-v1", "Crunch", 'error("x" * 300000000)')
    manifests = _crunches(tmp_path, "Crunch", "Crunch", "Crunch", points=1)
    result = contained("--jq-mode", "worker", "describe", "-f", manifests, "--definitions", karta)
    assert result.code == 1, result.output
    assert "Traceback" not in result.output
    assert (
        'error: definition "example-com-crunch-v1" (local): the jq worker process died during the evaluation'
        in result.stderr
    )
    assert "crashed the jq worker" in result.stderr
    died = [line for line in result.stderr.splitlines() if "process died" in line and line.startswith("warning:")]
    assert len([line for line in died if "not evaluated again" not in line]) == 1  # evaluated once, not thrice
    assert result.stderr.count("was stopped earlier in this command") == 2


@posix_only
def test_the_commands_budget_stops_evaluating_other_definitions(contained: Wmap, tmp_path: Path) -> None:
    from tests.unit.test_cli_jq_mode import RUNS_FOR_MINUTES

    first = _crunch_definition(tmp_path, "example-com-crunch-v1", "Crunch", RUNS_FOR_MINUTES)
    second = _crunch_definition(tmp_path, "example-com-crunch2-v1", "Crunch2", RUNS_FOR_MINUTES)
    manifests = _crunches(tmp_path, "Crunch", "Crunch2")
    args = ("--jq-mode", "worker", "--jq-deadline", "1", "--jq-budget", "1", "describe", "-f", manifests)
    started = time.monotonic()
    result = contained(*args, "--definitions", first, "--definitions", second)
    assert time.monotonic() - started < 8
    assert result.code == 1, result.output
    assert "the command's time budget for contained jq evaluation (1 s) is spent" in result.stderr
    assert 'definition "example-com-crunch2-v1" (local) not evaluated' in result.stderr


@pytest.mark.parametrize("value", ["0", "-1", "x", "1e12", "inf"])
def test_a_bad_budget_is_a_usage_error(wmap: Wmap, value: str) -> None:
    result = wmap("--jq-budget", value, "describe", "-f", str(EXAMPLES / "pytorchjob.yaml"))
    assert result.code == 2
    assert result.stderr.startswith(f"error: --jq-budget is '{value}'")


# --- 3. directories: unreadable files and subdirectories are named; a workload nothing of which is read --------


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs /proc/self/mem (a file read() refuses)")
def test_an_unreadable_file_has_one_exit_code_named_directly_or_in_a_directory(wmap: Wmap, tmp_path: Path) -> None:
    directory = tmp_path / "manifests"
    directory.mkdir()
    (directory / "bad.yaml").symlink_to("/proc/self/mem")  # unreadable even for root: EIO
    write(directory / "job.yaml", (EXAMPLES / "pytorchjob.yaml").read_text(encoding="utf-8"))
    named = wmap("describe", "-f", str(directory / "bad.yaml"))
    inside = wmap("describe", "-f", str(directory))
    assert named.code == inside.code == 1
    assert named.stderr.splitlines() == [f"error: {directory / 'bad.yaml'}: cannot be read: Input/output error"]
    assert f"warning: {directory / 'bad.yaml'}: cannot be read: Input/output error" in inside.stderr
    assert inside.stdout.startswith("PyTorchJob/llama-finetune")  # the readable file is still described


def test_an_unreadable_subdirectory_is_named_not_skipped_silently(
    wmap: Wmap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "manifests"
    (directory / "locked").mkdir(parents=True)
    write(directory / "job.yaml", (EXAMPLES / "pytorchjob.yaml").read_text(encoding="utf-8"))
    locked = str(directory / "locked")
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str] = ".") -> object:  # as chmod 000 would (the tests may run as root)
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = wmap("describe", "-f", str(directory))
    assert result.code == 1
    assert f"warning: {locked}: cannot be read: Permission denied (a directory: not searched)" in result.stderr
    assert result.stdout.startswith("PyTorchJob/llama-finetune")


def test_a_workload_nothing_of_which_can_be_read_is_exit_1(wmap: Wmap, tmp_path: Path) -> None:
    path = write(
        tmp_path / "hollow.yaml",
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: x}\nspec: {pytorchReplicaSpecs: 5}\n",
    )
    result = wmap("describe", "-f", path)
    assert result.code == 1
    assert result.stdout.startswith("PyTorchJob/x")
    assert result.stderr.splitlines()[-2] == (
        f"error: nothing of PyTorchJob/x ({path}) could be read: every component's pod spec or replicas failed "
        "(see the warnings)"
    )


def test_a_huge_deadline_in_the_config_file_is_a_usage_error(wmap: Wmap, tmp_path: Path) -> None:
    config = write(tmp_path / "wmap.yaml", "jq-deadline: 1000000000000\n")
    result = wmap("--config", config, "describe", "-f", str(EXAMPLES / "pytorchjob.yaml"))
    assert result.code == 2
    assert "jq-deadline is 1000000000000; give at most 86400 seconds" in result.stderr


def test_help_says_a_partial_result_is_exit_1(wmap: Wmap) -> None:
    result = wmap("--help")
    assert result.code == 0 and "a partial result: what could be read is still shown" in result.stdout
