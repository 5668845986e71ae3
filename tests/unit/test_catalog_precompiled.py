"""The precompiled catalog (catalog/precompiled.py): the blob decodes to exactly the definitions the YAML gives,
and a changed, added or removed definition file is picked up (a new key, or bytes that differ from those the blob
was built from: parsed again) rather than served stale."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from workload_map import _version
from workload_map.catalog import precompiled, registry
from workload_map.model import Karta
from workload_map.model.validated import is_validated


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"WMAP_CACHE_DIR": str(tmp_path / "cache")}


class Counting:
    """The YAML parser, counting its calls (a blob hit never parses)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, files: Sequence[tuple[str, bytes]]) -> tuple[Karta, ...]:
        self.calls += 1
        return registry._parse_builtin(files)


def _blobs(env: dict[str, str]) -> list[Path]:
    return sorted((Path(env["WMAP_CACHE_DIR"]) / "catalog").glob("*.msgpack"))


Parts = tuple[tuple[tuple[str, bytes], ...], tuple[Any, ...], tuple[bytes, ...], tuple[bool, ...], tuple[bytes, ...]]


def _parts(blob: bytes) -> Parts:
    """A blob taken apart as its layout says (precompiled.Index): the files it was built from (name, bytes), the
    heads, each definition's encoding, the validity flags and each definition's encoded trees."""
    length = int.from_bytes(blob[: precompiled._INDEX_LENGTH], "big")
    at = precompiled._INDEX_LENGTH + length
    names, sizes, heads, valid, spans = precompiled._INDEX.decode(blob[precompiled._INDEX_LENGTH : at])
    files = []
    for name, size in zip(names, sizes, strict=True):
        files.append((name, blob[at : at + size]))
        at += size
    bodies = tuple(blob[at + offset : at + offset + body] for offset, body, _ in spans)
    encoded = tuple(blob[at + offset + body : at + offset + body + trees] for offset, body, trees in spans)
    return tuple(files), heads, bodies, valid, encoded


def test_the_blob_decodes_to_the_yaml_definitions(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    from_yaml = registry._parse_builtin(files)
    parse = Counting()
    first = precompiled.load_cached(files, parse, env)
    second = precompiled.load_cached(files, parse, env)
    assert parse.calls == 1  # the second load decoded the blob
    assert len(_blobs(env)) == 1
    assert len(second) == len(from_yaml) >= 24
    assert second == from_yaml  # msgspec structs compare field by field, nested
    assert [k.name for k in second] == [k.name for k in from_yaml]
    assert all(type(k) is Karta for k in second)
    assert first == from_yaml


def test_the_builtin_catalog_is_the_yaml_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMAP_CACHE_DIR", str(tmp_path))
    from_yaml = registry._parse_builtin(registry._builtin_files())
    assert registry._load_builtin() == from_yaml  # builds the blob
    assert list((tmp_path / "catalog").glob("*.msgpack"))
    assert registry._load_builtin() == from_yaml  # decodes it


def _renamed(files: Sequence[tuple[str, bytes]], old: str, new: str) -> bytes:
    data = dict(files)["batch-job-v1.yaml"]
    assert old.encode() in data
    return data.replace(old.encode(), new.encode())


def test_an_added_definition_is_picked_up(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    parse = Counting()
    before = precompiled.load_cached(files, parse, env)
    job = next(k for k in before if k.name and k.root_gvk is not None and k.root_gvk.kind == "Job")
    extra = _renamed(files, f"name: {job.name}", "name: zz-added-by-test").replace(b"kind: Job", b"kind: TestJob")
    grown = sorted([*files, ("zz-added.yaml", extra)])
    after = precompiled.load_cached(grown, parse, env)
    assert parse.calls == 2
    assert len(after) == len(before) + 1
    assert "zz-added-by-test" in {k.name for k in after}
    assert after == registry._parse_builtin(grown)
    # and the original set still decodes from its own blob
    assert precompiled.load_cached(files, parse, env) == before
    assert parse.calls == 2


def test_an_edited_or_removed_definition_is_picked_up(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    parse = Counting()
    before = precompiled.load_cached(files, parse, env)
    job = next(k for k in before if k.root_gvk is not None and k.root_gvk.kind == "Job")
    edited = [
        (n, _renamed(files, f"name: {job.name}", "name: edited") if n == "batch-job-v1.yaml" else d) for n, d in files
    ]
    after = precompiled.load_cached(edited, parse, env)
    assert parse.calls == 2
    assert "edited" in {k.name for k in after} and job.name not in {k.name for k in after}
    shrunk = [(n, d) for n, d in files if n != "batch-job-v1.yaml"]
    fewer = precompiled.load_cached(shrunk, parse, env)
    assert parse.calls == 3
    assert job.name not in {k.name for k in fewer} and len(fewer) < len(before)


def test_the_key_covers_names_sizes_version_and_model() -> None:
    files = [("a.yaml", b"x"), ("b.yaml", b"y")]
    key = precompiled.catalog_key(files)
    assert key == precompiled.catalog_key(list(files))
    assert key != precompiled.catalog_key([("a.yaml", b"x"), ("b.yaml", b"yy")])
    assert key != precompiled.catalog_key([("a.yaml", b"x"), ("c.yaml", b"y")])
    assert key != precompiled.catalog_key([("a.yaml", b"xb.yaml"), ("", b"y")])  # lengths separate the parts
    assert key != precompiled.catalog_key(files[:1])
    # the bytes themselves are not hashed: the blob holds them and a load compares them (next test)
    assert key == precompiled.catalog_key([("a.yaml", b"x"), ("b.yaml", b"z")])


def test_an_edit_of_the_same_size_is_picked_up(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    parse = Counting()
    before = precompiled.load_cached(files, parse, env)
    job = next(k for k in before if k.root_gvk is not None and k.root_gvk.kind == "Job")
    same_size = "x" * len(job.name)
    edited = [
        (n, _renamed(files, f"name: {job.name}", f"name: {same_size}") if n == "batch-job-v1.yaml" else d)
        for n, d in files
    ]
    assert [len(d) for _, d in edited] == [len(d) for _, d in files]
    assert precompiled.catalog_key(edited) == precompiled.catalog_key(files)  # the same blob file ...
    after = precompiled.load_cached(edited, parse, env)
    assert parse.calls == 2  # ... built from other bytes: parsed again
    assert same_size in {k.name for k in after} and job.name not in {k.name for k in after}
    assert after == registry._parse_builtin(edited)
    assert precompiled.load_cached(edited, parse, env) == after and parse.calls == 2  # rewritten: a hit now
    assert precompiled.load_cached(files, parse, env) == before and parse.calls == 3  # and back again


def test_the_key_covers_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [("a.yaml", b"x")]
    key = precompiled.catalog_key(files)
    monkeypatch.setattr(_version, "__version__", "0.0.0-test")
    assert precompiled.catalog_key(files) != key


def test_a_damaged_blob_is_parsed_again_and_rewritten(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    parse = Counting()
    good = precompiled.load_cached(files, parse, env)
    (blob,) = _blobs(env)
    blob.write_bytes(blob.read_bytes()[:1000])
    assert precompiled.load_cached(files, parse, env) == good
    assert parse.calls == 2
    built_from, heads, bodies, valid, trees = _parts(blob.read_bytes())
    assert built_from == tuple(files)  # the bytes the next load compares
    stored = [
        (k.name, None if k.root_gvk is None else (k.root_gvk.group, k.root_gvk.version, k.root_gvk.kind)) for k in good
    ]
    assert heads == tuple(stored)
    assert tuple(precompiled._BODY.decode(body) for body in bodies) == good
    assert valid == ()  # rewritten whole (no check: no validity recorded)
    assert len(trees) == len(good) and any(trees)  # and each definition's expressions' syntax trees with it
    assert blob.read_bytes() == precompiled._blob(files, heads, valid, bodies, trees)  # the layout, exactly


def test_an_unwritable_cache_falls_back_to_the_yaml(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = {"WMAP_CACHE_DIR": str(blocker)}
    files = registry._builtin_files()
    parse = Counting()
    assert precompiled.load_cached(files, parse, env) == registry._parse_builtin(files)
    assert precompiled.load_cached(files, parse, env) == registry._parse_builtin(files)
    assert parse.calls == 2


def test_the_cache_can_be_turned_off(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    parse = Counting()
    env = {**env, "WMAP_NO_CATALOG_CACHE": "1"}
    precompiled.load_cached(files, parse, env)
    precompiled.load_cached(files, parse, env)
    assert parse.calls == 2
    assert not _blobs(env)


def test_a_bad_definition_is_still_an_error(env: dict[str, str]) -> None:
    files = [*registry._builtin_files(), ("zz-bad.yaml", b"kind: Karta\napiVersion: nope\n")]
    with pytest.raises(ValueError, match=r"zz-bad\.yaml"):
        precompiled.load_cached(files, registry._parse_builtin, env)
    assert not _blobs(env)


def test_old_blobs_are_pruned(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    for number in range(7):
        edited = [*files[:-1], (files[-1][0], files[-1][1] + f"\n# edit {number}\n".encode())]
        precompiled.load_cached(edited, registry._parse_builtin, env)
    assert 1 <= len(_blobs(env)) <= 4


def test_the_default_cache_directory() -> None:
    assert precompiled.cache_dir({"WMAP_CACHE_DIR": "/x/y"}) == Path("/x/y")
    assert precompiled.cache_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/workload-map")
    assert precompiled.cache_dir({}) == Path.home() / ".cache" / "workload-map"


def test_the_files_are_the_same_through_importlib_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    direct = registry._builtin_files()
    import importlib.resources

    asked: list[str] = []
    files = importlib.resources.files

    def spy(package: str) -> Any:
        asked.append(package)
        return files(package)

    monkeypatch.setattr(importlib.resources, "files", spy)
    monkeypatch.setattr(registry, "__file__", "/nonexistent/catalog/registry.py")  # as for a zipped package
    assert registry._builtin_files() == direct
    assert asked == ["workload_map.catalog"]


# --- validity recorded in the blob (resolving a catalog workload validates nothing) ----------------------------


class Checking:
    """A check that passes every definition but the named ones, counting its calls."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.failing = failing
        self.calls = 0

    def __call__(self, kartas: Sequence[Karta]) -> list[bool]:
        self.calls += 1
        return [karta.name not in self.failing for karta in kartas]


def test_the_check_runs_when_the_blob_is_built_and_its_answer_is_kept(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    failing = registry._parse_builtin(files)[0].name
    check = Checking(frozenset({failing}))
    built = precompiled.load_cached(files, registry._parse_builtin, env, check=check)
    decoded = precompiled.load_cached(files, registry._parse_builtin, env, check=check)
    assert check.calls == 1  # the second load decoded the blob, answers included
    for kartas in (built, decoded):
        assert [is_validated(karta) for karta in kartas] == [karta.name != failing for karta in kartas]
    # equal objects that were not handed out by the catalog are not marked: the mark is per object
    assert not any(is_validated(karta) for karta in registry._parse_builtin(files))


def test_without_a_check_nothing_is_marked_and_the_blobs_are_apart(env: dict[str, str]) -> None:
    files = registry._builtin_files()
    check = Checking()
    unchecked = precompiled.load_cached(files, registry._parse_builtin, env)
    assert not any(is_validated(karta) for karta in unchecked)
    precompiled.load_cached(files, registry._parse_builtin, env, check=check)
    assert check.calls == 1  # an unchecked blob is not taken for a checked one
    assert len(_blobs(env)) == 2


def test_the_checked_key_covers_the_validator_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [("a.yaml", b"x")]
    stamp = precompiled.validator_stamp()
    assert stamp is not None
    names = {line.rsplit(":", 2)[0] for line in stamp.decode().splitlines()}
    assert {"validation/rules.py", "jq/safety.py", "jq/parser.py", "model/types.py", "workload_map/_regex.py"} <= names
    key = precompiled.catalog_key(files, validator=stamp)
    assert key != precompiled.catalog_key(files)
    edited = stamp.replace(b"validation/rules.py:", b"validation/rules.py:1", 1)  # another size
    assert precompiled.catalog_key(files, validator=edited) != key


def test_every_module_validation_imports_is_in_the_stamp() -> None:
    """The stamp lists the validator's packages by name: a new package the validator imports must be added to
    precompiled._VALIDATOR_PACKAGES, or an edit to it would not give a new key."""
    import subprocess
    import sys

    code = "import sys, workload_map.validation; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ours = [name for name in done.stdout.split() if name.startswith("workload_map.")]
    covered = precompiled._VALIDATOR_PACKAGES
    outside = [name for name in ours if name.count(".") > 1 and name.split(".")[1] not in covered]
    assert ours and not outside, outside  # top-level helpers (workload_map.x) are in the stamp as the package's own


def test_the_builtin_catalog_marks_its_valid_definitions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMAP_CACHE_DIR", str(tmp_path))
    from workload_map.validation import errors, validate

    for loaded in (registry._load_builtin(), registry._load_builtin()):  # built, then decoded
        for karta in loaded:
            assert is_validated(karta) == (not errors(validate(karta))), karta.name


def _from_blob(env: dict[str, str], parse: Counting) -> precompiled.Definitions:
    files = registry._builtin_files()
    precompiled.load_definitions(files, parse, env, check=registry._without_errors)  # builds the blob
    return precompiled.load_definitions(files, parse, env, check=registry._without_errors)


def test_a_lookup_decodes_only_the_definition_it_hands_out(env: dict[str, str]) -> None:
    parse = Counting()
    definitions = _from_blob(env, parse)
    assert parse.calls == 1 and definitions.decoded == 0  # the second load decoded the heads only
    held = registry.DefinitionRegistry()
    held._add_catalog(definitions)
    assert held.warnings == [] and len(held) == len(definitions)  # the index needs names and GVKs only
    assert definitions.decoded == 0
    found = held.for_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert found is not None and found.karta.root_gvk is not None and found.karta.root_gvk.kind == "PyTorchJob"
    assert definitions.decoded == 1
    again = held.for_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert again is not None and again.karta is found.karta and definitions.decoded == 1  # decoded once
    assert is_validated(found.karta)  # the blob recorded it valid
    assert held.for_gvk("kubeflow.org", "v9", "PyTorchJob") is not None  # the version fallback decodes no other
    assert definitions.decoded == 1
    assert held.for_gvk("example.com", "v1", "Nothing") is None and definitions.decoded == 1
    entries = held.all()  # a listing decodes them all
    assert definitions.decoded == len(definitions)
    assert [entry.karta for entry in entries] == [entry.karta for entry in held.all()]
    assert all(held.is_effective(entry) for entry in held.effective())


def test_the_lazy_definitions_are_the_yaml_ones_in_order_and_shared(env: dict[str, str]) -> None:
    parse = Counting()
    definitions = _from_blob(env, parse)
    from_yaml = registry._parse_builtin(registry._builtin_files())
    kartas = definitions.all()
    assert kartas == from_yaml and [k.name for k in kartas] == [k.name for k in from_yaml]
    assert all(a is b for a, b in zip(kartas, definitions.all(), strict=True))  # the same objects on every call
    assert all(type(k) is Karta for k in kartas)


def test_the_builtin_registry_and_definitions_hand_out_the_same_objects() -> None:
    kartas = registry.builtin_definitions()
    assert all(a is b for a, b in zip(kartas, registry.builtin_definitions(), strict=True))
    listed = {id(entry.karta) for entry in registry.builtin_registry().all()}
    assert listed == {id(karta) for karta in kartas}
    eager = registry.DefinitionRegistry([("catalog", kartas)])
    lazy = registry.builtin_registry()
    assert [(e.name, e.origin, e.gvk) for e in eager.all()] == [(e.name, e.origin, e.gvk) for e in lazy.all()]
    assert [e.karta for e in eager.effective()] == [e.karta for e in lazy.effective()]
    assert eager.warnings == lazy.warnings
    assert [e.karta for e in eager.by_kind("pytorchjobs")] == [e.karta for e in lazy.by_kind("pytorchjobs")]
    lazy.add("catalog", kartas)  # the same objects added again: collisions by GVK, none by name, as when eager
    eager.add("catalog", kartas)
    assert lazy.warnings == eager.warnings


def test_a_definition_that_does_not_decode_is_read_from_the_yaml(env: dict[str, str]) -> None:
    parse = Counting()
    files = registry._builtin_files()
    good = precompiled.load_cached(files, parse, env)
    (blob,) = _blobs(env)
    built_from, heads, bodies, valid, trees = _parts(blob.read_bytes())
    damaged = (*bodies[:3], msgspec.msgpack.encode({"kind": 7}), *bodies[4:])
    blob.write_bytes(precompiled._blob(built_from, heads, valid, damaged, trees))
    definitions = precompiled.load_definitions(files, parse, env)
    assert parse.calls == 1 and definitions.decoded == 0
    assert definitions.karta(0) == good[0] and parse.calls == 1
    assert definitions.karta(3) == good[3] and parse.calls == 2  # parsed again, and the blob rewritten
    assert definitions.all() == good
    assert precompiled.load_definitions(files, parse, env).all() == good and parse.calls == 2


def _same(a: object, b: object) -> bool:
    """Equal with the same types all the way down (`==` alone takes 1 for 1.0 and True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, msgspec.Struct):
        fields = type(a).__struct_fields__
        return all(_same(getattr(a, name), getattr(b, name)) for name in fields)
    if isinstance(a, tuple | list):
        assert isinstance(b, tuple | list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    return a == b


def test_the_stored_form_gives_back_the_very_values_of_every_definition(env: dict[str, str]) -> None:
    from_yaml = registry._parse_builtin(registry._builtin_files())
    for karta in from_yaml:
        again = precompiled._BODY.decode(msgspec.msgpack.encode(precompiled._stored(karta)))
        assert _same(again, karta), karta.name
    definitions = _from_blob(env, Counting())
    assert all(_same(a, b) for a, b in zip(definitions.all(), from_yaml, strict=True))


def test_the_stored_form_keeps_tuples_lists_dicts_and_scalars_apart() -> None:
    value = {"a": (1, [2.0, True], None), "b": [(), {"c": "d"}]}
    assert _same(precompiled._BODY.decode(msgspec.msgpack.encode(precompiled._stored(value))), value)
    with pytest.raises(TypeError, match="set"):
        precompiled._stored({"a": {1}})
    with pytest.raises(TypeError):
        precompiled._stored({1: "a"})


@pytest.mark.parametrize("size", [0, 1, 5, 65_535, 65_536, 65_537, 131_072, 200_000])
def test_read_file_gives_the_whole_file(tmp_path: Path, size: int) -> None:
    path = tmp_path / "data"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
    assert precompiled.read_file(str(path)) == path.read_bytes()


def test_read_file_reads_a_file_whose_size_says_nothing() -> None:
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc")
    assert precompiled.read_file(str(status)).startswith(b"Name:")  # st_size 0, yet it has content


# --- the layout: a start reads the index and the files' bytes; a definition's part when it is decoded ------------


def test_a_definition_is_read_from_the_blob_opened_at_the_start(env: dict[str, str]) -> None:
    # the blob replaced (as another version's writer does: a new file renamed over it) after the start: the
    # definitions still come from the file that was opened and checked, not from whatever the path names now
    parse = Counting()
    definitions = _from_blob(env, parse)
    (blob,) = _blobs(env)
    replacement = blob.with_name("other")
    replacement.write_bytes(b"\0" * 64)
    replacement.replace(blob)
    assert definitions.all() == registry._parse_builtin(registry._builtin_files()) and parse.calls == 1
    assert definitions.decoded == len(definitions)


def test_the_blob_is_closed_once_every_definition_is_decoded(env: dict[str, str]) -> None:
    definitions = _from_blob(env, Counting())
    parts = definitions._parts
    assert parts is not None and parts._handle >= 0
    definitions.karta(0)
    assert parts._handle >= 0  # more to read
    definitions.all()
    assert parts._handle == -1


def test_a_blob_cut_short_after_the_start_sends_the_definitions_to_the_yaml(env: dict[str, str]) -> None:
    parse = Counting()
    definitions = _from_blob(env, parse)
    (blob,) = _blobs(env)
    with blob.open("r+b") as handle:  # damaged in place: the open file sees it
        handle.truncate(len(blob.read_bytes()) // 2)
    good = registry._parse_builtin(registry._builtin_files())
    assert definitions.karta(len(definitions) - 1) == good[-1] and parse.calls == 2
    assert definitions.all() == good and parse.calls == 2
    assert definitions._parts is not None and definitions._parts._handle == -1


@pytest.mark.parametrize("prefix", [b"\xff" * 8, (10**6).to_bytes(8, "big"), b"\0" * 8, b""])
def test_a_blob_whose_index_length_is_damaged_is_parsed_again(env: dict[str, str], prefix: bytes) -> None:
    files = registry._builtin_files()
    parse = Counting()
    good = precompiled.load_cached(files, parse, env)
    (blob,) = _blobs(env)
    blob.write_bytes(prefix + blob.read_bytes()[precompiled._INDEX_LENGTH :])
    assert precompiled.load_cached(files, parse, env) == good and parse.calls == 2
    assert precompiled.load_cached(files, parse, env) == good and parse.calls == 2  # rewritten


def test_without_pread_the_parts_are_read_at_the_start(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    parse = Counting()
    files = registry._builtin_files()
    good = precompiled.load_cached(files, parse, env)
    monkeypatch.setattr(precompiled, "_PREAD", False)
    definitions = precompiled.load_definitions(files, parse, env)
    (blob,) = _blobs(env)
    blob.unlink()  # nothing is read from the file after the start
    assert definitions.decoded == 0 and definitions.all() == good and parse.calls == 1


@pytest.mark.parametrize("seed", range(12))
def test_the_files_are_compared_piece_by_piece_as_one_comparison_would(tmp_path: Path, seed: int) -> None:
    # the blob's copy of the files is read 64 KiB at a time and compared in place: the answer is the one comparing
    # the joined bytes gives, for files across piece boundaries, empty ones, a changed byte anywhere, a short blob
    import random

    chosen = random.Random(seed)
    sizes = [chosen.choice([0, 1, 7, 4096, 65_535, 65_536, 65_537, chosen.randrange(200_000)]) for _ in range(6)]
    files = [(f"f{index}", chosen.randbytes(size)) for index, size in enumerate(sizes)]
    joined = b"".join(data for _, data in files)
    variants = [joined, joined + b"more after the files", joined[:-1]]
    if joined:
        at = chosen.randrange(len(joined))
        variants.append(joined[:at] + bytes([joined[at] ^ 1]) + joined[at + 1 :])
    for stored in variants:
        path = tmp_path / "blob"
        path.write_bytes(b"index" + stored)
        handle = os.open(path, os.O_RDONLY)
        try:
            os.read(handle, 5)
            names, sizes = [name for name, _ in files], [len(data) for _, data in files]
            assert precompiled._same_files(handle, files, names, sizes) == stored.startswith(joined)
            if files:
                os.lseek(handle, 5, os.SEEK_SET)
                assert not precompiled._same_files(handle, files, ["other", *names[1:]], sizes)
                os.lseek(handle, 5, os.SEEK_SET)
                assert not precompiled._same_files(handle, files, names, [sizes[0] + 1, *sizes[1:]])
        finally:
            os.close(handle)


def test_registries_of_one_load_share_what_they_hold(env: dict[str, str]) -> None:
    definitions = _from_blob(env, Counting())
    first, second = registry.DefinitionRegistry(), registry.DefinitionRegistry()
    first._add_catalog(definitions)
    second._add_catalog(definitions)
    assert definitions.decoded == 0  # holding them decodes nothing
    found = first.for_gvk("kubeflow.org", "v1", "PyTorchJob")
    again = second.for_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert found is not None and again is not None and found.karta is again.karta and definitions.decoded == 1
    assert [entry.karta for entry in first.all()] == [entry.karta for entry in second.all()]
    assert all(second.is_effective(entry) for entry in first.effective())
