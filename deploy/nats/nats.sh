#!/usr/bin/env bash
# A local three-node NATS JetStream cluster on 127.0.0.1: nodes n1 n2 n3, each
# `flotilla nats-node` (the binary's embedded nats-server) as its own process,
# clustered over routes, file storage under $NATS_DIR/<node>/.
#
#   nats.sh up          start every node, write $NATS_DIR/urls, wait for a meta leader
#   nats.sh stop NODE   SIGKILL one node (its data is kept)
#   nats.sh start NODE  start one node again and wait until it serves JetStream
#   nats.sh down        stop every node (SIGTERM, then SIGKILL)
#   nats.sh status      one line per node
#
# Ports (NATS_PORT_BASE, default 14220): clients base+1..3, routes base+11..13,
# monitoring base+21..23. All commands are idempotent.
#
# Authentication is on (see auth_init): the first up makes one authority under
# $NATS_DIR/auth that every node trusts, and once the cluster serves it writes
# admin credentials to $NATS_DIR/creds/admin.creds and registers them for each
# client URL (and the list). NATS_INSECURE=1 at the first up runs the cluster
# open instead; either choice is kept for the cluster's life.
#
# TLS (see tls_init): NATS_TLS=1 at an up with no node running makes a CA and
# the nodes' certificate under $NATS_DIR/tls (as `flotilla up --tls` does under
# its data dir); from then on every node serves clients and routes over TLS only
# (routes verify each other's certificate), and the CA is registered for each
# client URL beside the credentials, so plain `flotilla` commands verify the
# nodes. To serve plain again: nats.sh down, then remove $NATS_DIR/tls.
set -euo pipefail
# The CA is the cluster's own (tls_init), never one from the environment.
unset FLOTILLA_TLS_CA

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
NATS_DIR=${NATS_DIR:-$repo/.sandbox/nats}
FLOTILLA_BIN=${FLOTILLA_BIN:-$repo/bin/flotilla}
NATS_SYNC_ALWAYS=${NATS_SYNC_ALWAYS:-true}
NODES=(n1 n2 n3)

log() { echo "nats: $*" >&2; }
die() { log "error: $*"; exit 1; }

mkdir -p "$NATS_DIR"
# The port base is fixed at the first up: a node started again must listen
# where the others and the clients look for it.
if [[ ! -f $NATS_DIR/port-base ]]; then echo "${NATS_PORT_BASE:-14220}" >"$NATS_DIR/port-base"; fi
base=$(<"$NATS_DIR/port-base")

index() { case $1 in n1) echo 1 ;; n2) echo 2 ;; n3) echo 3 ;; *) die "unknown node '$1' (n1, n2 or n3)" ;; esac; }
urls() {
  local n out=""
  for n in "${NODES[@]}"; do out+="${out:+,}nats://127.0.0.1:$((base + $(index "$n")))"; done
  echo "$out"
}
routes() {
  local n out=""
  for n in "${NODES[@]}"; do out+="${out:+,}nats-route://127.0.0.1:$((base + 10 + $(index "$n")))"; done
  echo "$out"
}

# Authentication. auth_init decides, once per cluster, whether it runs with
# authentication (the default: $NATS_DIR/auth holds the authority) or open
# (NATS_INSECURE=1 at the first up: $NATS_DIR/insecure marks it; a cluster
# made before authentication existed is kept open too, its streams being
# under the unauthenticated account), and sets AUTH_ARGS, the arguments of
# nats-node and nats-wait.
AUTH_ARGS=()
auth_init() {
  local dir=$NATS_DIR/auth
  if [[ ! -d $dir && ! -f $NATS_DIR/insecure ]]; then
    if [[ ${NATS_INSECURE:-} == 1 ]]; then
      touch "$NATS_DIR/insecure"
    elif compgen -G "$NATS_DIR/n[123]/jetstream" >/dev/null; then
      log "this cluster was made without authentication and stays so; to have it: nats.sh down, then remove $NATS_DIR"
      touch "$NATS_DIR/insecure"
    else
      "$FLOTILLA_BIN" nats-authority --auth-dir "$dir"
    fi
  fi
  if [[ -f $NATS_DIR/insecure ]]; then
    log "WARNING: authentication is OFF: anyone who reaches 127.0.0.1:$((base + 1))-$((base + 3)) can publish, read and delete everything"
    return 0
  fi
  [[ ${NATS_INSECURE:-} != 1 ]] || die "this cluster runs with authentication (NATS_INSECURE=1 applies only at its first up); nats.sh down, then remove $NATS_DIR, to make it open"
  AUTH_ARGS=(--auth-dir "$dir")
}

# auth_register writes the admin credentials of a cluster with
# authentication and registers them for its client URLs, so that plain
# `flotilla` commands find them; for an open cluster it forgets any
# registered for them before.
auth_register() {
  if [[ ${#AUTH_ARGS[@]} -eq 0 ]]; then
    "$FLOTILLA_BIN" nats-register --insecure --nats-url "$(urls)" "${TLS_CLIENT_ARGS[@]}" >&2
  else
    "$FLOTILLA_BIN" nats-register --nats-url "$(urls)" "${AUTH_ARGS[@]}" "${TLS_CLIENT_ARGS[@]}" >&2
  fi
}

# TLS. tls_init sets TLS_NODE_ARGS (nats-node's) and TLS_CLIENT_ARGS (the
# CA nats-wait and nats-register verify the nodes with): TLS is on once
# $NATS_DIR/tls holds the certificate, made by the first up with NATS_TLS=1.
TLS_NODE_ARGS=()
TLS_CLIENT_ARGS=()
tls_init() {
  local dir=$NATS_DIR/tls n
  if [[ ! -f $dir/server.pem && ${NATS_TLS:-} == 1 ]]; then
    for n in "${NODES[@]}"; do
      if running_pid "$n" >/dev/null; then die "the cluster runs without TLS: nats.sh down first, then up with NATS_TLS=1"; fi
    done
    "$FLOTILLA_BIN" nats-tls --tls-dir "$dir"
  fi
  if [[ -f $dir/server.pem ]]; then
    TLS_NODE_ARGS=(--tls-dir "$dir")
    TLS_CLIENT_ARGS=(--tls-ca "$dir/ca.pem")
  fi
}

# pid of node $1 if it runs (and is really that node), else fail.
running_pid() {
  local pidf=$NATS_DIR/$1.pid pid cmdline
  [[ -f $pidf ]] || return 1
  pid=$(<"$pidf")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *"nats-node --name $1 "*"--data-dir $NATS_DIR/$1 "* ]] || return 1
  echo "$pid"
}

start_node() {
  local n=$1 i pid
  i=$(index "$n")
  if running_pid "$n" >/dev/null; then return 0; fi
  [[ -x $FLOTILLA_BIN ]] || die "$FLOTILLA_BIN missing (make build)"
  mkdir -p "$NATS_DIR/$n"
  setsid "$FLOTILLA_BIN" nats-node --name "$n" --port $((base + i)) --route-port $((base + 10 + i)) \
    --monitor-port $((base + 20 + i)) --routes "$(routes)" --data-dir "$NATS_DIR/$n" \
    --sync-always="$NATS_SYNC_ALWAYS" "${AUTH_ARGS[@]}" "${TLS_NODE_ARGS[@]}" </dev/null >>"$NATS_DIR/$n.log" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$NATS_DIR/$n.pid"
}

stop_node() {
  local pid
  if pid=$(running_pid "$1"); then
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    log "$1 killed (pid $pid)"
  fi
  rm -f "$NATS_DIR/$1.pid"
}

wait_ready() { [[ -x $FLOTILLA_BIN ]] || die "$FLOTILLA_BIN missing (make build)"; "$FLOTILLA_BIN" nats-wait --nats-url "$1" --timeout "${NATS_TIMEOUT:-60s}" "${AUTH_ARGS[@]}" "${TLS_CLIENT_ARGS[@]}"; }

cmd=${1:-}
case $cmd in
up)
  [[ -x $FLOTILLA_BIN ]] || die "$FLOTILLA_BIN missing (make build)"
  auth_init
  tls_init
  for n in "${NODES[@]}"; do start_node "$n"; done
  urls >"$NATS_DIR/urls"
  wait_ready "$(urls)"
  auth_register
  log "cluster ready: $(urls)${TLS_CLIENT_ARGS[1]:+ (TLS, CA ${TLS_CLIENT_ARGS[1]})}"
  ;;
start)
  [[ -n ${2:-} ]] || die "usage: nats.sh start NODE"
  [[ -x $FLOTILLA_BIN ]] || die "$FLOTILLA_BIN missing (make build)"
  auth_init
  NATS_TLS= tls_init
  start_node "$2"
  wait_ready "nats://127.0.0.1:$((base + $(index "$2")))"
  log "$2 serving JetStream"
  ;;
stop)
  [[ -n ${2:-} ]] || die "usage: nats.sh stop NODE"
  index "$2" >/dev/null
  stop_node "$2"
  ;;
down)
  pids=()
  for n in "${NODES[@]}"; do
    if pid=$(running_pid "$n"); then kill -TERM "$pid" 2>/dev/null || true; pids+=("$n:$pid"); fi
  done
  for np in "${pids[@]}"; do
    n=${np%%:*}; pid=${np#*:}
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && stop_node "$n"
    rm -f "$NATS_DIR/$n.pid"
  done
  ;;
status)
  for n in "${NODES[@]}"; do
    if pid=$(running_pid "$n"); then echo "$n running pid $pid nats://127.0.0.1:$((base + $(index "$n")))"; else echo "$n stopped"; fi
  done
  ;;
*) die "usage: nats.sh up|stop NODE|start NODE|down|status" ;;
esac
