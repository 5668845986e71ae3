"""The `wmap serve` dashboard in a real headless Chromium (tests/e2e/browser.py, the DevTools protocol), against
the real API server: the workloads table's rows and GPU columns, a filter and the search, a workload's tree with
its pods, the definitions page, a live update pushed by the event stream after a status change, and untrusted
text (a pod's status reason) shown as text, never as HTML.

Skipped, saying so, only when no browser can be found (`apt-get install chromium`, or `$WMAP_CHROMIUM`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .browser import Browser, find_browser
from .conftest import ApiServer
from .test_live_support import create_pod, grant, install_fixture, patch_status, read_rules
from .test_serve import Server, serve

pytestmark = pytest.mark.e2e

__all__ = ["serve"]  # the fixture, used by the tests below

PYTORCHJOB = "kubeflow-org-pytorchjob-v1"
JOBSET = "jobset-x-k8s-io-jobset-v1alpha2"


@pytest.fixture
def browser() -> Iterator[Browser]:
    binary = find_browser()
    if binary is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set WMAP_CHROMIUM): the dashboard test needs one")
    with Browser(binary) as opened:
        yield opened


def rows(browser: Browser) -> list[dict[str, str]]:
    return list(
        browser.evaluate(
            "[...document.querySelectorAll('tr.workload')].map(r => ({key: r.dataset.key, "
            "phase: r.querySelector('.phase').textContent, gpus: r.querySelector('.gpus').textContent, "
            "held: r.querySelector('.gpus-held').textContent}))"
        )
    )


def test_the_dashboard_in_a_browser(
    api_server: ApiServer,
    namespace: str,
    serve: Callable[..., Server],
    browser: Browser,
    tmp_path: Path,
) -> None:
    job = install_fixture(api_server, PYTORCHJOB, namespace)
    install_fixture(api_server, JOBSET, namespace)
    name = job["metadata"]["name"]
    server = serve(namespace=namespace).started()
    server.ready()

    # the table: a row per workload with its GPUs
    browser.open(server.url + "/")
    browser.wait_for("document.querySelectorAll('tr.workload').length === 2")
    table = {row["key"]: row for row in rows(browser)}
    assert set(table) == {f"{namespace}/PyTorchJob/{name}", f"{namespace}/JobSet/llm-pretrain"}
    assert table[f"{namespace}/PyTorchJob/{name}"]["gpus"] == "10"
    assert table[f"{namespace}/PyTorchJob/{name}"]["held"] == "10"
    assert table[f"{namespace}/PyTorchJob/{name}"]["phase"] == "Running"
    assert browser.wait_for("document.getElementById('live').textContent") == "live"
    browser.screenshot(tmp_path / "workloads.png")

    # a filter, then the search
    browser.evaluate(
        "(() => { const s = document.getElementById('filter-kind'); s.value = 'PyTorchJob';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    browser.wait_for("document.querySelectorAll('tr.workload').length === 1")
    assert [row["key"] for row in rows(browser)] == [f"{namespace}/PyTorchJob/{name}"]
    browser.evaluate(
        "(() => { const s = document.getElementById('filter-kind'); s.value = '';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    browser.wait_for("document.querySelectorAll('tr.workload').length === 2")
    browser.evaluate(
        "(() => { const i = document.getElementById('search'); i.value = 'llm';"
        " i.dispatchEvent(new Event('change')); })()"
    )
    browser.wait_for("document.querySelectorAll('tr.workload').length === 1")
    assert [row["key"] for row in rows(browser)] == [f"{namespace}/JobSet/llm-pretrain"]

    # the workload page: the tree with its pods
    browser.open(f"{server.url}/#/w/{namespace}/PyTorchJob/{name}")
    browser.wait_for("document.getElementById('tree') !== null")
    components = browser.evaluate("[...document.querySelectorAll('li.component')].map(c => c.dataset.component)")
    assert components == ["master", "worker"]
    pods = browser.evaluate("[...document.querySelectorAll('#tree li.pod')].map(p => p.dataset.pod)")
    assert sorted(pods) == sorted([f"{name}-master-0", *(f"{name}-worker-{i}" for i in range(4))])
    assert browser.evaluate("document.getElementById('summary-phase').textContent") == "Running"
    browser.screenshot(tmp_path / "workload.png")

    # a status change, pushed live: the page redraws without a reload
    before = int(browser.evaluate("document.body.dataset.rendered"))
    patch_status(
        api_server, job, {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}
    )
    browser.wait_for(
        "document.getElementById('summary-phase') && document.getElementById('summary-phase').textContent === 'Failed'"
    )
    assert int(browser.evaluate("document.body.dataset.rendered")) > before

    # untrusted text: a pod's status reason with markup arrives as text
    hostile = '<img src=x id="injected"><b id="bold">x</b>'
    labels = {
        "training.kubeflow.org/job-name": name,
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "7",
    }
    create_pod(
        api_server, namespace, f"{name}-worker-7", owner=job, labels=labels, phase="Failed", ready=False, reason=hostile
    )
    browser.wait_for(f"document.querySelector('li.pod[data-pod=\"{name}-worker-7\"]') !== null")
    assert browser.evaluate("document.getElementById('injected') === null && document.getElementById('bold') === null")
    shown = browser.evaluate(f"document.querySelector('li.pod[data-pod=\"{name}-worker-7\"]').textContent")
    assert hostile in shown

    # the definitions page
    browser.open(f"{server.url}/#/definitions")
    browser.wait_for("document.getElementById('definitions') !== null")
    watched = browser.evaluate(
        "[...document.querySelectorAll('#definitions tr.watched')].map(r => r.children[3].textContent)"
    )
    assert PYTORCHJOB in watched and JOBSET in watched
    browser.screenshot(tmp_path / "definitions.png")
    assert not [line for line in browser.console if "Content Security Policy" in line or "exception" in line], (
        json.dumps(browser.console)
    )
    assert server.stop() == 0


def test_a_restricted_user_sees_only_their_namespace(
    api_server: ApiServer,
    make_namespace: Callable[..., str],
    serve: Callable[..., Server],
    browser: Browser,
) -> None:
    mine, other = make_namespace(), make_namespace()
    install_fixture(api_server, PYTORCHJOB, mine)
    install_fixture(api_server, PYTORCHJOB, other)
    grant(api_server, mine, read_rules(("kubeflow.org", "pytorchjobs"), ("", "pods"), verbs=("get", "list", "watch")))
    server = serve(namespace=mine, kubeconfig=api_server.restricted_kubeconfig).started()
    server.ready()
    browser.open(server.url + "/")
    browser.wait_for("document.querySelectorAll('tr.workload').length === 1")
    assert [row["key"] for row in rows(browser)] == [f"{mine}/PyTorchJob/bert-finetune"]
    choices = browser.evaluate("[...document.querySelectorAll('#filter-namespace option')].map(o => o.value)")
    assert choices == ["", mine]
    browser.open(f"{server.url}/#/w/{other}/PyTorchJob/bert-finetune")
    message = browser.wait_for("document.getElementById('error') && document.getElementById('error').textContent")
    assert f"namespace '{other}'" in message
    browser.open(f"{server.url}/#/definitions")
    browser.wait_for("document.getElementById('definitions') !== null")
    refused = browser.evaluate(
        "[...document.querySelectorAll('#definitions tr')].filter(r => r.children[0].textContent === 'JobSet')"
        ".map(r => r.children[5].textContent)"
    )
    assert refused and refused[0].startswith("refused: not allowed to list jobsets.jobset.x-k8s.io")
    assert server.stop() == 0


def test_signing_in_with_a_token_shows_what_it_may_list(
    api_server: ApiServer,
    make_namespace: Callable[..., str],
    serve: Callable[..., Server],
    browser: Browser,
) -> None:
    mine, other = make_namespace(), make_namespace()
    install_fixture(api_server, PYTORCHJOB, mine)
    install_fixture(api_server, PYTORCHJOB, other)
    grant(api_server, mine, read_rules(("kubeflow.org", "pytorchjobs"), verbs=("get", "list")))
    server = serve("--user-tokens").started()
    server.ready()
    token = api_server._restricted["token"] if api_server._restricted else pytest.skip("no restricted token")
    browser.open(server.url + "/")
    browser.wait_for("document.getElementById('session') !== null")
    browser.evaluate(
        f"(() => {{ document.getElementById('token').value = {json.dumps('wrong')};"
        " document.getElementById('sign-in').click(); })()"
    )
    assert browser.wait_for("document.getElementById('sign-in-error').textContent") == (
        "the API server does not accept this token"
    )
    browser.evaluate(
        f"(() => {{ document.getElementById('token').value = {json.dumps(token)};"
        " document.getElementById('sign-in').click(); })()"
    )
    browser.wait_for("document.querySelectorAll('tr.workload').length > 0")
    keys = [row["key"] for row in rows(browser)]
    assert f"{mine}/PyTorchJob/bert-finetune" in keys
    assert not [key for key in keys if key.startswith(f"{other}/")]
    assert browser.evaluate("document.cookie") == ""  # HttpOnly: the page's script cannot read the token
    assert server.stop() == 0
