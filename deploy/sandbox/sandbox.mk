# Sandbox member clusters and the API-only hub (etcd + kube-apiserver + kcm + kube-scheduler + kwok on
# 127.0.0.1, no Docker). Included by the top-level Makefile; paths are relative
# to the repo root. See deploy/sandbox/README.md.

CLUSTERS ?= cluster1 cluster2 cluster3
SANDBOX_SH := deploy/sandbox/sandbox.sh

.PHONY: sandbox-binaries clusters cluster-stop cluster-start clusters-down clusters-status

## sandbox-binaries: build etcd/kube-*/kwok once into the user cache (~11+ min cold)
sandbox-binaries:
	@bash deploy/sandbox/build-binaries.sh >/dev/null

## clusters: start the sandbox member clusters $(CLUSTERS) and wait until ready
clusters: sandbox-binaries
	CLUSTERS="$(CLUSTERS)" bash $(SANDBOX_SH) up $(CLUSTERS)

## cluster-stop NAME=x: stop one member cluster (data, ports, certs kept)
cluster-stop:
	@test -n "$(NAME)" || { echo "usage: make cluster-stop NAME=<cluster>" >&2; exit 2; }
	CLUSTERS="$(CLUSTERS)" bash $(SANDBOX_SH) stop $(NAME)

## cluster-start NAME=x: restart a stopped member cluster
cluster-start:
	@test -n "$(NAME)" || { echo "usage: make cluster-start NAME=<cluster>" >&2; exit 2; }
	CLUSTERS="$(CLUSTERS)" bash $(SANDBOX_SH) start $(NAME)

## clusters-down: stop every sandbox cluster
clusters-down:
	CLUSTERS="$(CLUSTERS)" bash $(SANDBOX_SH) down

## clusters-status: one line per sandbox cluster
clusters-status:
	@CLUSTERS="$(CLUSTERS)" bash $(SANDBOX_SH) status

.PHONY: hub hub-down

## hub: an API-only sandbox cluster named hub (etcd + kube-apiserver: what is applied there is stored, not run) with Flotilla's CRDs installed; kubeconfig in .sandbox/hub.kubeconfig
hub: sandbox-binaries build
	bash $(SANDBOX_SH) up-api hub
	$(BIN) hub install --kubeconfig $(CURDIR)/.sandbox/hub.kubeconfig

## hub-down: stop the hub (data, ports, certs kept)
hub-down:
	bash $(SANDBOX_SH) stop hub
