"""Small definitions shared by several test modules."""

from __future__ import annotations

from typing import Any

# The smallest valid Karta (karta-spec.md §1): a root with a full kind and an empty statusMappings.
MINIMAL_KARTA: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "minimal"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "minimal",
                "kind": {"group": "minimal.org", "version": "v1", "kind": "Minimal"},
                "statusDefinition": {"statusMappings": {}},
            }
        }
    },
}
