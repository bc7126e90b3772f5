#!/usr/bin/env bash
# `make kind-up`: a local kind cluster running the whole chart with ci/kind-values.yaml, behind a
# Traefik Ingress on http://localhost:${KIND_HTTP_PORT:-18080}/. Idempotent: a second run reuses the
# cluster, rebuilds only changed images, loads only changed images and upgrades the release.
# Works on a laptop (docker, go or kind, helm, kubectl) and on the build machines (no registry: base
# images, kind's node image and the in-cluster service images are built locally; see docs/kind.md).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
T0=$SECONDS
CLUSTER="${KIND_CLUSTER:-voice-platform}"
NAMESPACE="${KIND_NAMESPACE:-voice}"
RELEASE="${KIND_RELEASE:-vp}"
KIND_HTTP_PORT="${KIND_HTTP_PORT:-18080}"
KIND_HTTPS_PORT="${KIND_HTTPS_PORT:-18443}"
KIND_API_PORT="${KIND_API_PORT:-16443}"
STATE="$CACHE/kind/$CLUSTER"
export KUBECONFIG="${KIND_KUBECONFIG:-$STATE/kubeconfig}"
mkdir -p "$STATE"
phase() { step "[$(elapsed "$T0")] $*"; }

use_docker
LOCAL=""; if needs_private_dockerd || [ -n "${VP_STANDINS:-}" ]; then LOCAL=1; fi

# --- tools: kind (cached go install, else the one on PATH), helm (scripts/setup.sh), kubectl ----------
if command -v go >/dev/null; then bash scripts/kind/tools.sh kind >/dev/null; fi
KIND="$BIN/kind-$KIND_VERSION/kind"; [ -x "$KIND" ] || KIND="$(command -v kind)" || die "kind missing (needs go, or kind $KIND_VERSION on PATH)"
HELM="$BIN/helm-$HELM_VERSION/helm"; [ -x "$HELM" ] || HELM="$(command -v helm)" || die "helm missing: make setup"
KUBECTL="$(command -v kubectl || echo "$BIN/kubelet-$KUBE_VERSION/kubectl")"; [ -x "$KUBECTL" ] || die "kubectl missing"

# --- images -------------------------------------------------------------------------------------------
phase "images"
TRAEFIK_IMAGE="traefik:$TRAEFIK_VERSION"
if [ -n "$LOCAL" ]; then
  if [ -z "${KIND_NODE_IMAGE:-}" ]; then bash scripts/kind/node-image.sh >&2; fi
  NODE_IMAGE="${KIND_NODE_IMAGE:-vp-local/kind-node:$KUBE_VERSION}"
  bash scripts/kind/tools.sh traefik
  prepare_traefik() { cp "$BIN/traefik-$TRAEFIK_VERSION/traefik" "$1/"; }
  standin "$TRAEFIK_IMAGE" traefik
else
  # kind v0.30's image for Kubernetes 1.30 (cgroup v1 hosts need <= 1.30 with this kind).
  NODE_IMAGE="${KIND_NODE_IMAGE:-kindest/node:v1.30.13}"
fi
bash scripts/kind/images.sh app services
SERVICE_IMAGES=("$FERRETDB_IMAGE" "$REDIS_IMAGE" "$MINIO_IMAGE" "$LIVEKIT_IMAGE" "$SIP_IMAGE" "$TRAEFIK_IMAGE")
if [ -z "$LOCAL" ]; then
  for i in "${SERVICE_IMAGES[@]}"; do image_exists "$i" || docker pull -q "$i"; done
fi
APP_IMAGES=(voice-backend:dev voice-worker:dev voice-console:dev voice-operator:dev)

# --- cluster ------------------------------------------------------------------------------------------
# The kubelet sets VM-wide sysctls; note the values before the first cluster so kind-down restores them.
if [ ! -f "$STATE/sysctl.saved" ]; then
  sysctl -n kernel.panic kernel.panic_on_oops vm.overcommit_memory 2>/dev/null \
    | paste -d' ' <(printf 'kernel.panic\nkernel.panic_on_oops\nvm.overcommit_memory\n') - > "$STATE/sysctl.saved" || true
  [ -e /lib/modules ] && echo keep > "$STATE/lib-modules" || echo remove > "$STATE/lib-modules"
fi
EXISTED=""
if "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  phase "cluster $CLUSTER exists"
  EXISTED=1
  "$KIND" export kubeconfig --name "$CLUSTER" --kubeconfig "$KUBECONFIG" >/dev/null 2>&1
else
  phase "kind create cluster $CLUSTER (node image $NODE_IMAGE)"
  DISABLE_DEFAULT_CNI=false; [ -n "$LOCAL" ] && DISABLE_DEFAULT_CNI=true
  sed -e "s/\${KIND_HTTP_PORT}/$KIND_HTTP_PORT/; s/\${KIND_HTTPS_PORT}/$KIND_HTTPS_PORT/" \
    -e "s/\${KIND_API_PORT}/$KIND_API_PORT/; s/\${DISABLE_DEFAULT_CNI}/$DISABLE_DEFAULT_CNI/" \
    docker/kind/cluster.yaml > "$STATE/cluster.yaml"
  "${NICE[@]}" "$KIND" create cluster --name "$CLUSTER" --image "$NODE_IMAGE" --config "$STATE/cluster.yaml" \
    --kubeconfig "$KUBECONFIG" --wait 3m
fi
"$KUBECTL" wait --for=condition=Ready node --all --timeout=3m >/dev/null

phase "loading images into the node (unchanged ones are skipped)"
"${NICE[@]}" "$KIND" load docker-image --name "$CLUSTER" "${APP_IMAGES[@]}" "${SERVICE_IMAGES[@]}" > "$STATE/load.log" 2>&1 \
  || { cat "$STATE/load.log" >&2; die "kind load failed"; }
# Images whose content changed under the same tag: their running pods are restarted below.
mapfile -t CHANGED < <(sed -n 's/^Image: "\([^"]*\)" with ID .* not yet present.*/\1/p' "$STATE/load.log" | sort -u)
step "    loaded: ${CHANGED[*]:-none (all present)}"

phase "Ingress controller (Traefik)"
sed "s#\${TRAEFIK_IMAGE}#$TRAEFIK_IMAGE#" docker/kind/traefik.yaml | "$KUBECTL" apply -f - >/dev/null
"$KUBECTL" -n traefik rollout status deploy/traefik --timeout=3m >/dev/null

# --- the chart ----------------------------------------------------------------------------------------
phase "helm upgrade --install $RELEASE (ci/kind-values.yaml)"
"$KUBECTL" apply --server-side -f crds/ >/dev/null 2>&1 || "$KUBECTL" apply --server-side -f charts/voice-platform/crds/ >/dev/null
"$HELM" upgrade --install "$RELEASE" charts/voice-platform -n "$NAMESPACE" --create-namespace \
  -f charts/voice-platform/ci/kind-values.yaml \
  --set "console.settings.VITE_API_URL=http://localhost:$KIND_HTTP_PORT" \
  --wait --timeout 10m

# Workloads that were already running an image loaded just now (same tag, new content): restart them.
if [ -n "$EXISTED" ] && [ ${#CHANGED[@]} -gt 0 ]; then
  "$KUBECTL" get deploy,statefulset -A -o json | jq -r --argjson changed "$(printf '%s\n' "${CHANGED[@]}" | jq -R . | jq -s .)" '
    .items[] | select(.metadata.creationTimestamp != null)
    | select([.spec.template.spec.containers[].image | sub("^docker.io/(library/)?"; "")] | any(. as $i | $changed | index($i)))
    | "\(.metadata.namespace) \(.kind | ascii_downcase)/\(.metadata.name)"' \
  > "$STATE/restart.txt"
  while read -r ns obj; do step "    restarting $ns/$obj (new image)"; "$KUBECTL" -n "$ns" rollout restart "$obj" >/dev/null; done < "$STATE/restart.txt"
  while read -r ns obj; do "$KUBECTL" -n "$ns" rollout status "$obj" --timeout=5m >/dev/null; done < "$STATE/restart.txt"
fi

# The operator creates the workers after helm returns: wait until every pod is Ready (Jobs: Succeeded).
phase "waiting for every pod to be Ready"
deadline=$((SECONDS + 600))
while :; do
  pending="$("$KUBECTL" get pods -A -o json | jq -r '.items[]
    | select(.status.phase != "Succeeded")
    | select(([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length) == 0)
    | "\(.metadata.namespace)/\(.metadata.name)"')"
  # Worker pods carry their VoiceFleet's label; at least one (minReplicas) must be there.
  if [ -z "$pending" ] && "$KUBECTL" -n "$NAMESPACE" get pods -l voiceplatform.io/fleet -o name | grep -q .; then break; fi
  if [ $SECONDS -gt $deadline ]; then
    "$KUBECTL" get pods -A >&2
    die "not Ready after 10 minutes: $pending"
  fi
  sleep 5
done
"$KUBECTL" -n "$NAMESPACE" get voicefleets,deploy,statefulsets,pods

# Through the Ingress, as a browser would: the console's page and an admin login.
secret() { "$KUBECTL" -n "$NAMESPACE" get secret "$RELEASE-voice-platform-secrets" -o jsonpath="{.data.$1}" | base64 -d; }
URL="http://127.0.0.1:$KIND_HTTP_PORT"
for _ in $(seq 1 30); do curl -fsS -o /dev/null -H 'Host: localhost' "$URL/" 2>/dev/null && break; sleep 2; done
curl -fsS -o /dev/null -H 'Host: localhost' "$URL/" || die "the console is not reachable through the Ingress ($URL/)"
login="$(jq -nc --arg e "$(secret ADMIN_EMAIL)" --arg p "$(secret ADMIN_PASSWORD)" '{email: $e, password: $p}')"
# (A store that just restarted: the backend reconnects within seconds.)
for i in $(seq 1 20); do
  curl -fsS -H 'Host: localhost' -H 'Content-Type: application/json' -d "$login" "$URL/api/v1/auth/login" 2>/dev/null | grep -q access_token && break
  [ "$i" -lt 20 ] || die "admin login through the Ingress failed ($URL/api/v1/auth/login)"
  sleep 3
done
phase "ready in $(elapsed "$T0"): console and admin login answer through the Ingress"
cat <<EOF

  export KUBECONFIG=$KUBECONFIG
  Console:  http://localhost:$KIND_HTTP_PORT/        API: http://localhost:$KIND_HTTP_PORT/api/v1/...
  Admin:    $(secret ADMIN_EMAIL), password: kubectl -n $NAMESPACE get secret $RELEASE-voice-platform-secrets -o jsonpath='{.data.ADMIN_PASSWORD}' | base64 -d
  Remove:   make kind-down
EOF
