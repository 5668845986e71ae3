"""`workloadmap.io/groups` (docs/definitions.md "Extensions", docs/cli.md "Tree names"): instances of a component
shown under a heading of their own, as the built-in Grove definition shows a scaling group over its cliques."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import yaml

from tests.cli.helpers import REPO, invoke, write
from tests.cli.test_tree_shape import node, view
from workload_map import load_definitions, validate
from workload_map.cli.render.shape import Group, shape, table_names, walk
from workload_map.view import Replicas

GROVE = REPO / "tests" / "fixtures" / "catalog" / "grove-io-podcliqueset-v1alpha1"
GROVE_DEFINITION = REPO / "src" / "workload_map" / "catalog" / "definitions" / "grove-io-podcliqueset-v1alpha1.yaml"


CLIQUES = ["decode", "frontend", "pleader", "pworker"]


def test_grouped_instances_go_under_one_heading_where_the_first_stood_with_their_figures_summed() -> None:
    cliques = [node(name, component="clique", instance=name, desired=2) for name in CLIQUES]
    tree = view(node("clique", *cliques))
    group = Group("prefill", copies=2)
    rows = shape(tree, groups={("clique", "pleader"): group, ("clique", "pworker"): group})
    assert [(row.name, [child.name for child in row.children]) for row in rows] == [
        ("decode", []),
        ("frontend", []),
        ("prefill", ["pleader", "pworker"]),
    ]
    heading = rows[2]
    assert heading.node.replicas == Replicas(desired=4)
    assert heading.node.resources.gpus == 2 and heading.node.resources.requests == {"nvidia.com/gpu": Fraction(2)}
    assert heading.node.grouping  # a grouping row: the resources table leaves it out
    assert heading.multiplicity == "2 x 2 pods"
    assert [row.parent_name for row in heading.children] == ["prefill", "prefill"]
    assert set(table_names(rows).values()) >= {"pleader", "pworker"}
    assert [row.name for row in walk(shape(tree))] == CLIQUES  # no groups: as before


def test_the_grove_tree_shows_its_scaling_group_over_its_cliques(tmp_path: Path) -> None:
    result = invoke(["describe", "-f", str(GROVE / "workload.yaml")], home=tmp_path)
    assert result.code == 0, result.output
    lines = result.stdout.splitlines()
    assert "`-- prefill       replicas: 4 (2 x 2 pods)   gpu: 16" in lines
    assert "    |-- pleader   replicas: 2                gpu: 8" in lines
    table = lines[lines.index("Resources:") :]
    assert not any(line.startswith("prefill") for line in table)  # a heading, not a row of the table


def _grove_with_groups(tmp_path: Path, value: str) -> str:
    definition = yaml.safe_load(GROVE_DEFINITION.read_text(encoding="utf-8"))
    definition["metadata"]["annotations"]["workloadmap.io/groups"] = value
    return write(tmp_path / "grove.yaml", yaml.safe_dump(definition, sort_keys=False))


def test_groups_that_do_not_give_one_value_per_instance_are_a_warning_and_group_nothing(tmp_path: Path) -> None:
    manifest = str(GROVE / "workload.yaml")
    for value in ('{"clique": "\\"prefill\\""}', '{"clique": ".spec.template.cliques[] | 7"}'):
        local = _grove_with_groups(tmp_path, value)
        result = invoke(["describe", "-f", manifest, "--definitions", local], home=tmp_path)
        assert result.code == 0, result.output
        assert "prefill " not in result.stdout
        assert "the tree groups no instance of clique" in result.stderr, value


def test_malformed_groups_are_validation_errors(tmp_path: Path) -> None:
    cases = {
        "[1]": ("error", "groups"),
        '{"clique": ".spec | ("}': ("error", "groups"),
        '{"nope": "null"}': ("warning", "groups-component"),
    }
    for value, wanted in cases.items():
        karta = load_definitions(_grove_with_groups(tmp_path, value))[0]
        assert [(f.severity, f.rule) for f in validate(karta) if f.rule.startswith("groups")] == [wanted], value
