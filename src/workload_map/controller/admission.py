"""The admission decisions for Kartas, without I/O (`webhook.py` serves them over HTTPS):

* validating (`/validate-karta`): a Karta that does not load or that our validator finds errors in is denied, the
  message listing every finding with its field path; on UPDATE the root GVK may not change (KAI and our grouper
  look Kartas up by it);
* mutating (`/mutate-karta`): the `run.ai/karta-*` labels from the root kind, as a JSON patch, so a Karta carries
  them from its creation on.

Each takes and returns an `admission.k8s.io/v1` AdmissionReview (a dict).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from workload_map.controller.karta_status import GVK_LABELS, ROOT_KIND_PATH, root_gvk_of
from workload_map.model import DefinitionError, karta_from_dict
from workload_map.validation import errors, validate

__all__ = ["mutate_karta", "review_response", "validate_karta"]


def review_response(
    review: Mapping[str, Any], *, allowed: bool, message: str = "", patch: list[Any] | None = None
) -> dict[str, Any]:
    request = review.get("request") or {}
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": allowed}
    if not allowed:
        response["status"] = {"code": 422, "reason": "Invalid", "message": message}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def validate_karta(review: Mapping[str, Any]) -> dict[str, Any]:
    request = review.get("request") or {}
    obj = request.get("object")
    if not isinstance(obj, Mapping):
        return review_response(review, allowed=True)  # DELETE and CONNECT carry no object
    name = str((obj.get("metadata") or {}).get("name") or "?")
    try:
        karta = karta_from_dict(obj, f'Karta "{name}"')
    except DefinitionError as exc:
        where = f"{exc.path}: " if exc.path else ""
        return review_response(review, allowed=False, message=f'Karta "{name}" is invalid: {where}{exc.message}')
    problems = errors(validate(karta))
    old = request.get("oldObject")
    if request.get("operation") == "UPDATE" and isinstance(old, Mapping):
        before, after = root_gvk_of(old), root_gvk_of(obj)
        if before is not None and before != after:
            was = "/".join(part for part in before if part)
            return review_response(
                review, allowed=False, message=f'Karta "{name}" is invalid: {ROOT_KIND_PATH}: immutable (was {was})'
            )
    if problems:
        listed = "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)
        return review_response(
            review, allowed=False, message=f'Karta "{name}" is invalid: {len(problems)} error(s): {listed}'
        )
    return review_response(review, allowed=True)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def mutate_karta(review: Mapping[str, Any]) -> dict[str, Any]:
    request = review.get("request") or {}
    obj = request.get("object")
    gvk = root_gvk_of(obj) if isinstance(obj, Mapping) else None
    if not isinstance(obj, Mapping) or gvk is None:
        return review_response(review, allowed=True)
    labels = (obj.get("metadata") or {}).get("labels")
    patch: list[Any] = []
    if not isinstance(labels, Mapping):
        patch.append({"op": "add", "path": "/metadata/labels", "value": {}})
        labels = {}
    for key, value in zip(GVK_LABELS, gvk, strict=True):
        if labels.get(key) != value:
            patch.append({"op": "add", "path": f"/metadata/labels/{_escape(key)}", "value": value})
    return review_response(review, allowed=True, patch=patch)
