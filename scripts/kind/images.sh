#!/usr/bin/env bash
# Step 2: the platform's images from docker/*.Dockerfile (voice-{backend,worker,console,operator}:dev)
# and, where no registry is reachable, stand-ins for the public images the chart runs in-cluster
# (FerretDB for MongoDB, Redis, MinIO, livekit-server, livekit-sip) from the binaries scripts/setup.sh
# cached. Each image is started once to show it runs. Layers are cached by the Docker engine.
# Usage: scripts/kind/images.sh [app|services|IMAGE-SHORT-NAME ...]       (default: all)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
use_docker
# No registry here: the public base images are local stand-ins (step 1), built or checked first.
if needs_private_dockerd || [ -n "${VP_STANDINS:-}" ]; then bash "$ROOT/scripts/kind/base-images.sh"; fi

TAG="${VP_IMAGE_TAG:-dev}"
APPS=(backend worker console operator)

app_image() {
  local p="$1" name="voice-$1:$TAG" started=$SECONDS
  mkdir -p "$CACHE/logs"; local log="$CACHE/logs/image-$p.log"
  step "docker build $name (docker/$p.Dockerfile; log $log)"
  # Private dockerd (no NAT of its own): npm and apt reach their registries over the host's network.
  local net=(); if needs_private_dockerd; then net=(--network host); fi
  DOCKER_BUILDKIT="${DOCKER_BUILDKIT:-$(needs_private_dockerd && echo 0 || echo 1)}" \
    "${NICE[@]}" docker build "${net[@]}" -f "docker/$p.Dockerfile" -t "$name" . >"$log" 2>&1 \
    || { tail -30 "$log" >&2; die "docker build of $name failed (log: $log)"; }
  step "$name built in $(elapsed "$started") ($(docker image inspect -f '{{.Size}}' "$name" | awk '{printf "%d MB", $1/1e6}'))"
}

# smoke IMAGE EXPECT -- ARGS...: runs the image once (its own user, read-only root like the chart).
smoke() {
  local img="$1" expect="$2"; shift 3
  local out
  out="$(docker run --rm --read-only --tmpfs /tmp --network none "$@" 2>&1)" || { echo "$out" | tail -5 >&2; die "$img does not start"; }
  grep -q -- "$expect" <<<"$out" || { echo "$out" | tail -5 >&2; die "$img: expected '$expect'"; }
  step "  $img runs as $(docker image inspect -f '{{.Config.User}}' "$img"): $(head -1 <<<"$out" | cut -c1-90)"
}

build_apps() {
  local p
  for p in "${APPS[@]}"; do app_image "$p"; done
  step "checking the app images start"
  # Each Node image runs Node $NODE_MAJOR (the stand-in's, or the official image's; checked, not assumed).
  smoke "voice-backend:$TAG" "ok node v$NODE_MAJOR." -- "voice-backend:$TAG" node -e "import('koa').then(() => import('mongodb')).then(() => console.log('ok node', process.version, process.getuid()))"
  smoke "voice-operator:$TAG" "ok node v$NODE_MAJOR." -- "voice-operator:$TAG" node -e "import('@kubernetes/client-node').then(() => console.log('ok node', process.version, process.getuid()))"
  smoke "voice-worker:$TAG" "rtc-node ok node v$NODE_MAJOR." -- "voice-worker:$TAG" sh -c 'espeak-ng --version && ls /usr/share/pocketsphinx/model/en-us/en-us.lm.bin && python3 -c "from pocketsphinx import Config, Decoder; Config()" && node -e "import(\"@livekit/rtc-node\").then(() => console.log(\"rtc-node ok node\", process.version))"'
  smoke "voice-console:$TAG" "test is successful" -- "voice-console:$TAG" nginx -t
}

prepare_ferretdb() { cp "$BIN/ferretdb-$FERRETDB_VERSION/ferretdb" "$1/"; }
prepare_minio() { cp "$BIN/minio-$MINIO_VERSION/minio" "$1/"; }
prepare_livekit_server() { cp "$BIN/livekit-server-$LIVEKIT_VERSION/livekit-server" "$1/"; }
prepare_livekit_sip() { cp "$BIN/livekit-sip-$LIVEKIT_SIP_VERSION/livekit-sip" "$1/"; }

build_services() {
  for b in "ferretdb-$FERRETDB_VERSION/ferretdb" "minio-$MINIO_VERSION/minio" "livekit-server-$LIVEKIT_VERSION/livekit-server" "livekit-sip-$LIVEKIT_SIP_VERSION/livekit-sip"; do
    [ -x "$BIN/$b" ] || die "$BIN/$b missing: run scripts/setup.sh (make setup) first"
  done
  standin "$FERRETDB_IMAGE" ferretdb
  standin "$REDIS_IMAGE" redis
  standin "$MINIO_IMAGE" minio
  standin "$LIVEKIT_IMAGE" livekit-server
  standin "$SIP_IMAGE" livekit-sip
  step "checking the service images start"
  smoke "$FERRETDB_IMAGE" "$FERRETDB_VERSION" -- "$FERRETDB_IMAGE" --version
  smoke "$REDIS_IMAGE" "Redis server" -- "$REDIS_IMAGE" redis-server --version
  smoke "$MINIO_IMAGE" "minio version" -- "$MINIO_IMAGE" --version
  smoke "$LIVEKIT_IMAGE" "${LIVEKIT_VERSION#v}" -- "$LIVEKIT_IMAGE" --version
  smoke "$SIP_IMAGE" "LiveKit SIP" -- --entrypoint livekit-sip "$SIP_IMAGE" --help
}

want=("$@"); [ ${#want[@]} -gt 0 ] || want=(app services)
for w in "${want[@]}"; do
  case "$w" in
    app) build_apps ;;
    services) if needs_private_dockerd || [ -n "${VP_STANDINS:-}" ]; then build_services; else
        step "service images: pulled from their registries (set VP_STANDINS=1 to build stand-ins)"; fi ;;
    backend|worker|console|operator) app_image "$w" ;;
    *) die "unknown image $w" ;;
  esac
done
