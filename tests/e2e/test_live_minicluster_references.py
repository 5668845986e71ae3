"""A Flux Operator MiniCluster on the real API server: its definition follows its indexed Job through
`workloadmap.io/references` for status only, so a Job that is gone is a warning saying the status is read from the
MiniCluster alone (its roles are still shown), and `wmap suspend minicluster/NAME` (the MiniCluster has no suspend)
names the Job's own suspend in its hint (docs/definitions.md "Cross-object references")."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import ApiServer, expect
from .test_live_support import Wmap, install_fixture

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API

FIXTURE = "flux-framework-org-minicluster-v1alpha2"


def _delete_job(api_server: ApiServer, namespace: str) -> None:
    # in the background: the default for a Job is to orphan its pods, which only the garbage collector (absent
    # here) would finish, so the Job would stay, marked for deletion
    with api_server.client() as kube:
        path = f"/apis/batch/v1/namespaces/{namespace}/jobs/lammps"
        expect(kube.delete(path, params={"propagationPolicy": "Background"}), 200, 202)


def test_a_minicluster_without_its_job_warns_that_only_the_status_is_the_minicluster_s_own(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any
) -> None:
    namespace = make_namespace("wmap-flux-refs")
    install_fixture(api_server, FIXTURE, namespace)
    found = wmap.run("describe", "minicluster/lammps", namespace=namespace)
    assert found.code == 0, found.stderr
    assert "reference job" not in found.stderr
    _delete_job(api_server, namespace)
    gone = wmap.run("describe", "minicluster/lammps", namespace=namespace)
    assert gone.code == 0, gone.stderr
    assert "broker" in gone.stdout  # the roles come from the MiniCluster itself
    assert (
        f"warning: MiniCluster/lammps: reference job: Job lammps in namespace {namespace} was not found: its status "
        "is read from the workload alone, without the Job's"
    ) in gone.stderr


def test_suspend_of_a_minicluster_names_the_suspend_of_the_job_it_follows(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any
) -> None:
    namespace = make_namespace("wmap-flux-suspend")
    install_fixture(api_server, FIXTURE, namespace)
    result = wmap.run("suspend", "minicluster/lammps", namespace=namespace)
    assert result.code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "error: MiniCluster has no suspend support in its definition 'flux-framework-org-minicluster-v1alpha2'"
    )
    assert (
        "hint: the Job it follows (reference job) has suspend support in its own definition: wmap suspend job/lammps"
    ) in lines
