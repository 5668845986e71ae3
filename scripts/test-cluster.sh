#!/usr/bin/env bash
# A real Kubernetes API server (kube-apiserver + etcd, no nodes) for the e2e tests.
#
#   scripts/test-cluster.sh build    build the pinned binaries into the cache (once per version)
#   scripts/test-cluster.sh start    build if needed, start etcd + kube-apiserver, wait for /readyz
#   scripts/test-cluster.sh env      print shell exports (eval "$(scripts/test-cluster.sh env)")
#   scripts/test-cluster.sh status   exit 0 when running and ready, 3 when not running
#   scripts/test-cluster.sh stop     stop both processes
#   scripts/test-cluster.sh logs     print the tails of the logs
#
# See docs/testing.md. Environment knobs:
#   WMAP_CACHE_DIR          binaries cache      (default ${XDG_CACHE_HOME:-~/.cache}/workload-map)
#   WMAP_TEST_CLUSTER_DIR   state: certs, kubeconfigs, logs, etcd data
#                           (default ${XDG_RUNTIME_DIR:-/tmp}/wmap-test-cluster)
#   WMAP_TEST_PORT_RANGE    ports to choose free ones from (default 36400-36999)
#   WMAP_TEST_READY_TIMEOUT seconds to wait for readiness (default 120)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="$REPO_ROOT/tests/apiserver"
CACHE_ROOT="${WMAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/workload-map}"
STATE_DIR="${WMAP_TEST_CLUSTER_DIR:-${XDG_RUNTIME_DIR:-/tmp}/wmap-test-cluster}"
PORT_RANGE="${WMAP_TEST_PORT_RANGE:-36400-36999}"
READY_TIMEOUT="${WMAP_TEST_READY_TIMEOUT:-120}"

die() { echo "test-cluster: error: $*" >&2; exit 1; }
log() { echo "test-cluster: $*" >&2; }

# Versions come from the committed go.mod, so the cache key follows the pins.
mod_version() { awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$MOD_DIR/go.mod"; }
K8S_VERSION="$(mod_version k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version go.etcd.io/etcd/server/v3)"
[[ -n "$K8S_VERSION" && -n "$ETCD_VERSION" ]] || die "cannot read pinned versions from $MOD_DIR/go.mod"
APISERVER_BIN="$CACHE_ROOT/kube-apiserver-$K8S_VERSION/kube-apiserver"
ETCD_BIN="$CACHE_ROOT/etcd-$ETCD_VERSION/etcd"

# --------------------------------------------------------------------------- build

cmd_build() {
    if [[ -x "$APISERVER_BIN" && -x "$ETCD_BIN" ]]; then
        log "cached: $APISERVER_BIN, $ETCD_BIN"
        return 0
    fi
    command -v go >/dev/null 2>&1 || die "Go toolchain not found: install Go (>= 1.25) to build kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION"
    mkdir -p "$CACHE_ROOT"
    local out start minor
    out="$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")"
    # shellcheck disable=SC2064
    trap "rm -rf '$out'" EXIT
    minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
    local ldflags="-s -w"
    ldflags+=" -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
    ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
    ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor"
    ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
    ldflags+=" -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
    log "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION (first time only; ~15-25 min on 2 cores)"
    start=$(date +%s)
    (
        cd "$MOD_DIR"
        # -mod=readonly: go.mod/go.sum are the pins; never rewrite them during a build.
        GOFLAGS="-mod=readonly ${GOFLAGS:-}" CGO_ENABLED=0 \
            go build -p "$(nproc 2>/dev/null || echo 2)" -buildvcs=false -trimpath -ldflags "$ldflags" \
            -o "$out/" ./kube-apiserver ./etcd
    ) || die "go build failed (see above)"
    mkdir -p "$(dirname "$APISERVER_BIN")" "$(dirname "$ETCD_BIN")"
    mv -f "$out/kube-apiserver" "$APISERVER_BIN"
    mv -f "$out/etcd" "$ETCD_BIN"
    log "built in $(( $(date +%s) - start ))s: $APISERVER_BIN, $ETCD_BIN"
}

# --------------------------------------------------------------------------- helpers

# Is the process of pidfile $1 alive, and ours? (Its command line names the state dir, so a stale
# pidfile whose pid was reused by an unrelated process is never taken for ours, nor killed.)
pid_alive() {
    local pid
    pid_running "$1" || return 1
    pid="$(cat "$1")"
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$STATE_DIR/"
}

# Is the process in pidfile $1 running at all? While a server we just started is being waited for, its command
# line may not show $STATE_DIR yet (the forked shell has not exec'd setsid), so pid_alive would call it dead and
# the start would kill a healthy server; it is our own child, so its pid cannot have been reused.
pid_running() {
    local pid
    [[ -f "$1" ]] || return 1
    pid="$(cat "$1")"
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# Is TCP port $1 on 127.0.0.1 free to bind?
port_free() {
    python3 - "$1" <<'EOF' 2>/dev/null
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
EOF
}

# Print $1 distinct free ports from PORT_RANGE, starting at a random offset.
pick_ports() {
    local want=$1 lo=${PORT_RANGE%-*} hi=${PORT_RANGE#*-} got=() n p i
    n=$(( hi - lo + 1 ))
    (( n > 0 )) || die "bad WMAP_TEST_PORT_RANGE=$PORT_RANGE"
    p=$(( lo + RANDOM % n ))
    for (( i = 0; i < n && ${#got[@]} < want; i++ )); do
        if port_free "$p"; then got+=("$p"); fi
        p=$(( p + 1 )); (( p > hi )) && p=$lo
    done
    (( ${#got[@]} == want )) || die "no $want free ports in $PORT_RANGE (set WMAP_TEST_PORT_RANGE)"
    echo "${got[@]}"
}

show_logs() {
    local f
    for f in "$STATE_DIR/etcd.log" "$STATE_DIR/kube-apiserver.log"; do
        [[ -f "$f" ]] || continue
        echo "----- last lines of $f -----" >&2
        tail -n "${1:-30}" "$f" >&2
    done
}

# Wait until curl "$@" succeeds, or the process in pidfile $1 dies, or the timeout passes.
wait_for() {
    local what=$1 pidfile=$2 deadline=$(( $(date +%s) + READY_TIMEOUT ))
    shift 2
    until curl -fsS --max-time 3 -o /dev/null "$@" 2>/dev/null; do
        if ! pid_running "$pidfile"; then
            show_logs 40
            stop_processes
            die "$what exited during startup (logs in $STATE_DIR)"
        fi
        if (( $(date +%s) >= deadline )); then
            show_logs 40
            stop_processes
            die "$what not ready after ${READY_TIMEOUT}s (WMAP_TEST_READY_TIMEOUT; logs in $STATE_DIR)"
        fi
        sleep 0.5
    done
}

is_ready() {
    [[ -f "$STATE_DIR/env" ]] && pid_alive "$STATE_DIR/etcd.pid" && pid_alive "$STATE_DIR/kube-apiserver.pid" || return 1
    local url
    url="$(sed -n 's/^export WMAP_TEST_APISERVER_URL=//p' "$STATE_DIR/env")"
    curl -fsS --max-time 3 -o /dev/null --cacert "$STATE_DIR/pki/ca.crt" "$url/readyz" 2>/dev/null
}

stop_one() {
    local pidfile="$STATE_DIR/$1.pid" pid i
    [[ -f "$pidfile" ]] || return 0
    pid="$(cat "$pidfile")"
    if pid_alive "$pidfile"; then
        kill -TERM "$pid" 2>/dev/null || true
        for (( i = 0; i < 100; i++ )); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            log "$1 (pid $pid) did not stop on SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pidfile"
}

stop_processes() { stop_one kube-apiserver; stop_one etcd; }

write_kubeconfig() { # file user token
    local ca_data
    ca_data="$(base64 -w0 < "$STATE_DIR/pki/ca.crt")"
    cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: wmap-test
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $ca_data
users:
- name: $2
  user:
    token: $3
contexts:
- name: wmap-test-$2
  context:
    cluster: wmap-test
    user: $2
current-context: wmap-test-$2
preferences: {}
EOF
    chmod 600 "$1"
}

gen_pki() {
    local pki="$STATE_DIR/pki"
    mkdir -p "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=wmap-test-ca" \
        -keyout "$pki/ca.key" -out "$pki/ca.crt" >/dev/null 2>&1 || die "openssl: CA generation failed"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
        -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" >/dev/null 2>&1 || die "openssl: CSR failed"
    cat > "$pki/apiserver.ext" <<EOF
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1
EOF
    openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
        -days 3650 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" >/dev/null 2>&1 \
        || die "openssl: signing the serving certificate failed"
    # Service-account token signing key.
    openssl genrsa -out "$pki/sa.key" 2048 >/dev/null 2>&1 || die "openssl: SA key failed"
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" >/dev/null 2>&1 || die "openssl: SA pubkey failed"
    chmod 600 "$pki"/*.key
}

# --------------------------------------------------------------------------- start/stop

cmd_start() {
    command -v curl >/dev/null 2>&1 || die "curl is required"
    command -v openssl >/dev/null 2>&1 || die "openssl is required"
    command -v python3 >/dev/null 2>&1 || die "python3 is required"
    mkdir -p "$(dirname "$STATE_DIR")"
    # One start at a time (pytest-xdist workers, parallel shells).
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$STATE_DIR.lock"
        flock -w 1800 9 || die "timed out waiting for another start"
    fi
    if is_ready; then
        log "already running ($STATE_DIR)"
        return 0
    fi
    cmd_build
    stop_processes
    rm -rf "$STATE_DIR"
    mkdir -p "$STATE_DIR"
    chmod 700 "$STATE_DIR"

    local etcd_port peer_port api_port admin_token restricted_token
    read -r etcd_port peer_port api_port <<<"$(pick_ports 3)"
    APISERVER_URL="https://127.0.0.1:$api_port"
    admin_token="$(openssl rand -hex 24)"
    restricted_token="$(openssl rand -hex 24)"

    gen_pki
    cat > "$STATE_DIR/tokens.csv" <<EOF
$admin_token,wmap-admin,wmap-admin-uid,"system:masters"
$restricted_token,wmap-restricted,wmap-restricted-uid,"wmap:restricted"
EOF
    chmod 600 "$STATE_DIR/tokens.csv"
    # Metadata level for everything: one line per request, so tests can count requests.
    cat > "$STATE_DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
EOF

    log "starting etcd $ETCD_VERSION on 127.0.0.1:$etcd_port"
    setsid "$ETCD_BIN" \
        --name wmap-test \
        --data-dir "$STATE_DIR/etcd-data" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" \
        --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-cluster "wmap-test=http://127.0.0.1:$peer_port" \
        --initial-cluster-state new \
        --unsafe-no-fsync \
        --log-level warn \
        </dev/null >"$STATE_DIR/etcd.log" 2>&1 9>&- &
    echo $! > "$STATE_DIR/etcd.pid"
    wait_for etcd "$STATE_DIR/etcd.pid" "http://127.0.0.1:$etcd_port/health"

    log "starting kube-apiserver $K8S_VERSION on $APISERVER_URL"
    local pki="$STATE_DIR/pki"
    setsid "$APISERVER_BIN" \
        --etcd-servers "http://127.0.0.1:$etcd_port" \
        --bind-address 127.0.0.1 \
        --advertise-address 127.0.0.1 \
        --secure-port "$api_port" \
        --tls-cert-file "$pki/apiserver.crt" \
        --tls-private-key-file "$pki/apiserver.key" \
        --client-ca-file "$pki/ca.crt" \
        --token-auth-file "$STATE_DIR/tokens.csv" \
        --authorization-mode Node,RBAC \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$pki/sa.pub" \
        --service-account-signing-key-file "$pki/sa.key" \
        --service-cluster-ip-range 10.96.0.0/16 \
        --disable-admission-plugins ServiceAccount \
        --allow-privileged \
        --audit-policy-file "$STATE_DIR/audit-policy.yaml" \
        --audit-log-path "$STATE_DIR/audit.log" \
        --audit-log-format json \
        --audit-log-mode blocking \
        --audit-log-maxsize 4096 \
        --profiling=false \
        --feature-gates GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true \
        --runtime-config scheduling.k8s.io/v1alpha2=true \
        --v 1 \
        </dev/null >"$STATE_DIR/kube-apiserver.log" 2>&1 9>&- &
    echo $! > "$STATE_DIR/kube-apiserver.pid"
    wait_for kube-apiserver "$STATE_DIR/kube-apiserver.pid" --cacert "$pki/ca.crt" "$APISERVER_URL/readyz"

    write_kubeconfig "$STATE_DIR/admin.kubeconfig" wmap-admin "$admin_token"
    write_kubeconfig "$STATE_DIR/restricted.kubeconfig" wmap-restricted "$restricted_token"
    cat > "$STATE_DIR/env" <<EOF
export WMAP_TEST_CLUSTER_DIR=$STATE_DIR
export WMAP_TEST_APISERVER_URL=$APISERVER_URL
export WMAP_TEST_KUBECONFIG=$STATE_DIR/admin.kubeconfig
export WMAP_TEST_RESTRICTED_KUBECONFIG=$STATE_DIR/restricted.kubeconfig
export WMAP_TEST_ADMIN_TOKEN=$admin_token
export WMAP_TEST_RESTRICTED_TOKEN=$restricted_token
export WMAP_TEST_CA_FILE=$pki/ca.crt
export WMAP_TEST_AUDIT_LOG=$STATE_DIR/audit.log
export WMAP_TEST_K8S_VERSION=$K8S_VERSION
EOF
    log "ready: $APISERVER_URL (eval \"\$(scripts/test-cluster.sh env)\")"
}

cmd_stop() {
    if [[ ! -d "$STATE_DIR" ]]; then
        log "not running"
        return 0
    fi
    stop_processes
    rm -rf "$STATE_DIR/etcd-data" "$STATE_DIR/env"
    log "stopped (logs kept in $STATE_DIR)"
}

cmd_env() {
    is_ready || die "not running: run scripts/test-cluster.sh start"
    cat "$STATE_DIR/env"
}

cmd_status() {
    if is_ready; then
        # shellcheck disable=SC1091
        (. "$STATE_DIR/env"; echo "running: $WMAP_TEST_APISERVER_URL (kube-apiserver $K8S_VERSION, etcd $ETCD_VERSION, state $STATE_DIR)")
        return 0
    fi
    if pid_alive "$STATE_DIR/etcd.pid" || pid_alive "$STATE_DIR/kube-apiserver.pid"; then
        echo "unhealthy: processes alive but /readyz fails (state $STATE_DIR)"
        return 1
    fi
    echo "not running (binaries: $( [[ -x "$APISERVER_BIN" && -x "$ETCD_BIN" ]] && echo cached || echo 'not built'))"
    return 3
}

case "${1:-}" in
    build) cmd_build ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) cmd_env ;;
    status) cmd_status ;;
    logs) show_logs "${2:-50}" 2>&1 ;;
    paths) echo "kube-apiserver=$APISERVER_BIN"; echo "etcd=$ETCD_BIN"; echo "state=$STATE_DIR" ;;
    *) echo "usage: $0 build|start|stop|env|status|logs|paths" >&2; exit 2 ;;
esac
