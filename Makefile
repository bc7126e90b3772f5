# The two commands: `make up` (the whole local stack) and `make test` (every test, real services).
# Both run `setup` first, which installs whatever is missing and is quick when nothing is.
SHELL := /bin/bash
# Node $(NODE_VERSION) from tests/infra/versions.env: scripts/setup.sh installs it into the build cache (same
# default as scripts/cache.sh) when the machine's node is older than NODE_MAJOR; every target runs with its
# bin/ first on PATH (a directory that does not exist, on a machine with a new enough node, changes nothing).
NODE_VERSION := $(shell sed -n 's/^NODE_VERSION=//p' tests/infra/versions.env)
NODE_BIN := $(or $(VP_CACHE_DIR),$(HOME)/.cache/voice-platform)/node-$(NODE_VERSION)/bin
export PATH := $(NODE_BIN):$(PATH)
.DEFAULT_GOAL := help
STACK := node tests/dist/infra/src/stack.js

.PHONY: help setup setup-stack build up down logs test bench call-in

help:
	@echo "make up      start the local stack (installs what is missing first)"
	@echo "make up TRACING=1  the same, with a trace collector (Jaeger, query API on :16686)"
	@echo "make down    stop everything make up started"
	@echo "make logs    follow the stack's logs"
	@echo "make call-in the local phone calls the demo bot's inbound number (after make up)"
	@echo "make test    run every test against real services"
	@echo "make bench   run the benchmarks"
	@echo "make setup   install Debian packages, pinned service builds and npm packages"
	@echo "make kind-up   the chart on a local kind cluster (docs/kind.md); make kind-down removes it"
	@echo "make test-k8s  the end-to-end suite on that cluster (tests/k8s)"
	@echo "make test-compose  compose.yaml with the images built here: all healthy, a dial-out (docs/compose.md)"

setup:
	@bash scripts/setup.sh

# `make up` installs only what the local stack runs (no Helm, kube-apiserver, etcd, Chromium or PyPI tools).
# TRACING=1 on the command line (`make up TRACING=1`) reaches setup and the stack through the environment.
setup-stack:
	@bash scripts/setup.sh stack

# The TypeScript projects and the console's bundle, each step timed.
define compile
	@echo "==> tsc -b"; started=$$SECONDS; npx tsc -b && echo "==> tsc -b done in $$((SECONDS - started))s"
	@started=$$SECONDS; npm run build -w console --silent && echo "==> console built in $$((SECONDS - started))s"
endef

build: setup
	$(compile)

up: setup-stack
	$(compile)
	@$(STACK) up

down:
	@if [ -f tests/dist/infra/src/stack.js ]; then $(STACK) down; else echo "==> nothing to stop"; fi

logs:
	@tail -n 50 -F .run/*/*.log

# The local phone calls the inbound number `make up` seeded (the demo bot answers): NUMBER= and PHRASE= to change.
call-in:
	@$(STACK) call-in "$(NUMBER)" "$(PHRASE)"

test: build
	@echo "==> tests"
	@bash scripts/test.sh

bench: build
	@npm run bench --workspaces --if-present

# Kubernetes on kind (docs/kind.md): builds the images from docker/, creates a one-node kind cluster
# (API and Ingress on 127.0.0.1 only), loads the images, installs Traefik and the chart with
# ci/kind-values.yaml and waits until every pod is Ready. Needs docker, helm and kubectl (make setup
# builds helm; kind comes from `go install` into the cache). Not part of `make test`.
KIND_CLUSTER ?= voice-platform
export KIND_CLUSTER
.PHONY: kind-up kind-down kind-images test-k8s
kind-up: setup
	@bash scripts/kind/up.sh

# The end-to-end suite on that cluster (tests/k8s, docs/kind.md): kind-up, the test phone and Prometheus
# images, then the steps in order. Not part of `make test` (about 15 minutes with a warm cluster).
test-k8s: kind-up
	@npx tsc -b tests
	@bash scripts/kind/test-images.sh
	@cd tests && NODE_OPTIONS=--experimental-vm-modules npx jest -c jest.k8s.config.js

kind-images:
	@bash scripts/kind/images.sh

kind-down:
	@bash scripts/kind/down.sh

# compose.yaml with the images built from docker/ (docs/compose.md, tests/compose/test.sh): every service
# healthy, a dial-out to the test phone completes, then the project is removed. `make test` runs it after the
# kind suite (VP_SKIP_COMPOSE=1 leaves it out).
.PHONY: test-compose
test-compose: setup
	@npx tsc -b tests
	@bash tests/compose/test.sh
