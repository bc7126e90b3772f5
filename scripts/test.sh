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
# Every log the suites write is kept under test-artifacts/logs/ (tests/infra/src/logs.ts), fresh for this
# run; the last step scans them all for secrets. The LiveKit secret of every suite is this run's, so that
# step knows it too.
export VP_LOG_DIR="$PWD/test-artifacts/logs"
rm -rf "$VP_LOG_DIR"
VP_LIVEKIT_TEST_SECRET="$(node -p "require('crypto').randomBytes(24).toString('hex')")"
export VP_LIVEKIT_TEST_SECRET
# First, and fast: no import circles in the sources (scripts/check-circles.js names each one it finds).
printf '\n==> import circles\n'
if node scripts/check-circles.js; then
  passed=$((passed + 1))
else
  status=1
  failed=$((failed + 1))
  printf '==> import circles FAILED: break each circle above (scripts/check-circles.js)\n'
fi
# Fast too: the folder pairs of each package's src/ that import each other (docs/design.md, "Layers"). Printed
# for every package; only the packages listed in --strict fail the run: add each one as it reaches 0 pairs
# (all four packages now), so no package slides back.
IMPORT_PAIRS_STRICT='backend,operator,console,worker'
printf '\n==> import pairs\n'
if node scripts/import-pairs.js ${IMPORT_PAIRS_STRICT:+--strict "$IMPORT_PAIRS_STRICT"}; then
  passed=$((passed + 1))
else
  status=1
  failed=$((failed + 1))
  printf '==> import pairs FAILED: a strict package has folders importing each other (scripts/import-pairs.js)\n'
fi
# Fast too: the committed OpenAPI document (docs/openapi.json, which backend/src/apiDocs.test.ts keeps equal
# to the served one) has no lint error (Redocly's recommended rules, backend/redocly.yaml; warnings are listed).
printf '\n==> OpenAPI lint\n'
# (Its boxed notice, shown on an old Node such as 20, is left out.)
if npm run --silent lint:openapi -w backend 2>&1 | grep -Ev 'Unknown user config "nodedir"|^ *[║╔╚]'; [ "${PIPESTATUS[0]}" -eq 0 ]; then
  passed=$((passed + 1))
else
  status=1
  failed=$((failed + 1))
  printf '==> OpenAPI lint FAILED: fix the errors above in schemas/ or backend/src/**/openapi.ts, then npm run gen:openapi -w backend\n'
fi
# Adds a suite's jest summary (in $log) to the totals; a suite that failed without one (a build error, a
# crashed setup) still counts as a failure.
tally() {
  local rc="$1" line p f
  line="$(grep -E '^Tests: ' "$log" | tail -n 1)"
  p="$(sed -nE 's/.* ([0-9]+) passed.*/\1/p' <<<"$line")"
  f="$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$rc" -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); fi
}
for ws in $(node -p "require('./package.json').workspaces.join(' ')"); do
  if [ -z "$(node -p "(require('./$ws/package.json').scripts || {}).test || ''")" ]; then continue; fi
  printf '\n==> %s tests\n' "$ws"
  npm test --silent -w "$ws" 2>&1 | grep -v 'Unknown user config "nodedir"' | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { status=1; printf '==> %s tests FAILED (exit %s)\n' "$ws" "$rc"; }
  tally "$rc"
done
# The chart on a kind cluster (make test-k8s, tests/k8s; docs/kind.md), where Docker runs. A cluster this
# run created is deleted afterwards (one that was up already stays). VP_SKIP_K8S=1 leaves the step out.
if [ -n "${VP_SKIP_K8S:-}" ]; then
  printf '\n==> kind suite left out (VP_SKIP_K8S)\n'
elif ! command -v docker >/dev/null; then
  printf '\n==> kind suite: no Docker on this machine (make test-k8s needs docker, go or kind, helm)\n'
else
  printf '\n==> kind suite (make test-k8s)\n'
  cluster_existed=""; if bash scripts/kind/exists.sh; then cluster_existed=1; fi
  make --no-print-directory test-k8s 2>&1 | grep -v 'Unknown user config "nodedir"' | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { status=1; printf '==> kind suite FAILED (exit %s)\n' "$rc"; }
  tally "$rc"
  if [ -z "$cluster_existed" ]; then make --no-print-directory kind-down >/dev/null 2>&1 || true; fi
fi
# compose.yaml with the images the kind suite built (make test-compose, tests/compose/test.sh, about a
# minute once compose and the images are cached): every service healthy, a dial-out completes. Where
# Docker runs; VP_SKIP_COMPOSE=1 leaves it out.
if [ -n "${VP_SKIP_COMPOSE:-}" ]; then
  printf '\n==> compose left out (VP_SKIP_COMPOSE)\n'
elif ! command -v docker >/dev/null; then
  printf '\n==> compose: no Docker on this machine\n'
else
  printf '\n==> compose (make test-compose)\n'
  if npx tsc -b tests && bash tests/compose/test.sh 2>&1 | tee "$log" && [ "${PIPESTATUS[0]}" -eq 0 ]; then
    passed=$((passed + 1))
  else
    status=1
    failed=$((failed + 1))
    printf '==> compose FAILED\n'
  fi
fi
# Last: no log of the run may hold a secret (docs/design.md §2). Findings name file and line, redacted.
printf '\n==> secrets in the logs\n'
if node tests/dist/infra/src/scanLogs.js "$VP_LOG_DIR"; then
  passed=$((passed + 1))
else
  status=1
  failed=$((failed + 1))
  printf '==> secrets scan FAILED\n'
fi
printf '\n'
echo "total: ${passed} passed, ${failed} failed"
exit "$status"
