#!/usr/bin/env bash
# Build upstream's `kli` CLI from the Go module proxy, for side-by-side benchmark figures only
# (benchmarks/bench_kli.py). Nothing of it is committed: the binary lands in the cache directory.
#
#   scripts/build-kli.sh                 # resolve the version, build it (once), print the binary's path
#   scripts/build-kli.sh --resolve-only  # print "<module> <version>" or fail; builds nothing
#   KLI_VERSION=v0.3.0 scripts/build-kli.sh
#
# The version is pinned by KLI_VERSION. Left empty, the newest release the module proxy lists for the first module
# path below that it serves is taken, and printed, so a run says which release it measured.
#
# Installs into ${WMAP_CACHE_DIR:-~/.cache/workload-map}/kli-<version>/kli (GOBIN), with GOFLAGS=-mod=mod.
# Exit codes: 0 built or already there (the binary's path is the last line of stdout); 2 no `go` command;
# 3 no version of kli is served by the module proxy (one line on stderr says what the proxy answered);
# 1 the build itself failed (its log is kept beside where the binary would be).
set -euo pipefail

KLI_VERSION="${KLI_VERSION:-}"
# module path, then the package of the CLI inside it; the first module the proxy serves wins.
# KLI_MODULE and KLI_PACKAGE together replace the list (a moved module, or a check of this script on another CLI).
if [[ -n "${KLI_MODULE:-}" && -n "${KLI_PACKAGE:-}" ]]; then
  CANDIDATES=("$KLI_MODULE $KLI_PACKAGE")
else
  CANDIDATES=(
    "github.com/dsx-ai-factory/workload-map/cli github.com/dsx-ai-factory/workload-map/cli/cmd/kli"
    "github.com/dsx-ai-factory/workload-map github.com/dsx-ai-factory/workload-map/cli/cmd/kli"
    "github.com/run-ai/karta github.com/run-ai/karta/cli/cmd/kli"
  )
fi
CACHE="${WMAP_CACHE_DIR:-$HOME/.cache/workload-map}"
RESOLVE_ONLY=0
[[ "${1:-}" == "--resolve-only" ]] && RESOLVE_ONLY=1

if ! command -v go >/dev/null 2>&1; then
  echo "build-kli: no 'go' command on PATH; install Go to build kli" >&2
  exit 2
fi

# Outside any module, so `go list -m` and `go install pkg@version` do not touch a go.mod.
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export GOFLAGS=-mod=mod

module="" package="" errors=()
for candidate in "${CANDIDATES[@]}"; do
  read -r mod pkg <<<"$candidate"
  if [[ -n "$KLI_VERSION" ]]; then
    if out="$(go list -m -json "$mod@$KLI_VERSION" 2>&1)"; then
      module="$mod" package="$pkg"
      break
    fi
  else
    if out="$(go list -m -versions "$mod" 2>&1)"; then
      # "<module> v0.1.0 v0.2.0 ..." (release tags only); the newest is last.
      newest="$(awk '{print $NF}' <<<"$out")"
      if [[ "$newest" != "$mod" ]]; then
        module="$mod" package="$pkg" KLI_VERSION="$newest"
        break
      fi
      out="the proxy lists no release"
    fi
  fi
  # one line per module, without the go command's "go: module M: reading URL:" preamble
  errors+=("$mod: $(tr '\n\t' '  ' <<<"$out" | sed 's/^go: //; s/module [^ ]*: //; s/reading [^ ]*: //; s/  */ /g; s/ $//')")
done

if [[ -z "$module" ]]; then
  joined="$(printf '%s; ' "${errors[@]}")"
  echo "build-kli: kli not installable from the module proxy: ${joined%; }" >&2
  exit 3
fi

if (( RESOLVE_ONLY )); then
  echo "$module $KLI_VERSION"
  exit 0
fi

DEST="$CACHE/kli-$KLI_VERSION"
BIN="$DEST/$(basename "$package")"
if [[ -x "$BIN" ]]; then
  echo "$BIN"
  exit 0
fi
mkdir -p "$DEST"
echo "build-kli: building $package@$KLI_VERSION into $DEST (this takes minutes)" >&2
if ! GOBIN="$DEST" go install "$package@$KLI_VERSION" >"$DEST/build.log" 2>&1; then
  echo "build-kli: go install $package@$KLI_VERSION failed; see $DEST/build.log: $(tail -n 1 "$DEST/build.log")" >&2
  exit 1
fi
echo "$BIN"
