"""The builtin table: which jq functions exist where, and which ones a definition may call.

Sources (facts, listed by each engine's own `builtins` function): libjq 1.8.2 (the engine we run, PyPI `jq`)
and gojq 0.12.20 (upstream's engine; the library, without the command-line additions `debug`, `stderr`,
`input_filename`). A definition must stay portable to upstream, so a call is allowed only when BOTH engines
define that name with that arity (`PORTABLE`), it is not `UNSAFE`, and it is not newer than `GOJQ_BASELINE`.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FORMATS",
    "GOJQ_BASELINE",
    "GOJQ_SINCE",
    "LIBJQ_ONLY",
    "PORTABLE",
    "UNSAFE",
    "UNSAFE_VARIABLES",
    "arities",
    "is_portable",
    "unsafe_reason",
]

# name/arity defined by both libjq 1.8.2 and gojq 0.12.20.
PORTABLE: Final = frozenset(
    """
    IN/1 IN/2 INDEX/1 INDEX/2 JOIN/2 JOIN/3 JOIN/4 abs/0 acos/0 acosh/0 add/0 add/1 all/0 all/1 all/2 any/0
    any/1 any/2 arrays/0 ascii_downcase/0 ascii_upcase/0 asin/0 asinh/0 atan/0 atan2/2 atanh/0 booleans/0
    bsearch/1 builtins/0 capture/1 capture/2 cbrt/0 ceil/0 combinations/0 combinations/1 contains/1 copysign/2
    cos/0 cosh/0 debug/1 del/1 delpaths/1 drem/2 empty/0 endswith/1 env/0 erf/0 erfc/0 error/0 error/1 exp/0
    exp10/0 exp2/0 explode/0 expm1/0 fabs/0 fdim/2 finites/0 first/0 first/1 flatten/0 flatten/1 floor/0 fma/3
    fmax/2 fmin/2 fmod/2 format/1 frexp/0 from_entries/0 fromdate/0 fromdateiso8601/0 fromjson/0 fromstream/1
    gamma/0 getpath/1 gmtime/0 group_by/1 gsub/2 gsub/3 halt/0 halt_error/0 halt_error/1 has/1 hypot/2
    implode/0 in/1 index/1 indices/1 infinite/0 input/0 inputs/0 inside/1 isempty/1 isfinite/0 isinfinite/0
    isnan/0 isnormal/0 iterables/0 j0/0 j1/0 jn/2 join/1 keys/0 last/0 last/1 ldexp/2 length/0 lgamma/0
    limit/2 localtime/0 log/0 log10/0 log1p/0 log2/0 logb/0 ltrim/0 ltrimstr/1 map/1 map_values/1 match/1
    match/2 max/0 max_by/1 min/0 min_by/1 mktime/0 modf/0 modulemeta/0 nan/0 nearbyint/0 nextafter/2
    nexttoward/2 normals/0 not/0 now/0 nth/1 nth/2 nulls/0 numbers/0 objects/0 path/1 paths/0 paths/1 pick/1
    pow/2 range/1 range/2 range/3 recurse/0 recurse/1 recurse/2 remainder/2 repeat/1 reverse/0 rindex/1
    rint/0 round/0 rtrim/0 rtrimstr/1 scalars/0 scalb/2 scalbln/2 scan/1 scan/2 select/1 setpath/2
    significand/0 sin/0 sinh/0 skip/2 sort/0 sort_by/1 split/1 split/2 splits/1 splits/2 sqrt/0 startswith/1
    strflocaltime/1 strftime/1 strings/0 strptime/1 sub/2 sub/3 tan/0 tanh/0 test/1 test/2 tgamma/0
    to_entries/0 toboolean/0 todate/0 todateiso8601/0 tojson/0 tonumber/0 tostream/0 tostring/0 transpose/0
    trim/0 trimstr/1 trunc/0 truncate_stream/1 type/0 unique/0 unique_by/1 until/2 utf8bytelength/0 values/0
    walk/1 while/2 with_entries/1 y0/0 y1/0 yn/2
    """.split()  # noqa: SIM905
)

# name/arity that libjq 1.8 defines and gojq does not (gojq's README lists most of them as deliberate).
LIBJQ_ONLY: Final = frozenset(
    """
    debug/0 get_jq_origin/0 get_prog_origin/0 get_search_list/0 have_decnum/0 have_literal_numbers/0
    input_filename/0 input_line_number/0 keys_unsorted/0 lgamma_r/0 stderr/0
    """.split()  # noqa: SIM905
)

# The oldest gojq release a definition must run on, and the release that added each newer builtin.
GOJQ_BASELINE: Final = (0, 12, 16)
GOJQ_SINCE: Final[dict[str, tuple[int, int, int]]] = {
    "add/1": (0, 12, 17),
    "skip/2": (0, 12, 17),
    "toboolean/0": (0, 12, 18),
    "trimstr/1": (0, 12, 18),
}

# Format strings (`@name`) both engines implement.
FORMATS: Final = frozenset({"text", "json", "html", "uri", "urid", "csv", "tsv", "sh", "base64", "base64d"})

_MODIFIES = "modifies data and is not allowed"
_EXCESSIVE = "may produce excessive output and is not allowed"
_OUTSIDE = "reaches outside the object (environment, input stream, terminal or process) and is not allowed"

# Unsafe by name, whatever the arity (and even if a definition redefines the name: upstream checks names).
UNSAFE: Final[dict[str, str]] = {
    "del": "del function is not allowed",  # upstream's wording
    "delpaths": f"function 'delpaths' {_MODIFIES}",
    "setpath": f"function 'setpath' {_MODIFIES}",
    "range": f"function 'range' {_EXCESSIVE}",
    "paths": f"function 'paths' {_EXCESSIVE}",
    "leaf_paths": f"function 'leaf_paths' {_EXCESSIVE}",
    "recurse": f"function 'recurse' {_EXCESSIVE}",
    "recurse_down": f"function 'recurse_down' {_EXCESSIVE}",
    "walk": f"function 'walk' {_EXCESSIVE}",
    "repeat": f"function 'repeat' {_EXCESSIVE}",
    "until": f"function 'until' {_EXCESSIVE}",
    "while": f"function 'while' {_EXCESSIVE}",
    "combinations": f"function 'combinations' {_EXCESSIVE}",
    "tostream": f"function 'tostream' {_EXCESSIVE}",
    "env": f"function 'env' {_OUTSIDE}",
    "input": f"function 'input' {_OUTSIDE}",
    "inputs": f"function 'inputs' {_OUTSIDE}",
    "debug": f"function 'debug' {_OUTSIDE}",
    "stderr": f"function 'stderr' {_OUTSIDE}",
    "input_filename": f"function 'input_filename' {_OUTSIDE}",
    "input_line_number": f"function 'input_line_number' {_OUTSIDE}",
    "halt": f"function 'halt' {_OUTSIDE}",
    "halt_error": f"function 'halt_error' {_OUTSIDE}",
    "get_search_list": f"function 'get_search_list' {_OUTSIDE}",
    "get_jq_origin": f"function 'get_jq_origin' {_OUTSIDE}",
    "get_prog_origin": f"function 'get_prog_origin' {_OUTSIDE}",
    "modulemeta": f"function 'modulemeta' {_OUTSIDE}",
    "localtime": "function 'localtime' depends on the host's time zone and is not allowed; use 'gmtime'",
    "strflocaltime": "function 'strflocaltime' depends on the host's time zone and is not allowed; use 'strftime'",
    "builtins": "function 'builtins' lists the engine's own functions, which differ between jq and gojq",
}

UNSAFE_VARIABLES: Final[dict[str, str]] = {
    "ENV": f"variable '$ENV' {_OUTSIDE}",
    "__loc__": "variable '$__loc__' exists only in libjq (upstream's gojq lacks it) and is not allowed",
    "__prog_args": f"variable '$__prog_args' {_OUTSIDE}",
}


def arities(name: str) -> list[int]:
    """Arities with which `name` is a portable builtin (for "did you mean" hints)."""
    return sorted(int(sig.rsplit("/", 1)[1]) for sig in PORTABLE if sig.rsplit("/", 1)[0] == name)


def is_portable(signature: str) -> bool:
    """True when both libjq and upstream's gojq (at GOJQ_BASELINE) define `name/arity`."""
    return signature in PORTABLE and GOJQ_SINCE.get(signature, (0, 0, 0)) <= GOJQ_BASELINE


def unsafe_reason(name: str) -> str | None:
    """Why a call to `name` is rejected whatever it resolves to, or None."""
    return UNSAFE.get(name)
