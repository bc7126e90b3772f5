#!/usr/bin/env bash
# Builds (once per version, cached in ~/.cache/voice-platform/bin) the Go programs a local kind
# cluster needs: kind itself, the Kubernetes node binaries, CoreDNS, local-path-provisioner and the
# Traefik Ingress controller. kube-apiserver, helm, livekit and the stores come from scripts/setup.sh.
# Usage: scripts/kind/tools.sh [kind|kubernetes|crictl|coredns|local-path|traefik ...]   (default: all)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

grep -q "k8s.io/kubernetes $KUBE_VERSION" docker/kind/kubernetes/go.mod \
  || die "docker/kind/kubernetes/go.mod does not require k8s.io/kubernetes $KUBE_VERSION"

kind_build() { go_install "sigs.k8s.io/kind@$KIND_VERSION"; }

# kubeadm picks the control-plane image tags from its own version: stamp it like Kubernetes' build does.
kubernetes_build() {
  local v="${KUBE_VERSION#v}" pkg=k8s.io/component-base/version
  local minor="${v#*.}"; minor="${minor%%.*}"
  local ld="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  local name
  # kubelet last: it is the build's marker.
  for name in kubeadm kubectl kube-proxy kube-scheduler kube-controller-manager kubelet; do
    step "  go build $name"
    (cd docker/kind/kubernetes && "${NICE[@]}" go build -trimpath -ldflags "$ld" -o "$OUT/$name" "k8s.io/kubernetes/cmd/$name")
  done
  # kube-apiserver: the binary scripts/setup.sh built from tests/infra/kube-apiserver (same version).
  local api="$BIN/kube-apiserver-$KUBE_VERSION/kube-apiserver"
  if [ ! -x "$api" ]; then
    (cd tests/infra/kube-apiserver && "${NICE[@]}" go build -trimpath -ldflags "$ld" -o "$api.tmp" . && mv "$api.tmp" "$api")
  fi
  cp "$api" "$OUT/kube-apiserver"
}

coredns_build() { go_install "github.com/coredns/coredns@$COREDNS_VERSION" "-s -w"; }
local_path_build() {
  go_install "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION" "-s -w"
}
# crictl (kubeadm 1.30 drives the container runtime through it). The proxy refuses its version list and
# its go.mod points the Kubernetes staging modules at a kubernetes commit: build the downloaded source
# with those redirected to the published v0.30.x modules (and kubernetes itself to the pinned release).
crictl_build() {
  local src
  src="$(go mod download -json "sigs.k8s.io/cri-tools@$CRICTL_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || die "could not download cri-tools $CRICTL_VERSION"
  cp -r "$src" "$OUT/src"; chmod -R u+w "$OUT/src"; rm -rf "$OUT/src/vendor"
  local kv="v0.${KUBE_VERSION#v1.}"
  sed -i -E "s#(k8s.io/[a-z0-9-]+) => k8s.io/kubernetes/staging/src/k8s.io/[a-z0-9-]+ v0.0.0-[0-9a-f-]+#\1 => \1 $kv#; s#k8s.io/kubernetes => k8s.io/kubernetes v[0-9.]+#k8s.io/kubernetes => k8s.io/kubernetes $KUBE_VERSION#" "$OUT/src/go.mod"
  (cd "$OUT/src" && "${NICE[@]}" go mod tidy >/dev/null 2>&1 || true
   "${NICE[@]}" go build -mod=mod -trimpath -ldflags "-s -w -X github.com/kubernetes-sigs/cri-tools/pkg/version.Version=$CRICTL_VERSION" -o "$OUT/crictl" ./cmd/crictl)
  rm -rf "$OUT/src"
}
# Traefik's go.mod has replace directives, so `go install …@version` is refused: build the downloaded
# release source (its web UI assets are not in the module; the dashboard is off anyway).
traefik_build() {
  local src
  src="$(go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || die "could not download traefik $TRAEFIK_VERSION"
  cp -r "$src" "$OUT/src"; chmod -R u+w "$OUT/src"
  (cd "$OUT/src" && "${NICE[@]}" go build -trimpath -o "$OUT/traefik" \
    -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION -X github.com/traefik/traefik/v3/pkg/version.Codename=pinned" ./cmd/traefik)
  rm -rf "$OUT/src"
}

want=("$@"); [ ${#want[@]} -gt 0 ] || want=(kind kubernetes crictl coredns local-path traefik)
for t in "${want[@]}"; do
  case "$t" in
    kind) build kind "$KIND_VERSION" -- kind_build ;;
    kubernetes) build kubelet "$KUBE_VERSION" -- kubernetes_build ;;
    crictl) build crictl "$CRICTL_VERSION" -- crictl_build ;;
    coredns) build coredns "$COREDNS_VERSION" -- coredns_build ;;
    local-path) build local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION" -- local_path_build ;;
    traefik) build traefik "$TRAEFIK_VERSION" -- traefik_build ;;
    *) die "unknown tool $t" ;;
  esac
done
