"""Setting values at jq paths in Python, with jq's `setpath` semantics (karta-spec §11.3).

libjq evaluates `path(EXPR)` once (document.py); the values are then set here, so writing N values never compiles N
programs. The rules are jq 1.8's `setpath`, which gojq shares on every case a definition can reach:

* a missing object or array on the way is created (`null` becomes `{}` for a key, `[]` for an index);
* an index past the end pads the array with nulls; a negative index counts from the end, and one before the
  start fails (`Out of bounds negative array index`); indexes are truncated to integers; past 536870912 fails;
  with `pad=False` (the resolve layer's write-back of definition paths: untrusted input) an index may be at most
  the array's length (append one element): past it fails before anything is allocated, naming the path;
* a slice step (`path(.[1:3])`) replaces that part of the array and needs an array value;
* the empty path replaces the whole document;
* a key on a non-object or an index on a non-array fails (`Cannot index number with string ("a")`).

`set_paths(..., copy=True)` is copy-on-write: only the objects and arrays along the written paths are copied
(each once per call), everything else is shared with the input, and the input is never changed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Final

from workload_map._jsontype import json_type
from workload_map.errors import WorkloadMapError

__all__ = ["PathError", "path_text", "set_paths"]

_MAX_INDEX: Final = 536870912
Path = Sequence[Any]


class PathError(WorkloadMapError, ValueError):
    """A path step that cannot be set on the value found there (jq's message)."""


def _show(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), default=str)
    if len(text) > 30:
        text = text[:27] + "..."
    return f"{json_type(value)} ({text})"


def _cannot(container: Any, step: Any) -> PathError:
    return PathError(f"Cannot index {json_type(container)} with {_show(step)}")


def set_paths(root: Any, paths: Sequence[Path], values: Sequence[Any], *, copy: bool, pad: bool = True) -> Any:
    """`root` with `values[i]` set at `paths[i]`, in order; returns the (possibly new) root.

    With `copy`, `root` is left unchanged (copy-on-write along the paths); without, it is changed in place and an
    error can leave earlier paths written (callers that need all-or-nothing run a copying pass first). Without
    `pad`, an index past the end of an array (more than one past its last element) is a `PathError`: no sparse
    arrays, no allocation driven by an index.
    """
    copied: set[int] | None = set() if copy else None
    for path, value in zip(paths, values, strict=True):
        root = _set(root, path, 0, value, copied, pad=pad)
    return root


def path_text(path: Path) -> str:
    """A concrete path as jq writes it: `.spec.containers[0].image`, `.["a b"]`, `.[1:2]`; `.` for the root."""
    out: list[str] = []
    for step in path:
        if isinstance(step, str):
            out.append(f".{step}" if step.isidentifier() else f"[{json.dumps(step)}]")
        elif isinstance(step, dict):
            start, end = step.get("start"), step.get("end")
            out.append(f"[{'' if start is None else start}:{'' if end is None else end}]")
        else:
            out.append(f"[{step}]")
    text = "".join(out)
    return "." if not text else text if text.startswith(".") else f".{text}"


def _own(container: Any, copied: set[int] | None) -> Any:
    """`container` itself (in place) or a shallow copy made once per call (copy-on-write)."""
    if copied is None or id(container) in copied:
        return container
    clone = dict(container) if isinstance(container, dict) else list(container)
    copied.add(id(clone))
    return clone


def _writable(node: Any, kind: type[dict[str, Any]] | type[list[Any]], step: Any, copied: set[int] | None) -> Any:
    """The container a step writes into: a new one where the path is missing (jq creates it), the existing one
    (owned, for copy-on-write) when it has the right kind, else the error jq gives."""
    if node is None:
        created = kind()
        if copied is not None:
            copied.add(id(created))
        return created
    if isinstance(node, kind):
        return _own(node, copied)
    raise _cannot(node, step)


def _set(node: Any, path: Path, depth: int, value: Any, copied: set[int] | None, *, pad: bool) -> Any:
    if depth == len(path):
        return value
    step = path[depth]
    if isinstance(step, str):
        node = _writable(node, dict, step, copied)
        node[step] = _set(node.get(step), path, depth + 1, value, copied, pad=pad)
        return node
    if isinstance(step, int | float) and not isinstance(step, bool):
        node = _writable(node, list, step, copied)
        if isinstance(step, float) and not math.isfinite(step):
            raise _cannot(node, step)
        index = int(step)
        if index < 0:
            index += len(node)
            if index < 0:
                raise PathError("Out of bounds negative array index")
        if index > _MAX_INDEX:
            raise PathError("Array index too large")
        if index > len(node) and not pad:
            raise PathError(
                f"index {index} of {path_text(path[: depth + 1])} is past the end of the array (length {len(node)}): "
                "write-back sets an existing element or appends one, it never pads an array with nulls"
            )
        current = node[index] if index < len(node) else None
        if index >= len(node):
            node.extend([None] * (index + 1 - len(node)))
        node[index] = _set(current, path, depth + 1, value, copied, pad=pad)
        return node
    if isinstance(step, dict) and set(step) <= {"start", "end"}:
        return _set_slice(node, step, path, depth, value, copied=copied, pad=pad)
    raise _cannot(node, step)


def _bound(raw: Any, length: int, default: int) -> float:
    if raw is None:
        return default
    if not isinstance(raw, int | float) or isinstance(raw, bool):
        raise PathError(f"Start and end indices of an array slice must be numbers, not {_show(raw)}")
    bound = float(raw)
    if bound < 0:
        bound += length
    return min(max(bound, 0.0), float(length))


def _set_slice(
    node: Any, step: dict[str, Any], path: Path, depth: int, value: Any, *, copied: set[int] | None, pad: bool
) -> Any:
    if isinstance(node, str):
        raise PathError("Cannot update string slices")
    node = _writable(node, list, step, copied)
    start_f = _bound(step.get("start"), len(node), 0)
    end_f = max(_bound(step.get("end"), len(node), len(node)), start_f)
    start, end = int(start_f), math.ceil(end_f)
    current = node[start:end]
    replacement = _set(current, path, depth + 1, value, copied, pad=pad)
    if not isinstance(replacement, list):
        raise PathError("A slice of an array can only be assigned another array")
    node[start:end] = replacement
    return node
