"""docs/serve.md and the Grafana dashboard name only series `wmap serve` exports (or DCGM-exporter's), and the
docs' metrics table lists every series the collector exports: a renamed series fails here, not on a user's
dashboard."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from workload_map.serve.metrics import WorkloadCollector, render
from workload_map.serve.store import Store

from .test_serve_metrics import NAMES, fixture_view

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "serve.md"
DASHBOARD = ROOT / "deploy" / "grafana" / "wmap-workloads.json"
SERIES_NAME = re.compile(r"\b(wmap_[a-z_]+|DCGM_[A-Z_]+)\b")


def exported() -> set[str]:
    store = Store(synced=True)
    for name in NAMES:
        view, _ = fixture_view(name)
        store.put(view.uid or name, view)
    text = render(WorkloadCollector(store)).decode()
    return {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}


def expressions(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["expr"]] if isinstance(node.get("expr"), str) else []
        query = node.get("query")
        if isinstance(query, dict) and isinstance(query.get("query"), str):
            found.append(query["query"])
        return found + [e for value in node.values() for e in expressions(value)]
    if isinstance(node, list):
        return [e for item in node for e in expressions(item)]
    return []


def test_the_dashboard_queries_exported_series_only() -> None:
    names = exported()
    queries = expressions(json.loads(DASHBOARD.read_text()))
    assert len(queries) >= 10
    used = {name for query in queries for name in SERIES_NAME.findall(query)}
    assert used - names == {"DCGM_FI_DEV_GPU_UTIL"}
    assert {"wmap_workload_gpus_requested", "wmap_workload_gpus_held", "wmap_pod_workload"} <= used


def test_the_docs_table_lists_every_exported_series() -> None:
    text = DOC.read_text()
    table = text[text.index("## Metrics") : text.index("### Cardinality")]
    documented = set(re.findall(r"^\| `(wmap_[a-z_]+)`", table, re.M)) | set(re.findall(r"`(wmap_[a-z_]+)`", table))
    assert exported() <= documented
    mentioned = set(SERIES_NAME.findall(text))
    not_series = {"wmap_token"}  # the session cookie of --user-tokens, named on the same page
    assert {name for name in mentioned if name.startswith("wmap_")} - not_series <= exported()
