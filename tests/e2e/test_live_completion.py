"""Shell completion of TYPE and NAME from the real test API server (issue 21): the installed `wmap` called back the
way each shell's script calls it (`_WMAP_COMPLETE=<shell>_complete` and the shell's variables), and kubectl's
`kubectl_complete-wmap`. Failures are silent: no candidate, nothing on stderr, exit 0."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import Result, run_installed

from .conftest import ApiServer
from .test_live_support import create, jobset_body, wmap_requests

NAMES = ("train-alpha", "train-beta", "serve-gamma")


@pytest.fixture(scope="module")
def jobsets(api_server: ApiServer) -> str:
    """A namespace holding three JobSets."""
    namespace = api_server.create_namespace("wmap-e2e-complete")
    for name in NAMES:
        create(api_server, jobset_body(name), namespace=namespace)
    return namespace


def _complete(home: Path, kubeconfig: Path, shell: str, words: str, cword: str, *, cache: Path | None = None) -> Result:
    env = {
        "KUBECONFIG": str(kubeconfig),
        "WMAP_CACHE_DIR": str(cache or home / "cache"),
        "_WMAP_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": cword,
    }
    return run_installed([], home=home, env=env)


def _bash(home: Path, kubeconfig: Path, words: str, **kwargs: Path) -> list[str]:
    """The values bash is offered for the last word of `words` (bash's answer: `type,value` per line)."""
    parts = words.split(" ")
    done = _complete(home, kubeconfig, "bash", words, str(len(parts) - 1), **kwargs)
    assert done.code == 0, done.stderr
    assert done.stderr == ""
    return [line.split(",", 1)[1] for line in done.stdout.splitlines() if line]


def test_type_completion_offers_the_covered_served_types(api_server: ApiServer, tmp_path: Path) -> None:
    offered = _bash(tmp_path, api_server.kubeconfig, "wmap get py")
    assert offered == ["pytorchjobs"]
    every = _bash(tmp_path, api_server.kubeconfig, "wmap describe ")
    assert {"deployments", "jobsets", "pytorchjobs", "rayclusters", "statefulsets", "pods"} <= set(every)
    # served but covered by no definition: not offered
    assert not {"configmaps", "secrets", "namespaces", "customresourcedefinitions"} & set(every)


def test_name_completion_lists_the_namespace(api_server: ApiServer, jobsets: str, tmp_path: Path) -> None:
    kubeconfig = api_server.kubeconfig
    assert _bash(tmp_path, kubeconfig, f"wmap get jobsets -n {jobsets} train") == ["train-alpha", "train-beta"]
    assert _bash(tmp_path, kubeconfig, f"wmap describe -n {jobsets} jobset/") == [f"jobset/{n}" for n in sorted(NAMES)]
    assert _bash(tmp_path, kubeconfig, f"wmap watch --namespace={jobsets} jobsets.jobset.x-k8s.io/s") == [
        "jobsets.jobset.x-k8s.io/serve-gamma"
    ]
    assert _bash(tmp_path, kubeconfig, f"wmap resume -n {jobsets} JobSet/train-b") == ["JobSet/train-beta"]
    # another namespace has none of them; NAME after TYPE/NAME is complete already
    assert _bash(tmp_path, kubeconfig, "wmap get jobsets train") == []
    assert _bash(tmp_path, kubeconfig, f"wmap get -n {jobsets} jobset/train-alpha ") == []


def test_name_completion_across_namespaces_with_all_namespaces(
    api_server: ApiServer, jobsets: str, tmp_path: Path
) -> None:
    assert "serve-gamma" in _bash(tmp_path, api_server.kubeconfig, "wmap get jobsets -A serve-g")


def test_name_completion_requests(api_server: ApiServer, jobsets: str, tmp_path: Path) -> None:
    """Discovery from the cache when it is fresh, the cluster's Kartas, and one metadata LIST of the type."""
    cache = tmp_path / "warm"
    _bash(tmp_path, api_server.kubeconfig, "wmap get ", cache=cache)  # writes the discovery cache
    mark = api_server.audit_mark()
    offered = _bash(tmp_path, api_server.kubeconfig, f"wmap get jobsets -n {jobsets} t", cache=cache)
    assert offered == ["train-alpha", "train-beta"]
    events = wmap_requests(api_server, mark)
    lists = [(e["verb"], (e.get("objectRef") or {}).get("resource")) for e in events]
    assert ("list", "jobsets") in lists
    assert all(verb == "list" for verb, _ in lists), lists  # no discovery (cached), no GET per object
    assert len(events) == 2, lists  # the Karta LIST and the JobSet LIST


def _click_powershell() -> bool:
    from click.shell_completion import get_completion_class

    from workload_map.cli import shells

    return get_completion_class("powershell") is not shells.PowerShellComplete


@pytest.mark.parametrize("shell", ["zsh", "fish", "powershell"])
def test_other_shells_get_the_names(api_server: ApiServer, jobsets: str, tmp_path: Path, shell: str) -> None:
    words = f"wmap get jobsets -n {jobsets} train"
    # zsh (and click 8.5's own PowerShell script) count words; fish and our PowerShell script for older clicks pass
    # the word being completed
    counts = shell == "zsh" or (shell == "powershell" and _click_powershell())
    cword = "5" if counts else "train"
    done = _complete(tmp_path, api_server.kubeconfig, shell, words, cword)
    assert done.code == 0 and done.stderr == ""
    assert "train-alpha" in done.stdout and "train-beta" in done.stdout
    assert "serve-gamma" not in done.stdout


def test_kubectl_plugin_completion(api_server: ApiServer, jobsets: str, tmp_path: Path) -> None:
    env = {"KUBECONFIG": str(api_server.kubeconfig), "WMAP_CACHE_DIR": str(tmp_path / "cache")}
    done = run_installed(
        ["get", "jobsets", "-n", jobsets, "train"], home=tmp_path, env=env, name="kubectl_complete-wmap"
    )
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines() == ["train-alpha", "train-beta", ":4"]


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP port that accepts connections and never answers (a hung API server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_failures_offer_nothing_and_print_nothing(
    api_server: ApiServer, jobsets: str, tmp_path: Path, silent_server: str
) -> None:
    kubeconfig = api_server.kubeconfig
    # a server that never answers: the completion gives up within its budget
    assert _bash(tmp_path, kubeconfig, f"wmap get --server {silent_server} --insecure-skip-tls-verify py") == []
    assert _bash(tmp_path, kubeconfig, "wmap get --server https://127.0.0.1:1 py") == []  # refused
    assert _bash(tmp_path, kubeconfig, f"wmap get -n {jobsets} nosuchtype t") == []  # no definition covers it
    assert _bash(tmp_path, kubeconfig, "wmap get --kubeconfig /nonexistent py") == []
    # the restricted user may not list JobSets
    assert api_server.restricted_kubeconfig is not None
    assert _bash(tmp_path, api_server.restricted_kubeconfig, f"wmap get jobsets -n {jobsets} t") == []
