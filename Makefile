# The two commands: `make up` (the whole local stack) and `make test` (every test, real services).
# Both run `setup` first, which installs whatever is missing and is quick when nothing is.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STACK := node tests/dist/infra/src/stack.js

.PHONY: help setup build up down logs test bench

help:
	@echo "make up      start the local stack (installs what is missing first)"
	@echo "make down    stop everything make up started"
	@echo "make logs    follow the stack's logs"
	@echo "make test    run every test against real services"
	@echo "make bench   run the benchmarks"
	@echo "make setup   install Debian packages, pinned service builds and npm packages"

setup:
	@bash scripts/setup.sh

build: setup
	@echo "==> tsc -b"
	@npx tsc -b
	@npm run build -w console --silent

up: build
	@$(STACK) up

down:
	@if [ -f tests/dist/infra/src/stack.js ]; then $(STACK) down; else echo "==> nothing to stop"; fi

logs:
	@tail -n 50 -F .run/*/*.log

test: build
	@echo "==> tests"
	@bash scripts/test.sh

bench: build
	@npm run bench --workspaces --if-present

# Kubernetes on kind: needs docker, kind, kubectl and helm on the machine (not available on every
# build machine: this target is documented in the README and not run by `make test`).
KIND_CLUSTER ?= voice-platform
.PHONY: kind-up kind-down
kind-up: build
	@kind get clusters | grep -qx $(KIND_CLUSTER) || kind create cluster --name $(KIND_CLUSTER)
	@for p in backend worker console operator; do \
	  docker build -f docker/$$p.Dockerfile -t voice-$$p:dev . && kind load docker-image voice-$$p:dev --name $(KIND_CLUSTER) || exit 1; \
	done
	@helm upgrade --install vp charts/voice-platform -n voice --create-namespace -f charts/voice-platform/ci/kind-values.yaml --wait --timeout 10m
	@kubectl -n voice get voicefleets,bots,deploy,pods

kind-down:
	@kind delete cluster --name $(KIND_CLUSTER)
