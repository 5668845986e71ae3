"""cli.clusters: which contexts a multi-cluster command asks, and one answer per context whatever each does
(docs/placement.md, "Several clusters at once"). The clusters themselves are the e2e test's
(tests/e2e/test_multicluster.py); here `ask` is a plain function."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import yaml

from workload_map.cli.clusters import context_names, each_context
from workload_map.cli.context import reset
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.options import ConnectionOptions
from workload_map.cluster import ApiError


def kubeconfig(tmp_path: Path, *names: str) -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": f"https://{n}.example:6443"}} for n in names],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in names],
        "current-context": names[0] if names else None,
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_the_contexts_given_in_order_once_each_or_the_current_one() -> None:
    assert context_names(ConnectionOptions(contexts=("b", "a", "b"))) == ["b", "a"]
    assert context_names(ConnectionOptions()) == [""]


def test_all_contexts_reads_the_kubeconfig_in_its_order(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, "prod", "dev", "edge")
    assert context_names(ConnectionOptions(kubeconfig=path, all_contexts=True)) == ["prod", "dev", "edge"]
    with pytest.raises(UsageError, match="--all-contexts cannot be combined with --context"):
        context_names(ConnectionOptions(kubeconfig=path, all_contexts=True, contexts=("prod",)))
    empty = kubeconfig(
        tmp_path,
    )
    with pytest.raises(CLIError, match="the kubeconfig has no contexts"):
        context_names(ConnectionOptions(kubeconfig=empty, all_contexts=True))


def test_each_context_answers_in_order_and_a_failure_is_that_contexts_error() -> None:
    def ask(context: str) -> int:
        if context == "refused":
            raise ApiError("not allowed to list nodes", status=403)
        if context == "usage":
            raise CLIError("context usage not found")
        return len(context)

    answers = each_context(["a", "refused", "bbb", "usage"], ask, deadline=None)
    assert [(a.context, a.value, a.error) for a in answers] == [
        ("a", 1, None),
        ("refused", None, "not allowed to list nodes"),
        ("bbb", 3, None),
        ("usage", None, "context usage not found"),
    ]


def test_a_context_past_its_deadline_is_an_error_and_the_others_still_answer() -> None:
    release = threading.Event()

    def ask(context: str) -> str:
        if context == "slow":
            release.wait(10)  # released below, so the thread ends with the test
        return context.upper()

    try:
        answers = each_context(["slow", "fast"], ask, deadline=0.2)
    finally:
        release.set()
    assert [(a.context, a.value, a.error) for a in answers] == [
        ("slow", None, "no answer within 0.2s"),
        ("fast", "FAST", None),
    ]


def test_a_cluster_behind_a_hung_one_has_the_same_deadline_from_the_start() -> None:
    """Every cluster's deadline counts from the start: one that answers after it is an error even when an earlier
    one in the list timed out first (waiting a deadline per cluster in turn let it through, and made the command
    wait a deadline per hung cluster)."""
    release = threading.Event()

    def ask(context: str) -> str:
        if context == "hung":
            release.wait(10)
        elif context == "late":
            time.sleep(0.45)  # past the 0.3 s deadline, yet within two of them
        return context.upper()

    try:
        answers = each_context(["hung", "late", "fast"], ask, deadline=0.3)
    finally:
        release.set()
    assert [(a.context, a.value, a.error) for a in answers] == [
        ("hung", None, "no answer within 0.3s"),
        ("late", None, "no answer within 0.3s"),
        ("fast", "FAST", None),
    ]


def test_the_clusters_warnings_come_in_the_order_of_the_contexts_whatever_finishes_first() -> None:
    report = reset()
    second_done = threading.Event()

    def ask(context: str) -> str:
        if context == "first":
            second_done.wait(10)  # the second cluster warns, and finishes, before the first
        report.warn("JobSet is not installed in this cluster")
        report.warn(f"{context}'s other warning")
        if context == "second":
            second_done.set()
        return context

    try:
        each_context(["first", "second"], ask, deadline=None)
        assert report.warnings == [
            "cluster first: JobSet is not installed in this cluster",
            "cluster first: first's other warning",
            "cluster second: JobSet is not installed in this cluster",
            "cluster second: second's other warning",
        ]
    finally:
        reset()


def test_every_warning_given_while_a_cluster_is_asked_names_that_cluster() -> None:
    report = reset()

    def ask(context: str) -> str:
        report.warn("not listing JobSet: no definition for jobset.x-k8s.io/v1")
        report.partial(f"one object of {context or 'this one'} could not be read")
        return context

    try:
        each_context(["prod", "", "edge"], ask, deadline=None)
        report.warn("given outside any cluster")
        assert sorted(report.warnings) == sorted(
            [
                "cluster prod: not listing JobSet: no definition for jobset.x-k8s.io/v1",
                "cluster prod: one object of prod could not be read",
                "cluster (current context): not listing JobSet: no definition for jobset.x-k8s.io/v1",
                "cluster (current context): one object of this one could not be read",
                "cluster edge: not listing JobSet: no definition for jobset.x-k8s.io/v1",
                "cluster edge: one object of edge could not be read",
                "given outside any cluster",
            ]
        )
        assert report._scopes == {}  # no scope outlives its cluster
        with report.scope("cluster a"), report.scope("definition b"):
            report.warn("nested")
        assert report.warnings[-1] == "cluster a: definition b: nested"
    finally:
        reset()
