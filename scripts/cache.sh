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
