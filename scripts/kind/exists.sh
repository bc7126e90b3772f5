#!/usr/bin/env bash
# Exit 0 when the kind cluster of `make kind-up` exists (without starting anything), else 1.
source "$(dirname "$0")/lib.sh"
CLUSTER="${KIND_CLUSTER:-voice-platform}"
KIND="$BIN/kind-$KIND_VERSION/kind"; [ -x "$KIND" ] || KIND="$(command -v kind)" || exit 1
if needs_private_dockerd; then
  bash "$ROOT/scripts/kind/dockerd.sh" status >/dev/null 2>&1 || exit 1
  export DOCKER_HOST="$PRIVATE_DOCKER_HOST"
fi
"$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"
