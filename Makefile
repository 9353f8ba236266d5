# Flotilla. The two commands: `make demo` (the seed scenario on the embedded
# default with sandbox member clusters) and `make test` (every test, e2e included).
SHELL := /bin/bash
GO ?= go
BIN := bin/flotilla

include deploy/sandbox/sandbox.mk
include deploy/nats/nats.mk

IMAGE := bin/flotilla-image.tar

.PHONY: image image-test bench-failover chaos all build test unit e2e demo demo-down hub-demo bench lint tools chromium kubectl fmt fuzz

all: build

## tools: install what a fresh machine lacks (jq, curl, openssl for the sandbox)
tools:
	@missing=""; for t in jq curl openssl flock setsid; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update -qq && apt-get install -y -qq jq curl openssl util-linux >/dev/null; fi

## chromium: the headless browser the console's e2e test drives (Debian's chromium package), installed when missing
chromium:
	@command -v chromium >/dev/null || { echo "installing: chromium"; apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

## kubectl: the hub's e2e tests and hub-demo drive the hub with real kubectl; a machine without one gets it built from k8s.io/kubernetes (deploy/sandbox/build-kubectl.sh, cached outside the clone) and linked as bin/kubectl, which recipes find last on PATH
export PATH := $(PATH):$(CURDIR)/bin
kubectl:
	@command -v kubectl >/dev/null || { mkdir -p bin && ln -sf "$$(bash deploy/sandbox/build-kubectl.sh)/kubectl" bin/kubectl; }

## build: the flotilla binary (static)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/flotilla

## test: every test: unit tests and the e2e suite against real sandbox apiservers (the console's screenshots land in bin/test-output)
test: tools chromium kubectl build clusters hub demo-down
	@mkdir -p $(CURDIR)/bin/test-output
	FLOTILLA_E2E=1 FLOTILLA_SANDBOX=$(CURDIR)/.sandbox FLOTILLA_BIN=$(CURDIR)/$(BIN) \
		$(GO) test -count=1 -timeout 30m -artifacts -outputdir $(CURDIR)/bin/test-output ./...

## unit: the tests that need no member clusters (the e2e package skips)
unit:
	$(GO) test -count=1 ./...

## demo: sandbox clusters + flotilla up + seed 000 placed, shown in get work and in the members
demo: tools build clusters
	bash deploy/demo.sh

## hub-demo: after make demo, kubectl drives it through the sandbox hub (make hub): hubd runs beside flotilla up, seed 000 is applied to the hub and READY, bindings and clusters are read back from it (docs/hub.md)
hub-demo: kubectl hub
	bash deploy/hub-demo.sh

## demo-down: stop the demo's flotilla up and hubd (make test does this first: two executords would fight over the members)
demo-down:
	@-pkill -f "[b]in/flotilla up --data-dir $(CURDIR)/.flotilla" ; true
	@-pkill -f "[b]in/flotilla hubd --hub-kubeconfig $(CURDIR)/.sandbox/hub.kubeconfig" ; true

## bench: the whole path (policyd -> schedulerd on embedded JetStream, 100 clusters, 10,000 templates), then the core benchmarks and the bus floor
bench: build
	$(BIN) bench --clusters 100 --templates 10000
	$(GO) test -run '^$$' -bench . -benchmem ./schedulerd/... ./executord/render/...
	$(GO) test -run '^$$' -bench PlacementPathFloor -benchtime 10000x ./events/natsbus/

## bench-failover: failover timings on the sandbox (cluster1 stopped and started FLOTILLA_BENCH_ROUNDS=3 times; ~3 min)
bench-failover: build clusters
	FLOTILLA_E2E=1 FLOTILLA_BENCH_FAILOVER=1 FLOTILLA_SANDBOX=$(CURDIR)/.sandbox FLOTILLA_BIN=$(CURDIR)/$(BIN) \
		$(GO) test -count=1 -timeout 30m -run '^TestBenchFailoverTimings$$' -v ./deploy/e2e/ | grep -v '^\s*[0-9][0-9]:[0-9][0-9]:'

## chaos: the fault e2e's longer variant (FLOTILLA_CHAOS=1; ~4 min): two instances of every daemon on a three-node NATS cluster of the test's own, 300 templates while the placement stream leader's node is SIGKILLed, another node is frozen with SIGSTOP and every instance is SIGKILLed once; nothing lost, nothing done twice
chaos: build clusters demo-down
	FLOTILLA_E2E=1 FLOTILLA_CHAOS=1 FLOTILLA_SANDBOX=$(CURDIR)/.sandbox FLOTILLA_BIN=$(CURDIR)/$(BIN) \
		$(GO) test -count=1 -timeout 20m -run '^TestTwoInstancesOfEveryDaemonLoseNothingAndRepeatNothingUnderKills$$' -v ./deploy/e2e/

## image: the OCI image (scratch + static binary + CA bundle, user 65532) as an OCI archive in $(IMAGE), built by buildah without a registry or a daemon (installs buildah when missing)
image: build
	@command -v buildah >/dev/null || { echo "installing: buildah"; apt-get update -qq && apt-get install -y -qq buildah ca-certificates >/dev/null; }
	bash deploy/docker/buildah.sh $(BIN) $(IMAGE)

## image-test: build the image and inspect it (user, entrypoint, files, size); `make test` inspects an existing $(IMAGE) and skips without one
image-test: image
	FLOTILLA_IMAGE_TEST=1 $(GO) test -count=1 -run '^(TestImage|TestReadOCIArchiveSeesAShell)$$' -v ./deploy/

## fuzz: every fuzz target (found with go test -list '^Fuzz') for FUZZTIME each (30s; seed corpora in testdata/fuzz run with every go test)
FUZZTIME ?= 30s
fuzz:
	@set -e; for dir in $$(git grep -l '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u); do \
		for target in $$($(GO) test -list '^Fuzz' ./$$dir | grep '^Fuzz'); do \
			echo "== ./$$dir $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) ./$$dir; \
		done; \
	done

## lint: gofmt, go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
