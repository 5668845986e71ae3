"""`wmap get -o jsonpath=...`, `-o custom-columns=...` and their file forms against the real API server: the
template runs over the `-o json` document (the envelope, or the bare item for TYPE NAME), a bad template is exit 2
before any request, and piped output is never fitted to a width."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiServer
from .test_live_support import Wmap, create, jobset_body, wmap_requests

pytestmark = [pytest.mark.e2e]


@pytest.fixture
def two(api_server: ApiServer, make_namespace: Any) -> str:
    namespace = make_namespace("wmap-get-formats")
    create(api_server, jobset_body("alpha"), namespace=namespace)
    create(api_server, jobset_body("beta", labels={"team": "b"}), namespace=namespace)
    return namespace


def test_jsonpath_runs_over_the_json_document(wmap: Wmap, two: str) -> None:
    listed = json.loads(wmap.run("get", "jobsets", "-o", "json", namespace=two).stdout)
    names = sorted(item["name"] for item in listed["items"])
    result = wmap.run("get", "jobsets", "-o", "jsonpath={.items[*].name}", namespace=two)
    assert result.code == 0, result.stderr
    assert sorted(result.stdout.split()) == names == ["alpha", "beta"]
    ranged = wmap.run(
        "get", "jobsets", "-o", 'jsonpath={range .items[*]}{.name}{"\\t"}{.kind}{"\\n"}{end}', namespace=two
    )
    assert sorted(ranged.stdout.splitlines()) == ["alpha\tJobSet", "beta\tJobSet"]
    count = wmap.run("get", "jobsets", "-o", "jsonpath={.count}", namespace=two)
    assert count.stdout == "2"
    filtered = wmap.run("get", "jobsets", "-o", 'jsonpath={.items[?(@.name=="beta")].namespace}', namespace=two)
    assert filtered.stdout == two


def test_jsonpath_of_a_named_workload_runs_over_the_bare_item(wmap: Wmap, two: str) -> None:
    result = wmap.run("get", "jobset/alpha", "-o", "jsonpath={.name}/{.definition}", namespace=two)
    assert result.code == 0, result.stderr
    assert result.stdout == "alpha/jobset-x-k8s-io-jobset-v1alpha2"


def test_custom_columns_inline_and_from_a_file(wmap: Wmap, two: str, tmp_path: Path) -> None:
    result = wmap.run("get", "jobsets", "-o", "custom-columns=NAME:.name,KIND:.kind,NONE:.nothing", namespace=two)
    assert result.code == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[0] == ["NAME", "KIND", "NONE"]
    assert sorted(lines[1:]) == [["alpha", "JobSet", "<none>"], ["beta", "JobSet", "<none>"]]
    spec = tmp_path / "columns.txt"
    spec.write_text("NAME DEFINITION\n.name {.definition}\n", encoding="utf-8")
    from_file = wmap.run("get", "jobsets", "-o", f"custom-columns-file={spec}", "--no-headers", namespace=two)
    assert from_file.code == 0, from_file.stderr
    assert sorted(line.split() for line in from_file.stdout.splitlines()) == [
        ["alpha", "jobset-x-k8s-io-jobset-v1alpha2"],
        ["beta", "jobset-x-k8s-io-jobset-v1alpha2"],
    ]


def test_a_bad_template_is_exit_2_before_any_request(api_server: ApiServer, wmap: Wmap, two: str) -> None:
    mark = api_server.audit_mark()
    result = wmap.run("get", "jobsets", "-o", "jsonpath={.items[", namespace=two)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == "error: -o jsonpath: unclosed action: '{' at character 1 has no '}'"
    columns = wmap.run("get", "jobsets", "-o", "custom-columns=NAME", namespace=two)
    assert columns.code == 2
    assert "column 1 is 'NAME', expected NAME:EXPRESSION" in columns.stderr
    missing = wmap.run("get", "jobsets", "-o", "custom-columns-file=/nonexistent/cols", namespace=two)
    assert missing.code == 2 and "/nonexistent/cols" in missing.stderr
    assert wmap_requests(api_server, mark) == []


def test_piped_output_is_never_fitted_to_the_width(wmap: Wmap, two: str) -> None:
    wide = wmap.run("get", "jobsets", "-o", "wide", namespace=two, env={"COLUMNS": "40"})
    assert wide.code == 0, wide.stderr
    assert wide.stdout.splitlines()[0].split() == ["NAME", "PHASE", "AGE", "PODS", "GPU", "COMPONENTS", "ORIGIN"]
    assert wide.stderr == ""


def _on_a_terminal(wmap: Wmap, args: list[str], columns: int) -> tuple[str, str]:
    """`args` run by the installed executable with stdout on a pseudo-terminal `columns` wide (no $COLUMNS)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import termios

    from tests.cli.helpers import clean_env, executable

    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = clean_env(wmap.home, wmap.env(None))
    env.pop("COLUMNS", None)
    process = subprocess.Popen(
        [executable(), "--no-color", *wmap.args(args, None, None)], stdout=child, stderr=subprocess.PIPE, env=env
    )
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, stderr = process.communicate(timeout=60)
    os.close(main)
    return b"".join(chunks).decode().replace("\r\n", "\n"), stderr.decode()


def test_on_a_narrow_terminal_low_priority_columns_go_and_stderr_says_which(wmap: Wmap, two: str) -> None:
    # 60 columns, the least wmap lays text out in (a narrower terminal counts as 60)
    stdout, stderr = _on_a_terminal(wmap, ["get", "jobsets", "-o", "wide", "-n", two], 60)
    lines = stdout.splitlines()
    assert lines[0].split() == ["NAME", "PHASE", "AGE", "PODS", "GPU"]
    assert all(len(line) <= 60 for line in lines)
    assert stderr == "left out to fit 60 columns: ORIGIN, COMPONENTS\n"
    wide, _ = _on_a_terminal(wmap, ["get", "jobsets", "-o", "wide", "-n", two], 200)
    assert wide.splitlines()[0].split() == ["NAME", "PHASE", "AGE", "PODS", "GPU", "COMPONENTS", "ORIGIN"]
