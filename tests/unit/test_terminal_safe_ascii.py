"""The terminal-safety checks answer an ASCII text without their patterns (issue 19, start-up), and decide exactly
as the patterns do: `cli.safe.safe_text` (C0 controls, DEL, C1, separators, bidi overrides, BOM, surrogates) and
the JSON writer's escape (`cli.render.machine`: DEL, C1, separators, bidi overrides)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from workload_map.cli import safe
from workload_map.cli.render import machine

REPO = Path(__file__).resolve().parents[2]


def _safe_text_by_pattern(text: str) -> str:
    return re.sub(safe._UNSAFE.source, safe._escape, text)


def _json_escape_by_pattern(text: str) -> str:
    return re.sub(machine._TERMINAL_UNSAFE.source, lambda match: f"\\u{ord(match.group()):04x}", text)


def test_every_ascii_character() -> None:
    for code in range(128):
        for text in (chr(code), f"ab{chr(code)}cd", f"{chr(code)}\n{chr(code)}"):
            assert safe.safe_text(text, None) == _safe_text_by_pattern(text), code
            assert machine._escape_unsafe(text) == _json_escape_by_pattern(text), code
    assert machine.to_json({"k": "a\x7fb"}) == '{\n  "k": "a\\u007fb"\n}\n'
    assert safe.safe_text("a\x1b[31mb", None) != "a\x1b[31mb"


@given(st.text())
def test_any_text(text: str) -> None:
    assert safe.safe_text(text, None) == _safe_text_by_pattern(text)
    assert machine._escape_unsafe(text) == _json_escape_by_pattern(text)


def test_describe_as_json_compiles_neither_pattern() -> None:
    code = (
        "import io, json, sys\n"
        "from workload_map.cli import safe\n"
        "from workload_map.cli.render import machine\n"
        "from workload_map.cli.main import run\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        "run(['describe', '-f', sys.argv[1], '-o', 'json'])\n"
        "view, sys.stdout = sys.stdout.getvalue(), out\n"
        "print(json.dumps([json.loads(view)['kind'],\n"
        "    'compiled' in vars(safe._UNSAFE), 'compiled' in vars(machine._TERMINAL_UNSAFE)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "examples" / "pytorchjob.yaml")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == ["PyTorchJob", False, False]
