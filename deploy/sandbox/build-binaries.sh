#!/usr/bin/env bash
# Builds the member-cluster binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from Go modules, once, into a cache outside the clone.
# Prints the cache directory on stdout. Idempotent: a complete cache is reused.
set -euo pipefail

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.0
KWOK_VERSION=v0.8.0
GO_VERSION=$(go env GOVERSION)
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${FLOTILLA_CACHE:-$HOME/.cache/flotilla}
bin=$cache_root/sandbox/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-$GO_VERSION

if [[ -f $bin/.complete ]]; then echo "$bin"; exit 0; fi
mkdir -p "$bin"
log() { echo "sandbox-build: $*" >&2; }

cd "$here/build"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
  if [[ ! -x $bin/$cmd ]]; then
    log "building $cmd $K8S_VERSION (one-time, several minutes)"
    go build -trimpath -ldflags "$ldflags" -o "$bin/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv "$bin/$cmd.tmp" "$bin/$cmd"
  fi
done
if [[ ! -x $bin/etcd ]]; then
  log "building etcd $ETCD_VERSION"
  go build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$bin/etcd.tmp" "$bin/etcd"
fi
if [[ ! -x $bin/kwok ]]; then
  log "building kwok $KWOK_VERSION"
  GOBIN="$bin/.gobin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv "$bin/.gobin/kwok" "$bin/kwok"
  rmdir "$bin/.gobin"
fi
if [[ ! -f $bin/kwok-stages.yaml ]]; then
  kwok_src=$(cd "$bin" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  st=$kwok_src/kustomize/stage
  { for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      cat "$st/$f"; echo "---"; done; } > "$bin/kwok-stages.yaml"
fi
touch "$bin/.complete"
echo "$bin"
