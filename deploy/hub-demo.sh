#!/usr/bin/env bash
# make hub-demo (after make demo): hubd mirrors the sandbox hub onto the demo's
# bus; kubectl applies seed 000 to the hub and reads READY, the bindings and the
# clusters back from it (docs/hub.md).
set -euo pipefail
cd "$(dirname "$0")/.."
F=$PWD/bin/flotilla
DATA=$PWD/.flotilla
HUB=$PWD/.sandbox/hub.kubeconfig
SEEDS=examples/seed000
export FLOTILLA_NATS_URL=${FLOTILLA_NATS_URL:-nats://127.0.0.1:4222}
k() { kubectl --kubeconfig "$HUB" "$@"; }

"$F" get clusters >/dev/null 2>&1 || { echo "no flotilla up answers on $FLOTILLA_NATS_URL: run make demo first" >&2; exit 1; }
if ! pgrep -f "[b]in/flotilla hubd --hub-kubeconfig $HUB" >/dev/null; then
  echo "== flotilla hubd --hub-kubeconfig $HUB (log: $DATA/hubd.log)"
  setsid nohup "$F" hubd --hub-kubeconfig "$HUB" --metrics-addr 127.0.0.1:0 --log-format console >"$DATA/hubd.log" 2>&1 </dev/null &
fi
echo "== kubectl apply -f $SEEDS (against the hub)"
k apply -f "$SEEDS/my-app.yaml" -f "$SEEDS/propagation-policy.yaml" -f "$SEEDS/override-policy.yaml"
echo "== waiting for READY 6/6 on the hub"
for _ in $(seq 120); do
  k get deploy my-app -n default 2>/dev/null | grep -q ' 6/6 ' && break; sleep 0.5
done
echo "== kubectl get deploy,svc -n default"; k get deploy,svc -n default
echo "== kubectl get rb -n default"; k get rb -n default
echo "== kubectl get clusters"; k get clusters
echo "hubd keeps running (log $DATA/hubd.log); make demo-down stops it with flotilla up"
