"""The fast YAML reader (`workload_map.model.yaml_subset`, issue 19: start-up) against the PyYAML path it stands in
front of: for every text it either declines or gives exactly what that path gives (the same values and types, key
order, document split and indices). Checked on every YAML file of the repository and of ../shared/conformance, on
texts PyYAML's dumper writes from generated values, on texts generated from a small grammar of the tricky parts
(scalars YAML 1.1 resolves, quoting, block scalars, indentation, comments, markers), and on hostile inputs. Its twin
`safe_load` is checked against `yaml.safe_load` the same way.
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.model import pyyaml_reader, yaml_subset
from workload_map.model.yamlio import Document, DocumentError, parse_documents_each

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = REPO.parent / "shared" / "conformance"
CI = os.environ.get("CI") == "true"
SETTINGS = settings(
    max_examples=300 if CI else 400,
    deadline=None,
    derandomize=CI,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def same(left: Any, right: Any) -> bool:
    """Equal values of the same types, keys in the same order (`1`, `1.0` and `True` differ; so do 0.0 and -0.0)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return len(left) == len(right) and all(
            same(key_a, key_b) and same(value_a, value_b)
            for (key_a, value_a), (key_b, value_b) in zip(left.items(), right.items(), strict=True)
        )
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float):
        return repr(left) == repr(right)
    return bool(left == right)


def check(text: str) -> bool:
    """Whether the fast reader accepted `text`; fails when it gave anything but what the PyYAML path gives."""
    fast = yaml_subset.read_stream(text)
    if fast is None:
        return False
    slow = pyyaml_reader.parse_stream(text, "<text>")
    problems = [item.message for item in slow if isinstance(item, DocumentError)]
    assert not problems, f"accepted a text the PyYAML path refuses ({problems[0]}):\n{text}"
    assert [document.index for document in slow] == [index for index, _ in fast], text
    for (_, value), document in zip(fast, slow, strict=True):
        assert isinstance(document, Document)
        assert same(value, document.value), f"{value!r} != {document.value!r} for:\n{text}"
    return True


def check_safe_load(text: str) -> bool:
    """Whether `yaml_subset.safe_load` accepted `text`; fails when its value is not `yaml.safe_load`'s."""
    fast = yaml_subset.safe_load(text)
    if fast is None:
        return False
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError as error:  # pragma: no cover - a failure, reported
        pytest.fail(f"safe_load accepted a text yaml.safe_load refuses ({error}):\n{text}")
    assert same(fast[0], expected), f"{fast[0]!r} != {expected!r} for:\n{text}"
    return True


# --- every YAML file of the repository -----------------------------------------------------------------------------


def _yaml_files() -> Iterator[Path]:
    roots = [REPO / "examples", REPO / "tests", REPO / "src", REPO / "charts", REPO / "deploy", REPO / "docs"]
    if CONFORMANCE.is_dir():
        roots.append(CONFORMANCE)
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".yaml", ".yml") and path.is_file():
                yield path


# what every manifest of these must be: read without PyYAML (the common manifests, the catalog's definitions)
MUST_ACCEPT = [REPO / "examples", REPO / "src" / "workload_map" / "catalog" / "definitions", CONFORMANCE / "recordings"]


def test_every_yaml_file_of_the_repository_is_read_alike_or_declined() -> None:
    accepted: list[Path] = []
    declined: list[Path] = []
    for path in _yaml_files():
        text = path.read_text(encoding="utf-8")
        (accepted if check(text) else declined).append(path)
        if path.parent.name == "definitions" or "annotations" in text:
            for document in parse_documents_each(text, str(path)):
                if isinstance(document, Document) and isinstance(document.value, dict):
                    annotations = (document.value.get("metadata") or {}).get("annotations") or {}
                    for value in annotations.values() if isinstance(annotations, dict) else ():
                        if isinstance(value, str) and "\n" in value:
                            check_safe_load(value)
                            check(value)
    must = [path for path in declined if any(path.is_relative_to(root) for root in MUST_ACCEPT)]
    assert not must, f"declined: {[str(path.relative_to(REPO.parent)) for path in must]}"
    assert len(accepted) > 400, (len(accepted), len(declined))
    print(f"fast reader: {len(accepted)} files accepted, {len(declined)} declined")


# --- generated values, written by PyYAML's dumper ------------------------------------------------------------------

TRICKY_TEXTS = [
    "yes", "No", "ON", "off", "y", "n", "True", "FALSE", "0777", "0o17", "1_000", "0x1F", "0b101", "1e3", "1.0e+3",
    ".5", "-.5", "1.", "~", "null", "", " ", "it's", "\t\u00e9", "a: b", "a #b", "a#b", "key with spaces", "1:30",
    "2026-01-10", "2026-01-10T10:00:00Z", ".inf", "-", "- x", "? x", "&a", "*a", "!x", "%x", "@x", "`x", "'", '"',
    "<<", "=", "\\", "line\nbreak", "trailing\n", "\n\nleading", "  spaced  ", "x" * 130, "é日本\U0001f600",
    "\x85", "\u2028", "\x7f", "\x00", "#", "a: ", "{a: 1}", "[a]", "0", "-0", "+1", "00", "1__0", "0x_", "12:34:56",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.text(alphabet=string.ascii_letters + string.digits + " :#-_.'\"\\", max_size=12),
    st.sampled_from(TRICKY_TEXTS),
)
keys = st.one_of(st.text(max_size=10), st.sampled_from(TRICKY_TEXTS), st.integers(-5, 5), st.booleans(), st.none())
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(keys, children, max_size=5)),
    max_leaves=25,
)


@SETTINGS
@given(
    documents=st.lists(values, min_size=1, max_size=3),
    flow=st.sampled_from([False, None, True]),
    indent=st.sampled_from([2, 4]),
    sort_keys=st.booleans(),
    explicit_start=st.booleans(),
    explicit_end=st.booleans(),
    width=st.sampled_from([20, 80, 1000]),
    allow_unicode=st.booleans(),
    style=st.sampled_from([None, None, None, '"', "'", "|", ">"]),
)
def test_what_pyyaml_dumps_is_read_alike_or_declined(
    documents: list[Any],
    flow: bool | None,
    indent: int,
    sort_keys: bool,
    explicit_start: bool,
    explicit_end: bool,
    width: int,
    allow_unicode: bool,
    style: str | None,
) -> None:
    text = yaml.safe_dump_all(
        documents,
        default_flow_style=flow,
        indent=indent,
        sort_keys=sort_keys,
        explicit_start=explicit_start or len(documents) > 1,
        explicit_end=explicit_end,
        width=width,
        allow_unicode=allow_unicode,
        default_style=style,
    )
    check(text)
    if len(documents) == 1:
        check_safe_load(text)


def test_what_pyyaml_dumps_in_its_default_style_is_mostly_accepted() -> None:
    """The check above must not pass by declining everything: kubectl-like documents in block style are read."""
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "labels": {"app": "x", "tier": "1"}, "annotations": {"note": "a: b #c"}},
        "spec": {
            "parallelism": 4,
            "suspend": False,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "ghcr.io/x/y:1.0",
                            "args": ["--lr", "0.5", "yes", "", "multi\nline\n", "x" * 200 + " " + "y" * 50],
                            "resources": {"limits": {"nvidia.com/gpu": 8, "cpu": 1.5}},
                        }
                    ],
                    "tolerations": [],
                    "nodeSelector": {},
                }
            },
        },
        "status": None,
    }
    for indent in (2, 4):
        for width in (40, 80, 1000):
            block = yaml.safe_dump(manifest, default_flow_style=False, indent=indent, width=width, sort_keys=False)
            assert check(block), block
            check(yaml.safe_dump(manifest, indent=indent, width=width))  # leaves in flow style: may be declined


# --- generated texts: a small grammar of the tricky parts ----------------------------------------------------------

PLAIN_SCALARS = [
    "yes", "Yes", "YES", "no", "NO", "on", "On", "OFF", "true", "True", "TRUE", "false", "False", "y", "Y", "n",
    "0777", "0o17", "1_000", "0x1F", "0x_1f", "0b101", "0b_", "-0b1", "+0x_", "1e3", "1.0e+3", "1.0e3", "1.e-2",
    ".5", "-.5", "+.5", "1.", "0.", "-0.0", "+1", "-0", "00", "09", "0_", "1__0", "_1", "3.14_15", "~", "null",
    "Null", "NULL", "nULL", ".inf", "-.Inf", ".NaN", ".nan", "1e400", "1.0e+400", "1" * 4301, "0x" + "f" * 5000,
    "1:30", "-1:30", "2026-01-10", "2026-1-1", "12:34:56.5", "a#b", "a #b", "key with spaces", "é", "日本",
    "http://x:8080/y", "-x", "--flag=1", "a]", "a,b", "a{b}", "x'y", 'x"y', "=", "<<", "a: b", "a:", ":a", "?x",
    "%x", "@x", "`x", "!x", "&a x", "*a", "- x", "-", "[a, b]", "{a: 1}", "[]", "{}", "[a, [b, 1]]",
    "{a: {b: [c, 'd']}}", "[a, b,]", "{a: 1, a: 2}", "{a}", "[a: b]", '{"a":1}', "['x', \"y\\n\"]", "[yes, ~, 0x1]",
    "[a", "{a: 1", "[- a]", "[a#b]", "[a #b]", "{a: }", "{: a}", "[, a]",
]  # fmt: skip
QUOTED_SCALARS = [
    "''", '""', "'it''s'", "'a: b'", '"a: b"', '"\\t\\u00e9"', "'#x'", '"#x"', "'  spaced  '", '"\\x41\\u00e9"',
    '"\\U0001F600"', '"\\/"', "\"\\'\"", '"\\N\\_\\L\\P"', '"\\e\\a\\b\\v\\f\\r\\0"', '"\\ "', '"\\q"', '"\\x4"',
    '"\\ud800"', '"\\U00110000"', '"unterminated', "'x''", "'x' y", "'x'#c", "'x' #c", '"a\\\\"', "'yes'",
]  # fmt: skip
KEYS = [
    "a", "b", "c", "key with spaces", '"quoted"', "'single'", "1", "1.0", "yes", "null", "~", "<<", "a#b", "-k",
    "? k", "日本", "x.y/z", "a b", "'a'", '"a"', "k:x", "[k]", "{k: v}", "&k a", "*k", "!k a", "x" * 1030, "@k",
]  # fmt: skip


def _split(texts: list[str], template: str) -> tuple[list[str], list[str]]:
    """(the texts the reader accepts in `template`, the others): a generated text mostly draws the first, so that
    most texts are read (and compared), not declined; both are drawn."""
    accepted = [text for text in texts if yaml_subset.read_stream(template.format(text)) is not None]
    return accepted, [text for text in texts if text not in accepted]


GOOD_PLAIN, BAD_PLAIN = _split(PLAIN_SCALARS, "k: {}\n")
GOOD_QUOTED, BAD_QUOTED = _split(QUOTED_SCALARS, "k: {}\n")
GOOD_KEYS, BAD_KEYS = _split(KEYS, "{}: v\n")


def _pick(draw: st.DrawFn, good: list[str], bad: list[str]) -> str:
    return draw(st.sampled_from(bad if bad and draw(st.sampled_from([False] * 39 + [True])) else good))


@st.composite
def _scalar_line(draw: st.DrawFn) -> list[str]:
    """A scalar as source lines: the first goes after `key: ` or `- `, the others are continuations (their
    indentation relative to the parent, before it is added)."""
    kind = draw(st.sampled_from(["plain", "plain", "quoted", "multi", "block"]))
    if kind == "plain":
        text = _pick(draw, GOOD_PLAIN, BAD_PLAIN)
        if draw(st.booleans()):
            text += _pick(draw, ["", " ", "  # comment", " #"], ["#x"])
        return [text]
    if kind == "quoted":
        return [_pick(draw, GOOD_QUOTED, BAD_QUOTED) + draw(st.sampled_from(["", " ", " # c"]))]
    good_pieces = ["word", "two words", "a#c", "x - y", "yes", "", "1", "  more", "é", "#c"]
    bad_pieces = ["a: b", "a #c", "- x", "x:", "'", '"', "\\", "\t"]
    if kind == "multi":
        opener = draw(st.sampled_from(["first", "'first", '"first', '"first\\', "'it''s", "first #c"]))
        lines = [opener]
        for _ in range(draw(st.integers(1, 3))):
            lines.append(draw(st.sampled_from([" ", "  ", "   ", "", "  \\ "])) + _pick(draw, good_pieces, bad_pieces))
        if opener[0] in "'\"" and draw(st.booleans()):
            lines[-1] += opener[0]
        return lines
    header = _pick(draw, ["|", "|-", "|+", ">", ">-", ">+", "| # c"], ["|2", "|x", ">\t", "|-+"])
    lines = [header]
    for _ in range(draw(st.integers(0, 5))):
        lines.append(draw(st.sampled_from(["  ", "  ", "   ", "    ", ""])) + _pick(draw, good_pieces, bad_pieces))
    return lines


@st.composite
def _node(draw: st.DrawFn, depth: int) -> tuple[str, list[str]]:
    """("scalar", lines of a scalar) or ("block", lines of a collection at indent 0)."""
    if depth >= 4 or draw(st.integers(0, 9 if depth == 0 else 2)) == 1:
        return "scalar", draw(_scalar_line())
    decorate = ["", "", "# comment", "  # comment", "   ", "  #", "#"]
    lines: list[str] = []
    if draw(st.booleans()):
        for number in range(draw(st.integers(1, 4))):
            key = _pick(draw, GOOD_KEYS, BAD_KEYS) if draw(st.booleans()) else f"k{number}"
            space = _pick(draw, [" ", " ", "  "], [""])
            kind, child = draw(_node(depth + 1))
            step = " " * draw(st.sampled_from([1, 2, 2, 4]))
            if kind == "scalar":
                lines.append(f"{key}:{space}{child[0]}")
                lines.extend(step + line for line in child[1:])
            elif draw(st.booleans()) and child and child[0].startswith("-"):
                lines.append(f"{key}:")  # a sequence at the key's indent
                lines.extend(child)
            else:
                lines.append(f"{key}:" + draw(st.sampled_from(["", " ", " # c"])))
                lines.extend(step + line if line else line for line in child)
            if draw(st.integers(0, 4)) == 0:
                lines.append(_pick(draw, decorate, ["\t", " \t", "x"]))
    else:
        for _ in range(draw(st.integers(1, 4))):
            kind, child = draw(_node(depth + 1))
            dash = draw(st.sampled_from(["- ", "- ", "-  ", "-"]))
            step = " " * draw(st.sampled_from([2, 2, 1, 3]))
            if kind == "scalar":
                lines.append(dash + child[0])
                lines.extend(step + line for line in child[1:])
            elif draw(st.booleans()):  # `- key: v` / `- - a`: the child starts on the dash's line
                lines.append("- " + child[0])
                lines.extend("  " + line if line else line for line in child[1:])
            else:
                lines.append("-")
                lines.extend(step + line if line else line for line in child)
            if draw(st.integers(0, 4)) == 0:
                lines.append(_pick(draw, decorate, ["\t", " \t", "x"]))
    return "block", lines


@st.composite
def grammar_texts(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for number in range(draw(st.integers(1, 3))):
        if number == 0:
            marker = _pick(draw, ["", "", "---", "--- # c"], ["---x", "--- a", "%YAML 1.1\n---", "..."])
        else:
            marker = _pick(draw, ["---", "---", "--- # c", "...\n---", "---\n---"], ["...", "--- |"])
        if marker:
            parts.append(marker)
        _, lines = draw(_node(0))
        base = " " * draw(st.sampled_from([0, 0, 0, 1, 2]))
        parts.extend(base + line if line else line for line in lines)
    ending = draw(st.sampled_from(["\n", "\n", "", "\n\n", "\n...\n", "\n# end\n"]))
    return "\n".join(parts) + ending


@SETTINGS
@given(grammar_texts())
def test_generated_texts_are_read_alike_or_declined(text: str) -> None:
    check(text)
    check_safe_load(text)


@SETTINGS
@given(st.sampled_from(KEYS), st.lists(st.sampled_from(PLAIN_SCALARS + QUOTED_SCALARS), min_size=1, max_size=4))
def test_each_scalar_as_a_value_a_key_and_a_flow_item(key: str, texts: list[str]) -> None:
    for text in texts:
        check(f"{key}: {text}\n")
        check(f"- {text}\n")
        check(f"{text}: v\n")
        check_safe_load(f"{key}: {text}\n")
    check("[" + ", ".join(texts) + "]\n")
    check("{" + ", ".join(f"k{number}: {text}" for number, text in enumerate(texts)) + "}\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: yes\nb: 0777\nc: 1_000\nd: 0x1F\ne: 1e3\nf: .5\ng: ~\nh: ''\ni: 'it''s'\n",
         [{"a": True, "b": 511, "c": 1000, "d": 31, "e": "1e3", "f": 0.5, "g": None, "h": "", "i": "it's"}]),
        ('a: "\\t\\u00e9"\nb: "x: y"\nc: a#b\nd: a #b\nkey with spaces: v\ne:\n', [
            {"a": "\t\u00e9", "b": "x: y", "c": "a#b", "d": "a", "key with spaces": "v", "e": None}]),
        ("a:\n- x\n- - y\n  - z\n- k: v\n  l: w\nb: 1\n", [{"a": ["x", ["y", "z"], {"k": "v", "l": "w"}], "b": 1}]),
        ("a: |\n  x\n   y\n\n  z\n\nb: >-\n  p\n  q\n\n  r\n", [{"a": "x\n y\n\nz\n", "b": "p q\nr"}]),
        ("a: [x, \"y\", 1, [], {}]\nb: {k: 1, l: [m]}\n", [{"a": ["x", "y", 1, [], {}], "b": {"k": 1, "l": ["m"]}}]),
        ("# c\n---\na: 1\n---\n---\nb: 2\n...\n", [{"a": 1}, {"b": 2}]),
        ("message: a long\n  message\n\n  over lines\nq: 'x\n  y'\n", [{"message": "a long message\nover lines",
                                                                      "q": "x y"}]),
    ],
)  # fmt: skip
def test_the_subset_reads_what_manifests_use(text: str, expected: list[Any]) -> None:
    assert check(text)
    assert [item.value if isinstance(item, Document) else item for item in parse_documents_each(text)] == expected


def test_document_indices_count_empty_documents() -> None:
    text = "---\n---\na: 1\n---\n~\n---\nb: 2\n...\n---\n"
    assert check(text)
    assert [(item.index, item.value) for item in parse_documents_each(text) if isinstance(item, Document)] == [
        (1, {"a": 1}),
        (3, {"b": 2}),
    ]


# --- what it declines, and the errors that then come from the PyYAML path ------------------------------------------

DECLINED = [
    "a: &x 1\nb: *x\n", "a: !tag x\n", "? a\n: b\n", "%YAML 1.1\n---\na: 1\n", "a:\n\tb: 1\n", "\ufeffa: 1\n",
    "a: b\r\n", "<<: {a: 1}\n", "a: 1\na: 2\n", "a: .inf\n", "a: .nan\n", "a: 1.0e+400\n", "a: " + "1" * 5000 + "\n",
    "a: [b, [c\n", "a: 'x\n", 'a: "x\n', "a: |2\n   x\n", "a: \x85\n", "- " * 200 + "x\n", "a: 1\n...\nb: 2\n",
    "a: {\"" + "k" * 1030 + "\": 1}\n", "é" * 1030 + ": 1\n",
    "--- |\n  x\n", "a: b: c\n", "a:\n  - b\n  c: d\n", "a: 2026-01-10T10:00:00Z\n", "x" * 1100 + ": 1\n",
]  # fmt: skip


@pytest.mark.parametrize("text", DECLINED)
def test_what_it_declines_is_left_to_the_pyyaml_path(text: str) -> None:
    assert yaml_subset.read_stream(text) is None or check(text)
    assert [_describe(item) for item in parse_documents_each(text, "f.yaml")] == [
        _describe(item) for item in pyyaml_reader.parse_stream(text, "f.yaml")
    ]


def _describe(item: Document | DocumentError) -> tuple[Any, ...]:
    if isinstance(item, DocumentError):
        return ("error", item.index, str(item))
    return ("document", item.index, item.value)


def test_errors_name_the_document_and_line_as_before() -> None:
    text = "a: 1\n---\nkind: Job\nmetadata:\n  name: x\n  name: y\n---\nb: [1, 2\n---\nc: 3\n"
    results = parse_documents_each(text, "f.yaml")
    assert [str(item) if isinstance(item, DocumentError) else item.value for item in results] == [
        {"a": 1},
        "f.yaml (document 2): invalid YAML at line 6, column 3: duplicate key 'name'; remove one of them",
        "f.yaml (document 3): invalid YAML at line 9, column 1: did not find expected ',' or ']'",
        {"c": 3},
    ]


# --- hostile inputs: a decline or the same result, in time linear in the text --------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "- " * 5_000_000,  # 10 MB of `- `: nested past the depth bound
        "- \n" * 1_000_000,  # a flat list of nulls
        "[" * 100_000 + "]" * 100_000,
        "a: [" + "x, " * 1_000_000 + "x]\n",
        "a: 'unterminated" + " x" * 1_000_000,
        'a: "unterminated' + "\\t" * 1_000_000,
        "a:\n" + "".join(" " * depth + f"k{depth}:\n" for depth in range(1, 2000)),
        "a: |\n" + "  line\n" * 500_000,
        ("x: 1\n" * 3 + "---\n") * 100_000,
    ],
    ids=["dashes", "nulls", "brackets", "wide-flow", "single-quote", "double-quote", "deep-keys", "block", "stream"],
)
def test_hostile_inputs_are_declined_or_read(text: str) -> None:
    fast = yaml_subset.read_stream(text)
    if fast is not None:
        assert len(text) < 20_000_000
        if len(text) < 300_000:
            check(text)


def test_a_document_over_the_node_bound_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_subset, "MAX_EXPANDED_NODES", 100)  # the bound it reads, made small
    assert yaml_subset.read_stream("- 1\n" * 99) == [(0, [1] * 99)]
    assert yaml_subset.read_stream("- 1\n" * 100) is None  # 100 items and their list
    assert yaml_subset.read_stream("- 1\n" * 99 + "---\n" + "- 1\n" * 99) is not None  # the bound is per document
