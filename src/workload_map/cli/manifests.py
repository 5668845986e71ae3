"""Reading workload manifests for `describe -f`: files, directories and stdin, as YAML streams.

Every non-empty document is one manifest; a `kind: List` (or any `*List` with `items`, as `kubectl get -o yaml`
prints) is unpacked into its items. YAML is read through `workload_map.model.yamlio` (size limit, alias bombs,
duplicate keys, errors with line numbers). Values YAML types but JSON does not (timestamps, non-string keys) are
turned into strings, as kubectl reads them, so a manifest never fails for an unquoted date.

A manifest is then *classified*: `workload_like` tells a workload we cannot describe (it has pod containers) from a
document that plainly is not one (a ConfigMap, a Service, a CRD), which `describe` skips quietly in a stream.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map._io import InputError
from workload_map.cli.errors import CLIError, UsageError
from workload_map.model import DocumentError
from workload_map.model.yamlio import iter_files, read_documents_each
from workload_map.model.yamlio import unreadable_directories as yamlio_unreadable_directories

if TYPE_CHECKING:
    from pathlib import Path

# Kinds that are never workloads, whatever they hold (checked before looking for pod containers).
NOT_WORKLOADS = frozenset(
    {
        "APIService",
        "Certificate",
        "ClusterIssuer",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "CustomResourceDefinition",
        "Endpoints",
        "EndpointSlice",
        "Gateway",
        "HorizontalPodAutoscaler",
        "HTTPRoute",
        "Ingress",
        "IngressClass",
        "Issuer",
        "Karta",
        "Lease",
        "LimitRange",
        "MutatingWebhookConfiguration",
        "Namespace",
        "NetworkPolicy",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
        "PodMonitor",
        "PriorityClass",
        "PrometheusRule",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "RuntimeClass",
        "Secret",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VerticalPodAutoscaler",
    }
)


class Manifest(msgspec.Struct, frozen=True):
    """One document of an input: where it came from (`label` names the file and document) and its value."""

    source: str
    label: str
    value: Any

    @property
    def api_version(self) -> str:
        value = self.value.get("apiVersion") if isinstance(self.value, Mapping) else None
        return value if isinstance(value, str) else ""

    @property
    def kind(self) -> str:
        value = self.value.get("kind") if isinstance(self.value, Mapping) else None
        return value if isinstance(value, str) else ""

    @property
    def name(self) -> str:
        metadata = self.value.get("metadata") if isinstance(self.value, Mapping) else None
        if not isinstance(metadata, Mapping):
            return ""
        name = metadata.get("name") or metadata.get("generateName")
        return name if isinstance(name, str) else ""

    @property
    def has_type(self) -> bool:
        return bool(self.api_version and self.kind)

    @property
    def has_status(self) -> bool:
        status = self.value.get("status") if isinstance(self.value, Mapping) else None
        return bool(status)

    @property
    def gvk_text(self) -> str:
        """`group/version/Kind` (`v1/Pod` for the core group), as upstream writes a GVK."""
        return f"{self.api_version}/{self.kind}"

    @property
    def short(self) -> str:
        """`Kind/name` for lists of skipped documents."""
        return f"{self.kind or '?'}/{self.name or '?'}"

    @property
    def workload_like(self) -> bool:
        """Whether this looks like a workload: not a known non-workload kind, and pod containers in its spec."""
        if self.kind in NOT_WORKLOADS or not isinstance(self.value, Mapping):
            return False
        return _has_containers(self.value.get("spec"), 0)


class Manifests(msgspec.Struct, frozen=True):
    """The documents of every input, in order. `single` is True for one file holding one document (not a list):
    the case where `describe` prints a bare view rather than a list."""

    documents: tuple[Manifest, ...]
    single: bool
    bad: tuple[DocumentError, ...] = ()  # documents of a stream that could not be read (the others are here)


def _has_containers(node: Any, depth: int) -> bool:
    if depth > 16:
        return False
    if isinstance(node, Mapping):
        containers = node.get("containers")
        if isinstance(containers, list) and any(
            isinstance(c, Mapping) and ("image" in c or "name" in c) for c in containers
        ):
            return True
        container = node.get("container") or node.get("mainContainer")
        if isinstance(container, Mapping) and "image" in container:
            return True
        return any(_has_containers(child, depth + 1) for child in node.values() if isinstance(child, (dict, list)))
    if isinstance(node, list):
        return any(_has_containers(child, depth + 1) for child in node if isinstance(child, (dict, list)))
    return False


_STR = repeat(str)
_NESTED = repeat((dict, list, datetime.date))


def jsonable(value: Any) -> Any:
    """`value` with YAML-only types made JSON (timestamps to RFC 3339 strings, keys to strings)."""
    # The checks map isinstance in C (no generator frame per key and per value): a manifest's every container
    # passes through here (issue 19).
    if isinstance(value, dict):
        if all(map(isinstance, value, _STR)) and not any(map(isinstance, value.values(), _NESTED)):
            return value
        return {key if isinstance(key, str) else _scalar_text(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        if not any(map(isinstance, value, _NESTED)):
            return value
        return [jsonable(item) for item in value]
    if isinstance(value, datetime.date):
        return _scalar_text(value)
    return value


def _scalar_text(value: Any) -> str:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None and value.utcoffset() == datetime.timedelta(0):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def unreadable_directories(directory: Path) -> list[DocumentError]:
    """The directories below `directory` that cannot be listed (their files are not read): named, not skipped
    silently (`Path.rglob` ignores them)."""
    return [
        DocumentError(where, f"cannot be read: {why} (a directory: not searched)")
        for where, why in yamlio_unreadable_directories(directory)
    ]


def _as_pathlib_writes_it(raw: str) -> bool:
    """Whether `str(Path(raw)) == raw`: no empty or `.` part for pathlib to drop (a leading `/` is the root)."""
    parts = raw.split("/")
    return all(part not in ("", ".") for part in (parts[1:] if raw.startswith("/") else parts))


def _files_of(raw: str) -> tuple[list[str] | list[Path], bool]:
    """The files an input names and whether it was a directory."""
    if raw == "-":
        return ["-"], False
    if not raw:
        raise UsageError("-f '' names no file", hint="give a file, a directory, or - for stdin")
    if _as_pathlib_writes_it(raw) and os.path.isfile(raw):
        # the common case, one file, in os.path: pathlib (with urllib.parse, ipaddress) costs ~2.5 ms of a start
        # (issue 19); the name is the label pathlib would have made of it
        return [raw], False
    from pathlib import Path

    path = Path(raw)
    if path.is_dir():
        files = list(iter_files(path))
        if not files:
            raise UsageError(f"{raw}: no *.yaml, *.yml or *.json files in this directory", hint="point -f at manifests")
        return files, True
    if not path.exists():
        raise CLIError(f"{raw}: no such file or directory", hint="check the path given to -f")
    return [path], False


def read_manifests(inputs: Sequence[str]) -> Manifests:
    """Every document of every input (a file, a directory searched for *.yaml/*.yml/*.json, or `-`).

    A missing or unreadable file (over the 64 MiB limit, a FIFO without a writer) is exit 1; a file none of whose
    documents is YAML (or JSON) is exit 2, naming the line. A bad document in a stream with good ones is kept in
    `bad` (the caller names it and ends with exit 1); the others are read.
    """
    documents: list[Manifest] = []
    bad: list[DocumentError] = []
    directories = False
    lists = False
    for raw in inputs:
        files, directory = _files_of(raw)
        directories = directories or directory
        if directory:
            from pathlib import Path

            bad.extend(unreadable_directories(Path(raw)))
        for file in files:
            try:
                each = read_documents_each(file)
            except DocumentError as exc:
                if isinstance(exc.__cause__, InputError):  # missing, unreadable, over the limit, no writer
                    if directory:  # one file of a directory: named, the others are read (a partial result)
                        bad.append(exc)
                        continue
                    raise CLIError(str(exc)) from None
                raise UsageError(str(exc), hint="-f reads Kubernetes manifests as YAML or JSON") from None
            parsed = [item for item in each if not isinstance(item, DocumentError)]
            failed = [item for item in each if isinstance(item, DocumentError)]
            if failed and not parsed and len(inputs) == 1 and not directory:
                # nothing of the one file named could be read: not YAML at all (exit 2)
                raise UsageError(str(failed[0]), hint="-f reads Kubernetes manifests as YAML or JSON") from None
            bad.extend(failed)
            many = len(each) > 1
            for document in parsed:
                label = document.label if many else document.source
                value = document.value
                items = _list_items(value)
                if items is None:
                    documents.append(Manifest(document.source, label, jsonable(value)))
                    continue
                lists = True
                for index, item in enumerate(items):
                    documents.append(Manifest(document.source, f"{label} items[{index}]", jsonable(item)))
    if bad and not documents:
        raise UsageError(str(bad[0]), hint="-f reads Kubernetes manifests as YAML or JSON")
    single = len(inputs) == 1 and not directories and not lists and not bad and len(documents) == 1
    return Manifests(tuple(documents), single, tuple(bad))


def _list_items(value: Any) -> list[Any] | None:
    if not isinstance(value, Mapping):
        return None
    kind = value.get("kind")
    items = value.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        return items
    return None


def related_objects(inputs: Sequence[str]) -> tuple[list[dict[str, Any]], list[DocumentError]]:
    """The objects of the `--with` inputs (read as `read_manifests` reads `-f`), and the documents that could not
    be read (the caller names them; the run then ends with exit 1)."""
    if not inputs:
        return [], []
    given = read_manifests(inputs)
    return [manifest.value for manifest in given.documents if isinstance(manifest.value, dict)], list(given.bad)
