#!/usr/bin/env bash
# `make kind-down`: deletes the kind cluster of `make kind-up`, restores the VM-wide sysctls its kubelet
# changed (kernel.panic, kernel.panic_on_oops, vm.overcommit_memory) and the empty /lib/modules kind
# left behind, and stops the private dockerd if kind-up started one. Images and builds stay cached.
source "$(dirname "$0")/lib.sh"
CLUSTER="${KIND_CLUSTER:-voice-platform}"
STATE="$CACHE/kind/$CLUSTER"
KIND="$BIN/kind-$KIND_VERSION/kind"; [ -x "$KIND" ] || KIND="$(command -v kind || true)"

private=""
if needs_private_dockerd; then
  private=1
  if bash "$ROOT/scripts/kind/dockerd.sh" status >/dev/null 2>&1; then export DOCKER_HOST="$PRIVATE_DOCKER_HOST"; else private=stopped; fi
fi
if [ "$private" != stopped ] && [ -n "$KIND" ] && "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  step "kind delete cluster $CLUSTER"
  "$KIND" delete cluster --name "$CLUSTER" --kubeconfig "$STATE/kubeconfig"
else
  step "no kind cluster $CLUSTER"
fi
rm -f "$STATE/kubeconfig" "$STATE/cluster.yaml"

if [ -f "$STATE/sysctl.saved" ]; then
  while read -r key value; do
    [ -n "$value" ] || continue
    if [ "$(sysctl -n "$key" 2>/dev/null)" != "$value" ]; then
      step "restoring $key=$value"; sysctl -qw "$key=$value" || echo "could not restore $key" >&2
    fi
  done < "$STATE/sysctl.saved"
  rm -f "$STATE/sysctl.saved"
fi
if [ "$(cat "$STATE/lib-modules" 2>/dev/null)" = remove ] && [ -d /lib/modules ] && [ -z "$(ls -A /lib/modules)" ]; then
  rmdir /lib/modules && step "removed the empty /lib/modules kind created"
fi
rm -f "$STATE/lib-modules"

# Stop the private engine unless something else still runs in it.
if [ "$private" = 1 ]; then
  if [ -z "$(docker ps -q)" ]; then bash "$ROOT/scripts/kind/dockerd.sh" stop
  else step "private dockerd kept: containers still running ($(docker ps --format '{{.Names}}' | tr '\n' ' '))"; fi
fi
