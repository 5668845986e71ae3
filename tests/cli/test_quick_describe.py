"""The run without click (`workload_map.cli.quick`) against click's: `wmap describe -f FILE [-o FORMAT]` must give
the same stdout, stderr and exit code byte for byte whichever path runs it, and every other command line must go to
click. Each case runs twice in this process, `quick_path=True` and `quick_path=False` (`cli.main.run`).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.cli.helpers import EXAMPLES, REPO, Result, clean_env, environment, write
from workload_map.cli import quick
from workload_map.cli.commands import describe as describe_command
from workload_map.cli.commands.describe_files import DescribeArgs
from workload_map.cli.option_values import ConnectionOptions

CONFORMANCE = REPO.parent / "shared" / "conformance" / "manifests"
MANIFESTS = sorted(EXAMPLES.glob("*.yaml")) + sorted(CONFORMANCE.glob("*.yaml"))


def _run(args: Sequence[str], home: Path, *, quick_path: bool, stdin: str, env: Mapping[str, str]) -> Result:
    from workload_map.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        with environment(clean_env(home, env)):
            code = run(list(args), prog_name="wmap", quick_path=quick_path)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(code, out.getvalue(), err.getvalue())


def _both(args: Sequence[str], home: Path, *, stdin: str = "", env: Mapping[str, str] | None = None) -> Result:
    """Run `args` on both paths; assert they agree and that the quick path was the one taken."""
    with environment(clean_env(home, env)):
        assert quick.describe_args(args) is not None, f"{args} did not take the quick path"
    fast = _run(args, home, quick_path=True, stdin=stdin, env=env or {})
    slow = _run(args, home, quick_path=False, stdin=stdin, env=env or {})
    assert (fast.code, fast.stdout, fast.stderr) == (slow.code, slow.stdout, slow.stderr)
    return fast


def test_the_manifests_are_there() -> None:
    assert len(MANIFESTS) >= 20  # the five examples and the conformance manifests


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda path: path.name)
@pytest.mark.parametrize("fmt", ["json", "yaml", "tree"])
def test_every_manifest_reads_the_same_on_both_paths(path: Path, fmt: str, tmp_path: Path) -> None:
    result = _both(["describe", "-f", str(path), "-o", fmt], tmp_path)
    assert result.stdout  # a view, or the machine error object of an uncovered kind


@pytest.mark.parametrize(
    "shape",
    [
        ["-f", "{p}"],
        ["-f{p}"],
        ["--filename", "{p}", "-o", "json"],
        ["--filename={p}", "--output=yaml"],
        ["--file", "{p}", "-ojson"],
        ["--file={p}", "--output", "table"],
        ["-o", "json", "-f", "{p}"],
    ],
    ids=" ".join,
)
def test_every_accepted_spelling(shape: list[str], tmp_path: Path) -> None:
    path = str(EXAMPLES / "jobset.yaml")
    result = _both(["describe", *(word.replace("{p}", path) for word in shape)], tmp_path)
    assert result.code == 0 and result.stdout


def test_several_files_and_a_directory(tmp_path: Path) -> None:
    first, second = str(EXAMPLES / "jobset.yaml"), str(EXAMPLES / "raycluster.yaml")
    assert _both(["describe", "-f", first, "-f", second, "-o", "json"], tmp_path).code == 0
    assert _both(["describe", "-f", str(EXAMPLES), "-o", "yaml"], tmp_path).code == 0
    assert _both(["describe", "-f", str(EXAMPLES)], tmp_path).code == 0


BAD_INPUTS = {
    "bad-yaml": "kind: [unclosed\n",
    "empty": "",
    "unknown-kind": "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\nspec: {template: {spec: "
    "{containers: [{name: c, image: i}]}}}\n",
    "not-a-mapping": "- a\n- b\n",
    "no-kind": "metadata: {name: x}\n",
    "stream-with-a-bad-document": (EXAMPLES / "jobset.yaml").read_text() + "\n---\nkind: [unclosed\n",
    "stream-of-others": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Service\n"
    "metadata: {name: s}\n",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.parametrize("fmt", ["json", "tree"])
def test_bad_inputs_fail_the_same_way(name: str, fmt: str, tmp_path: Path) -> None:
    path = write(tmp_path / "in" / f"{name}.yaml", BAD_INPUTS[name])
    result = _both(["describe", "-f", path, "-o", fmt], tmp_path)
    assert result.code != 0 or result.stderr


def test_a_missing_file_and_a_directory_without_manifests(tmp_path: Path) -> None:
    assert _both(["describe", "-f", str(tmp_path / "missing.yaml")], tmp_path).code != 0
    (tmp_path / "nothing").mkdir()
    assert _both(["describe", "-f", str(tmp_path / "nothing"), "-o", "json"], tmp_path).code != 0


def test_stdin(tmp_path: Path) -> None:
    manifest = (EXAMPLES / "pytorchjob.yaml").read_text()
    assert _both(["describe", "-f", "-", "-o", "json"], tmp_path, stdin=manifest).code == 0
    assert _both(["describe", "-f", "-"], tmp_path, stdin="kind: [unclosed\n").code == 2
    assert _both(["describe", "-f", "-", "-f", "-"], tmp_path, stdin=manifest).code == 2


@pytest.mark.parametrize(
    "env",
    [
        {"WMAP_OUTPUT": "yaml"},
        {"WMAP_OUTPUT": "wide"},
        {"WMAP_JQ_MODE": "worker"},
        {"WMAP_JQ_MODE": "bogus"},
        {"WMAP_JQ_DEADLINE": "-1"},
        {"WMAP_JQ_MEMORY_MB": "lots"},
        {"WMAP_JQ_BUDGET": "0"},
        {"NO_COLOR": "1", "FORCE_COLOR": "1"},
        {"FORCE_COLOR": "1"},
    ],
    ids=lambda env: ",".join(f"{k}={v}" for k, v in env.items()),
)
def test_the_environment_is_read_the_same_way(env: dict[str, str], tmp_path: Path) -> None:
    _both(["describe", "-f", str(EXAMPLES / "pytorchjob.yaml")], tmp_path, env=env)


# --- what goes to click -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["describe"],
        ["describe", "-f"],
        ["describe", "-h"],
        ["describe", "--help"],
        ["describe", "-f", "x.yaml", "--pod-limit", "2"],
        ["describe", "-f", "x.yaml", "--definitions", "d.yaml"],
        ["describe", "-f", "x.yaml", "-o", "wide"],
        ["describe", "-f", "x.yaml", "-o", "json", "-o", "yaml"],
        ["describe", "-f", "x.yaml", "-o"],
        ["describe", "-f", "x.yaml", "--output="],
        ["describe", "-f", ""],
        ["describe", "--filename="],
        ["describe", "-f", "-o", "json"],
        ["describe", "-f", "x.yaml", "--"],
        ["describe", "-f", "x.yaml", "jobsets/x"],
        ["describe", "jobsets/x"],
        ["--debug", "describe", "-f", "x.yaml"],
        ["--no-color", "describe", "-f", "x.yaml"],
        ["get", "-f", "x.yaml"],
        ["describe", "-f", "x.yaml", "--filenames", "y.yaml"],
        ["describe", "-f", "x.yaml", "-o=json"],
    ],
    ids=lambda argv: " ".join(argv) or "(empty)",
)
def test_other_command_lines_go_to_click(argv: list[str], tmp_path: Path) -> None:
    with environment(clean_env(tmp_path)):
        assert quick.describe_args(argv) is None


def test_a_config_file_or_a_completion_call_goes_to_click(tmp_path: Path) -> None:
    argv = ["describe", "-f", "x.yaml"]
    with environment(clean_env(tmp_path)):
        assert quick.describe_args(argv) is not None
    config = write(tmp_path / ".config" / "wmap" / "config.yaml", "output: yaml\n")
    with environment(clean_env(tmp_path)):
        assert quick.describe_args(argv) is None
    os.remove(config)
    for env in ({"WMAP_CONFIG": str(tmp_path / "other.yaml")}, {"_WMAP_COMPLETE": "bash_complete"}):
        with environment(clean_env(tmp_path, env)):
            assert quick.describe_args(argv) is None


def test_an_unreadable_file_goes_to_click(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # click.Path() refuses a file that exists but cannot be read; root may read anything, so os.access answers here
    path = write(tmp_path / "x.yaml", "kind: Pod\n")
    monkeypatch.setattr(os, "access", lambda name, mode: name != path)
    with environment(clean_env(tmp_path)):
        assert quick.describe_args(["describe", "-f", path]) is None
        assert quick.describe_args(["describe", "-f", str(tmp_path / "missing.yaml")]) is not None


# --- the values are click's ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["describe", "-f", "a.yaml"],
        ["describe", "-f", "a.yaml", "--file", "b.yaml", "-o", "yaml"],
        ["describe", "--filename=a.yaml", "-otable"],
        ["describe", "-f", "-", "--output=json"],
    ],
    ids=" ".join,
)
def test_the_quick_path_passes_what_click_passes(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workload_map.cli.root import cli

    given: list[DescribeArgs] = []
    monkeypatch.setattr(describe_command, "describe_run", given.append)
    with environment(clean_env(tmp_path)):
        expected = quick.describe_args(argv)
        cli.main(args=argv, prog_name="wmap", standalone_mode=False)
    assert given == [expected]
    assert expected is not None and expected.connection == ConnectionOptions()
