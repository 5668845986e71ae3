"""Golden text of `wmap get` (issue 20) on the real test API server: the table a person reads, default and
`-o wide`, one type and `--all-types`, one namespace and across namespaces, from the catalog fixtures installed as
the operators would leave them (tests/fixtures/catalog/<definition>/: workload, owners, pods, status).

What is fixed, and how:
- the objects: every catalog fixture whose kinds this suite's test CRDs (tests/e2e/crds) or the core API serve, by
  the repository's files alone (not by what the server happens to serve), so the set is the same on every server;
  a CRD's kind only at its preferred version, the one `get` lists (the test server has no conversion webhook: an
  object of another version would be listed unconverted, read by the wrong definition);
- the namespaces: `wmap-golden-a-<8 hex>` and `wmap-golden-b-<8 hex>` (names are never reused: namespaces never
  finish deleting here); the output's `<8 hex>` is written `xxxxxxxx`, the same width, so alignment is checked
  as printed;
- across namespaces, `-l wmap-golden=<run>` (a label put on the workloads installed here) keeps other tests'
  objects out; the label is not a column;
- the order: `get` lists newest first, by creationTimestamp (whole seconds); the fixtures are installed one per
  second, so the rows come in the reverse of the install order, never in a tie broken by a random name;
- AGE: the real `fmt.age` runs on each object's real creationTimestamp, at a clock fixed 90 seconds after that
  timestamp (`90s` in every row), so a column's width never depends on how long the install took; a separate
  test runs the same command on the real clock and checks every AGE cell is a real, recent age.

Regenerate after an intended change with
`WMAP_UPDATE_GOLDEN=1 python3 -m pytest -q tests/e2e/test_live_get_goldens.py` and review `git diff`
(docs/testing.md, "Golden outputs").
"""

from __future__ import annotations

import datetime
import os
import re
import time
import uuid
from pathlib import Path

import pytest
import yaml

from workload_map.cli.commands import get as get_command
from workload_map.cli.render import fmt

from .conftest import TEST_CRD_DIR, ApiServer, expect
from .test_live_support import FIXTURES, MERGE, Wmap, collection, fixture_objects, install_fixture

pytestmark = pytest.mark.e2e

GOLDEN = Path(__file__).resolve().parent / "golden" / "get"
AGE_OFFSET = datetime.timedelta(seconds=90)
# the fixtures installed in namespace b as well: a second namespace with a built-in, a CRD and a bare Pod
ALSO_IN_B = ("apps-deployment-v1", "core-pod-v1", "jobset-x-k8s-io-jobset-v1alpha2")
CORE_GROUPS = {"v1", "apps/v1", "batch/v1"}


KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def _version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes' order of a group's versions, first preferred: GA, then beta, then alpha, the higher numbers first;
    a version of another form after them, by name."""
    match = KUBE_VERSION.fullmatch(version)
    if match is None:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[match[2]]
    return (stage, -int(match[1]), -int(match[3] or 0), "")


def _crd_preferred() -> set[tuple[str, str]]:
    """(apiVersion, kind) of each test CRD at its preferred served version, read from the files."""
    found: set[tuple[str, str]] = set()
    for path in sorted(TEST_CRD_DIR.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            served = [version["name"] for version in spec["versions"] if version.get("served")]
            preferred = min(served, key=_version_priority)
            found.add((f"{spec['group']}/{preferred}", spec["names"]["kind"]))
    return found


def _installable() -> list[str]:
    served = _crd_preferred()
    names = []
    for folder in sorted(p for p in FIXTURES.iterdir() if (p / "workload.yaml").exists()):
        workload, owners, pods = fixture_objects(folder.name)
        kinds = {(o["apiVersion"], o["kind"]) for o in [workload, *owners, *pods]}
        if all(api in CORE_GROUPS or (api, kind) in served for api, kind in kinds):
            names.append(folder.name)
    return names


@pytest.fixture(scope="module")
def installed(api_server: ApiServer) -> dict[str, str]:
    """Namespaces a and b with the fixtures installed (b: `ALSO_IN_B` only), every workload labelled with this
    run's `wmap-golden` value: {"a": name, "b": name, "run": label value}."""
    run = uuid.uuid4().hex[:8]
    spaces = {"a": api_server.create_namespace("wmap-golden-a"), "b": api_server.create_namespace("wmap-golden-b")}
    fixtures = _installable()
    assert set(ALSO_IN_B) <= set(fixtures)
    for key, names in (("a", fixtures), ("b", list(ALSO_IN_B))):
        for name in names:
            stored = install_fixture(api_server, name, spaces[key])
            # `get` lists newest first (by the second-resolution creationTimestamp): one workload per second, so
            # the order is the install order, never a tie broken by a random namespace name
            created = datetime.datetime.fromisoformat(stored["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
            wait = (
                created + datetime.timedelta(seconds=1.05) - datetime.datetime.now(datetime.timezone.utc)
            ).total_seconds()
            if wait > 0:
                time.sleep(wait)
            with api_server.client() as kube:
                path = collection(kube, api_server, stored, spaces[key])
                patch = {"metadata": {"labels": {"wmap-golden": run}}}
                expect(kube.patch(f"{path}/{stored['metadata']['name']}", json=patch, headers=MERGE))
    return {**spaces, "run": run}


@pytest.fixture
def fixed_age(monkeypatch: pytest.MonkeyPatch) -> None:
    """`get`'s AGE cells: the real `fmt.age` of each real creationTimestamp, at that timestamp + 90 s."""

    def at_fixed_distance(timestamp: str | None, now: datetime.datetime | None = None) -> str:
        assert timestamp, "a listed object without a creationTimestamp"
        when = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        return fmt.age(timestamp, now=when + AGE_OFFSET)

    monkeypatch.setattr(get_command, "age", at_fixed_distance)


def _normalised(text: str, installed: dict[str, str]) -> str:
    for key in ("a", "b"):
        name = installed[key]
        text = text.replace(name, name[:-8] + "x" * 8)
    return text


def _compare(actual: str, name: str) -> None:
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("WMAP_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert golden.exists(), f"no {golden.name}: run with WMAP_UPDATE_GOLDEN=1 and review it"
    assert actual == golden.read_text(encoding="utf-8")


CASES = {
    # name: (arguments, namespace: "a" | None for -A with the run's label)
    "all-types": (("get", "--all-types"), "a"),
    "all-types-wide": (("get", "--all-types", "-o", "wide"), "a"),
    "all-types-all-namespaces": (("get", "--all-types", "-A"), None),
    "all-types-all-namespaces-wide": (("get", "--all-types", "-A", "-o", "wide"), None),
    "deployments-all-namespaces": (("get", "deployments", "-A"), None),
    "jobsets-wide": (("get", "jobsets", "-o", "wide"), "a"),
    "pytorchjobs": (("get", "pytorchjobs"), "a"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.usefixtures("fixed_age")
def test_get_text_equals_its_golden(case: str, installed: dict[str, str], wmap: Wmap) -> None:
    args, where = CASES[case]
    if where is None:
        result = wmap.run(*args, "-l", f"wmap-golden={installed['run']}")
    else:
        result = wmap.run(*args, namespace=installed[where])
    assert result.code == 0, result.stderr
    assert result.stderr == ""
    _compare(_normalised(result.stdout, installed), case)


AGE_CELL = re.compile(r"^(\d+)s$|^(\d+)m(\d+s)?$")


def test_the_real_clock_gives_every_row_a_recent_age(installed: dict[str, str], wmap: Wmap) -> None:
    """The same table as the `all-types-wide` golden, on the real clock: each AGE cell is an age under 30
    minutes, and apart from AGE the text is the golden's."""
    result = wmap.run("get", "--all-types", "-o", "wide", namespace=installed["a"])
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    golden = (GOLDEN / "all-types-wide.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(golden) > 1
    start = lines[0].index("AGE")
    for line, expected in zip(lines[1:], golden[1:], strict=True):
        cell = line[start:].split()[0]
        match = AGE_CELL.match(cell)
        assert match is not None, line
        seconds = int(match[1]) if match[1] else int(match[2]) * 60
        assert seconds < 30 * 60, line
        assert _without_age(_normalised(line, installed), start) == _without_age(expected, golden[0].index("AGE"))


def _without_age(line: str, start: int) -> list[str]:
    """The line's words but the AGE cell (found where the header puts it)."""
    before, after = line[:start].split(), line[start:].split()
    return [*before, *after[1:]]
