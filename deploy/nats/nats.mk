# A local three-node NATS JetStream cluster (deploy/nats/nats.sh). Included by
# the top-level Makefile. Point Flotilla at it with
#   FLOTILLA_NATS_URL=$(cat .sandbox/nats/urls)

NATS_SH := deploy/nats/nats.sh
NATS_ENV := NATS_DIR=$(CURDIR)/.sandbox/nats FLOTILLA_BIN=$(CURDIR)/$(BIN)

.PHONY: nats-cluster nats-stop nats-start nats-down nats-status

## nats-cluster: start nodes n1..n3 (clients on 127.0.0.1:14221-14223), write .sandbox/nats/urls, wait for a meta leader
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
