"""Built-in definitions (package data) and the registry that picks a definition for a workload.

Definitions come from three sources, each an *origin*: `local` (files the user points at), `cluster` (Karta
objects read from the API server) and `catalog` (the built-in ones shipped in this package). For one root GVK the
precedence is local > cluster > catalog, so a user's definition replaces a built-in one without editing the
package. Two definitions from the same origin for one GVK are a collision: the first by name wins and a warning
says which one was dropped.
"""

from __future__ import annotations

import io
import os
from _thread import allocate_lock
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

import msgspec

from workload_map._io import read_input_text
from workload_map._regex import LazyPattern
from workload_map.catalog import precompiled
from workload_map.errors import ArgumentTypeError, ArgumentValueError
from workload_map.model import GVK, Karta

if TYPE_CHECKING:
    from importlib.abc import Traversable

Origin = Literal["local", "cluster", "catalog"]
ORIGINS: tuple[Origin, ...] = get_args(Origin)
_RANK: dict[str, int] = {origin: rank for rank, origin in enumerate(ORIGINS)}

_DEFINITIONS_PACKAGE = "workload_map.catalog"
_DEFINITIONS_DIR = "definitions"


# --- the built-in catalog -----------------------------------------------------------------------------------


def _definitions_dir() -> str | Traversable:
    """The packaged definitions directory: a plain path for an installed or source tree (importing
    importlib.resources costs ~8 ms of every start, pathlib ~2.5 ms), importlib.resources for a zipped package."""
    here = os.path.join(os.path.dirname(__file__), _DEFINITIONS_DIR)
    if os.path.isdir(here):
        return here
    from importlib import resources

    return resources.files(_DEFINITIONS_PACKAGE).joinpath(_DEFINITIONS_DIR)


def _is_definition(name: str) -> bool:
    return name.endswith((".yaml", ".yml"))


def _builtin_files() -> list[tuple[str, bytes]]:
    """Every packaged definition file as (name, bytes), in file-name order."""
    directory = _definitions_dir()
    if isinstance(directory, str):
        names = sorted(name for name in os.listdir(directory) if _is_definition(name))
        prefix = os.path.join(directory, "")  # joined once: os.path.join is ~7,000 instructions a call (issue 19)
        return [(name, precompiled.read_file(prefix + name)) for name in names]
    entries = sorted((entry for entry in directory.iterdir() if _is_definition(entry.name)), key=lambda e: e.name)
    return [(entry.name, entry.read_bytes()) for entry in entries]


def _parse_builtin(files: Sequence[tuple[str, bytes]]) -> tuple[Karta, ...]:
    """The definitions in packaged files, parsed and typed from their YAML."""
    from workload_map.model import loads_definitions  # the YAML loader: only when the precompiled blob is not there

    kartas: list[Karta] = []
    for name, data in files:
        label = f"catalog/{name}"
        _, text = read_input_text(io.BytesIO(data), label=label)  # the one bounded reader, as for every other input
        kartas.extend(loads_definitions(text, source=label))
    return tuple(kartas)


def _load_builtin() -> tuple[Karta, ...]:
    """Every packaged definition, typed: from the precompiled blob when it matches the files, else from the YAML
    (uncached in memory: `_builtin` keeps the definitions)."""
    return _load_builtin_definitions().all()


def _load_builtin_definitions() -> precompiled.Definitions:
    """The packaged definitions, each decoded from the precompiled blob when first asked for."""
    return precompiled.load_definitions(_builtin_files(), _parse_builtin, check=_without_errors)


def _without_errors(kartas: Sequence[Karta]) -> list[bool]:
    """Whether each definition has no validation errors (run when the precompiled blob is built)."""
    from workload_map.validation import errors, validate

    return [not errors(validate(karta)) for karta in kartas]


_BUILTIN: precompiled.Definitions | None = None
_BUILTIN_LOCK = allocate_lock()  # what threading.Lock() is, without importing threading (~0.6 ms of a start; issue 19)


def _builtin() -> precompiled.Definitions:
    """The packaged definitions, loaded once per process (under a lock, so every thread sees the same objects);
    each is decoded when first asked for, once.

    The model is frozen, so the objects are shared as they are: no copy, no re-decode per call."""
    global _BUILTIN
    loaded = _BUILTIN
    if loaded is None:
        with _BUILTIN_LOCK:
            loaded = _BUILTIN
            if loaded is None:
                loaded = _BUILTIN = _load_builtin_definitions()
    return loaded


def builtin_definitions() -> list[Karta]:
    """The built-in definitions, in file-name order: a new list of the same frozen objects on every call (make a
    changed copy with `msgspec.structs.replace`; the catalog is not affected)."""
    return list(_builtin().all())


def builtin_registry() -> DefinitionRegistry:
    """A new registry holding the built-in catalog (add `local` or `cluster` definitions to it with `.add`).

    Every registry holds the same built-in objects. A lookup decodes only the definition it hands out (the others
    are known by name and root GVK until asked for)."""
    registry = DefinitionRegistry()
    registry._add_catalog(_builtin())
    return registry


# --- registry -----------------------------------------------------------------------------------------------


class Entry(msgspec.Struct, frozen=True):
    """A definition held by the registry, with the source it came from."""

    karta: Karta
    origin: Origin

    @property
    def name(self) -> str:
        return self.karta.name

    @property
    def gvk(self) -> GVK | None:
        return self.karta.root_gvk


class _Pending:
    """A built-in definition held by a registry before it is decoded: its name and root GVK, and where to get it.
    `entry()` is the registry's `Entry` for it, made once."""

    __slots__ = ("_entry", "definitions", "gvk", "name", "origin", "position")

    def __init__(self, definitions: precompiled.Definitions, position: int) -> None:
        self.definitions = definitions
        self.position = position
        self.name, self.gvk = definitions.heads[position]
        self.origin: Origin = "catalog"
        self._entry: Entry | None = None

    def entry(self) -> Entry:
        made = self._entry
        if made is None:
            with _BUILTIN_LOCK:  # one Entry per held definition, so `is_effective` can compare identities
                made = self._entry
                if made is None:
                    made = self._entry = Entry(self.definitions.karta(self.position), self.origin)
        return made


_Held = Entry | _Pending


def _entry(held: _Held) -> Entry:
    return held if isinstance(held, Entry) else held.entry()


def _same_definition(a: _Held, b: _Held) -> bool:
    if isinstance(a, _Pending) and isinstance(b, _Pending):
        return a.definitions is b.definitions and a.position == b.position
    return _entry(a).karta is _entry(b).karta


class Resolved(msgspec.Struct, frozen=True):
    """The definition chosen for a workload. `exact` is False when it was written for another version of the
    same group and kind (the version fallback)."""

    karta: Karta
    origin: Origin
    exact: bool = True


class DefinitionRegistry:
    """Definitions from several origins, looked up by root GVK, by object, by kind or by name.

    `DefinitionRegistry([("local", mine), ("catalog", builtin_definitions())])`, or build one up with `.add`.
    The objects handed out are the ones held: frozen, and shared with every other caller.
    """

    def __init__(self, sources: Iterable[tuple[Origin, Iterable[Karta]]] | None = None) -> None:
        self._entries: list[_Held] = []
        self._index: _Index | None = None
        for origin, kartas in sources or ():
            self.add(origin, kartas)

    def add(self, origin: Origin, kartas: Iterable[Karta]) -> None:
        """Add definitions from one origin (`local`, `cluster` or `catalog`)."""
        if not isinstance(origin, str):
            raise ArgumentTypeError("a definition origin", f"a string ({', '.join(ORIGINS)})", origin)
        if origin not in _RANK:
            raise ArgumentValueError(f"unknown definition origin {origin!r}: use one of {', '.join(ORIGINS)}")
        if isinstance(kartas, (Karta, str, bytes, Mapping)) or not isinstance(kartas, Iterable):
            raise ArgumentTypeError(f"the definitions from {origin!r}", "an iterable of Karta", kartas)
        for karta in kartas:
            if not isinstance(karta, Karta):
                raise ArgumentTypeError(f"a definition from {origin!r}", "a Karta", karta)
            self._entries.append(Entry(karta, origin))
        self._index = None

    def _add_catalog(self, definitions: precompiled.Definitions) -> None:
        """Add the built-in definitions as `add("catalog", ...)` does, each decoded only when a lookup hands it
        out."""
        held = definitions.held
        if held is None:  # made once per load, shared by every registry (as the Entry each one makes is)
            held = definitions.held = tuple(_Pending(definitions, position) for position in range(len(definitions)))
        self._entries.extend(held)
        self._index = None

    # --- lookups --------------------------------------------------------------------------------------------

    def for_gvk(self, group: str, version: str, kind: str) -> Resolved | None:
        """The definition for a root GVK: an exact match, else one for another version of the same group and
        kind (the group is never guessed). Among fallbacks, origin precedence first, then the newest version."""
        index = self._built()
        winner = index.by_gvk.get((group, version, kind))
        if winner is not None:
            return Resolved(_entry(winner).karta, winner.origin)
        candidates = index.by_group_kind.get((group, kind), [])
        if not candidates:
            return None
        best = min(candidates, key=lambda entry: (_RANK[entry.origin], _version_order(_gvk(entry).version)))
        return Resolved(_entry(best).karta, best.origin, exact=False)

    def for_object(self, obj: Mapping[str, Any]) -> Resolved | None:
        """The definition for a workload object, from its `apiVersion` and `kind`."""
        api_version = obj.get("apiVersion") if isinstance(obj, Mapping) else None
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
            raise ValueError(
                "the object has no apiVersion and kind; "
                "pass a whole Kubernetes object (as `kubectl get -o yaml` prints it)"
            )
        gvk = GVK.from_api_version(api_version, kind)
        return self.for_gvk(gvk.group, gvk.version, gvk.kind)

    def by_kind(self, kind: str, group: str | None = None) -> list[Entry]:
        """The effective definitions whose root kind is `kind`, ignoring case (`pytorchjob`, `PyTorchJob` and
        the plural `pytorchjobs` all match), optionally only in `group`. Sorted by group, then newest version."""
        wanted = kind.lower()
        found = [
            entry
            for entry in self._built().by_gvk.values()
            if wanted in _kind_spellings(_gvk(entry).kind) and (group is None or _gvk(entry).group == group)
        ]
        found.sort(key=lambda entry: (_gvk(entry).group, _version_order(_gvk(entry).version)))
        return [_entry(entry) for entry in found]

    def by_name(self, name: str) -> Resolved | None:
        """The definition named `name`; local wins over cluster, cluster over catalog."""
        entry = self._built().by_name.get(name)
        return Resolved(_entry(entry).karta, entry.origin) if entry else None

    def all(self) -> list[Entry]:
        """Every definition held, including ones another origin overrides: sorted by root GVK (as `group/version/kind`,
        `core` for the core group), then name, then origin precedence; definitions without a root GVK last."""
        return [_entry(held) for held in sorted(self._entries, key=_listing_key)]

    def effective(self) -> list[Entry]:
        """The definition in force for each root GVK (after precedence and collisions), in `all()` order."""
        return [_entry(held) for held in sorted(self._built().by_gvk.values(), key=_listing_key)]

    def is_effective(self, entry: Entry) -> bool:
        """Whether `entry` is the definition in force for its GVK (False when overridden or a losing duplicate)."""
        gvk = entry.gvk
        if gvk is None:
            return False
        winner = self._built().by_gvk.get((gvk.group, gvk.version, gvk.kind))
        return winner is entry or (isinstance(winner, _Pending) and winner._entry is entry)

    @property
    def warnings(self) -> list[str]:
        """Collisions found: two definitions from one origin for the same root GVK, or with the same name."""
        return list(self._built().warnings)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Any:
        return iter(self.all())

    # --- index ----------------------------------------------------------------------------------------------

    def _built(self) -> _Index:
        if self._index is None:
            self._index = _Index.build(self._entries)
        return self._index


class _Index(msgspec.Struct):
    by_gvk: dict[tuple[str, str, str], _Held]
    by_group_kind: dict[tuple[str, str], list[_Held]]
    by_name: dict[str, _Held]
    warnings: list[str]

    @classmethod
    def build(cls, entries: list[_Held]) -> _Index:
        warnings: list[str] = []
        # Within one origin, the first definition by name wins a GVK; earlier origins win across origins.
        ordered = sorted(entries, key=lambda entry: (_RANK[entry.origin], entry.name))
        by_gvk: dict[tuple[str, str, str], _Held] = {}
        for entry in ordered:
            gvk = entry.gvk
            if gvk is None:
                continue
            key = (gvk.group, gvk.version, gvk.kind)
            held = by_gvk.get(key)
            if held is None:
                by_gvk[key] = entry
            elif held.origin == entry.origin:
                warnings.append(
                    f"collision: {entry.origin} definitions {held.name!r} and {entry.name!r} both describe {gvk}; "
                    f"using {held.name!r} (first by name). Remove or rename one of them."
                )
        by_group_kind: dict[tuple[str, str], list[_Held]] = {}
        for (group, _version, kind), entry in by_gvk.items():
            by_group_kind.setdefault((group, kind), []).append(entry)
        by_name: dict[str, _Held] = {}
        for entry in ordered:
            held = by_name.get(entry.name)
            if held is None:
                by_name[entry.name] = entry
            elif held.origin == entry.origin and not _same_definition(held, entry):
                warnings.append(
                    f"collision: two {entry.origin} definitions are named {entry.name!r}; the first one is used"
                )
        return cls(by_gvk, by_group_kind, by_name, warnings)


# --- helpers ------------------------------------------------------------------------------------------------


def _gvk(entry: _Held) -> GVK:
    gvk = entry.gvk
    assert gvk is not None  # the index holds only entries with a root GVK
    return gvk


def _listing_key(entry: _Held) -> tuple[int, str, str, int]:
    gvk = entry.gvk
    return (gvk is None, str(gvk) if gvk else "", entry.name, _RANK[entry.origin])


_VERSION = LazyPattern(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 0, "beta": 1, "alpha": 2}


def _version_order(version: str) -> tuple[int, int, int, int, str]:
    """Sort key putting the preferred Kubernetes version first: GA before beta before alpha, higher numbers
    first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1), versions of another shape last, alphabetically."""
    match = _VERSION.match(version)
    if match is None:
        return (1, 0, 0, 0, version)
    major, stability, minor = match.groups()
    return (0, _STABILITY[stability], -int(major), -int(minor or 0), version)


def _kind_spellings(kind: str) -> set[str]:
    lower = kind.lower()
    plural = lower + "es" if lower.endswith(("s", "x", "z", "ch", "sh")) else lower + "s"
    return {lower, plural}
