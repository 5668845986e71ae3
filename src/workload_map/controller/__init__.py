"""`workload_map.controller`: the long-running side (issue 22). A Karta operator (status conditions, Events and
the GVK labels KAI selects Kartas by) and a pod grouper (the configured scheduler's PodGroups kept in step with
each workload's gang plan, pods linked to them), in one asyncio process with leader election, health probes and
metrics. See docs/controller.md.

    workload-map-controller --scheduler volcano --namespaces ml,research

Placed above `cluster` and below `cli` (the CLI's `wmap controller` only parses flags and starts it).
"""

from workload_map.controller.main import main
from workload_map.controller.options import SCHEDULERS, ControllerOptions, OptionsError, parse_options

__all__ = ["SCHEDULERS", "ControllerOptions", "OptionsError", "main", "parse_options"]
