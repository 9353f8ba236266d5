#!/usr/bin/env bash
# Builds the Flotilla image without a registry or a daemon (`make image`):
# buildah, from scratch, with the static binary and Debian's CA bundle, saved
# as an OCI archive. Usage: buildah.sh BINARY ARCHIVE [TAG]
#
# Storage is vfs in a temporary directory and isolation is chroot: no overlay
# mounts, no user namespaces, no cgroups, nothing left behind. Nothing is run
# inside the image (a scratch image has nothing to run but flotilla), so the
# build needs no OCI runtime. deploy/image_test.go inspects the result.
set -euo pipefail

bin=${1:?binary}
out=${2:?archive}
tag=${3:-ghcr.io/flotilla-io/flotilla:dev}
ca=/etc/ssl/certs/ca-certificates.crt

[ -r "$ca" ] || { echo "buildah.sh: $ca is missing (apt-get install ca-certificates)" >&2; exit 1; }
if file "$bin" 2>/dev/null | grep -q 'dynamically linked'; then
	echo "buildah.sh: $bin is dynamically linked; a scratch image needs CGO_ENABLED=0" >&2
	exit 1
fi

store=$(mktemp -d)
export BUILDAH_ISOLATION=chroot
b=(buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs)
ctr=
cleanup() {
	[ -z "$ctr" ] || "${b[@]}" rm "$ctr" >/dev/null 2>&1 || true
	rm -rf "$store"
}
trap cleanup EXIT

ctr=$("${b[@]}" from --quiet scratch)
# Owned by root and not writable by the runtime user.
"${b[@]}" copy --quiet --chown 0:0 --chmod 0555 "$ctr" "$bin" /flotilla
"${b[@]}" copy --quiet --chown 0:0 --chmod 0444 "$ctr" "$ca" /etc/ssl/certs/ca-certificates.crt
# Numeric user, so that Kubernetes' runAsNonRoot can verify it without
# /etc/passwd (which a scratch image does not have).
"${b[@]}" config \
	--user 65532:65532 \
	--entrypoint '["/flotilla"]' \
	--cmd '' \
	--workingdir / \
	--port 9090 \
	--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
	--label org.opencontainers.image.title=flotilla \
	--label "org.opencontainers.image.description=Event-driven multi-cluster Kubernetes scheduler (policyd, schedulerd, executord, healthd and the CLI)" \
	--label org.opencontainers.image.source=https://github.com/flotilla-io/flotilla \
	"$ctr"
# --timestamp 0: the same binary gives the same image digest.
"${b[@]}" commit --quiet --format oci --timestamp 0 "$ctr" "$tag" >/dev/null
mkdir -p "$(dirname "$out")"
rm -f "$out"
"${b[@]}" push --quiet "$tag" "oci-archive:$out:$tag"
echo "$out: $tag ($(du -h "$out" | cut -f1))"
