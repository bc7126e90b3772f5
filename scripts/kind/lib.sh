# Shared by scripts/kind/*.sh (sourced). The cache and its build function are scripts/setup.sh's
# (scripts/cache.sh): everything built goes to ${VP_CACHE_DIR:-~/.cache/voice-platform}, keyed by version.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../cache.sh
source "$ROOT/scripts/cache.sh"
# Heavy work yields to everything else on the machine.
NICE=(nice -n 19); if command -v ionice >/dev/null; then NICE+=(ionice -c3); fi

step() { printf '==> %s\n' "$*"; }
die() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# apt_ensure PKG...: installs the Debian packages that are missing (build machines; root or sudo).
apt_ensure() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return
  command -v apt-get >/dev/null || die "missing: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  step "apt-get install ${missing[*]}"
  $sudo apt-get update -q >/dev/null
  # policy-rc.d: Debian's postinst must not start a system-wide dockerd.
  local added=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null; $sudo chmod +x /usr/sbin/policy-rc.d; added=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  [ -z "$added" ] || $sudo rm -f /usr/sbin/policy-rc.d
}

# Go builds: static, reproducible, low priority. The checksum database has no entry for some
# Kubernetes staging modules at v0.30.x (404), so those are not checked against it.
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false}" GONOSUMDB="${GONOSUMDB:-k8s.io,sigs.k8s.io}"
go_install() { GOBIN="$OUT" "${NICE[@]}" go install -trimpath -ldflags "${2:-}" "$1"; }

# --- Docker engine ------------------------------------------------------------------------------
# A machine whose capability bounding set lacks CAP_SYS_RESOURCE (these VMs) cannot start privileged
# containers (kind's node) with plain runc: scripts/kind/dockerd.sh then runs a private dockerd whose
# default runtime drops that capability. Elsewhere (a laptop) the user's own Docker is used.
needs_private_dockerd() {
  [ -n "${VP_PRIVATE_DOCKERD:-}" ] && { [ "$VP_PRIVATE_DOCKERD" = 1 ]; return; }
  local bnd; bnd="$(awk '/^CapBnd:/ {print $2}' /proc/self/status 2>/dev/null)"
  [ -n "$bnd" ] || return 1   # not Linux (Docker Desktop): the user's engine
  (( (16#$bnd >> 24) & 1 )) && return 1 || return 0
}
PRIVATE_DOCKER_HOST="unix:///run/vp-docker/docker.sock"
use_docker() {
  if needs_private_dockerd; then
    bash "$ROOT/scripts/kind/dockerd.sh" start
    export DOCKER_HOST="$PRIVATE_DOCKER_HOST"
  fi
  docker info >/dev/null 2>&1 || die "no Docker engine reachable (DOCKER_HOST=${DOCKER_HOST:-default})"
}
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# --- stand-in images --------------------------------------------------------------------------------
LOCAL_BASE="vp-local/debian:$DEBIAN_SUITE"
# standin NAME DOCKERFILE_DIR: builds docker/kind/standins/<dir>/Dockerfile FROM the local base, unless
# an image of that name built from the current base and recipe exists (label vp.standin.key).
standin() {
  local name="$1" dir="docker/kind/standins/$2"
  # The build context: the recipe plus what prepare_<dir> puts there (kept out of the repo).
  local ctx="$CACHE/images/context-$2"
  rm -rf "$ctx"; mkdir -p "$ctx"; cp -r "$dir"/. "$ctx"/
  if declare -F "prepare_${2//-/_}" >/dev/null; then "prepare_${2//-/_}" "$ctx"; fi
  local key; key="$( (docker image inspect -f '{{.Id}}' "$LOCAL_BASE"; cd "$ctx" && find . -type f | sort | xargs sha256sum) | sha256sum | cut -c1-16)"
  if [ "$(docker image inspect -f '{{index .Config.Labels "vp.standin.key"}}' "$name" 2>/dev/null)" = "$key" ]; then
    step "stand-in $name up to date"; return
  fi
  step "building stand-in $name"
  local started=$SECONDS
  mkdir -p "$CACHE/logs"; local log="$CACHE/logs/standin-$2.log"
  "${NICE[@]}" docker build --network host --build-arg "BASE=$LOCAL_BASE" --label "vp.standin.key=$key" \
    --label "vp.standin=true" -t "$name" "$ctx" >"$log" 2>&1 || { tail -20 "$log" >&2; die "stand-in $name failed (log: $log)"; }
  step "stand-in $name built in $(elapsed "$started") ($(docker image inspect -f '{{.Size}}' "$name" | awk '{printf "%d MB", $1/1e6}'))"
}

# The public images the chart runs in-cluster with ci/kind-values.yaml (FerretDB stands in for MongoDB).
FERRETDB_IMAGE="ghcr.io/ferretdb/ferretdb:${FERRETDB_VERSION#v}"
REDIS_IMAGE="$(awk '/^redis:/{f=1} f && /^  image:/{print $2; exit}' "$ROOT/charts/voice-platform/values.yaml")"
MINIO_IMAGE="$(awk '/^minio:/{f=1} f && /^  image:/{print $2; exit}' "$ROOT/charts/voice-platform/values.yaml")"
LIVEKIT_IMAGE="livekit/livekit-server:$LIVEKIT_VERSION"
SIP_IMAGE="livekit/sip:$LIVEKIT_SIP_VERSION"
