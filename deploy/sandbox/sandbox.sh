#!/usr/bin/env bash
# Flotilla sandbox: real member Kubernetes clusters on 127.0.0.1, no Docker.
# Each member = etcd + kube-apiserver + kube-controller-manager + kube-scheduler
# + kwok (fake nodes). See deploy/sandbox/README.md.
#
#   sandbox.sh up [NAME...]     create/start clusters (default: $CLUSTERS or cluster1..3)
#   sandbox.sh up-api NAME...   create/start API-only clusters (etcd + kube-apiserver: a
#                               Deployment is stored, never run; Flotilla's hub)
#   sandbox.sh stop NAME...     stop a member, keeping its data, ports, certs, token
#   sandbox.sh start NAME...    restart a stopped member
#   sandbox.sh down             stop every cluster in the state dir
#   sandbox.sh status           one line per cluster
#   sandbox.sh purge [NAME...]  stop and delete cluster state (all if no NAME)
#   sandbox.sh kubeconfig NAME  print the kubeconfig path
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SANDBOX_DIR=${SANDBOX_DIR:-$repo/.sandbox}
SANDBOX_PORT_BASE=${SANDBOX_PORT_BASE:-30000}
SANDBOX_NODES=${SANDBOX_NODES:-1}
SANDBOX_NODE_CPU=${SANDBOX_NODE_CPU:-32}
SANDBOX_NODE_MEMORY=${SANDBOX_NODE_MEMORY:-128Gi}
SANDBOX_NODE_PODS=${SANDBOX_NODE_PODS:-1000}
SANDBOX_TIMEOUT=${SANDBOX_TIMEOUT:-120}   # seconds per readiness wait
SERVICE_CIDR=${SANDBOX_SERVICE_CIDR:-10.96.0.0/16}
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
API_COMPONENTS=(etcd kube-apiserver)

log() { echo "sandbox: $*" >&2; }
die() { log "error: $*"; exit 1; }

for t in curl jq openssl setsid flock; do
  command -v "$t" >/dev/null || die "$t is required"
done

bindir() {
  if [[ -z ${SANDBOX_BIN:-} ]]; then
    SANDBOX_BIN=$(bash "$here/build-binaries.sh")
  fi
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok; do
    [[ -x $SANDBOX_BIN/$b ]] || die "missing $SANDBOX_BIN/$b"
  done
  [[ -f $SANDBOX_BIN/kwok-stages.yaml ]] || die "missing $SANDBOX_BIN/kwok-stages.yaml"
}

valid_name() { [[ $1 =~ ^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$ ]] || die "bad cluster name '$1' (lowercase DNS label)"; }
cdir() { echo "$SANDBOX_DIR/$1"; }
exists() { [[ -f $(cdir "$1")/ports ]]; }
# api_only NAME: the cluster was created by up-api (its state dir holds the mark).
api_only() { [[ -f $(cdir "$1")/api-only ]]; }
# components NAME: the components cluster NAME runs, in start order.
components() { if api_only "$1"; then echo "${API_COMPONENTS[@]}"; else echo "${COMPONENTS[@]}"; fi; }
known_clusters() {
  local f
  for f in "$SANDBOX_DIR"/*/ports; do [[ -f $f ]] && basename "$(dirname "$f")"; done
  return 0
}

# ---------------------------------------------------------------- processes

# pid of component $2 of cluster $1 if it is running (and really ours), else fail.
running_pid() {
  local d pidf pid
  d=$(cdir "$1"); pidf=$d/pids/$2.pid
  [[ -f $pidf ]] || return 1
  pid=$(<"$pidf")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  # Guard against pid reuse: argv[0] must be the component binary and the
  # command line must mention this cluster's state dir.
  local argv0 cmdline
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  argv0=${cmdline%% *}
  [[ ${argv0##*/} == "$2" && $cmdline == *"$d/"* ]] || return 1
  echo "$pid"
}

# launch cluster $1 component $2 with args; detached (own session), survives the caller.
launch() {
  local name=$1 comp=$2; shift 2
  local d pid
  d=$(cdir "$name")
  if running_pid "$name" "$comp" >/dev/null; then return 0; fi
  echo "=== $(date -u +%FT%TZ) start $comp" >>"$d/logs/$comp.log"
  # Non-interactive bash: the background child is not a process-group leader, so
  # setsid execs in place and $! is the component's pid (and its pgid/sid).
  setsid "$SANDBOX_BIN/$comp" "$@" </dev/null >>"$d/logs/$comp.log" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$d/pids/$comp.pid"
  # Until the child has exec'd, /proc/$pid/cmdline is still this shell's and
  # running_pid says "not running": wait_until took that for a crash (seen
  # once on a loaded machine, three clusters starting at once). Return once
  # the component runs, or has died (the caller then reports its log).
  local i
  for ((i = 0; i < 100; i++)); do
    running_pid "$name" "$comp" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.02
  done
}

# alive PID: the process exists and is not a zombie (an exited child of ours may stay
# a zombie until init reaps it, which can take seconds in some containers).
alive() {
  local st
  st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  st=${st##*) }
  [[ ${st%% *} != Z ]]
}

# stop components (in parallel), TERM then KILL after a grace period.
terminate() {
  local name=$1; shift
  local comp pid pids=() i
  for comp in "$@"; do
    if pid=$(running_pid "$name" "$comp"); then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 150; i++)); do
      alive "$pid" || break
      sleep 0.1
    done
    if alive "$pid"; then
      log "$name: pid $pid did not exit after TERM, killing"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for comp in "$@"; do rm -f "$(cdir "$name")/pids/$comp.pid"; done
  STOPPED_PIDS+=("${pids[@]}")
}

# Exited but not yet reaped (zombie, parent is init): give init a moment so that
# `pgrep` right after stop/down comes back empty. Bounded; harmless if it times out.
wait_reaped() {
  local pid i
  for pid in "$@"; do
    for ((i = 0; i < 50; i++)); do [[ -e /proc/$pid ]] || break; sleep 0.1; done
  done
}

# ---------------------------------------------------------------- creation

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Allocate ports for a new cluster: free now and not claimed by another cluster's ports file.
alloc_ports() {
  local claimed p n=0 out=()
  claimed=" $( { cat "$SANDBOX_DIR"/*/ports 2>/dev/null || true; } | sed -n 's/^[A-Z_]*=//p' | tr '\n' ' ') "
  for ((p = SANDBOX_PORT_BASE; n < 5 && p < 65000; p++)); do
    [[ $claimed == *" $p "* ]] && continue
    port_free "$p" || continue
    out+=("$p"); n=$((n + 1))
  done
  ((n == 5)) || die "no free ports"
  printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\nKCM_PORT=%s\nSCHEDULER_PORT=%s\n' "${out[@]}"
}

write_kubeconfig() { # file name server ca token
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $2
  cluster:
    server: $3
    certificate-authority-data: $(base64 -w0 <"$4")
users:
- name: $2-admin
  user:
    token: $5
contexts:
- name: $2
  context:
    cluster: $2
    user: $2-admin
current-context: $2
EOF
}

# One-time creation of state: ports, CA + serving cert, SA keys, token, kubeconfigs.
create() {
  local name=$1 d
  d=$(cdir "$name")
  exists "$name" && return 0
  log "$name: creating state in $d"
  mkdir -p "$d"/{pki,pids,logs,etcd,certs}
  (
    cd "$d/pki"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=flotilla-sandbox-$name-ca" -out ca.crt 2>/dev/null
    openssl ecparam -name prime256v1 -genkey -noout -out apiserver.key 2>/dev/null
    openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr 2>/dev/null
    printf '%s\n' "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature,keyEncipherment" >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl ecparam -name prime256v1 -genkey -noout -out sa.key 2>/dev/null # ES256 tokens
    openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f apiserver.csr ca.srl
    chmod 600 ./*.key
  )
  local token
  token=$(openssl rand -hex 24)
  echo "$token" >"$d/token"
  echo "$token,admin,admin,system:masters" >"$d/pki/tokens.csv"
  chmod 600 "$d/token" "$d/pki/tokens.csv"
  # ports last: its presence marks a complete cluster state
  alloc_ports >"$d/ports.tmp"
  # shellcheck disable=SC1091
  APISERVER_PORT=$(. "$d/ports.tmp"; echo "$APISERVER_PORT")
  write_kubeconfig "$d/component.kubeconfig" "$name" "https://127.0.0.1:$APISERVER_PORT" "$d/pki/ca.crt" "$token"
  write_kubeconfig "$SANDBOX_DIR/$name.kubeconfig" "$name" "https://127.0.0.1:$APISERVER_PORT" "$d/pki/ca.crt" "$token"
  chmod 600 "$d/component.kubeconfig" "$SANDBOX_DIR/$name.kubeconfig"
  mv "$d/ports.tmp" "$d/ports"
}

# ---------------------------------------------------------------- API helpers

load() { # sets D, TOKEN, URL and the *_PORT variables for cluster $1
  D=$(cdir "$1")
  # shellcheck disable=SC1091
  . "$D/ports"
  TOKEN=$(<"$D/token")
  URL=https://127.0.0.1:$APISERVER_PORT
}

api() { # method path [curl args...]; prints body, fails on HTTP >= 400 (except what caller allows)
  local m=$1 p=$2; shift 2
  curl -sS --max-time 10 --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $TOKEN" -X "$m" "$@" "$URL$p"
}

# wait_until DEADLINE CLUSTER CMD...: poll CMD until it succeeds; fail at the deadline
# or as soon as a component already launched for CLUSTER has died.
wait_until() {
  local deadline=$1 name=$2 comp; shift 2
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    for comp in $(components "$name"); do
      if [[ -f $(cdir "$name")/pids/$comp.pid ]] && ! running_pid "$name" "$comp" >/dev/null; then
        return 1
      fi
    done
    sleep 0.25
  done
}

apiserver_ready() { [[ $(api GET /readyz 2>/dev/null) == ok ]]; }
healthz_ok() { [[ $(curl -sk --max-time 2 "https://127.0.0.1:$1/healthz" 2>/dev/null) == ok ]]; }

node_json() {
  local name=$1 node=$2
  jq -cn --arg n "$node" --arg c "$name" --arg cpu "$SANDBOX_NODE_CPU" --arg mem "$SANDBOX_NODE_MEMORY" --arg pods "$SANDBOX_NODE_PODS" '{
    apiVersion: "v1", kind: "Node",
    metadata: {name: $n,
      annotations: {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
      labels: {type: "kwok", "kubernetes.io/hostname": $n, "kubernetes.io/os": "linux",
               "kubernetes.io/arch": "amd64", "flotilla.io/sandbox-cluster": $c}},
    spec: {},
    status: {
      capacity: {cpu: $cpu, memory: $mem, pods: $pods},
      allocatable: {cpu: $cpu, memory: $mem, pods: $pods},
      nodeInfo: {architecture: "amd64", operatingSystem: "linux", kubeletVersion: "kwok",
                 kubeProxyVersion: "", containerRuntimeVersion: "kwok", osImage: "kwok",
                 kernelVersion: "", machineID: "", systemUUID: "", bootID: ""}}}'
}

node_names() { local i; for ((i = 0; i < SANDBOX_NODES; i++)); do echo "$1-node-$i"; done; }

ensure_nodes() {
  local name=$1 node code
  for node in $(node_names "$name"); do
    code=$(api GET "/api/v1/nodes/$node" -o /dev/null -w '%{http_code}' || true)
    [[ $code == 200 ]] && continue
    code=$(node_json "$name" "$node" | api POST /api/v1/nodes -H 'Content-Type: application/json' \
      --data-binary @- -o "$D/logs/node-create.out" -w '%{http_code}' || true)
    [[ $code == 201 || $code == 409 ]] || { log "$name: creating node $node: HTTP $code: $(cat "$D/logs/node-create.out")"; return 1; }
  done
}

nodes_ready() {
  local name=$1 node
  for node in $(node_names "$name"); do
    api GET "/api/v1/nodes/$node" 2>/dev/null |
      jq -e '.status.conditions // [] | any(.type == "Ready" and .status == "True")' >/dev/null || return 1
  done
}

# ---------------------------------------------------------------- lifecycle

all_alive() {
  local name=$1 comp
  for comp in $(components "$name"); do
    running_pid "$name" "$comp" >/dev/null || { log "$name: $comp is not running; see $(cdir "$name")/logs/$comp.log"; tail -n 5 "$(cdir "$name")/logs/$comp.log" >&2 || true; return 1; }
  done
}

start_cluster() {
  local name=$1 t0=$SECONDS deadline
  deadline=$((SECONDS + SANDBOX_TIMEOUT))
  load "$name"
  local kc=$D/component.kubeconfig comp
  for comp in $(components "$name"); do # drop stale pid files of crashed components
    running_pid "$name" "$comp" >/dev/null || rm -f "$D/pids/$comp.pid"
  done
  launch "$name" etcd \
    --name="$name" --data-dir="$D/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="$name=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --quota-backend-bytes=2147483648 --log-level=warn
  launch "$name" kube-apiserver \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --endpoint-reconciler-type=none \
    --cert-dir="$D/certs" --tls-cert-file="$D/pki/apiserver.crt" --tls-private-key-file="$D/pki/apiserver.key" \
    --token-auth-file="$D/pki/tokens.csv" --authorization-mode=RBAC \
    --service-account-key-file="$D/pki/sa.pub" --service-account-signing-key-file="$D/pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --disable-admission-plugins=ServiceAccount --allow-privileged=true --profiling=false
  if ! wait_until "$deadline" "$name" apiserver_ready; then
    all_alive "$name" || true
    die "$name: kube-apiserver not ready (logs in $D/logs)"
  fi
  if api_only "$name"; then
    all_alive "$name" || die "$name: not ready (logs in $D/logs)"
    log "$name: API-only, ready at $URL in $((SECONDS - t0))s (kubeconfig $SANDBOX_DIR/$name.kubeconfig)"
    return 0
  fi
  launch "$name" kube-controller-manager \
    --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$D/certs/kcm" \
    --leader-elect=false --use-service-account-credentials=false \
    --service-account-private-key-file="$D/pki/sa.key" --root-ca-file="$D/pki/ca.crt" \
    --cluster-name="$name" --profiling=false
  launch "$name" kube-scheduler \
    --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --cert-dir="$D/certs/scheduler" \
    --leader-elect=false --profiling=false
  ensure_nodes "$name" || die "$name: could not create nodes"
  launch "$name" kwok \
    --kubeconfig="$kc" -c "$SANDBOX_BIN/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr=10.244.0.1/16 --node-ip=127.0.0.1 --node-lease-duration-seconds=40 ${SANDBOX_KWOK_ARGS:-}
  local ok=1
  wait_until "$deadline" "$name" nodes_ready "$name" || ok=0
  wait_until "$deadline" "$name" healthz_ok "$KCM_PORT" || ok=0
  wait_until "$deadline" "$name" healthz_ok "$SCHEDULER_PORT" || ok=0
  all_alive "$name" || ok=0
  ((ok)) || die "$name: not ready (logs in $D/logs)"
  log "$name: ready at $URL in $((SECONDS - t0))s (kubeconfig $SANDBOX_DIR/$name.kubeconfig)"
}

stop_cluster() {
  local name=$1
  exists "$name" || die "$name: unknown cluster"
  STOPPED_PIDS=()
  terminate "$name" kwok kube-scheduler kube-controller-manager
  terminate "$name" kube-apiserver
  terminate "$name" etcd
  wait_reaped "${STOPPED_PIDS[@]}"
  log "$name: stopped"
}

cluster_state() {
  local n=0 comp all
  all=($(components "$1"))
  for comp in "${all[@]}"; do running_pid "$1" "$comp" >/dev/null && n=$((n + 1)); done
  if ((n == ${#all[@]})); then echo running; elif ((n == 0)); then echo stopped; else echo "partial($n/${#all[@]})"; fi
}

# Run start_cluster for several clusters in parallel; fail if any fails.
start_many() {
  local name pids=() names=() rc=0 i
  for name in "$@"; do
    start_cluster "$name" &
    pids+=($!); names+=("$name")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { log "${names[$i]}: start failed"; rc=1; }
  done
  return $rc
}

with_lock() { # serialise state changes between concurrent invocations
  mkdir -p "$SANDBOX_DIR"
  [[ -f $SANDBOX_DIR/.gitignore ]] || echo '*' >"$SANDBOX_DIR/.gitignore"
  exec 9>"$SANDBOX_DIR/.lock"
  flock 9
}

cmd=${1:-help}; shift || true
case $cmd in
  up)
    (($#)) || set -- ${CLUSTERS:-cluster1 cluster2 cluster3}
    for n in "$@"; do valid_name "$n"; done
    bindir; with_lock
    t0=$SECONDS
    for n in "$@"; do create "$n"; done
    start_many "$@"
    log "up: ${#} cluster(s) ready in $((SECONDS - t0))s"
    ;;
  up-api)
    (($#)) || die "usage: sandbox.sh up-api NAME..."
    for n in "$@"; do
      valid_name "$n"
      if exists "$n" && ! api_only "$n"; then die "$n: exists as a member cluster, not API-only"; fi
    done
    bindir; with_lock
    for n in "$@"; do
      # The mark before the state: create writes ports (a complete state) last.
      exists "$n" || { mkdir -p "$(cdir "$n")"; touch "$(cdir "$n")/api-only"; create "$n"; }
    done
    start_many "$@"
    ;;
  start)
    (($#)) || die "usage: sandbox.sh start NAME..."
    for n in "$@"; do exists "$n" || die "$n: unknown cluster (use 'up $n' to create it)"; done
    bindir; with_lock
    start_many "$@"
    ;;
  stop)
    (($#)) || die "usage: sandbox.sh stop NAME..."
    with_lock
    for n in "$@"; do stop_cluster "$n"; done
    ;;
  down)
    with_lock
    for n in $(known_clusters); do stop_cluster "$n" & done
    wait
    ;;
  purge)
    with_lock
    (($#)) || set -- $(known_clusters)
    for n in "$@"; do
      valid_name "$n"
      exists "$n" && stop_cluster "$n"
      rm -rf "${SANDBOX_DIR:?}/$n" "$SANDBOX_DIR/$n.kubeconfig"
      log "$n: purged"
    done
    ;;
  status)
    for n in $(known_clusters); do
      load "$n"
      printf '%-16s %-12s %s %s\n' "$n" "$(cluster_state "$n")" "$URL" "$SANDBOX_DIR/$n.kubeconfig"
    done
    ;;
  kubeconfig)
    (($# == 1)) && exists "$1" || die "usage: sandbox.sh kubeconfig NAME (existing cluster)"
    echo "$SANDBOX_DIR/$1.kubeconfig"
    ;;
  help | -h | --help)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *) die "unknown command '$cmd' (try: up, up-api, stop, start, down, status, purge, kubeconfig)" ;;
esac
