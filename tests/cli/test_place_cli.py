"""`wmap place` and `wmap capacity` before any cluster is asked: argument errors (exit 2), a workload without a
gang (placed pod by pod, so the clusters are asked), one that asks for no pods (exit 1), and a cluster that cannot
be reached (a warning row, exit 1 when it is the only one). The answers from real clusters are
tests/e2e/test_multicluster.py's."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import EXAMPLES, Result, invoke

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
GONE = ("--server", "https://127.0.0.1:9", "--token", "x", "--request-timeout", "5s")


def wmap(*args: str, home: Path) -> Result:
    return invoke(list(args), home=home)


def test_place_needs_a_workload_and_takes_one_source(tmp_path: Path) -> None:
    nothing = wmap("place", home=tmp_path)
    assert nothing.code == 2
    assert "error: nothing to place: give -f FILE, or TYPE/NAME" in nothing.stderr
    both = wmap("place", "-f", str(EXAMPLES / "leaderworkerset.yaml"), "lws/x", home=tmp_path)
    assert both.code == 2
    assert "cannot be combined" in both.stderr
    contexts = wmap("place", "-f", "x.yaml", "--all-contexts", "--context", "a", home=tmp_path)
    assert contexts.code == 2
    assert "error: --all-contexts cannot be combined with --context" in contexts.stderr


def test_a_workload_without_a_gang_is_placed_pod_by_pod_and_asks_the_clusters(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(DEPLOYMENT)
    result = wmap("place", "-f", str(path), *GONE, home=tmp_path)
    # not refused up front any more: the cluster is asked (here it cannot be reached)
    assert result.code == 1
    assert "nothing to place" not in result.stderr
    assert "not read: cannot reach https://127.0.0.1:9" in result.stdout
    assert "error: no cluster could be read" in result.stderr


def test_a_workload_that_asks_for_no_pods_is_nothing_to_place(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(DEPLOYMENT.replace("replicas: 2", "replicas: 0"))
    result = wmap("place", "-f", str(path), *GONE, home=tmp_path)
    assert result.code == 1
    assert result.stdout == ""
    assert "error: nothing to place: Deployment/web asks for no pods" in result.stderr


def test_an_unreachable_only_cluster_is_a_warning_row_and_exit_1(tmp_path: Path) -> None:
    result = wmap("place", "-f", str(EXAMPLES / "leaderworkerset.yaml"), *GONE, home=tmp_path)
    assert result.code == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CLUSTER", "FITS", "SCORE", "NODES", "REASON"]
    assert lines[1].startswith("(current context)")
    assert "not read: cannot reach https://127.0.0.1:9" in lines[1]
    assert lines[2].startswith("Not modelled: quotas")
    assert "error: no cluster could be read" in result.stderr
    capacity = wmap("capacity", *GONE, "-o", "json", home=tmp_path)
    assert capacity.code == 1
    assert '"(current context)"' in capacity.stdout and "cannot reach" in capacity.stdout
