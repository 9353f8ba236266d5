# A local three-node NATS JetStream cluster (deploy/nats/nats.sh). Included by
# the top-level Makefile. Point Flotilla at it with
#   FLOTILLA_NATS_URL=$(cat .sandbox/nats/urls)
# It runs with authentication: admin credentials in .sandbox/nats/creds,
# registered for its URLs. INSECURE=1 at its first start runs it open. TLS=1 at
# an up with no node running serves clients and routes over TLS only from then
# on, with a CA in .sandbox/nats/tls registered for its URLs.

NATS_SH := deploy/nats/nats.sh
NATS_ENV := NATS_DIR=$(CURDIR)/.sandbox/nats FLOTILLA_BIN=$(CURDIR)/$(BIN) NATS_INSECURE=$(INSECURE) NATS_TLS=$(TLS)

.PHONY: nats-cluster nats-stop nats-start nats-down nats-status

## nats-cluster: start nodes n1..n3 (clients on 127.0.0.1:14221-14223) with authentication (INSECURE=1: open; TLS=1: TLS on clients and routes), write .sandbox/nats/urls, wait for a meta leader, register admin credentials (and the TLS CA)
nats-cluster: build
	$(NATS_ENV) bash $(NATS_SH) up

## nats-stop NODE=n2: SIGKILL one node, its data kept
nats-stop:
	@test -n "$(NODE)" || { echo "usage: make nats-stop NODE=<n1|n2|n3>" >&2; exit 2; }
	$(NATS_ENV) bash $(NATS_SH) stop $(NODE)

## nats-start NODE=n2: start a stopped node again
nats-start: build
	@test -n "$(NODE)" || { echo "usage: make nats-start NODE=<n1|n2|n3>" >&2; exit 2; }
	$(NATS_ENV) bash $(NATS_SH) start $(NODE)

## nats-down: stop every node (data kept)
nats-down:
	$(NATS_ENV) bash $(NATS_SH) down

nats-status:
	@$(NATS_ENV) bash $(NATS_SH) status
