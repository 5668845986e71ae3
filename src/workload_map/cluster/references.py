"""Reading the objects a workload's definition refers to (`workloadmap.io/references`, docs/definitions.md): one GET
each, bounded and cached per command; an object that is missing, not served or forbidden is a one-line reason,
never the end of the command (the workload is still shown, from what it says alone).

    fetcher = ReferenceFetcher(cluster)
    objects, reasons = fetcher.fetch(references)       # references: resolve.references.ObjectReference
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from workload_map.cluster.core import Operation, get_op
from workload_map.cluster.errors import ClusterError, NotFound
from workload_map.cluster.session import Cluster
from workload_map.model.references import MAX_REFERENCES
from workload_map.resolve.references import ObjectReference

__all__ = ["MAX_FETCHES", "ReferenceFetcher"]

MAX_FETCHES: Final = 64
"""GETs one command sends for references at most (the rest are reasons): a `get -A` of many TrainJobs sharing
a few runtimes costs a few requests, and a list of thousands naming each its own cannot cost thousands."""


class ReferenceFetcher:
    """GETs referenced objects through one cluster's discovery, each (apiVersion, kind, namespace, name) once per
    fetcher: an answer (the object or why not) is kept, so many workloads naming one runtime cost one request."""

    def __init__(self, cluster: Cluster, *, limit: int = MAX_FETCHES) -> None:
        self.cluster = cluster
        self.limit = limit
        self.sent = 0
        self._answers: dict[tuple[str, str, str, str], dict[str, Any] | str] = {}

    def fetch(self, references: Iterable[ObjectReference]) -> tuple[list[dict[str, Any]], list[str]]:
        """The objects found, and a reason for each reference that could not be read (naming it)."""
        found: list[dict[str, Any]] = []
        reasons: list[str] = []
        for reference in list(references)[:MAX_REFERENCES]:
            answer = self._answer(reference)
            if isinstance(answer, str):
                reasons.append(f"reference {reference.name}: {reference.describe()} {answer}")
            else:
                found.append(answer)
        return found, reasons

    def _answer(self, reference: ObjectReference) -> dict[str, Any] | str:
        key = (reference.api_version, reference.kind, reference.namespace, reference.object_name)
        known = self._answers.get(key)
        if known is None:
            known = self._answers[key] = self._get(reference)
        return known

    def _get(self, reference: ObjectReference) -> dict[str, Any] | str:
        # the name and namespace come from the workload (untrusted text): only a Kubernetes name goes into a path
        if not _is_name(reference.object_name) or (reference.namespace and not _is_name(reference.namespace)):
            return "was not read: its name is not a Kubernetes object name (a DNS-1123 subdomain)"
        resource = self.cluster.discovery_document().find(reference.group, reference.version, reference.kind)
        if resource is None:
            return f"is not served by the cluster ({reference.api_version} {reference.kind} is not installed)"
        if self.sent >= self.limit:
            return f"was not read: the command reads at most {self.limit} referenced objects"
        self.sent += 1
        scope = reference.namespace if resource.namespaced else None
        path = resource.object_path(reference.object_name, scope)
        op = Operation("get", resource.qualified, scope, reference.object_name)
        try:
            obj = self.cluster.run(get_op(path, op=op))
        except NotFound:
            return "was not found"
        except ClusterError as error:  # forbidden, unreachable, ...: one line naming the user or the server
            return f"could not be read: {error.message}"
        if not isinstance(obj, dict):
            return "could not be read: the server answered something that is not an object"
        return obj


_LABEL_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def _is_name(name: str) -> bool:
    """A DNS-1123 subdomain (what an object name is): at most 253 characters, dot-separated labels of lowercase
    letters, digits and `-`, each starting and ending with a letter or digit."""
    if not name or len(name) > 253:
        return False
    return all(
        label and set(label) <= _LABEL_CHARS and label[0] != "-" and label[-1] != "-" for label in name.split(".")
    )
