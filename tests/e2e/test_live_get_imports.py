"""The start-up budget of `wmap get TYPE` on the real API server, held structurally (issue 19): what a plain `get`
imports. No timing here (the figures are benchmarks/bench_kli_get.py's); these keep the imports that were cut from
coming back unnoticed: the watch machinery (only `get -w`), the thread pool (only `--all-types` and several
clusters), httpx and its stack (a direct connection goes through `cluster.http11`), lightkube (the kubeconfig
models are ours), PyYAML (the kubeconfig is read by the model's YAML subset reader) and subprocess (only for an
exec credential plugin), nor `http.client` and `email`; nor the view layer (only `-o wide`, `-o json|yaml`), the
JSONPath engine and custom columns (only a templated `-o`) or the terminal fitting (only on a terminal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ApiServer
from .test_live_support import create, deployment_body

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]

NOT_IN_GET = (
    "asyncio",
    "concurrent.futures",
    "workload_map.cli.commands.watch_loop",
    "workload_map.cluster.aio",
    "workload_map.cluster.informer_aio",
    "lightkube",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "h11",
    "h2",
    "anyio",
    "yaml",
    "subprocess",
    "http.client",  # cluster.http11 reads HTTP/1.1 on the socket: http.client would import the email package
    "email",
    "workload_map.view",  # the status alone is read: no view
    "workload_map.cli.views",
    "workload_map.cli.render.shape",
    "workload_map.cli.render.jsonpath",  # only -o jsonpath=... and custom-columns
    "workload_map.cli.render.columns",  # and on a terminal, to fit the table
    "tempfile",  # only to write the discovery cache, which this warm run reads
)

_GET = """
import io, json, sys
baseline = set(sys.modules)
from workload_map.cli.main import run
out, sys.stdout = sys.stdout, io.StringIO()
code = run(sys.argv[1:])
table, sys.stdout = sys.stdout.getvalue(), out
print(json.dumps({"code": code, "table": table, "modules": sorted(set(sys.modules) - baseline)}))
"""


def _get(api_server: ApiServer, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    environ.update(HOME=str(tmp_path), WMAP_CACHE_DIR=str(tmp_path / "cache"), **(env or {}))
    done = subprocess.run(
        [sys.executable, "-c", _GET, *args, "--kubeconfig", str(api_server.kubeconfig)],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _loaded(name: str, modules: list[str]) -> list[str]:
    return [module for module in modules if module == name or module.startswith(name + ".")]


def test_a_plain_get_imports_only_what_it_uses(api_server: ApiServer, namespace: str, tmp_path: Path) -> None:
    create(api_server, deployment_body("web", replicas=1), namespace=namespace)
    # the first run fills the caches (the catalog blob, built with PyYAML on first use; discovery): not judged
    warm = _get(api_server, tmp_path, "get", "deployments", "-n", namespace)
    assert warm["code"] == 0
    result = _get(api_server, tmp_path, "get", "deployments", "-n", namespace)
    assert result["code"] == 0
    assert str(result["table"]).split()[3] == "web"
    modules = result["modules"]
    assert isinstance(modules, list)
    assert "workload_map.cluster.http11" in modules  # the stdlib transport sent the requests
    loaded = {name: _loaded(name, modules) for name in NOT_IN_GET}
    assert {name: found for name, found in loaded.items() if found} == {}


def test_what_a_plain_get_leaves_out_still_loads_where_needed(
    api_server: ApiServer, namespace: str, tmp_path: Path
) -> None:
    """The cut imports are deferred, not gone: --all-types takes the thread pool, a proxy takes httpx, -o wide the
    view layer, custom columns the JSONPath engine."""
    create(api_server, deployment_body("web", replicas=1), namespace=namespace)
    every = _get(api_server, tmp_path, "get", "--all-types", "-n", namespace)
    assert every["code"] == 0
    modules = every["modules"]
    assert isinstance(modules, list) and _loaded("concurrent.futures", modules)
    proxied = _get(
        api_server,
        tmp_path,
        "get",
        "deployments",
        "-n",
        namespace,
        env={"HTTPS_PROXY": "http://127.0.0.1:1", "NO_PROXY": "127.0.0.1,localhost"},
    )
    assert proxied["code"] == 0
    modules = proxied["modules"]
    assert isinstance(modules, list) and _loaded("httpx2", modules)
    wide = _get(api_server, tmp_path, "get", "deployments", "-n", namespace, "-o", "wide")
    assert wide["code"] == 0 and str(wide["table"]).split()[:5] == ["NAME", "PHASE", "AGE", "PODS", "GPU"]
    modules = wide["modules"]
    assert isinstance(modules, list) and _loaded("workload_map.view", modules)
    columns = _get(api_server, tmp_path, "get", "deployments", "-n", namespace, "-o", "custom-columns=N:.name")
    assert columns["code"] == 0 and str(columns["table"]).split() == ["N", "web"]
    modules = columns["modules"]
    assert isinstance(modules, list) and _loaded("workload_map.cli.render.jsonpath", modules)
