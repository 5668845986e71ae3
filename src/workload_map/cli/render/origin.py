"""What the tree renderer is told about a view besides the view itself (`Origin`).

Its own module, below `render.tree`: every `describe` builds one per view (`cli.views.tree_origin`), and under
`-o json` or `-o yaml` nothing else of the tree renderer is needed, so the command does not import it (issue 19:
start-up). `render.tree` re-exports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # the field's type only: a describe without workloadmap.io/groups makes no Group
    from workload_map.cli.render.shape import Group


class Origin(msgspec.Struct, frozen=True):
    """What the renderer is told besides the view: where a file-mode workload came from, whether its manifest
    carried a status, and the version its definition was written for when it is another version (fallback)."""

    source: str | None = None
    manifest_status: bool | None = None
    definition_version: str | None = None
    generated_name: bool = False  # the manifest gives only a generateName (the API server adds a suffix)
    # multi-instance components whose instance path finds no instance (an empty JobSet's replicatedJobs)
    empty_components: tuple[str, ...] = ()
    # (component, instance id; "" for a single instance) of pod-bearing instances without a pod template
    no_pod_template: frozenset[tuple[str, str]] = frozenset()
    # component name -> what the text calls it (the definition's workloadmap.io/display-names)
    display_names: Mapping[str, str] = msgspec.field(default_factory=dict)
    # (component, instance id) -> the objects of its kind an instance stands for (workloadmap.io/copies)
    copies: Mapping[tuple[str, str], int] = msgspec.field(default_factory=dict)
    # (component, instance id) -> the heading it is shown under (workloadmap.io/groups)
    groups: Mapping[tuple[str, str], Group] = msgspec.field(default_factory=dict)
