"""Deprecated: the jq layer has landed. Kept only as a re-export because `workload_map.pods.selectors` still names
this module in its import fallback; delete once that fallback is gone."""

from workload_map.jq import Document

__all__ = ["Document"]
