"""The tree renderer on live views (pods, readiness, nodes) and its limits (kli-cli §4.6-4.8), plus the small
formatters. Live views come from the view tests' PyTorchJob with operator-labelled pods."""

from __future__ import annotations

import datetime
from fractions import Fraction

import pytest

from tests.unit.test_view import pytorchjob_view
from workload_map.cli.render.fmt import (
    accelerator_labels,
    accelerators_text,
    age,
    cpu_text,
    human_duration,
    memory_text,
)
from workload_map.cli.render.text import align, plain, seg
from workload_map.cli.render.tree import TreeOptions, render_workload
from workload_map.resources import parse_quantity

NOW = datetime.datetime(2026, 10, 1, 10, 0, tzinfo=datetime.timezone.utc)


def text(lines: list) -> list[str]:  # type: ignore[type-arg]
    return [plain(line).rstrip() for line in lines]


def tree_part(lines: list[str]) -> list[str]:
    start = lines.index("") + 1
    return lines[start : lines.index("", start)]


def test_live_tree_shows_ready_counts_pods_with_reasons_and_nodes() -> None:
    lines = text(render_workload(pytorchjob_view(worker_reason="Unschedulable"), TreeOptions(now=NOW)))
    assert lines[0] == "PyTorchJob/llama-finetune   namespace: ml-team"
    assert lines[1] == "definition: kubeflow-org-pytorchjob-v1 (catalog)   age: 120m"
    assert tree_part(lines) == [
        "|-- master                        1/1 ready                 gpu: 1    node-01",
        "|   `-- llama-finetune-master-0   Running                   gpu: 1    node-01",
        "`-- worker                        3/4 ready                 gpu: 32   node-02,node-03,node-04",
        "    |-- llama-finetune-worker-0   Running                   gpu: 8    node-02",
        "    |-- llama-finetune-worker-1   Running                   gpu: 8    node-03",
        "    |-- llama-finetune-worker-2   Running                   gpu: 8    node-04",
        "    `-- llama-finetune-worker-3   Pending (Unschedulable)   gpu: 8    <none>",
    ]
    assert any(line.startswith("Phase: Running") for line in lines)
    assert lines[-1].split() == ["TOTAL", "5", "33", "20", "80Gi"]


def test_pod_limit_keeps_the_unhealthy_pod_and_says_what_it_hid() -> None:
    lines = text(render_workload(pytorchjob_view(worker_reason="Unschedulable"), TreeOptions(pod_limit=1, now=NOW)))
    assert tree_part(lines)[-2:] == [
        "    |-- llama-finetune-worker-3   Pending (Unschedulable)          gpu: 8    <none>",
        "    `-- ...                       and 3 more (1 unhealthy shown)",
    ]


def test_pod_limit_counts_unhealthy_pods_that_did_not_fit() -> None:
    view = pytorchjob_view(worker_reason="CrashLoopBackOff")
    lines = tree_part(text(render_workload(view, TreeOptions(pod_limit=3, now=NOW))))
    assert lines[-1] == "    `-- ...                       and 1 more (1 unhealthy shown)"
    assert not any("and 0 more" in line for line in lines)
    assert not any("..." in line for line in tree_part(text(render_workload(view, TreeOptions(pod_limit=4)))))


def test_component_limit_shows_unhealthy_components_first_and_keeps_the_resources_table_whole() -> None:
    view = pytorchjob_view(worker_reason="Unschedulable")
    lines = text(render_workload(view, TreeOptions(component_limit=1, pod_limit=2, now=NOW)))
    tree = tree_part(lines)
    assert tree[0].startswith("|-- worker ")
    assert tree[-1] == "`-- ...                           and 1 more component"
    assert [row.split()[0] for row in lines[lines.index("Resources:") + 1 :]] == [
        "COMPONENT",
        "master",
        "worker",
        "TOTAL",
    ]


def test_every_tree_row_keeps_its_columns_aligned() -> None:
    tree = tree_part(text(render_workload(pytorchjob_view(worker_reason="Unschedulable"), TreeOptions(pod_limit=1))))
    gpu_columns = {line.index("gpu:") for line in tree if "gpu:" in line}
    assert len(gpu_columns) == 1


def test_unicode_glyphs_on_request() -> None:
    tree = tree_part(text(render_workload(pytorchjob_view(), TreeOptions(unicode=True))))
    assert tree[0].startswith("├── master") and tree[1].startswith("│   └── llama-finetune-master-0")


def test_header_fields_wrap_only_when_they_do_not_fit() -> None:
    wide = text(render_workload(pytorchjob_view(), TreeOptions(width=200, now=NOW)))
    assert wide[0] == (
        "PyTorchJob/llama-finetune   namespace: ml-team   definition: kubeflow-org-pytorchjob-v1 (catalog)   age: 120m"
    )


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (5, "5s"),
        (119, "119s"),
        (200, "3m20s"),
        (600, "10m"),
        (7200, "120m"),
        (4 * 3600 + 60, "4h1m"),
        (86400 * 3, "3d"),
    ],
)
def test_ages_read_as_kubectl_prints_them(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown


def test_age_of_a_missing_or_unreadable_timestamp_is_unknown() -> None:
    assert age(None) == "<unknown>" and age("yesterday") == "<unknown>"
    assert age("2026-10-01T08:00:00Z", NOW) == "120m"


def test_accelerators_are_named_by_their_short_name_unless_two_collide() -> None:
    labels = accelerator_labels(["nvidia.com/mig-1g.5gb", "google.com/tpu"])
    assert accelerators_text(2, {"nvidia.com/mig-1g.5gb": 3, "google.com/tpu": 4}, labels) == (
        "gpu: 2, tpu: 4, mig-1g.5gb: 3"
    )
    assert accelerator_labels(["a.com/x", "b.com/x"]) == {"a.com/x": "a.com/x", "b.com/x": "b.com/x"}


def test_align_pads_columns_and_never_pads_the_last_cell() -> None:
    rows = [[seg("a"), seg("bb"), seg("c")], [seg("aaaa"), seg(""), seg("")]]
    assert [plain(line) for line in align(rows)] == ["a      bb   c", "aaaa"]


@pytest.mark.parametrize(
    ("quantity", "text"),
    [
        ("8G", "7.45Gi"),  # was 7812500Ki
        ("16Gi", "16Gi"),
        ("512Mi", "512Mi"),
        ("1536Mi", "1.5Gi"),
        ("200G", "186Gi"),
        ("22544853112Ki", "21Ti"),  # a directory's total, was 22544853112Ki
        ("100", "100"),
        ("0", "0"),
    ],
)
def test_memory_is_shown_in_binary_units_with_three_significant_digits(quantity: str, text: str) -> None:
    assert memory_text(parse_quantity(quantity)) == text


def test_sixty_four_pods_of_200g_read_as_terabytes() -> None:
    assert memory_text(parse_quantity("200G") * 64) == "11.6Ti"  # was 12500000000Ki


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (Fraction(0), "0"),
        (Fraction(1, 2), "0.5"),  # was 500m
        (Fraction(1, 1000), "0.001"),
        (Fraction(9, 4), "2.25"),
        (Fraction(4), "4"),
        (Fraction(301442, 100), "3014"),  # a directory's total, was 3014420m
        (Fraction(1, 10**9), "<0.001"),  # a request is never shown as nothing
    ],
)
def test_cpu_is_shown_in_cores(amount: Fraction, text: str) -> None:
    assert cpu_text(amount) == text
