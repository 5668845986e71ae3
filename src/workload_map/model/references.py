"""The `workloadmap.io/references` annotation: objects a workload's roles live in (docs/definitions.md,
"Cross-object references").

Every path of a definition is jq over the workload object alone, so a kind whose roles live in another object (a
Kubeflow TrainJob's in the TrainingRuntime or ClusterTrainingRuntime its `spec.runtimeRef` names) cannot be
described from the workload. A definition names the objects to follow with this annotation (a YAML mapping in a
string; upstream ignores it, as it ignores every `workloadmap.io/` annotation):

```yaml
metadata:
  annotations:
    workloadmap.io/references: |
      runtime:                                   # the name the definition's paths read it by
        apiVersion: '"trainer.kubeflow.org/v1alpha1"'           # jq over the workload: one string
        kind: '.spec.runtimeRef.kind // "ClusterTrainingRuntime"'  # jq: one string
        name: '.spec.runtimeRef.name'            # jq: one string; null or "": no reference (nothing to follow)
        namespaced: '.spec.runtimeRef.kind == "TrainingRuntime"'  # jq: a boolean (default: true, the workload's)
        content: '{spec: {mlPolicy: .spec.mlPolicy, template: .spec.template}}'  # jq over the referenced object
```

The referenced object's `content` (default: the whole object) is offered to the definition's expressions at
`.["workloadmap.io/references"].<name>` of the workload (no Kubernetes object has a top-level key with a `/`);
when the reference is not followed (upstream, no object supplied, not found) that key is absent, so a definition
falls back with `//` to what the workload says alone. Every expression is a jq field of the definition: it passes
the same safety check and runs under the same containment (`jq_fields` lists them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

import msgspec

from workload_map.model import yaml_subset
from workload_map.model.extensions import REFERENCES

__all__ = [
    "MAX_REFERENCES",
    "REFERENCES",
    "REFERENCES_KEY",
    "ReferenceRule",
    "reference_expressions",
    "reference_problems",
    "reference_rules",
]


REFERENCES_KEY: Final = "workloadmap.io/references"
"""The top-level key of the workload under which the followed objects' content is offered to the expressions."""

MAX_REFERENCES: Final = 8
"""References one definition may name: each may cost a GET per workload (bounded, cached per command)."""

_EXPRESSIONS: Final = ("apiVersion", "kind", "name", "namespaced", "content")
_REQUIRED: Final = ("apiVersion", "kind", "name")
_MAX_TEXT: Final = 64 * 1024


class ReferenceRule(msgspec.Struct, frozen=True):
    """One reference: its `name` (the key the definition's paths read it by) and jq expressions over the workload
    for the referenced object's apiVersion, kind, name and whether it is namespaced (None: it is, in the
    workload's namespace), and `content`, jq over the referenced object (None: the whole object)."""

    name: str
    api_version: str
    kind: str
    object_name: str
    namespaced: str | None = None
    content: str | None = None

    def expressions(self) -> Iterator[tuple[str, str]]:
        """(key, expression) of every expression set, in the annotation's key order."""
        values = (self.api_version, self.kind, self.object_name, self.namespaced, self.content)
        for key, value in zip(_EXPRESSIONS, values, strict=True):
            if value is not None:
                yield key, value


def reference_rules(annotations: Mapping[str, str] | None) -> tuple[ReferenceRule, ...]:
    """The definition's references (none when the annotation is absent or malformed: `reference_problems` says
    why)."""
    rules, _ = _read(annotations)
    return rules


def reference_problems(annotations: Mapping[str, str] | None) -> list[str]:
    """Why the annotation cannot be read (one message per problem); empty when it is absent or well formed."""
    _, problems = _read(annotations)
    return problems


def reference_expressions(annotations: Mapping[str, str] | None) -> Iterator[tuple[str, str]]:
    """(YAML field path, expression) of every expression of the annotation, for `jq_fields`."""
    where = f'metadata.annotations["{REFERENCES}"]'
    for rule in reference_rules(annotations):
        for key, expression in rule.expressions():
            yield f"{where}.{rule.name}.{key}", expression


_NAME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def _read(annotations: Mapping[str, str] | None) -> tuple[tuple[ReferenceRule, ...], list[str]]:
    text = annotations.get(REFERENCES) if annotations else None
    if text is None:
        return (), []
    if not isinstance(text, str) or len(text) > _MAX_TEXT:
        return (), [f"not a YAML mapping of at most {_MAX_TEXT} characters"]
    loaded = yaml_subset.safe_load(text)  # exactly safe_load's value, or declined: PyYAML reads it
    if loaded is not None:
        data: Any = loaded[0]
    else:
        import yaml  # only for a text the fast reader declines (issue 19: start-up)

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            return (), [f"not YAML: {str(error).splitlines()[0]}"]
    if not isinstance(data, dict) or not data:
        return (), ["not a YAML mapping of reference name to {apiVersion, kind, name, namespaced?, content?}"]
    if len(data) > MAX_REFERENCES:
        return (), [f"{len(data)} references; at most {MAX_REFERENCES}"]
    rules: list[ReferenceRule] = []
    problems: list[str] = []
    for name, body in data.items():
        if not isinstance(name, str) or not name or not set(name) <= _NAME_CHARS or len(name) > 63:
            problems.append(f"reference name {name!r}: letters, digits, - and _ only, at most 63")
            continue
        if not isinstance(body, dict):
            problems.append(f"{name}: not a mapping of {', '.join(_EXPRESSIONS)}")
            continue
        unknown = sorted(str(key) for key in body if key not in _EXPRESSIONS)
        if unknown:
            problems.append(f"{name}: unknown key {', '.join(unknown)} (known: {', '.join(_EXPRESSIONS)})")
            continue
        missing = [key for key in _REQUIRED if key not in body]
        if missing:
            problems.append(f"{name}: {', '.join(missing)} missing")
            continue
        bad = [key for key, value in body.items() if not isinstance(value, str) or not value.strip()]
        if bad:
            problems.append(f"{name}: {', '.join(map(str, bad))} must be a non-empty jq expression (a string)")
            continue
        rules.append(
            ReferenceRule(
                name, body["apiVersion"], body["kind"], body["name"], body.get("namespaced"), body.get("content")
            )
        )
    if problems:
        return (), problems
    return tuple(rules), []
