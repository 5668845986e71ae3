"""Fixtures for the e2e tests: a real kube-apiserver (v1.36) + etcd, no nodes, no controllers.

The session fixture ``api_server`` reuses a running server (``WMAP_TEST_KUBECONFIG`` that answers, or one
started by ``scripts/test-cluster.sh start``), or starts one itself and stops it at the end of the session.
It applies the test CRDs in ``tests/e2e/crds/*.yaml`` and, when present, the project's Karta CRD
(``deploy/crds/kartas.run.ai.yaml``). See docs/testing.md.

When the server cannot be had: with ``CI=true`` the tests fail; elsewhere, without Go (and without cached
binaries), they are skipped with a hint (``scripts/test-cluster.sh build``).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import yaml

if TYPE_CHECKING:  # test_live_support imports this module: its names are imported where a fixture runs
    from .test_live_support import Wmap

REPO_ROOT = Path(__file__).resolve().parents[2]
E2E_DIR = Path(__file__).resolve().parent
SCRIPT = REPO_ROOT / "scripts" / "test-cluster.sh"
TEST_CRD_DIR = E2E_DIR / "crds"
# The project's Karta CRD; WMAP_TEST_KARTA_CRD points the tests at another file (e.g. a candidate).
KARTA_CRD_FILE = Path(os.environ.get("WMAP_TEST_KARTA_CRD") or REPO_ROOT / "deploy" / "crds" / "kartas.run.ai.yaml")
KARTA_CRD_NAME = "kartas.run.ai"
IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
FIELD_MANAGER = "wmap-e2e"


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; registering twice is harmless and keeps --strict-markers happy.
    config.addinivalue_line("markers", "e2e: needs the real test API server (scripts/test-cluster.sh)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def unavailable(message: str) -> None:
    """The server cannot be had: fail in CI, skip elsewhere."""
    if IN_CI:
        pytest.fail(f"e2e API server unavailable (CI=true, so this is a failure): {message}", pytrace=False)
    pytest.skip(f"e2e API server unavailable: {message}")


# --------------------------------------------------------------------------- kubeconfig


def _kubeconfig_credentials(path: Path) -> dict[str, Any]:
    """URL, token/client cert and TLS settings of the current context of a kubeconfig (no exec plugins)."""
    cfg = yaml.safe_load(path.read_text())
    ctx_name = cfg.get("current-context") or cfg["contexts"][0]["name"]
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next((u["user"] for u in cfg.get("users") or [] if u["name"] == ctx.get("user")), {}) or {}
    base = path.parent

    def data_or_file(obj: dict[str, Any], key: str) -> Path | None:
        if obj.get(f"{key}-data"):
            fd, name = tempfile.mkstemp(prefix="wmap-e2e-", suffix=".pem")
            with os.fdopen(fd, "wb") as f:
                f.write(base64.b64decode(obj[f"{key}-data"]))
            return Path(name)
        if obj.get(key):
            return (base / obj[key]).resolve()
        return None

    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = (base / user["tokenFile"]).read_text().strip()
    return {
        "server": cluster["server"].rstrip("/"),
        "ca_file": data_or_file(cluster, "certificate-authority"),
        "insecure": bool(cluster.get("insecure-skip-tls-verify")),
        "token": token,
        "client_cert": data_or_file(user, "client-certificate"),
        "client_key": data_or_file(user, "client-key"),
    }


def _ssl_context(creds: dict[str, Any]) -> ssl.SSLContext:
    if creds["insecure"]:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl.create_default_context(cafile=str(creds["ca_file"]) if creds["ca_file"] else None)
    if creds["client_cert"]:
        ctx.load_cert_chain(str(creds["client_cert"]), str(creds["client_key"]) if creds["client_key"] else None)
    return ctx


def _client_from_creds(creds: dict[str, Any], timeout: float = 30.0) -> httpx.Client:
    headers = {"Authorization": f"Bearer {creds['token']}"} if creds["token"] else {}
    return httpx.Client(base_url=creds["server"], headers=headers, verify=_ssl_context(creds), timeout=timeout)


# --------------------------------------------------------------------------- the server handle


class ApiError(AssertionError):
    """An unexpected answer from the API server (status code and body in the message)."""


def expect(resp: httpx.Response, *codes: int) -> dict[str, Any]:
    """Assert the response status is one of ``codes`` (default: 2xx) and return the JSON body."""
    ok = resp.status_code in codes if codes else resp.is_success
    if not ok:
        raise ApiError(f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text[:2000]}")
    return resp.json() if resp.content else {}


@dataclass
class ApiServer:
    """A reachable test API server and what tests need to talk to it.

    ``kubeconfig`` (admin, group system:masters) and ``restricted_kubeconfig`` (user ``wmap-restricted``,
    group ``wmap:restricted``, no RBAC bindings: discovery only) are files usable by the project's own
    cluster code (lightkube) and by kubectl.
    """

    url: str
    kubeconfig: Path
    restricted_kubeconfig: Path | None
    audit_log: Path | None
    started_here: bool
    k8s_version: str = ""
    applied_crds: list[str] = field(default_factory=list)
    karta_crd_error: str | None = None
    _admin: dict[str, Any] = field(default_factory=dict, repr=False)
    _restricted: dict[str, Any] | None = field(default=None, repr=False)

    # -- clients
    def client(self, timeout: float = 30.0) -> httpx.Client:
        """A new httpx.Client for the admin user (base_url = the server; close it or use ``with``)."""
        return _client_from_creds(self._admin, timeout)

    def restricted_client(self, timeout: float = 30.0) -> httpx.Client:
        """A new httpx.Client for the restricted user."""
        if self._restricted is None:
            pytest.skip("no restricted kubeconfig (set WMAP_TEST_RESTRICTED_KUBECONFIG)")
        return _client_from_creds(self._restricted, timeout)

    def anonymous_client(self, token: str | None = None) -> httpx.Client:
        """A client with no credentials (or with an arbitrary bearer token)."""
        return _client_from_creds({**self._admin, "token": token, "client_cert": None, "client_key": None})

    def lightkube_client(self, restricted: bool = False, **kwargs: Any) -> Any:
        """A lightkube.Client from the admin (or restricted) kubeconfig."""
        lightkube = pytest.importorskip("lightkube")
        path = self.restricted_kubeconfig if restricted else self.kubeconfig
        if path is None:
            pytest.skip("no restricted kubeconfig")
        return lightkube.Client(lightkube.KubeConfig.from_file(str(path)), **kwargs)

    # -- objects
    def apply(self, obj: dict[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
        """Server-side apply ``obj`` (any kind the server knows) as the admin; returns the stored object."""
        with self.client() as c:
            path = self.resource_path(c, obj["apiVersion"], obj["kind"], namespace or obj["metadata"].get("namespace"))
            return expect(
                c.patch(
                    f"{path}/{obj['metadata']['name']}",
                    params={"fieldManager": FIELD_MANAGER, "force": "true"},
                    content=json.dumps(obj),
                    headers={"Content-Type": "application/apply-patch+yaml"},
                )
            )

    def resource_path(self, c: httpx.Client, api_version: str, kind: str, namespace: str | None) -> str:
        """The collection path of ``kind`` in ``api_version``, found by discovery.

        E.g. ``/apis/ray.io/v1/namespaces/x/rayclusters``.
        """
        prefix = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        resources = expect(c.get(prefix))["resources"]
        res = next((r for r in resources if r["kind"] == kind and "/" not in r["name"]), None)
        if res is None:
            raise ApiError(f"kind {kind} not served in {api_version}")
        if res["namespaced"]:
            if not namespace:
                raise ApiError(f"{kind} is namespaced: give a namespace")
            return f"{prefix}/namespaces/{namespace}/{res['name']}"
        return f"{prefix}/{res['name']}"

    def create_namespace(self, prefix: str = "wmap-e2e", labels: dict[str, str] | None = None) -> str:
        """Create a namespace with a fresh random name and return the name.

        Namespaces never finish deleting here (no namespace controller), so tests never reuse names.
        """
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        body = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"wmap-e2e": "true", **(labels or {})}},
        }
        with self.client() as c:
            expect(c.post("/api/v1/namespaces", json=body), 201)
        return name

    # -- audit log
    def audit_mark(self) -> int:
        """A position in the audit log; pass it to ``audit_events`` to see only later requests."""
        if self.audit_log is None or not self.audit_log.exists():
            return 0
        return self.audit_log.stat().st_size

    def audit_events(
        self,
        since: int = 0,
        *,
        user: str | None = None,
        stage: str | None = "ResponseComplete",
        settle: float = 0.5,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """Audit events (Metadata level, one per request at stage ResponseComplete) written after ``since``.

        Events are written just after the response is sent, so this re-reads the log until it has not
        grown for ``settle`` seconds.
        """
        if self.audit_log is None:
            pytest.skip("no audit log for this server (set WMAP_TEST_AUDIT_LOG)")
        last_size, stable_since = -1, time.monotonic()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            size = self.audit_log.stat().st_size if self.audit_log.exists() else 0
            if size != last_size:
                last_size, stable_since = size, time.monotonic()
            elif time.monotonic() - stable_since >= settle:
                break
            time.sleep(0.05)
        events = []
        with self.audit_log.open("rb") as f:
            f.seek(since)
            for line in f:
                if not line.strip():
                    continue
                ev = json.loads(line)
                if stage and ev.get("stage") != stage:
                    continue
                if user and ev.get("user", {}).get("username") != user:
                    continue
                if predicate and not predicate(ev):
                    continue
                events.append(ev)
        return events

    # -- CRDs
    def apply_crd_file(self, path: Path, timeout: float = 60.0, wait: bool = True) -> list[str]:
        """Apply every CustomResourceDefinition in a YAML file; wait until Established and served."""
        names = []
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            if doc.get("kind") != "CustomResourceDefinition":
                raise ApiError(f"{path}: not a CustomResourceDefinition: {doc.get('kind')}")
            self.apply(doc)
            names.append(doc["metadata"]["name"])
        if wait:
            for name in names:
                self.wait_crd_established(name, timeout)
        return names

    def wait_crd_established(self, name: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        crd: dict[str, Any] = {}
        with self.client() as c:
            while time.monotonic() < deadline:
                crd = expect(c.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"))
                conds = {x["type"]: x for x in (crd.get("status") or {}).get("conditions") or []}
                if conds.get("Established", {}).get("status") == "True":
                    break
                if conds.get("NamesAccepted", {}).get("status") == "False":
                    raise ApiError(f"CRD {name}: names not accepted: {conds['NamesAccepted'].get('message')}")
                time.sleep(0.2)
            else:
                raise ApiError(f"CRD {name} not Established after {timeout}s: {crd.get('status')}")
            # Established means served; wait until discovery shows it too.
            group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
            for v in (v["name"] for v in crd["spec"]["versions"] if v.get("served")):
                while True:
                    r = c.get(f"/apis/{group}/{v}")
                    if r.status_code == 200 and any(x["name"] == plural for x in r.json()["resources"]):
                        break
                    if time.monotonic() > deadline:
                        raise ApiError(f"CRD {name}: {group}/{v} {plural} not in discovery after {timeout}s")
                    time.sleep(0.2)
        return crd


# --------------------------------------------------------------------------- getting a server


def _script(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False)


def _parse_env(text: str) -> dict[str, str]:
    env = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("export ") and "=" in line:
            k, v = line[len("export ") :].split("=", 1)
            env[k] = v.strip("'\"")
    return env


def _readyz(creds: dict[str, Any]) -> str | None:
    """None when the server answers /readyz with 200, else why not."""
    try:
        with _client_from_creds(creds, timeout=5) as c:
            r = c.get("/readyz")
            return None if r.status_code == 200 else f"/readyz -> {r.status_code}: {r.text[:300]}"
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def _server_from_env(env: dict[str, str], started_here: bool) -> ApiServer:
    kubeconfig = Path(env["WMAP_TEST_KUBECONFIG"])
    admin = _kubeconfig_credentials(kubeconfig)
    restricted_path = env.get("WMAP_TEST_RESTRICTED_KUBECONFIG")
    restricted = _kubeconfig_credentials(Path(restricted_path)) if restricted_path else None
    audit = env.get("WMAP_TEST_AUDIT_LOG")
    return ApiServer(
        url=admin["server"],
        kubeconfig=kubeconfig,
        restricted_kubeconfig=Path(restricted_path) if restricted_path else None,
        audit_log=Path(audit) if audit else None,
        started_here=started_here,
        k8s_version=env.get("WMAP_TEST_K8S_VERSION", ""),
        _admin=admin,
        _restricted=restricted,
    )


def _say(config: pytest.Config, message: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"[e2e] {message}")


def _acquire_server(config: pytest.Config) -> ApiServer:
    reasons = []
    # 1. An explicitly configured server (e.g. eval "$(scripts/test-cluster.sh env)").
    if os.environ.get("WMAP_TEST_KUBECONFIG"):
        env = {k: v for k, v in os.environ.items() if k.startswith("WMAP_TEST_")}
        try:
            server = _server_from_env(env, started_here=False)
            why = _readyz(server._admin)
        except Exception as e:
            why = f"{type(e).__name__}: {e}"
        if why is None:
            _say(config, f"using the API server of WMAP_TEST_KUBECONFIG ({server.url})")
            return server
        reasons.append(f"WMAP_TEST_KUBECONFIG={env['WMAP_TEST_KUBECONFIG']} is not usable ({why})")
        _say(config, reasons[-1] + "; starting one")

    # 2. One already started by scripts/test-cluster.sh start.
    if _script("status", timeout=30).returncode == 0:
        env = _parse_env(_script("env", timeout=30).stdout)
        if env.get("WMAP_TEST_KUBECONFIG"):
            _say(config, f"reusing the running test API server ({env.get('WMAP_TEST_APISERVER_URL')})")
            return _server_from_env(env, started_here=False)

    # 3. Start one (building the binaries first if they are not cached).
    paths = dict(line.split("=", 1) for line in _script("paths", timeout=30).stdout.split() if "=" in line)
    built = all(Path(paths.get(k, "/nonexistent")).is_file() for k in ("kube-apiserver", "etcd"))
    if not built:
        if shutil.which("go") is None:
            unavailable(
                "the kube-apiserver/etcd binaries are not built and Go is not installed. "
                "Install Go >= 1.25, then run `scripts/test-cluster.sh build` (once, ~20 min) "
                "to enable the e2e tests. " + " ".join(reasons)
            )
        _say(config, "building kube-apiserver + etcd (first run only; ~20 min on 2 cores) and starting them")
    else:
        _say(config, "starting the test API server (scripts/test-cluster.sh start)")
    t0 = time.monotonic()
    try:
        res = _script("start", timeout=3600)
    except subprocess.TimeoutExpired:
        unavailable("scripts/test-cluster.sh start timed out after 3600s")
    if res.returncode != 0:
        unavailable(
            f"scripts/test-cluster.sh start failed (exit {res.returncode}):\n{res.stderr[-4000:]}\n" + " ".join(reasons)
        )
    env = _parse_env(_script("env", timeout=30).stdout)
    if not env.get("WMAP_TEST_KUBECONFIG"):
        unavailable(f"scripts/test-cluster.sh env printed nothing usable after start:\n{res.stderr[-2000:]}")
    _say(
        config,
        f"test API server ready in {time.monotonic() - t0:.0f}s at {env.get('WMAP_TEST_APISERVER_URL')}",
    )
    return _server_from_env(env, started_here=True)


@pytest.fixture(scope="session")
def api_server(pytestconfig: pytest.Config) -> Iterator[ApiServer]:
    """The test API server, with the test CRDs (and the Karta CRD, if present) applied and Established."""
    server = _acquire_server(pytestconfig)
    try:
        for path in sorted(TEST_CRD_DIR.glob("*.yaml")):
            server.applied_crds += server.apply_crd_file(path, wait=False)
        for name in server.applied_crds:
            server.wait_crd_established(name)
        if KARTA_CRD_FILE.is_file():
            try:
                server.applied_crds += server.apply_crd_file(KARTA_CRD_FILE)
            except Exception as e:  # reported by the karta_crd fixture, not fatal for the other tests
                server.karta_crd_error = f"{type(e).__name__}: {e}"
        yield server
    finally:
        if server.started_here and os.environ.get("WMAP_TEST_KEEP_CLUSTER", "") not in {"1", "true"}:
            res = _script("stop", timeout=120)
            if res.returncode != 0:
                print(f"[e2e] scripts/test-cluster.sh stop failed: {res.stderr}")


@pytest.fixture
def kube(api_server: ApiServer) -> Iterator[httpx.Client]:
    """An httpx.Client for the admin user, base_url set to the API server."""
    with api_server.client() as c:
        yield c


@pytest.fixture
def restricted_kube(api_server: ApiServer) -> Iterator[httpx.Client]:
    """An httpx.Client for the restricted user: discovery only, Forbidden elsewhere unless RBAC-bound."""
    with api_server.restricted_client() as c:
        yield c


@pytest.fixture
def namespace(api_server: ApiServer) -> str:
    """A fresh namespace (random name) for one test."""
    return api_server.create_namespace()


@pytest.fixture
def make_namespace(api_server: ApiServer) -> Callable[..., str]:
    """Factory: ``make_namespace(prefix="wmap-e2e", labels=None) -> name`` for tests that need several."""
    return api_server.create_namespace


@pytest.fixture
def karta_crd(api_server: ApiServer) -> dict[str, Any]:
    """The established Karta CRD object; skips while deploy/crds/kartas.run.ai.yaml does not exist."""
    if not KARTA_CRD_FILE.is_file():
        pytest.skip(f"{KARTA_CRD_FILE} does not exist yet")
    if api_server.karta_crd_error:
        pytest.fail(f"applying {KARTA_CRD_FILE} failed: {api_server.karta_crd_error}")
    return api_server.wait_crd_established(KARTA_CRD_NAME)


@pytest.fixture
def wmap(api_server: ApiServer, tmp_path: Path) -> Wmap:
    """`wmap` against the test server, with a HOME and a discovery cache of this test's own."""
    from .test_live_support import make_wmap

    return make_wmap(api_server, tmp_path)


@pytest.fixture
def web(api_server: ApiServer, namespace: str) -> str:
    """A fresh namespace (its name) holding a one-replica Deployment `web` (no ReplicaSet, no pods): something for
    a command to list or read. test_live_describe.py has a `web` of its own (the Deployment with its pods)."""
    from .test_live_support import create, deployment_body

    create(api_server, deployment_body("web", replicas=1), namespace=namespace)
    return namespace


@pytest.fixture(params=["sync", "async"])
def cluster_api(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The cluster API a case runs through: "sync" (`Cluster`) or "async" (`AsyncCluster`, see apis.py). The live
    tests use it for every case, so the same cases and assertions run through both."""
    if request.param == "async":
        from .apis import install_async

        install_async(monkeypatch)
    return str(request.param)
