#!/usr/bin/env bash
# make demo: flotilla up on the embedded default, the three sandbox clusters
# joined, seed 000 applied, and the result shown from Flotilla and from the
# member apiservers themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
F=$PWD/bin/flotilla
DATA=$PWD/.flotilla
SEEDS=${SEEDS:-examples/seed000}
export FLOTILLA_NATS_URL=${FLOTILLA_NATS_URL:-nats://127.0.0.1:4222}

if ! "$F" get clusters >/dev/null 2>&1; then
  echo "== flotilla up --data-dir $DATA (log: $DATA/up.log)"
  mkdir -p "$DATA"
  setsid nohup "$F" up --data-dir "$DATA" --log-format console >"$DATA/up.log" 2>&1 < /dev/null &
  for _ in $(seq 50); do "$F" get clusters >/dev/null 2>&1 && break; sleep 0.2; done
fi
regions=(beijing shanghai guangzhou)
i=0
for c in cluster1 cluster2 cluster3; do
  echo "== flotilla join $c"
  "$F" join "$c" --cluster-kubeconfig ".sandbox/$c.kubeconfig" --labels "city=${regions[$i]}"
  i=$((i+1))
done
echo "== waiting for healthd to see the members Ready"
for _ in $(seq 60); do
  [ "$("$F" get clusters | grep -c ' True ')" -ge 3 ] && break; sleep 0.5
done
"$F" get clusters -o wide
echo "== flotilla apply -f $SEEDS (my-app, its PropagationPolicy 3:2:1 and OverridePolicy)"
"$F" apply -f "$SEEDS/my-app.yaml" -f "$SEEDS/propagation-policy.yaml" -f "$SEEDS/override-policy.yaml"
echo "== waiting for the Deployments to run"
for _ in $(seq 90); do
  [ "$("$F" get work | grep -c Running)" -ge 3 ] && break; sleep 1
done
"$F" get placements -o wide
echo
"$F" get work -o wide
echo
echo "== what the member apiservers hold (read directly with their own kubeconfigs)"
for c in cluster1 cluster2 cluster3; do
  kc=.sandbox/$c.kubeconfig
  server=$(grep -m1 'server:' "$kc" | awk '{print $2}')
  token=$(grep -m1 'token:' "$kc" | awk '{print $2}')
  d=$(curl -sk -H "Authorization: Bearer $token" "$server/apis/apps/v1/namespaces/default/deployments/my-app")
  s=$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$server/api/v1/namespaces/default/services/my-app")
  echo "$c: deployment my-app replicas=$(jq -r .spec.replicas <<<"$d") ready=$(jq -r '.status.readyReplicas // 0' <<<"$d") image=$(jq -r '.spec.template.spec.containers[0].image' <<<"$d")  service my-app: HTTP $s"
done
echo
console=$(grep -o 'flotilla console: http://[^ ]*' "$DATA/up.log" | tail -1 | sed 's/^flotilla console: //')
if [ -n "$console" ]; then
  echo "Web console: $console (docs/console.md)"
else
  echo "Web console: not served (its address was busy: see $DATA/up.log)"
fi
echo "flotilla up keeps running (log $DATA/up.log); stop it with: make demo-down"
