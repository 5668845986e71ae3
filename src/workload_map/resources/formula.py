"""Resource requests of containers, pods and fragmented specs, as the Kubernetes scheduler counts them.

Pure functions over plain dicts shaped like the Kubernetes API JSON (``Container``, ``PodSpec``, the Karta
``FragmentedPodSpec``). Amounts are exact ``Fraction`` values per resource name; every resource name (CPU, memory,
each extended resource such as ``nvidia.com/gpu`` or ``nvidia.com/mig-1g.5gb``) is tracked under its own name.
The formula and its sources are in ``docs/resources.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final, TypeGuard

from workload_map.errors import ArgumentTypeError, WorkloadMapError
from workload_map.model.extensions import ResourceAliases
from workload_map.resources.quantity import NANO, QuantityError, parse_nanos

__all__ = [
    "GPU_RESOURCE_NAMES",
    "ResourceList",
    "ResourceSpecError",
    "accelerator_names",
    "add",
    "alias_requirements",
    "container_requests",
    "fragmented_requests",
    "gpu_count",
    "is_extended_resource",
    "is_gpu",
    "pod_requests",
    "pod_requests_in_place",
    "scale",
    "total",
]

ResourceList = dict[str, Fraction]
"""Amount per resource name, e.g. ``{"cpu": Fraction(1, 2), "nvidia.com/gpu": Fraction(2)}``."""

GPU_RESOURCE_NAMES: Final = ("nvidia.com/gpu", "amd.com/gpu")
"""Extended resources that are whole GPU devices (more can be configured per call)."""

_MILLI: Final = NANO // 1000
_OVERCOMMITTABLE_POD_LEVEL: Final = ("cpu", "memory")

_NanoList = dict[str, int]


class ResourceSpecError(WorkloadMapError, ValueError):
    """A container, pod spec or fragmented spec whose resource fields have the wrong shape."""


# ---------------------------------------------------------------------------------------------------------------
# public API


def container_requests(container: Mapping[str, Any], aliases: ResourceAliases | None = None) -> ResourceList:
    """One container's requests: per resource name the request, falling back to the limit.

    An explicit zero counts as declared. As the API server does for stored objects, each amount is rounded up to
    whole millis (``100u`` -> ``1m``). Raises ``QuantityError`` naming the container and the field. ``aliases``
    (a definition's ``workloadmap.io/resource-aliases``) rename a framework's own resource keys first.
    """
    return _fractions(_container_nanos(container, _label(container, "containers", 0), aliases))


def pod_requests(pod_spec: Mapping[str, Any], aliases: ResourceAliases | None = None) -> ResourceList:
    """The scheduler's effective request of a pod (``PodSpec`` dict), per resource name.

    ``max(sum(containers) + sum(sidecars), max over init containers i of (request_i + sidecars declared before i))``
    where sidecars are init containers with ``restartPolicy: Always``; then pod-level ``resources`` replace CPU,
    memory and hugepages, and ``overhead`` is added. See ``docs/resources.md``. ``aliases`` rename a framework's
    own resource keys in the containers' resources first.
    """
    return _fractions(_pod_nanos(pod_spec, aliases))


def pod_requests_in_place(pod_spec: Mapping[str, Any], aliases: ResourceAliases | None = None) -> ResourceList | None:
    """``pod_requests`` of the normalised form of ``pod_spec`` (``jq.convert.normalize``: keys sorted, integral
    floats as ints), read from ``pod_spec`` as it stands, without the copy; None when reading in place cannot vouch
    for the same answer: anything but plain JSON types where the formula reads (a float amount, a key that is not
    a string, a tuple, a typed value), a definition's resource aliases, or any error (normalise the spec and call
    ``pod_requests`` then: it gives the result or the error with its message). The resource names come in the order
    the normalised spec gives them (its keys sorted)."""
    if aliases is not None and aliases.aliases:
        return None
    key = _plain_pod_key(pod_spec)
    if key is not None:
        try:
            found = _IN_PLACE_MEMO[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable amount (a list, a mapping): read it and let the reading refuse it
            key = None
        else:
            return None if found is None else dict(found)
    try:
        result: ResourceList | None = _fractions(_pod_nanos(pod_spec, None, in_place=True))
    except (_NotInPlaceError, QuantityError, ResourceSpecError):
        result = None
    if key is not None and _all_strings(key):
        if len(_IN_PLACE_MEMO) >= _IN_PLACE_MEMO_SIZE:
            _IN_PLACE_MEMO.clear()
        _IN_PLACE_MEMO[key] = None if result is None else dict(result)
    return result


def fragmented_requests(fragment: Mapping[str, Any], aliases: ResourceAliases | None = None) -> ResourceList:
    """Requests of a Karta fragmented pod spec: ``containers`` plus the single ``container`` (summed); the
    CR-level ``resources`` (requests, falling back to limits) count only when those containers declared nothing.

    ``aliases`` rename a framework's own resource keys (``gpu`` -> ``nvidia.com/gpu``); with ``aliases.flat`` the
    CR-level ``resources`` are one resource list standing for both requests and limits.
    """
    fragment = _mapping(fragment, "fragmented pod spec")
    result: _NanoList = {}
    for index, container in enumerate(_list(fragment, "containers", "fragmented pod spec")):
        _add_into(result, _container_nanos(container, _label(container, "containers", index), aliases))
    single = fragment.get("container")
    if single is not None:
        label = f'container "{single["name"]}"' if _named(single) else "container"
        _add_into(result, _container_nanos(single, label, aliases))
    if not result and fragment.get("resources") is not None:
        if aliases is not None and aliases.flat:
            result = _resource_list(fragment["resources"], "resources", aliases)
        else:
            result = _requirements_nanos(fragment["resources"], "resources", aliases)
    return _fractions(result)


def alias_requirements(resources: Any, aliases: ResourceAliases | None) -> Any:
    """CR-level resources as a Kubernetes ResourceRequirements, the framework's keys renamed by ``aliases`` and
    the quantities kept as written: what a container built from the fragments carries. Without aliases (or for
    a value that is not a mapping) the value is returned as it is."""
    if not aliases or not _is_mapping(resources):
        return resources
    if aliases.flat:
        renamed = _rename(resources, aliases)
        return {"requests": dict(renamed), "limits": dict(renamed)} if renamed else {}
    out: dict[str, Any] = {}
    for key, value in resources.items():
        out[key] = _rename(value, aliases) if key in ("requests", "limits") and _is_mapping(value) else value
    return out


def _list_arg(value: Any, what: str) -> Mapping[str, Fraction]:
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(what, "a mapping of resource name to amount", value)
    return value


def add(a: Mapping[str, Fraction], b: Mapping[str, Fraction]) -> ResourceList:
    """Per-name sum of two resource lists (names of either)."""
    result = dict(_list_arg(a, "a resource list"))
    b = _list_arg(b, "a resource list")
    for name, amount in b.items():
        result[name] = result.get(name, 0) + amount
    return result


def total(lists: Iterable[Mapping[str, Fraction]]) -> ResourceList:
    """Per-name sum of any number of resource lists."""
    if isinstance(lists, (Mapping, str, bytes)) or not isinstance(lists, Iterable):
        raise ArgumentTypeError("the resource lists", "an iterable of resource lists", lists)
    result: ResourceList = {}
    for each in lists:
        for name, amount in _list_arg(each, "each resource list").items():
            result[name] = result.get(name, 0) + amount
    return result


def scale(requests: Mapping[str, Fraction], n: int | Fraction) -> ResourceList:
    """Every amount times ``n`` (e.g. per-replica requests times desired replicas)."""
    return {name: amount * n for name, amount in _list_arg(requests, "the requests").items()}


def is_gpu(name: str, extra_gpu_names: Iterable[str] = ()) -> bool:
    """Whether ``name`` counts as whole GPUs: ``nvidia.com/gpu``, ``amd.com/gpu`` or one of ``extra_gpu_names``.

    MIG slices (``nvidia.com/mig-1g.5gb``), TPUs, Neuron devices and other accelerators are not GPUs.
    """
    return name in GPU_RESOURCE_NAMES or name in extra_gpu_names


def gpu_count(requests: Mapping[str, Fraction], extra_gpu_names: Iterable[str] = ()) -> int | Fraction:
    """The number of whole GPUs in ``requests`` (an ``int`` unless some GPU amount is fractional)."""
    extra = tuple(extra_gpu_names)
    requests = _list_arg(requests, "the requests")
    count = sum((amount for name, amount in requests.items() if is_gpu(name, extra)), Fraction(0))
    return count.numerator if count.denominator == 1 else count


def is_extended_resource(name: str) -> bool:
    """Kubernetes' extended-resource rule: a domain-prefixed name outside ``kubernetes.io/`` (and not a quota
    ``requests.`` name). ``cpu``, ``memory``, ``ephemeral-storage``, ``hugepages-*`` and ``pods`` are native."""
    if not isinstance(name, str):
        raise ArgumentTypeError("a resource name", "a string", name)
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def accelerator_names(requests: Mapping[str, Fraction], extra_gpu_names: Iterable[str] = ()) -> list[str]:
    """Sorted names of the non-zero extended resources in ``requests`` that are not GPUs (MIG slices, TPUs,
    Neuron cores, Gaudi, Intel GPUs, ...): the accelerators shown per name, never summed into the GPU count."""
    extra = tuple(extra_gpu_names)
    requests = _list_arg(requests, "the requests")
    return sorted(
        name for name, amount in requests.items() if amount and is_extended_resource(name) and not is_gpu(name, extra)
    )


# ---------------------------------------------------------------------------------------------------------------
# internals: amounts are whole nano units while summing (exact, and much faster than Fraction arithmetic)


class _NotInPlaceError(WorkloadMapError):
    """Reading in place (`pod_requests_in_place`) met a value the normalised spec may read differently."""


# `pod_requests_in_place` of the common pod spec (containers only, no init containers, pod-level resources or
# overhead) per content of its containers' requests and limits: pods of one workload, and workloads of one kind,
# repeat the same few resource lists, and reading one again cost 4 us a pod spec (8 containers a JobSet). Only keys
# of plain strings are stored: a string equals only a string (a str Enum, its value), so a hit is a spec whose
# amounts read as the stored ones; an int would match True and 1.0 (which the reading refuses or reads otherwise).
_IN_PLACE_MEMO: dict[tuple[Any, ...], ResourceList | None] = {}
_IN_PLACE_MEMO_SIZE: Final = 1024
_ResourceItems = tuple[tuple[Any, Any], ...]


def _plain_pod_key(spec: object) -> tuple[Any, ...] | None:
    """Per container, its requests' and limits' items (None: no resources), for a pod spec whose requests are its
    containers' alone (what the formula reads of it is then all in the key); None for any other spec."""
    if type(spec) is not dict:
        return None
    init = spec.get("initContainers")
    if (init is not None and not (type(init) is list and not init)) or spec.get("resources") is not None:
        return None
    containers = spec.get("containers")
    if type(containers) is not list or spec.get("overhead") is not None:
        return None
    key: list[tuple[_ResourceItems, _ResourceItems] | None] = []
    for container in containers:
        if type(container) is not dict:
            return None
        resources = container.get("resources")
        if resources is None:
            key.append(None)
            continue
        if type(resources) is not dict:
            return None
        requests = resources.get("requests")
        limits = resources.get("limits")
        if requests is None:
            requests = _NO_RESOURCES
        elif type(requests) is not dict:
            return None
        if limits is None:
            limits = _NO_RESOURCES
        elif type(limits) is not dict:
            return None
        key.append((tuple(requests.items()), tuple(limits.items())))
    return tuple(key)


_NO_RESOURCES: Final[dict[str, Any]] = {}


def _all_strings(key: tuple[Any, ...]) -> bool:
    for pair in key:
        if pair is not None:
            for items in pair:
                for name, amount in items:
                    if type(name) is not str or type(amount) is not str:
                        return False
    return True


def _fraction_uncached(nanos: int) -> Fraction:
    return Fraction(nanos, NANO)


# Fractions are immutable, so one object per amount is shared by every result: making one (a gcd, two ints) cost
# more than the rest of a container's requests (benchmarks/RESULTS.md, 2026-12-01 session 17)
_fraction: Final = lru_cache(maxsize=4096)(_fraction_uncached)


def _fractions(nanos: _NanoList) -> ResourceList:
    return {name: _fraction(amount) for name, amount in nanos.items()}


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(value, (dict, Mapping))  # a plain dict is the fast case


def _named(container: object) -> TypeGuard[Mapping[str, Any]]:
    return _is_mapping(container) and isinstance(container.get("name"), str) and bool(container["name"])


def _label(container: object, field: str, index: int) -> str:
    if _named(container):
        kind = "init container" if field == "initContainers" else "container"
        return f'{kind} "{container["name"]}"'
    return f"{field}[{index}]"


def _mapping(value: object, what: str, in_place: bool = False) -> Mapping[str, Any]:
    if in_place and type(value) is not dict:
        raise _NotInPlaceError
    if not _is_mapping(value):
        raise ResourceSpecError(f"{what}: expected an object, got {type(value).__name__}")
    return value


def _list(parent: Mapping[str, Any], key: str, what: str, in_place: bool = False) -> list[Any]:
    value = parent.get(key)
    if value is None:
        return []
    if in_place and type(value) is not list:
        raise _NotInPlaceError
    if not isinstance(value, list):
        raise ResourceSpecError(f"{what} {key}: expected a list, got {type(value).__name__}")
    return value


def _resource_list_in_place(value: object, into: _NanoList | None = None) -> _NanoList:
    """`_resource_list` of a value read in place, as its normalised form reads: names sorted, string, int and null
    amounts only (a float may be one normalising turns into an int, and then its message would differ). With
    `into` (a container's requests), each amount is added under a name `into` lacks (a limit standing in for the
    request), after every amount is read."""
    if type(value) is not dict:
        if value is None:
            return {} if into is None else into
        raise _NotInPlaceError
    try:
        names = sorted(value)  # normalised keys are in the byte order of their UTF-8 text, which is code point order
    except TypeError:  # keys of several types
        raise _NotInPlaceError from None
    result: _NanoList = {} if into is None else into
    for name in names:
        if type(name) is not str:
            raise _NotInPlaceError
        raw = value[name]
        kind = type(raw)
        if kind is str:
            amount = _stored_nanos(raw)
        elif kind is int or raw is None:
            amount = _stored_nanos_uncached(raw)
        else:
            raise _NotInPlaceError
        if into is None or name not in result:
            result[name] = amount
    return result


def _resource_list(value: object, field: str, aliases: ResourceAliases | None = None) -> _NanoList:
    """A ResourceList (``requests``, ``limits``, ``overhead``) in nano units, each rounded up to whole millis;
    with ``aliases``, the framework's keys counted under the Kubernetes names they stand for."""
    if value is None:
        return {}
    if not _is_mapping(value):
        raise ResourceSpecError(f"{field}: expected a mapping of resource name to quantity, got {type(value).__name__}")
    if aliases is not None and aliases.aliases:
        return _aliased_list(value, field, aliases)
    result: _NanoList = {}
    for name, raw in value.items():
        try:
            result[name] = _stored_nanos(raw) if isinstance(raw, str) else _stored_nanos_uncached(raw)
        except QuantityError as error:
            raise error.at(f'{field}["{name}"]') from None
    return result


def _aliased_list(value: Mapping[str, Any], field: str, aliases: ResourceAliases) -> _NanoList:
    """`_resource_list` through a definition's aliases. Maps of entries (Dynamo's ``custom``) are read last, so
    they win over a renamed key of the same name, as the operator writes them after the named fields."""
    result: _NanoList = {}
    entries: list[tuple[str, Any]] = []
    for name, raw in value.items():
        alias = aliases.aliases.get(name)
        target = name
        if alias is not None:
            if alias.entries:
                entries.append((name, raw))
                continue
            found = alias.target(value)
            if found is None:
                continue
            target = found
        try:
            result[target] = _stored_nanos(raw) if isinstance(raw, str) else _stored_nanos_uncached(raw)
        except QuantityError as error:
            raise error.at(f'{field}["{name}"]') from None
    for name, raw in entries:
        result.update(_resource_list(raw, f'{field}["{name}"]'))
    return result


def _rename(value: Mapping[str, Any], aliases: ResourceAliases) -> dict[str, Any]:
    """A resource list with the framework's keys renamed (quantities as written), for a built pod template."""
    out: dict[str, Any] = {}
    entries: list[Any] = []
    for name, raw in value.items():
        alias = aliases.aliases.get(name)
        if alias is None:
            out[name] = raw
        elif alias.entries:
            entries.append(raw)
        else:
            target = alias.target(value)
            if target is not None:
                out[target] = raw
    for raw in entries:
        if _is_mapping(raw):
            out.update(raw)
    return out


def _stored_nanos_uncached(raw: Any) -> int:
    """A ResourceList amount in nano units as the API server stores it: rounded up to milli precision."""
    if raw is None:  # JSON null decodes to a zero quantity
        return 0
    nanos = parse_nanos(raw)  # other types are refused there with a QuantityError
    if nanos < 0:  # a negative request would make negative GPU and CPU totals
        raise QuantityError(raw, "a resource amount cannot be negative (the API server refuses it)")
    return -(-nanos // _MILLI) * _MILLI


_stored_nanos: Final = lru_cache(maxsize=4096)(_stored_nanos_uncached)


def _requirements_nanos(resources: object, field: str, aliases: ResourceAliases | None = None) -> _NanoList:
    """Requests, falling back per name to limits, of a ResourceRequirements object at ``field``."""
    if resources is None:
        return {}
    if not _is_mapping(resources):
        raise ResourceSpecError(f"{field}: expected an object with requests/limits, got {type(resources).__name__}")
    requests = _resource_list(resources.get("requests"), f"{field}.requests", aliases)
    limits = _resource_list(resources.get("limits"), f"{field}.limits", aliases)
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return requests


def _container_nanos(container: object, label: str, aliases: ResourceAliases | None = None) -> _NanoList:
    return _requirements_nanos(_mapping(container, label).get("resources"), f"{label} resources", aliases)


def _container_in_place(container: object) -> _NanoList:
    """`_container_nanos` read in place (no labels: an error is told by the normalised reading)."""
    if type(container) is not dict:
        raise _NotInPlaceError
    resources = container.get("resources")
    if resources is None:
        return {}
    if type(resources) is not dict:
        raise _NotInPlaceError
    return _resource_list_in_place(resources.get("limits"), _resource_list_in_place(resources.get("requests")))


def _add_into(target: _NanoList, amounts: _NanoList) -> None:
    for name, amount in amounts.items():
        target[name] = target.get(name, 0) + amount


def _max_into(target: _NanoList, amounts: _NanoList) -> None:
    for name, amount in amounts.items():
        if name not in target or amount > target[name]:
            target[name] = amount


def _is_pod_level_resource(name: str) -> bool:
    return name in _OVERCOMMITTABLE_POD_LEVEL or name.startswith("hugepages-")


def _pod_nanos(spec: object, aliases: ResourceAliases | None = None, *, in_place: bool = False) -> _NanoList:
    """The pod's requests in nano units. `in_place`: `spec` is read as it stands and must read as its normalised
    form does (`_NotInPlaceError` where it may not; see `pod_requests_in_place`)."""
    spec = _mapping(spec, "pod spec", in_place)
    result: _NanoList = {}
    containers = _list(spec, "containers", "pod spec", in_place)
    if in_place:
        for container in containers:
            _add_into(result, _container_in_place(container))
    else:
        for index, container in enumerate(containers):
            _add_into(result, _container_nanos(container, _label(container, "containers", index), aliases))

    # Init containers run one after another; a sidecar (restartPolicy: Always) keeps running, so it adds to the
    # pod's steady state and to every init container that starts after it.
    sidecars: _NanoList = {}
    init_peak: _NanoList = {}
    for index, container in enumerate(_list(spec, "initContainers", "pod spec", in_place)):
        if in_place:
            amounts = _container_in_place(container)
        else:
            amounts = _container_nanos(container, _label(container, "initContainers", index), aliases)
        restart = container.get("restartPolicy")
        if in_place and not (restart is None or type(restart) is str):
            raise _NotInPlaceError  # a typed value may compare otherwise than the string it normalises to
        if restart == "Always":
            _add_into(result, amounts)
            _add_into(sidecars, amounts)
            _max_into(init_peak, sidecars)
        else:
            _add_into(amounts, sidecars)
            _max_into(init_peak, amounts)
    _max_into(result, init_peak)

    # Pod-level resources (PodLevelResources) replace CPU, memory and hugepages. A pod-level request wins; a
    # pod-level limit alone stands in for the request, as the API server defaults it, unless the containers
    # already request that CPU or memory (then the pod-level request defaults to the containers' figure).
    pod_level = spec.get("resources")
    if pod_level is not None:
        if in_place and type(pod_level) is not dict:
            raise _NotInPlaceError
        if not _is_mapping(pod_level):
            raise ResourceSpecError(f"pod-level resources: expected an object, got {type(pod_level).__name__}")
        if in_place:
            requests = _resource_list_in_place(pod_level.get("requests"))
            limits = _resource_list_in_place(pod_level.get("limits"))
        else:
            requests = _resource_list(pod_level.get("requests"), "pod-level resources.requests")
            limits = _resource_list(pod_level.get("limits"), "pod-level resources.limits")
        for name, amount in limits.items():
            if _is_pod_level_resource(name) and name not in requests:
                if name in _OVERCOMMITTABLE_POD_LEVEL and name in result:
                    continue
                result[name] = amount
        for name, amount in requests.items():
            if _is_pod_level_resource(name):
                result[name] = amount

    overhead = spec.get("overhead")
    _add_into(result, _resource_list_in_place(overhead) if in_place else _resource_list(overhead, "overhead"))
    return result
