#!/usr/bin/env bash
# Runs every workspace's tests (each starts its own real services), keeps going after a failure so one
# run shows every problem, and ends with one summary line over all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
passed=0
failed=0
for ws in $(node -p "require('./package.json').workspaces.join(' ')"); do
  if [ -z "$(node -p "(require('./$ws/package.json').scripts || {}).test || ''")" ]; then continue; fi
  printf '\n==> %s tests\n' "$ws"
  npm test --silent -w "$ws" 2>&1 | grep -v 'Unknown user config "nodedir"' | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { status=1; printf '==> %s tests FAILED (exit %s)\n' "$ws" "$rc"; }
  line="$(grep -E '^Tests: ' "$log" | tail -n 1)"
  p="$(sed -nE 's/.* ([0-9]+) passed.*/\1/p' <<<"$line")"
  f="$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  # A workspace that failed without a jest summary (a build error, a crashed setup) still counts.
  if [ "$rc" -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); fi
done
printf '\n'
echo "total: ${passed} passed, ${failed} failed"
exit "$status"
