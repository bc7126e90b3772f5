#!/usr/bin/env bash
# Step 3a: kind's node image, built here without any registry (kind's `build node-image` fetches
# images even from local files). The node base (docker/kind/node) FROM the local Debian base, the
# Kubernetes binaries from scripts/kind/tools.sh, and preloaded in its containerd the images kubeadm
# 1.30 and kind expect, as stand-ins under exactly their names. Cached: rebuilt only when a binary,
# recipe or base changes. On a laptop this script is not used (kindest/node is pulled).
# Usage: scripts/kind/node-image.sh            prints the node image name on its last line
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
use_docker
bash "$ROOT/scripts/kind/base-images.sh" >/dev/null
bash "$ROOT/scripts/kind/tools.sh" kind kubernetes crictl coredns local-path
export DOCKER_BUILDKIT=0

K8S="$BIN/kubelet-$KUBE_VERSION"
KIND_SRC="$(go env GOMODCACHE)/sigs.k8s.io/kind@$KIND_VERSION"
[ -d "$KIND_SRC/images/base/files" ] || GOFLAGS=-mod=mod go mod download "sigs.k8s.io/kind@$KIND_VERSION"
[ -d "$KIND_SRC/images/base/files" ] || die "kind $KIND_VERSION sources not in the module cache"
NODE_IMAGE_NAME="vp-local/kind-node:$KUBE_VERSION"

# The images kubeadm v1.30.14 and kind v0.30 name (kubeadm config images list; kind's storage manifest).
PAUSE_IMAGE=registry.k8s.io/pause:3.9
ETCD_IMAGE=registry.k8s.io/etcd:3.5.15-0
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:$COREDNS_VERSION
LP_IMAGE="$(sed -n 's/^const storageProvisionerImage = "\(.*\)"$/\1/p' "$KIND_SRC/pkg/build/nodeimage/const_storage.go")"
LP_HELPER_IMAGE="$(sed -n 's/^const storageHelperImage = "\(.*\)"$/\1/p' "$KIND_SRC/pkg/build/nodeimage/const_storage.go")"
[ -n "$LP_IMAGE" ] && [ -n "$LP_HELPER_IMAGE" ] || die "cannot read kind's storage images"

prepare_kube_apiserver() { cp "$K8S/kube-apiserver" "$1/"; }
prepare_kube_controller_manager() { cp "$K8S/kube-controller-manager" "$1/"; }
prepare_kube_scheduler() { cp "$K8S/kube-scheduler" "$1/"; }
prepare_kube_proxy() { cp "$K8S/kube-proxy" "$1/"; }
prepare_coredns() { cp "$BIN/coredns-$COREDNS_VERSION/coredns" "$1/"; }
prepare_local_path_provisioner() { cp "$BIN/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION/local-path-provisioner" "$1/"; }
prepare_pause() {
  local src; src="$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBE_VERSION/build/pause/linux/pause.c"
  [ -f "$src" ] || (cd docker/kind/kubernetes && go mod download k8s.io/kubernetes)
  gcc -Os -Wall -Werror -static -DVERSION=v3.9-vp -o "$1/pause" "$src" && strip "$1/pause"
}
prepare_node() { :; }

COMPONENTS=()
for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
  standin "registry.k8s.io/$c:$KUBE_VERSION" "$c"; COMPONENTS+=("registry.k8s.io/$c:$KUBE_VERSION")
done
standin "$ETCD_IMAGE" etcd
standin "$COREDNS_IMAGE" coredns
standin "$PAUSE_IMAGE" pause
standin "$LP_IMAGE" local-path-provisioner
docker tag "$LOCAL_BASE" "$LP_HELPER_IMAGE"
PRELOAD=("${COMPONENTS[@]}" "$ETCD_IMAGE" "$COREDNS_IMAGE" "$PAUSE_IMAGE" "$LP_IMAGE" "$LP_HELPER_IMAGE")

# --- node base ----------------------------------------------------------------------------------------
ctx="$CACHE/images/context-kind-node"
rm -rf "$ctx"; mkdir -p "$ctx"; cp -r docker/kind/node/. "$ctx/"; cp -r "$KIND_SRC/images/base/files" "$ctx/files"
chmod -R u+w "$ctx"; rm -rf "$ctx/files/LICENSES"
base_key="$( (docker image inspect -f '{{.Id}}' "$LOCAL_BASE"; cd "$ctx" && find . -type f | sort | xargs sha256sum) | sha256sum | cut -c1-16)"
NODE_BASE="vp-local/kind-node-base:$base_key"
if ! image_exists "$NODE_BASE"; then
  step "building kind node base $NODE_BASE (log $CACHE/logs/kind-node-base.log)"
  started=$SECONDS
  "${NICE[@]}" docker build --network host --build-arg "BASE=$LOCAL_BASE" -t "$NODE_BASE" "$ctx" >"$CACHE/logs/kind-node-base.log" 2>&1 \
    || { tail -20 "$CACHE/logs/kind-node-base.log" >&2; die "node base build failed"; }
  step "node base built in $(elapsed "$started")"
else
  step "kind node base $NODE_BASE present"
fi

# --- the node image -------------------------------------------------------------------------------------
node_key="$( (echo "$NODE_BASE"; sha256sum "$K8S"/kubeadm "$K8S"/kubelet "$K8S"/kubectl "$BIN/crictl-$CRICTL_VERSION/crictl";
  for i in "${PRELOAD[@]}"; do docker image inspect -f '{{.Id}}' "$i"; done) | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{index .Config.Labels "vp.node.key"}}' "$NODE_IMAGE_NAME" 2>/dev/null)" = "$node_key" ]; then
  step "node image $NODE_IMAGE_NAME up to date"
  echo "$NODE_IMAGE_NAME"; exit 0
fi
step "assembling node image $NODE_IMAGE_NAME"
started=$SECONDS
c="vp-kind-node-build-$$"
trap 'docker rm -f "$c" >/dev/null 2>&1 || true' EXIT
docker run -d --name "$c" --privileged --network none --entrypoint sleep "$NODE_BASE" infinity >/dev/null
for b in kubeadm kubelet kubectl; do docker cp "$K8S/$b" "$c:/usr/bin/$b"; done
docker cp "$BIN/crictl-$CRICTL_VERSION/crictl" "$c:/usr/local/bin/crictl"
docker exec "$c" sh -c "echo $KUBE_VERSION > /kind/version && mkdir -p /kind/manifests"
# kind's default StorageClass manifest (local-path-provisioner), with its image names filled in.
sed -n '/^const defaultStorageManifest = `/,/^`$/p' "$KIND_SRC/pkg/build/nodeimage/const_storage.go" | sed '1d;$d' \
  | sed -e "s#\` + storageProvisionerImage + \`#$LP_IMAGE#g" -e "s#\` + storageHelperImage + \`#$LP_HELPER_IMAGE#g" \
  | docker exec -i "$c" sh -c 'cat > /kind/manifests/default-storage.yaml'
step "  preloading ${#PRELOAD[@]} images into the node's containerd"
docker exec -d "$c" sh -c 'containerd >/var/log/containerd-build.log 2>&1'
for _ in $(seq 1 30); do docker exec "$c" ctr version >/dev/null 2>&1 && break; sleep 1; done
docker save "${PRELOAD[@]}" | docker exec -i "$c" ctr -n k8s.io images import --label=io.cri-containerd.pinned=pinned \
  --all-platforms --no-unpack --digests - >/dev/null
docker exec "$c" sh -c 'ctr -n k8s.io images ls -q | grep -v "^sha256:" | sort' | sed 's/^/      /'
docker exec "$c" sh -c 'pkill containerd; sleep 2; rm -rf /var/log/containerd-build.log /tmp/*' || true
docker stop -t 1 "$c" >/dev/null
docker commit --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'CMD []' \
  --change "LABEL vp.node.key=$node_key" "$c" "$NODE_IMAGE_NAME" >/dev/null
step "node image $NODE_IMAGE_NAME in $(elapsed "$started") ($(docker image inspect -f '{{.Size}}' "$NODE_IMAGE_NAME" | awk '{printf "%d MB", $1/1e6}'))"
echo "$NODE_IMAGE_NAME"
