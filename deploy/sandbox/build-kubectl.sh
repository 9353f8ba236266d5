#!/usr/bin/env bash
# Builds kubectl from k8s.io/kubernetes (the version the sandbox members run),
# once, into a cache outside the clone, for a machine that has none: the hub's
# e2e tests drive the hub with real kubectl. Prints the directory holding it.
set -euo pipefail

K8S_VERSION=v1.37.2
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${FLOTILLA_CACHE:-$HOME/.cache/flotilla}
bin=$cache_root/kubectl-$K8S_VERSION-$(go env GOVERSION)

if [[ -x $bin/kubectl ]]; then echo "$bin"; exit 0; fi
mkdir -p "$bin"
echo "sandbox-build: building kubectl $K8S_VERSION (one-time, a few minutes)" >&2
cd "$here/build"
go build -trimpath -o "$bin/kubectl.tmp" \
  -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" \
  k8s.io/kubernetes/cmd/kubectl
mv "$bin/kubectl.tmp" "$bin/kubectl"
echo "$bin"
