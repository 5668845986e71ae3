"""Whether the gangs of a workload fit a cluster now, where, and if not why (docs/placement.md).

    from workload_map.placement import ClusterSnapshot, place, rank

    snapshot = ClusterSnapshot.from_objects(nodes, pods, name="prod")
    result = place([gang_plan], snapshot)            # every gang of every plan, one after the other
    result.fits, result.score, result.reason         # ... and result.gangs: each gang's nodes or first reason
    ranked = rank([result, other])                   # the clusters that fit, best first, then the others

The rules: a pod goes onto a node when the node accepts it (node selector, tolerations against NoSchedule and
NoExecute taints, required node affinity: `workload_map.placement.rules`) and has free (allocatable minus the
requests of its bound pods and of the pods placed before) every resource one pod requests, plus one `pods`. A gang
fits only whole: its required pods (each role's `min_count`, a sub-group tree's minimums: a parent needs
`min_sub_group` of its children, tried cheapest first) all placed, or none is kept. A topology level (the gang's or
a sub-group's `requiredTopologyLevel`, or `topology_key`) keeps its pods on nodes sharing one value of that label.
Gangs are placed in order, each on what the ones before left. A workload that needs no gang (a Deployment) is given
as `PodByPod.of(resolution)`: each of its pods is placed on its own (best fit too, no whole-or-nothing, no
topology), and it fits when every pod it asks for does.

The pods of a role are placed best fit: the nodes with room for the fewest of them first, so fragmented nodes fill
up before whole ones are opened. The score (lower is better) is the number of nodes the placement leaves partly
used: nodes it put pods on that keep some of a requested accelerator (or, for a workload without accelerators,
CPU) free.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from workload_map.gang import Gang, GangPlan, GangRole, SubGroupPlan, no_gang_reason, pod_roles
from workload_map.placement.rules import PodConstraints
from workload_map.placement.snapshot import PODS, ClusterSnapshot, NodeState, to_nanos
from workload_map.resolve import Resolution
from workload_map.resources import NANO, human_amount, is_extended_resource

__all__ = ["NOT_MODELLED", "POD_BY_POD", "ClusterPlacement", "GangPlacement", "PodByPod", "place", "rank"]

NOT_MODELLED: Final = (
    "quotas (ResourceQuota, Kueue ClusterQueues)",
    "DRA resource claims",
    "pod affinity and anti-affinity",
    "topology spread constraints",
    "preferred node affinity and preferred topology levels",
    "preemption of lower-priority pods",
    "host ports, volumes and node conditions other than taints",
)
"""What the rules leave out: a placement that fits here can still wait or fail in the cluster."""


POD_BY_POD: Final = "pod by pod"
"""The `gang` name of a `GangPlacement` that holds the pods of a workload without a gang (`PodByPod`)."""


@dataclass(frozen=True)
class PodByPod:
    """A workload that needs no gang (a Deployment, a StatefulSet's pods, a single-node NIMService): the pods its
    spec asks for, as roles (`count` pods of one template and requests each), each pod scheduled on its own.
    `reason` says why it needs no gang; `notes`, what could not be read."""

    workload: str
    roles: tuple[GangRole, ...]
    reason: str = ""
    notes: tuple[str, ...] = ()

    @classmethod
    def of(cls, resolution: Resolution, reason: str | None = None) -> PodByPod:
        """The pods of a resolved workload (`workload_map.gang.pod_roles`: every component instance with pods,
        its desired count). `reason` defaults to the definition's (`gang.no_gang_reason`)."""
        roles, notes = pod_roles(resolution)
        ref = resolution.object
        workload = f"{ref.kind}/{ref.name}" if ref.name else ref.kind
        why = reason if reason is not None else no_gang_reason(resolution) or "placed pod by pod"
        return cls(workload, roles, why, notes)


@dataclass(frozen=True)
class GangPlacement:
    """One gang on one cluster: `fits`, the pods it needs, where they went (`nodes`: node name and pods, when it
    fits), the topology value it was kept in (`domain`), or the first `reason` it does not fit.

    For a workload without a gang (`PodByPod`), `gang` is `POD_BY_POD` and `pod_by_pod` is True: `pods` are all the
    pods it asks for, `fits` says whether every one does, and `nodes` holds where those that fit went (when some
    do not, too: they are scheduled one by one, so they run)."""

    workload: str
    gang: str
    pods: int
    fits: bool
    nodes: tuple[tuple[str, int], ...] = ()
    domain: str | None = None
    reason: str | None = None
    pod_by_pod: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"workload": self.workload, "gang": self.gang, "pods": self.pods, "fits": self.fits}
        if self.pod_by_pod:
            out["podByPod"] = True
        if self.fits or self.pod_by_pod:
            out["nodes"] = dict(self.nodes)
        if self.domain is not None:
            out["domain"] = self.domain
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class ClusterPlacement:
    """Every gang of the workloads on one cluster: `fits` when all of them do; `score` (fits only; lower is better:
    nodes left partly used), `nodes_used`, the first `reason` otherwise; `notes` say what was assumed."""

    cluster: str
    fits: bool
    gangs: tuple[GangPlacement, ...]
    score: int | None = None
    nodes_used: int = 0
    reason: str | None = None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cluster": self.cluster, "fits": self.fits}
        if self.score is not None:
            out["score"] = self.score
            out["nodesUsed"] = self.nodes_used
        if self.reason is not None:
            out["reason"] = self.reason
        out["gangs"] = [gang.to_dict() for gang in self.gangs]
        out["notes"] = list(self.notes)
        return out


def rank(placements: Iterable[ClusterPlacement]) -> list[ClusterPlacement]:
    """The clusters that fit, best first (lowest score, then fewest nodes used, then name), then the others by
    name."""
    given = list(placements)
    fitting = sorted((p for p in given if p.fits), key=lambda p: (p.score or 0, p.nodes_used, p.cluster))
    return fitting + sorted((p for p in given if not p.fits), key=lambda p: p.cluster)


# --- the demand: gangs as trees of roles ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Role:
    label: str
    count: int
    requests: Mapping[str, int]  # nanos, with one `pods`
    constraints: PodConstraints


@dataclass(frozen=True)
class _Group:
    label: str
    roles: tuple[_Role, ...]
    children: tuple[_Group, ...]
    need: int  # children required (parents only)
    topology_key: str | None

    @property
    def pods(self) -> int:
        own = sum(role.count for role in self.roles)
        cheapest = sorted(child.pods for child in self.children)[: self.need]
        return own + sum(cheapest)

    def least(self) -> dict[str, int]:
        """A lower bound of what the group takes in all, per resource: its roles' pods, and per resource the
        `need` smallest amounts its children take (a domain with less free cannot hold it)."""
        total: dict[str, int] = {}
        for role in self.roles:
            for name, amount in role.requests.items():
                total[name] = total.get(name, 0) + amount * role.count
        if self.children and self.need:
            bounds = [child.least() for child in self.children]
            for name in {name for bound in bounds for name in bound}:
                smallest = sorted(bound.get(name, 0) for bound in bounds)[: self.need]
                total[name] = total.get(name, 0) + sum(smallest)
        return total


def _min_count(role: GangRole) -> int:
    return role.min_count


def _roles(
    roles: Sequence[GangRole],
    required: int | None,
    label: str,
    notes: list[str],
    *,
    pick: Callable[[GangRole], int] = _min_count,
) -> tuple[_Role, ...]:
    """The roles' pods to place: `pick` of each (the gang's minimum by default), at most `required` in all."""
    out: list[_Role] = []
    left = sum(pick(role) for role in roles) if required is None else required
    for role in roles:
        count = min(pick(role), left)
        left -= count
        if count <= 0:
            continue
        where = f"{label}, role {role.name}"
        if role.requests is None:
            notes.append(f"{where}: its requests cannot be read; counted as none")
        requests = {name: to_nanos(amount) for name, amount in (role.requests or {}).items() if amount > 0}
        requests[PODS] = NANO
        out.append(_Role(where, count, requests, PodConstraints.from_template(role.template, where=where)))
    return tuple(out)


def _level(topology: Any) -> str | None:
    return getattr(topology, "required_level", None) if topology is not None else None


def _gang_group(gang: Gang, label: str, topology_key: str | None, notes: list[str]) -> _Group:
    key = topology_key or _level(gang.topology)
    if not gang.sub_groups:
        return _Group(label, _roles(gang.roles, gang.min_member, label, notes), (), 0, key)
    children: dict[str | None, list[SubGroupPlan]] = {}
    for sub_group in gang.sub_groups:
        children.setdefault(sub_group.parent, []).append(sub_group)

    def build(node: SubGroupPlan) -> _Group:
        where = f"{label}, sub-group {node.name}"
        if node.is_leaf:
            return _Group(where, _roles(node.roles, node.min_member, where, notes), (), 0, _level(node.topology))
        kids = tuple(build(kid) for kid in children.get(node.name, ()))
        return _Group(where, (), kids, min(node.min_sub_group or 0, len(kids)), _level(node.topology))

    top = tuple(build(node) for node in children.get(None, ()))
    need = len(top) if gang.min_sub_group is None else min(gang.min_sub_group, len(top))
    return _Group(label, (), top, need, key)


# --- the state: what is taken, with an undo log -------------------------------------------------------------


class _State:
    def __init__(self, nodes: Sequence[NodeState]) -> None:
        self.nodes = nodes
        # what each node has free before this placement (a node without a `pods` limit has no `pods` entry)
        self.base = [{name: node.free(name) for name in node.allocatable} for node in nodes]
        self.taken: dict[int, dict[str, int]] = {}
        self.log: list[tuple[int, Mapping[str, int], int]] = []
        self._eligible: dict[tuple[Any, ...], tuple[list[int], Counter[str]]] = {}
        # per (constraints, topology domain): the domain object is kept to tell a reused id() apart
        self._within: dict[tuple[Any, ...], tuple[frozenset[int], list[int]]] = {}

    def free(self, index: int, resource: str) -> int:
        return self.base[index].get(resource, 0) - self.taken.get(index, {}).get(resource, 0)

    def room(self, index: int, requests: Mapping[str, int]) -> int:
        """How many pods with these requests still fit on the node (a large number when they request nothing
        it counts). The fit loop's hot path: one dict lookup per resource."""
        base = self.base[index]
        taken = self.taken.get(index)
        most = 1 << 30
        for resource, amount in requests.items():
            have = base.get(resource)
            if have is None:
                if resource == PODS:
                    continue  # a node that reports no pod limit
                return 0
            if taken:
                have -= taken.get(resource, 0)
            fit = have // amount
            if fit < most:
                if fit <= 0:
                    return 0
                most = fit
        return most

    def take(self, index: int, requests: Mapping[str, int], pods: int) -> None:
        used = self.taken.setdefault(index, {})
        for resource, amount in requests.items():
            used[resource] = used.get(resource, 0) + amount * pods
        self.log.append((index, requests, pods))

    def mark(self) -> int:
        return len(self.log)

    def undo(self, mark: int) -> None:
        while len(self.log) > mark:
            index, requests, pods = self.log.pop()
            used = self.taken[index]
            for resource, amount in requests.items():
                used[resource] -= amount * pods
            if not any(used.values()):
                del self.taken[index]

    def candidates(self, constraints: PodConstraints, allowed: frozenset[int] | None) -> list[int]:
        """The nodes of `allowed` (None: all) that accept pods with these constraints."""
        accepted, _ = self.eligible(constraints)
        if allowed is None:
            return accepted
        key = (_constraints_key(constraints), id(allowed))
        cached = self._within.get(key)
        if cached is None or cached[0] is not allowed:
            cached = self._within[key] = (allowed, [i for i in accepted if i in allowed])
        return cached[1]

    def eligible(self, constraints: PodConstraints) -> tuple[list[int], Counter[str]]:
        """The nodes that accept pods with these constraints, and how many refuse them for each reason."""
        key = _constraints_key(constraints)
        cached = self._eligible.get(key)
        if cached is None:
            accepted: list[int] = []
            refused: Counter[str] = Counter()
            for index, node in enumerate(self.nodes):
                why = constraints.mismatch(node)
                if why is None:
                    accepted.append(index)
                else:
                    refused[why] += 1
            cached = self._eligible[key] = (accepted, refused)
        return cached


def _constraints_key(constraints: PodConstraints) -> tuple[Any, ...]:
    return (
        tuple(sorted(constraints.node_selector.items())),
        constraints.tolerations,
        repr(constraints.required_terms),
    )


# --- placing ----------------------------------------------------------------------------------------------------


def _amount(resource: str, nanos: int) -> str:
    """An amount as a person reads it (`47.1` cpu, `7.45Gi` memory, `8` GPUs): reasons are prose."""
    return human_amount(resource, Fraction(nanos, NANO))


def _pods(count: int) -> str:
    return f"{count} pod{'s' * (count != 1)}"


def _shown_order(requests: Mapping[str, int]) -> list[str]:
    """Accelerators first, then CPU and memory, then the rest; `pods` last."""

    def key(name: str) -> tuple[int, str]:
        rank = 0 if is_extended_resource(name) else 1 if name in ("cpu", "memory") else 3 if name == PODS else 2
        return rank, name

    return sorted(requests, key=key)


def _shortfall(role: _Role, candidates: Sequence[int], refused: Counter[str], state: _State, placed: int) -> str:
    reasons = ", ".join(f"{why} on {n} node{'s' * (n != 1)}" for why, n in refused.most_common(2))
    if not candidates:
        if not state.nodes:
            return f"{role.label}: needs {_pods(role.count)}; the cluster has no nodes"
        return f"{role.label}: needs {_pods(role.count)}; no node accepts them ({reasons})"
    order = _shown_order(role.requests)
    for resource in order:
        amount = role.requests[resource]
        if resource == PODS:
            if any(PODS not in state.nodes[i].allocatable for i in candidates):
                continue
            if max(state.free(i, PODS) for i in candidates) < amount:
                return f"{role.label}: needs {_pods(role.count)}; every node that accepts them is at its pod limit"
            continue
        best = max(state.free(i, resource) for i in candidates)
        if best < amount:
            return (
                f"{role.label}: needs {_pods(role.count)} of {_amount(resource, amount)} {resource}; "
                f"the largest node has {_amount(resource, best)} free"
            )
    main = order[0]
    what = f" of {_amount(main, role.requests[main])} {main}" if main != PODS else ""
    accepting = f"the {len(candidates)} node{'s' * (len(candidates) != 1)} that accept them"
    refusing = f" (the others: {reasons})" if reasons else ""
    return f"{role.label}: needs {_pods(role.count)}{what}; only {placed} fit on {accepting}{refusing}"


def _place_role(role: _Role, allowed: frozenset[int] | None, state: _State) -> str | None:
    accepted, refused = state.eligible(role.constraints)
    candidates = state.candidates(role.constraints, allowed)
    if allowed is not None and not candidates and accepted:
        refused = Counter({"outside the topology domain": len(accepted)})
    room = [(state.room(i, role.requests), i) for i in candidates]
    room = [(n, i) for n, i in room if n > 0]
    if sum(n for n, _ in room) < role.count:
        return _shortfall(role, candidates, refused, state, sum(n for n, _ in room))
    room.sort()  # best fit: the nodes with room for the fewest first (then node order)
    left = role.count
    for n, index in room:
        pods = min(n, left)
        state.take(index, role.requests, pods)
        left -= pods
        if left == 0:
            break
    return None


def _place_within(group: _Group, allowed: frozenset[int] | None, state: _State) -> str | None:
    for role in group.roles:
        reason = _place_role(role, allowed, state)
        if reason is not None:
            return reason
    if not group.children or group.need == 0:
        return None
    placed = 0
    first: str | None = None
    children = sorted(group.children, key=lambda child: child.pods)
    for position, child in enumerate(children):
        mark = state.mark()
        reason, _ = _place_group(child, allowed, state)
        if reason is None:
            placed += 1
            if placed == group.need:
                return None
        else:
            state.undo(mark)
            first = first or reason
        if len(children) - position - 1 < group.need - placed:
            break
    if group.need < len(children):
        return f"{group.label}: {placed} of the {group.need} sub-groups it needs fit; {first}"
    return first


def _place_group(group: _Group, allowed: frozenset[int] | None, state: _State) -> tuple[str | None, str | None]:
    """(None, the topology value used) when the group fits, else (the first reason, None)."""
    key = group.topology_key
    if key is None:
        return _place_within(group, allowed, state), None
    domains: dict[str, set[int]] = {}
    for index, node in enumerate(state.nodes):
        value = node.labels.get(key)
        if value is not None and (allowed is None or index in allowed):
            domains.setdefault(value, set()).add(index)
    if not domains:
        return f"{group.label}: no node has the topology label {key}", None
    first: str | None = None
    least = {name: amount for name, amount in group.least().items() if name != PODS}
    # the smallest domains first: a gang that fits a small zone leaves the large ones whole
    for value, members in sorted(domains.items(), key=lambda item: (len(item[1]), item[0])):
        short = _short_total(least, members, state)
        if short is not None:  # cheaper than trying its pods one set after another
            first = first or f"in {key}={value}: {group.label}: {short}"
            continue
        mark = state.mark()
        reason = _place_within(group, frozenset(members), state)
        if reason is None:
            return None, value
        state.undo(mark)
        first = first or f"in {key}={value}: {reason}"
    return f"{group.label}: no single {key} value holds it ({len(domains)} tried); {first}", None


def _short_total(least: Mapping[str, int], members: Iterable[int], state: _State) -> str | None:
    """None when the nodes have free in all at least `least` of each resource, else what falls short."""
    indices = list(members)
    for name in _shown_order(least):
        have = sum(max(0, state.free(i, name)) for i in indices)
        if have < least[name]:
            return f"needs {_amount(name, least[name])} {name} in all; its nodes have {_amount(name, have)} free"
    return None


def _workload_label(gang_plan: GangPlan) -> str:
    ref = gang_plan.workload
    return f"{ref.kind}/{ref.name}" if ref.name else ref.kind


def _key_resources(groups: Iterable[_Group]) -> set[str]:
    names: set[str] = set()
    stack = list(groups)
    while stack:
        group = stack.pop()
        stack.extend(group.children)
        for role in group.roles:
            names.update(name for name in role.requests if is_extended_resource(name))
    return names or {"cpu"}


def _place_pods(role: _Role, state: _State) -> tuple[int, str | None]:
    """Place a role's pods each on its own (best fit, what fits is kept): (pods placed, the reason the others do
    not fit, or None)."""
    accepted, refused = state.eligible(role.constraints)
    room = [(n, i) for n, i in ((state.room(i, role.requests), i) for i in accepted) if n > 0]
    total = sum(n for n, _ in room)
    reason = _shortfall(role, accepted, refused, state, total) if total < role.count else None
    room.sort()
    left = role.count
    for n, index in room:
        if left == 0:
            break
        pods = min(n, left)
        state.take(index, role.requests, pods)
        left -= pods
    return role.count - left, reason


def _place_pod_by_pod(item: PodByPod, state: _State, notes: list[str]) -> tuple[GangPlacement, _Group]:
    notes.extend(f"{item.workload}: {note}" for note in item.notes)
    roles = _roles(item.roles, None, POD_BY_POD, notes, pick=lambda role: role.count)
    mark = state.mark()
    first: str | None = None
    for role in roles:
        _, reason = _place_pods(role, state)
        first = first or reason
    counts: Counter[str] = Counter()
    for index, _, pods in state.log[mark:]:
        counts[state.nodes[index].name] += pods
    group = _Group(POD_BY_POD, roles, (), 0, None)
    placement = GangPlacement(
        item.workload, POD_BY_POD, group.pods, first is None, tuple(sorted(counts.items())), None, first, True
    )
    return placement, group


def place(
    plans: Sequence[GangPlan | PodByPod], snapshot: ClusterSnapshot, *, topology_key: str | None = None
) -> ClusterPlacement:
    """Place every gang of `plans` onto `snapshot`, in order (see the module docstring), and the pods of each
    `PodByPod` one by one. `topology_key` (a node label) keeps each gang on nodes sharing one value of it, over the
    gang's own required level; it does not apply to pods placed one by one (they have no gang to keep together).
    A `GangPlan` that needs no gang (`no_gang`) carries no pods: it is a note, and is placed only when given as
    `PodByPod.of(resolution)`."""
    notes = list(snapshot.notes)
    state = _State(snapshot.nodes)
    results: list[GangPlacement] = []
    groups: list[_Group] = []
    first_reason: str | None = None
    for gang_plan in plans:
        if isinstance(gang_plan, PodByPod):
            if topology_key is not None:
                notes.append(f"{gang_plan.workload}: its pods are placed one by one: the topology key does not apply")
            placed, group = _place_pod_by_pod(gang_plan, state, notes)
            results.append(placed)
            groups.append(group)
            if placed.reason is not None:
                first_reason = first_reason or f"{gang_plan.workload}: {placed.reason}"
            continue
        workload = _workload_label(gang_plan)
        if gang_plan.no_gang is not None or not gang_plan.gangs:
            why = gang_plan.no_gang or "its plan has no gangs"
            notes.append(
                f"{workload}: no gang ({why}): the plan carries no pods, so they are not checked "
                "(give PodByPod.of(resolution) to place them one by one)"
            )
            continue
        for gang in gang_plan.gangs:
            group = _gang_group(gang, f"gang {gang.name}", topology_key, notes)
            groups.append(group)
            mark = state.mark()
            reason, domain = _place_group(group, None, state)
            if reason is not None:
                state.undo(mark)
                first_reason = first_reason or f"{workload}: {reason}"
                results.append(GangPlacement(workload, gang.name, group.pods, False, reason=reason))
                continue
            counts: Counter[str] = Counter()
            for index, _, pods in state.log[mark:]:
                counts[snapshot.nodes[index].name] += pods
            results.append(GangPlacement(workload, gang.name, group.pods, True, tuple(sorted(counts.items())), domain))
    fits = all(result.fits for result in results)
    if not fits:
        return ClusterPlacement(snapshot.name, False, tuple(results), reason=first_reason, notes=tuple(notes))
    keys = _key_resources(groups)
    partly = sum(
        1
        for index, used in state.taken.items()
        if any(used.get(name, 0) > 0 and state.free(index, name) > 0 for name in keys)
    )
    return ClusterPlacement(snapshot.name, True, tuple(results), partly, len(state.taken), notes=tuple(notes))
