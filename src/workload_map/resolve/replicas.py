"""The replica rules: how many pods an instance asks for, and the least it can run with. One module, so the view,
the gang plans and every front end count the same way (docs/resolve.md, "Replica counts").

* `desired_replicas`: `replicas` when the object sets it (0 is a real answer: scaled to zero), else
  `minReplicas`, else 1, because every workload API we cover defaults an unset replica count to 1 (Deployment,
  StatefulSet, JobSet replicatedJobs, the training operators' replicaSpecs, LWS, Ray worker groups). An instance
  without a scaleDefinition runs one pod per replica of its parent.
* `min_replicas`: upstream's effMin (karta-spec §12.2): `minReplicas` when > 0, else `replicas` when > 0, else 0;
  `maxReplicas` is never used. The gang minimum starts from it.

Negative counts read as 0 (`Resolution.warnings` lists each one).
"""

from __future__ import annotations

from workload_map.errors import ArgumentTypeError
from workload_map.resolve.results import Scale


def _scale(scale: Scale | None) -> Scale | None:
    if scale is not None and not isinstance(scale, Scale):
        raise ArgumentTypeError("the scale", "a Scale (a component instance's .scale) or None", scale)
    return scale


__all__ = ["desired_replicas", "min_replicas"]


def desired_replicas(scale: Scale | None) -> int:
    """How many replicas the spec asks for: `replicas`, else `minReplicas`, else 1 (see the module doc)."""
    scale = _scale(scale)
    if scale is None:
        return 1
    for value in (scale.replicas, scale.min_replicas):
        if value is not None:
            return max(0, value)
    return 1


def min_replicas(scale: Scale | None) -> int:
    """Upstream's effMin: `minReplicas` if > 0, else `replicas` if > 0, else 0 (None counts as 0)."""
    scale = _scale(scale)
    if scale is None:
        return 0
    if scale.min_replicas is not None and scale.min_replicas > 0:
        return scale.min_replicas
    if scale.replicas is not None and scale.replicas > 0:
        return scale.replicas
    return 0
