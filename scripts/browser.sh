#!/usr/bin/env bash
# The headless Chromium the dashboard is driven in (tests/e2e/test_serve_dashboard.py, tests/e2e/browser.py):
# $WMAP_CHROMIUM, else one on PATH, else Debian's `chromium` package installed with apt-get (as root, once: the
# package then stays installed and is found on PATH; its .deb files are kept in ~/.cache/workload-map/apt/, so a
# reinstall on the same machine downloads nothing). Prints the binary's path; exits 1, saying why, when there is
# none and none can be installed.
set -euo pipefail
if [[ -n "${WMAP_CHROMIUM:-}" ]]; then
  command -v "$WMAP_CHROMIUM" || { echo "browser.sh: WMAP_CHROMIUM=$WMAP_CHROMIUM is not a program" >&2; exit 1; }
  exit 0
fi
# the names tests/e2e/browser.py looks for
find_browser() {
  for name in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    if command -v "$name" 2>/dev/null; then return 0; fi
  done
  return 1
}
find_browser && exit 0
if [[ "$(id -u)" != "0" ]] || ! command -v apt-get >/dev/null; then
  echo "browser.sh: no Chromium, and no apt-get as root to install one (apt-get install chromium, or set WMAP_CHROMIUM)" >&2
  exit 1
fi
ARCHIVES="${WMAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/workload-map}/apt"
mkdir -p "$ARCHIVES/partial"
LOG="$ARCHIVES/install.log"
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o Dir::Cache::Archives="$ARCHIVES" chromium >>"$LOG" 2>&1
}
echo "browser.sh: installing Debian's chromium with apt-get (its packages kept in $ARCHIVES, the log in $LOG)" >&2
: >"$LOG"
# a fresh machine has no package lists yet: read them once, then try again
if ! install && ! { apt-get update -q >>"$LOG" 2>&1 && install; }; then
  tail -n 5 "$LOG" >&2
  echo "browser.sh: apt-get could not install chromium (the log: $LOG)" >&2
  exit 1
fi
find_browser || { echo "browser.sh: chromium was installed but is not on PATH" >&2; exit 1; }
