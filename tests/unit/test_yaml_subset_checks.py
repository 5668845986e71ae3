"""The YAML subset reader's cheap checks (issue 19, start-up) decide exactly as the patterns they stand in for:
the ASCII check of unusual characters as `_UNUSUAL`, the plain-decimal shortcut as `_INT` and `_int`; and an ASCII
manifest is read without compiling `_UNUSUAL` (3-4 ms), `_INT` or `_FLOAT`."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_map.model import yaml_subset

REPO = Path(__file__).resolve().parents[2]


def _by_pattern(text: str) -> bool:
    return re.search(yaml_subset._UNUSUAL.source, text) is not None


def test_every_ascii_character_is_judged_as_the_pattern_judges_it() -> None:
    for code in range(128):
        for text in (chr(code), f"a: b{chr(code)}\n", f"{chr(code)}\nk: v"):
            assert yaml_subset._unusual(text) is _by_pattern(text), (code, text)
    assert yaml_subset._unusual("") is False


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_texts(text: str) -> None:
    assert yaml_subset._unusual(text) is _by_pattern(text)


@given(st.text())
def test_any_text(text: str) -> None:
    assert yaml_subset._unusual(text) is _by_pattern(text)


def _as_the_patterns_resolve(text: str) -> object:
    # what `_plain` did for a scalar starting like a number before its shortcuts: both patterns asked
    if yaml_subset._FLOAT.match(text):
        return yaml_subset._float(text)
    if yaml_subset._INT.match(text):
        return yaml_subset._int(text)
    return text


def _outcome(resolve: Callable[[str], object], text: str) -> tuple[str, object]:
    try:
        value = resolve(text)
    except yaml_subset._NotInSubsetError:
        return ("declined", None)
    return (type(value).__name__, "nan" if value != value else value)


@given(st.from_regex(r"\A[-+0-9.][0-9_+\-.xXbBoOeEGinfaANF=:~ ]{0,12}\Z"))
def test_numbers_resolve_as_the_patterns_resolve_them(text: str) -> None:
    assert _outcome(yaml_subset._plain, text) == _outcome(_as_the_patterns_resolve, text), text


def test_numbers_with_the_shortcut_and_without() -> None:
    for text in (
        "1",
        "42",
        "0",
        "00",
        "07",
        "08",
        "0x1F",
        "1_000",
        "+1",
        "-1",
        "1.5",
        "16Gi",
        "--nnodes=5",
        "9" * 5000,
    ):
        assert _outcome(yaml_subset._plain, text) == _outcome(_as_the_patterns_resolve, text), text


@pytest.mark.parametrize(("example", "kind"), [("pytorchjob.yaml", "PyTorchJob"), ("jobset.yaml", "JobSet")])
def test_an_ascii_manifest_compiles_no_pattern(example: str, kind: str) -> None:
    # the JobSet's `backoffLimit: 0`: a lone 0 is a plain decimal too
    code = (
        "import sys\n"
        "from workload_map.model import yaml_subset\n"
        "docs = yaml_subset.read_stream(open(sys.argv[1]).read())\n"
        "assert docs and docs[0][1]['kind'] == sys.argv[2]\n"
        "print(sorted(p for p in ('_UNUSUAL', '_INT', '_FLOAT') if 'compiled' in vars(getattr(yaml_subset, p))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "examples" / example), kind],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"
    # and a text with a non-ASCII character still goes through the pattern
    assert yaml_subset.read_stream("k: caf\u00e9\n") == [(0, {"k": "caf\u00e9"})]
    assert yaml_subset.read_stream("k: a\u2028b\n") is None
