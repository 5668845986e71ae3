"""deploy/controller/Containerfile, linted structurally (no container build tool runs here: podman and buildah are
not installed and docker has no daemon, so no image is built; tests/e2e/test_controller.py runs its ENTRYPOINT as
a process): known instructions only, a pinned base image, every COPY source in the repository, the extras the
controller's features need installed, a non-root user, the flags' default ports exposed, an exec-form entry point
that is a console script of the package."""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTAINERFILE = REPO / "deploy" / "controller" / "Containerfile"
KNOWN = {
    "FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG",
    "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
}  # fmt: skip


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), comments dropped and backslash continuations joined."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        whole = pending + stripped
        pending = ""
        word, _, rest = whole.partition(" ")
        found.append((word.upper(), rest.strip()))
    assert not pending, "a continuation line at the end of the file"
    return found


def test_the_containerfile_is_well_formed() -> None:
    steps = instructions(CONTAINERFILE.read_text())
    assert [word for word, _ in steps if word not in KNOWN] == []
    assert [word for word, _ in steps if word == "FROM"] == ["FROM"]
    assert steps[0][0] == "FROM"
    image = steps[0][1].split()[0]
    name, _, tag = image.rpartition(":")
    assert name and tag and tag != "latest" and "/" not in tag, f"base image {image!r}: pin a tag"

    for word, rest in steps:
        if word == "COPY":
            *sources, _destination = shlex.split(rest)
            for source in sources:
                assert (REPO / source).exists(), f"COPY {source}: not in the repository (the build context)"

    # the package as installed (pyproject's extras and console scripts)
    extras = set(metadata.metadata("workload-map").get_all("Provides-Extra") or [])
    scripts = {entry.name for entry in metadata.entry_points(group="console_scripts")}
    (install,) = [rest for word, rest in steps if word == "RUN" and "pip install" in rest]
    spec = next(part for part in shlex.split(install) if part.startswith(".["))
    installed = set(spec.removeprefix(".[").removesuffix("]").split(","))
    assert installed <= extras
    assert {"controller", "serve"} <= installed  # auto certificates (cryptography), --dashboard-bind-address (aiohttp)

    users = [rest for word, rest in steps if word == "USER"]
    assert users and users[-1] not in ("0", "root"), "the image must not run as root"
    assert steps.index(("USER", users[-1])) > max(i for i, (word, _) in enumerate(steps) if word == "RUN")

    exposed = {int(port) for word, rest in steps if word == "EXPOSE" for port in rest.split()}
    assert {8080, 8081, 8082, 9443} <= exposed  # metrics, probes, the chart's dashboard port, webhooks

    (entry,) = [rest for word, rest in steps if word == "ENTRYPOINT"]
    argv = json.loads(entry)  # exec form: signals reach the controller (graceful shutdown), no shell in between
    assert isinstance(argv, list) and argv[0] in scripts
    assert steps[-1][0] == "ENTRYPOINT"


def test_the_parser_sees_what_a_builder_sees() -> None:
    text = '# c\nFROM a:1\nRUN one \\\n  two\n\nENTRYPOINT ["x"]\n'
    assert instructions(text) == [("FROM", "a:1"), ("RUN", "one two"), ("ENTRYPOINT", '["x"]')]
