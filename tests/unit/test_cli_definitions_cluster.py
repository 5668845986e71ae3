"""`wmap definitions` without a usable cluster: the built-in (and local) definitions are still listed, exit 0.

No kubeconfig at all is silent; a kubeconfig that was given or configured but cannot be used or reached is one
warning. (With a cluster, its Karta objects are listed with ORIGIN cluster: tests/e2e/test_live_definitions.py.)
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.cli.helpers import REPO, Result, Wmap

FALLBACK = "; showing built-in definitions only"


def _rows(result: Result) -> list[list[str]]:
    return [line.split() for line in result.stdout.splitlines()[1:]]


def _unreachable_kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "gone", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "me", "user": {"token": "t"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "me"}}],
                "current-context": "gone",
            }
        )
    )
    return path


def test_without_any_kubeconfig_the_catalog_is_listed_silently(wmap: Wmap) -> None:
    result = wmap("definitions")
    assert result.code == 0
    assert result.stderr == ""
    assert {row[-1] for row in _rows(result)} == {"catalog"}


def test_a_missing_kubeconfig_given_explicitly_is_a_warning_and_the_catalog_is_listed(wmap: Wmap) -> None:
    result = wmap("definitions", "--kubeconfig", "/nonexistent/kubeconfig")
    assert result.code == 0
    assert result.stderr == (
        "warning: could not read Karta definitions from the cluster: kubeconfig /nonexistent/kubeconfig does not "
        f"exist{FALLBACK}\n"
    )
    assert "kubeflow-org-pytorchjob-v1" in result.stdout


def test_an_unreachable_cluster_from_kubeconfig_is_a_warning_and_the_catalog_is_listed(
    wmap: Wmap, tmp_path: Path
) -> None:
    kubeconfig = _unreachable_kubeconfig(tmp_path)
    for result in (
        wmap("definitions", env={"KUBECONFIG": str(kubeconfig)}),  # configured, not given
        wmap("definitions", "--kubeconfig", str(kubeconfig), "-o", "json"),
    ):
        assert result.code == 0, result.stderr
        assert result.stderr.startswith(
            "warning: could not read Karta definitions from the cluster: cannot reach https://127.0.0.1:1: "
        )
        assert result.stderr.endswith(f"{FALLBACK}\n") and result.stderr.count("\n") == 1
        assert "kubeflow-org-pytorchjob-v1" in result.stdout


def test_a_local_definition_is_still_listed_when_the_cluster_is_unreachable(wmap: Wmap, tmp_path: Path) -> None:
    local = tmp_path / "mine.yaml"
    local.write_text(
        (REPO / "src/workload_map/catalog/definitions/kubeflow-org-pytorchjob-v1.yaml")
        .read_text()
        .replace("name: kubeflow-org-pytorchjob-v1", "name: my-pytorchjob")
    )
    kubeconfig = _unreachable_kubeconfig(tmp_path)
    result = wmap(
        "definitions", "--group", "kubeflow.org", "--kubeconfig", str(kubeconfig), "--definitions", str(local)
    )
    assert result.code == 0
    mine = [row for row in _rows(result) if row[0] == "my-pytorchjob"]
    assert [(row[1], row[-1]) for row in mine] == [("kubeflow.org/v1/PyTorchJob", "local")]
    assert "kubeflow-org-pytorchjob-v1" not in [row[0] for row in _rows(result)]  # replaced by the local one


def test_bad_connection_flags_are_usage_errors_before_any_request(wmap: Wmap) -> None:
    result = wmap("definitions", "--request-timeout", "soon")
    assert result.code == 2
    assert result.stderr.startswith("error: --request-timeout 'soon' is not a duration")


def test_the_namespace_flag_is_accepted_and_changes_nothing(wmap: Wmap) -> None:
    assert wmap("definitions", "-n", "ml").stdout == wmap("definitions").stdout
