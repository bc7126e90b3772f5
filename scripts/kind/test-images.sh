#!/usr/bin/env bash
# The two images only `make test-k8s` runs (tests/k8s): the test phone (sipp with the scenario and audio
# tests/infra writes) and Prometheus, both FROM debian:trixie-slim with Debian's packages
# (docker/kind/test/). Built like the app images (Docker's layer cache), then loaded into the cluster.
# Usage: scripts/kind/test-images.sh        (after make kind-up; needs `npx tsc -b tests`)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
use_docker
CLUSTER="${KIND_CLUSTER:-voice-platform}"
KIND="$BIN/kind-$KIND_VERSION/kind"; [ -x "$KIND" ] || KIND="$(command -v kind)" || die "kind missing: make kind-up"
export DOCKER_BUILDKIT="${DOCKER_BUILDKIT:-$(needs_private_dockerd && echo 0 || echo 1)}"
net=(); if needs_private_dockerd; then net=(--network host); fi

test_image() {
  local name="$1" dir="$2" ctx="$CACHE/images/context-test-$2" started=$SECONDS
  mkdir -p "$ctx" "$CACHE/logs"; cp "docker/kind/test/$dir/Dockerfile" "$ctx/"
  if [ "$dir" = phone ]; then
    # Scenario and audio (espeak-ng, sox) made once per phrase; sipp reads them from /phone in the image.
    mkdir -p "$ctx/phone"
    node -e "import('./tests/dist/infra/src/telephony.js').then((m) => m.writePhoneFiles(process.argv[1], 'yes i will pay', 5000, '/phone'))" "$ctx/phone"
  fi
  local log="$CACHE/logs/image-test-$dir.log"
  step "docker build $name (docker/kind/test/$dir; log $log)"
  "${NICE[@]}" docker build "${net[@]}" -t "$name" "$ctx" >"$log" 2>&1 || { tail -20 "$log" >&2; die "docker build of $name failed"; }
  step "$name ready in $(elapsed "$started")"
}
test_image voice-test-phone:dev phone
test_image voice-test-prometheus:dev prometheus
step "loading the test images into $CLUSTER"
"${NICE[@]}" "$KIND" load docker-image --name "$CLUSTER" voice-test-phone:dev voice-test-prometheus:dev >"$CACHE/logs/load-test-images.log" 2>&1 \
  || { cat "$CACHE/logs/load-test-images.log" >&2; die "kind load of the test images failed"; }
