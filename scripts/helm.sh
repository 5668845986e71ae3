#!/usr/bin/env bash
# The pinned helm the chart is linted and rendered with (charts/workload-map, tests/unit/test_controller_chart.py):
# built from the Go module proxy into ~/.cache/workload-map/helm-<version>/ on first use (a few minutes), then
# reused. Prints the binary's path; `scripts/helm.sh lint charts/workload-map` runs it.
set -euo pipefail
VERSION="v3.17.3"
# the cache scripts/test-cluster.sh keeps its binaries in (WMAP_CACHE_DIR overrides it there too)
DIR="${WMAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/workload-map}/helm-${VERSION}"
if [[ ! -x "$DIR/helm" ]]; then
  command -v go >/dev/null || { echo "helm.sh: needs Go to build helm ${VERSION}" >&2; exit 1; }
  mkdir -p "$DIR"
  echo "helm.sh: building helm ${VERSION} from the Go module proxy into $DIR" >&2
  GOBIN="$DIR" GOFLAGS=-mod=mod go install "helm.sh/helm/v3/cmd/helm@${VERSION}"
fi
if [[ $# -eq 0 ]]; then
  echo "$DIR/helm"
else
  exec "$DIR/helm" "$@"
fi
