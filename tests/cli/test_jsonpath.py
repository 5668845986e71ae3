"""kubectl's JSONPath subset (cli/render/jsonpath.py), custom columns and fitting a table into a terminal
(cli/render/columns.py), and the `-o NAME=VALUE` parsing of cli/render/templated.py. The expected texts are those
kubectl prints for the same templates (kubernetes.io/docs/reference/kubectl/jsonpath/)."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.cli.options import OutputSpec
from workload_map.cli.render.columns import column_cells, fit_table, parse_columns, parse_columns_file
from workload_map.cli.render.jsonpath import JSONPathError, compile_template
from workload_map.cli.render.templated import TEMPLATED, parse_format

DATA: dict[str, Any] = {
    "kind": "List",
    "count": 2,
    "items": [
        {
            "name": "llama",
            "namespace": "ml",
            "phase": "Running",
            "phases": ["Running", "Degraded"],
            "labels": {"app.kubernetes.io/name": "train", "team": "a"},
            "replicas": 5,
            "ready": True,
        },
        {"name": "etl", "namespace": "data", "phase": "Failed", "phases": ["Failed"], "replicas": 1, "ready": False},
    ],
}


def render(template: str, data: Any = DATA) -> str:
    return compile_template(template).render(data)


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("{.kind}", "List"),
        ("kind is {.kind}", "kind is List"),
        ("{$.kind}", "List"),
        ("{['kind']}", "List"),
        ("{.items[*].name}", "llama etl"),
        ("{.items[0].name}", "llama"),
        ("{.items[-1].name}", "etl"),
        ("{.items[0:1].name}", "llama"),
        ("{.items[::-1].name}", "etl llama"),
        ("{..phase}", "Running Failed"),
        ('{.items[?(@.phase=="Failed")].name}', "etl"),
        ('{.items[?(@.phase!="Failed")].name}', "llama"),
        ("{.items[?(@.replicas>2)].name}", "llama"),
        ("{.items[?(@.replicas<=1)].name}", "etl"),
        ("{.items[?(@.ready==true)].name}", "llama"),
        ("{.items[?(@.labels)].name}", "llama"),
        ("{.items[0].labels.app\\.kubernetes\\.io/name}", "train"),
        ("{.items[0].labels['app.kubernetes.io/name']}", "train"),
        ("{.items[*]['name','phase']}", "llama Running etl Failed"),
        ("{.items[0].phases}", '["Running","Degraded"]'),
        ("{.items[0].labels}", '{"app.kubernetes.io/name":"train","team":"a"}'),
        ("{.count}", "2"),
        ("{.items[0].ready}", "true"),
        ("{.kind,.count}", "List 2"),
        ('{range .items[*]}{.name}{"\\t"}{.phase}{"\\n"}{end}', "llama\tRunning\netl\tFailed\n"),
        ("{range .items[*]}[{$.kind}:{@.name}]{end}", "[List:llama][List:etl]"),
        ('{range .items[*]}{range .phases[*]}{@}{","}{end}{";"}{end}', "Running,Degraded,;Failed,;"),
        ('{"{"}literal{"}"}', "{literal}"),
        ("{.missing}{.items[5].name}{.kind.deeper}", ""),
    ],
)
def test_templates_print_what_kubectl_prints(template: str, text: str) -> None:
    assert render(template) == text


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{.items[", "unclosed action: '{' at character 1 has no '}'"),
        ("{range .items[*]}{.name}", "{range} at character 1 has no {end}"),
        ("{.name}{end}", "{end} without a {range} at character 8"),
        ("{range}x{end}", "{range} needs an expression, {range .items[*]}, at character 2"),
        ("{.items[abc]}", "invalid subscript [abc]"),
        ("{.items[::0]}", "a slice's step cannot be 0"),
        ("{.a.}", "a name is missing after '.' at character 5"),
        ("{.items[?(@.a=)]}", "expected ')', found '=' at character 14"),
        ("{.items[?(x)]}", "a filter compares @-paths"),
        ("{}", "empty action {} at character 1"),
        ('{"open}', "unclosed action"),
        ("{.a {.b}}", "unexpected '{' inside an action at character 5"),
        ("{.a b}", "unexpected 'b' at character 5"),
    ],
)
def test_a_bad_template_is_one_error_that_says_what_and_where(template: str, message: str) -> None:
    with pytest.raises(JSONPathError) as caught:
        compile_template(template)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_values_are_escaped_and_the_templates_own_text_is_not() -> None:
    data = {"name": "evil\x1b]0;title\x07", "other": "a\nb"}
    text = compile_template('{.name}{"\\n"}{.other}').render(data, escape=lambda s: s.encode("unicode_escape").decode())
    assert text == "evil\\x1b]0;title\\x07\na\\nb"


def test_a_huge_template_is_refused() -> None:
    with pytest.raises(JSONPathError, match="longer than"):
        compile_template("{.a}" * 3000)


# --- custom columns ---------------------------------------------------------------------------------------------


def test_custom_columns_take_kubectls_relaxed_expressions() -> None:
    columns = parse_columns("NAME:.name,NS:{.namespace},PHASE:phase,LABELS:.labels['team','x']")
    assert [c.header for c in columns] == ["NAME", "NS", "PHASE", "LABELS"]
    assert column_cells(DATA["items"][0], columns) == ["llama", "ml", "Running", "a"]
    assert column_cells(DATA["items"][1], columns) == ["etl", "data", "Failed", "<none>"]
    phases = parse_columns("ALL:.phases[*]")
    assert column_cells(DATA["items"][0], phases) == ["Running,Degraded"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "no columns given"),
        ("NAME", "column 1 is 'NAME', expected NAME:EXPRESSION"),
        ("NAME:.name,:.phase", "a column needs a header"),
        ("NAME:", "column 'NAME' needs an expression"),
        ("NAME:.items[", "column 'NAME': unclosed"),
    ],
)
def test_bad_custom_columns_name_the_column(spec: str, message: str) -> None:
    with pytest.raises(JSONPathError) as caught:
        parse_columns(spec)
    assert message in str(caught.value)


def test_a_custom_columns_file_is_headers_then_expressions() -> None:
    columns = parse_columns_file("NAME   PHASE\n.name  .phase\n", "cols.txt")
    assert [(c.header, c.expression) for c in columns] == [("NAME", ".name"), ("PHASE", ".phase")]
    with pytest.raises(JSONPathError, match=r"cols\.txt: 2 headers but 1 expressions"):
        parse_columns_file("NAME PHASE\n.name\n", "cols.txt")
    with pytest.raises(JSONPathError, match="has two lines"):
        parse_columns_file("NAME\n", "cols.txt")


# --- -o NAME=VALUE ------------------------------------------------------------------------------------------------


def test_output_spec_accepts_templated_formats_only_with_their_names() -> None:
    spec = OutputSpec("get", ("table", "json"), templated=TEMPLATED)
    assert spec.normalise("jsonpath={.items[*].name}") == "jsonpath={.items[*].name}"
    assert spec.normalise("custom-columns=A:.a") == "custom-columns=A:.a"
    assert spec.normalise("go-template={{.}}") is None
    assert spec.normalise("jsonpath") is None
    assert "jsonpath=..." in spec.describe()


def test_parse_format_reads_files_through_the_callers_reader() -> None:
    files = {"t.txt": "{.kind}", "c.txt": "NAME\n.name\n"}
    assert parse_format("table", files.__getitem__) is None
    printer = parse_format("jsonpath-file=t.txt", files.__getitem__)
    assert printer is not None and printer.template is not None and printer.template.render(DATA) == "List"
    columns = parse_format("custom-columns-file=c.txt", files.__getitem__)
    assert columns is not None and columns.cells(DATA["items"]) == [["NAME"], ["llama"], ["etl"]]
    with pytest.raises(JSONPathError, match="-o jsonpath= needs a value"):
        parse_format("jsonpath=", files.__getitem__)
    with pytest.raises(JSONPathError, match=r"^t\.txt: "):
        files["t.txt"] = "{.a"
        parse_format("jsonpath-file=t.txt", files.__getitem__)


# --- fitting a table ----------------------------------------------------------------------------------------------

TABLE = [
    ["NAME", "PHASE", "AGE", "PODS", "COMPONENTS", "ORIGIN"],
    ["llama-finetune", "Running", "5d", "5", "master(1),worker(4)", "catalog"],
    ["etl", "Failed", "2h", "9", "driver(1),workers(8)", "catalog"],
]


def width(rows: list[list[str]]) -> int:
    return sum(max(len(row[i]) for row in rows) for i in range(len(rows[0]))) + 3 * (len(rows[0]) - 1)


def test_a_table_that_fits_is_unchanged() -> None:
    assert fit_table(TABLE, 200, [5, 4, 3, 2]) == (TABLE, [])


def test_the_lowest_priority_columns_go_first_until_it_fits() -> None:
    rows, dropped = fit_table(TABLE, 45, [5, 4, 3, 2])
    assert dropped == [5, 4]
    assert rows[0] == ["NAME", "PHASE", "AGE", "PODS"]
    assert width(rows) <= 45


def test_when_dropping_is_not_enough_the_widest_cells_are_cut() -> None:
    rows, dropped = fit_table([["NAME", "PHASE"], ["a-very-long-workload-name-indeed", "Running"]], 25, [])
    assert dropped == []
    assert rows[1][0].endswith("...") and width(rows) <= 25
    assert rows[1][1] == "Running"
