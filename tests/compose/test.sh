#!/usr/bin/env bash
# `make test-compose`: compose.yaml with the images built from this repository (docs/compose.md). Builds
# (or finds cached) the platform's images, the service stand-ins where no registry is reachable and the
# test phone; starts the project with a generated env file (random secrets, free ports on 127.0.0.1),
# compose.ferretdb.yaml and tests/compose/phone.yaml; waits until every service is healthy; seeds an API key, a bot and a trunk to
# the phone through the API; dials out with the API key to a number that answers and waits for the call
# to end with its recording. Prints the outcome and removes the project (containers, network, volumes).
# Needs `npx tsc -b tests` (the phone's files). KEEP=1 leaves the project running.
source "$(dirname "$0")/../../scripts/kind/lib.sh"
cd "$ROOT"
started_all=$SECONDS
use_docker
command -v jq >/dev/null || apt_ensure jq
ART="$ROOT/test-artifacts/compose"
rm -rf "$ART"; mkdir -p "$ART"

# --- docker compose: the user's plugin, else Compose v2 built once into the cache ------------------
build_compose() {
  # `go install …/cmd@version` refuses the module (exclude directives in its go.mod): build it as the
  # main module from its downloaded source instead.
  local src
  src="$(GOFLAGS=-mod=mod go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | jq -r .Dir)"
  cp -r "$src" "$OUT/src"; chmod -R u+w "$OUT/src"
  (cd "$OUT/src" && "${NICE[@]}" go build -trimpath \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" -o "$OUT/docker-compose" ./cmd)
  rm -rf "$OUT/src"
}
if docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
else
  build docker-compose "$COMPOSE_VERSION" -- build_compose
  COMPOSE=("$BIN/docker-compose-$COMPOSE_VERSION/docker-compose")
fi
step "$("${COMPOSE[@]}" version)"

# --- images ----------------------------------------------------------------------------------------
# The operator is not part of compose.yaml (it needs Kubernetes).
VP_IMAGE_TAG=dev bash scripts/kind/images.sh backend worker console services
phone_image() {
  local ctx="$CACHE/images/context-test-phone" log="$CACHE/logs/image-test-phone.log"
  [ -f tests/dist/infra/src/telephony.js ] || die "tests/dist missing: run npx tsc -b tests"
  mkdir -p "$ctx/phone" "$CACHE/logs"; cp docker/kind/test/phone/Dockerfile "$ctx/"
  node -e "import('./tests/dist/infra/src/telephony.js').then((m) => m.writePhoneFiles(process.argv[1], 'yes i will pay', 5000, '/phone'))" "$ctx/phone"
  local net=(); if needs_private_dockerd; then net=(--network host); fi
  step "docker build voice-test-phone:dev (docker/kind/test/phone; log $log)"
  DOCKER_BUILDKIT="${DOCKER_BUILDKIT:-$(needs_private_dockerd && echo 0 || echo 1)}" \
    "${NICE[@]}" docker build "${net[@]}" -t voice-test-phone:dev "$ctx" >"$log" 2>&1 || { tail -20 "$log" >&2; die "docker build of the phone failed"; }
}
phone_image

# The placeholders of compose.env.example are refused (they say change-me) without LOCAL_DEVELOPMENT.
out="$(docker run --rm --network none --read-only --env-file compose.env.example -e MONGODB_URI=mongodb://mongodb:27017/ \
  -e REDIS_URL=redis://redis:6379 voice-backend:dev 2>&1)" && die "the backend started with compose.env.example's secrets"
grep -q 'JWT_SECRET is the example value' <<<"$out" || { echo "$out" >&2; die "the backend did not name the example JWT_SECRET"; }
step "the backend refuses compose.env.example's placeholder secrets"

# --- the env file: what a user writes from compose.env.example, with real secrets -------------------
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
rand() { head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c "$1"; }
ENV_FILE="$ART/compose.env"
API_PORT=$(free_port)
{
  echo "COMPOSE_PROJECT_NAME=vp-compose-test-$$"
  echo "VP_IMAGE_PREFIX="
  echo "VP_IMAGE_TAG=dev"
  echo "VP_BIND_ADDRESS=127.0.0.1"
  echo "API_PORT=$API_PORT"
  echo "CONSOLE_PORT=$(free_port)"
  echo "LIVEKIT_PORT=$(free_port)"
  echo "LIVEKIT_RTC_TCP_PORT=$(free_port)"
  echo "LIVEKIT_RTC_UDP_PORT=$(free_port)"
  echo "SIP_PORT=$(free_port)"
  echo "JWT_SECRET=$(rand 48)"
  echo "WORKER_AUTH_TOKEN=$(rand 40)"
  echo "ADMIN_EMAIL=admin@example.com"
  echo "ADMIN_PASSWORD=$(rand 24)"
  echo "LIVEKIT_API_KEY=API$(rand 12)"
  echo "LIVEKIT_API_SECRET=$(rand 44)"
  echo "STORAGE_ACCESS_KEY=$(rand 20)"
  echo "STORAGE_SECRET_KEY=$(rand 40)"
  # This machine's cores are shared with other work: livekit-sip's CPU guard would refuse calls.
  echo "SIP_MAX_CPU_UTILIZATION=1.0"
} > "$ENV_FILE"
chmod 600 "$ENV_FILE"
# shellcheck disable=SC1090
source "$ENV_FILE"
# compose.ferretdb.yaml: FerretDB (its stand-in image built above) in place of compose.yaml's mongo:7.0, which
# no registry here serves; a user's Docker host runs compose.yaml's MongoDB.
DC=("${COMPOSE[@]}" --env-file "$ENV_FILE" -f compose.yaml -f compose.ferretdb.yaml -f tests/compose/phone.yaml)

teardown() {
  local rc=$?
  "${DC[@]}" ps -a >"$ART/ps.txt" 2>&1 || true
  "${DC[@]}" logs --no-color --timestamps >"$ART/compose.log" 2>&1 || true
  if [ -n "${KEEP:-}" ]; then step "KEEP=1: the project stays up (${DC[*]} down -v to remove it)"; exit $rc; fi
  step "removing the project (containers, network, volumes)"
  "${DC[@]}" down -v --remove-orphans --timeout 20 >"$ART/down.log" 2>&1 || cat "$ART/down.log" >&2
  rm -f "$ENV_FILE"   # its secrets served only this project
  [ $rc -eq 0 ] || echo "test-compose FAILED (logs: $ART/compose.log)" >&2
  exit $rc
}
trap teardown EXIT

"${DC[@]}" config --quiet
step "docker compose up --wait (every service healthy)"
t=$SECONDS
"${DC[@]}" up -d --wait --wait-timeout 900 || die "the project did not become healthy"
step "up and healthy in $(elapsed "$t")"
# Every long-running service healthy, the one-shot seed exited 0.
"${DC[@]}" ps -a --format json | jq -s -r 'if type == "array" and (.[0] | type) == "array" then .[0] else . end | .[]
  | "\(.Service) \(.State) \(if (.Health // "") == "" then "-" else .Health end) \(.ExitCode)"' | sort | tee "$ART/health.txt"
while read -r svc state health code; do
  if [ "$svc" = seed-admin ]; then [ "$state" = exited ] && [ "$code" = 0 ] || die "seed-admin: $state (exit $code)"
  else [ "$state" = running ] && [ "$health" = healthy ] || die "$svc: $state $health"; fi
done <"$ART/health.txt"
for svc in mongodb redis minio livekit livekit-sip seed-admin backend dialler worker console phone; do
  grep -q "^$svc " "$ART/health.txt" || die "service $svc missing"
done

# --- seed through the API, then a CRM-style dial-out ----------------------------------------------
API="http://127.0.0.1:$API_PORT/api/v1"
# call METHOD PATH [BODY] [AUTH-HEADER]: the JSON answer; fails on a status other than 2xx.
call() {
  local out status
  out="$(curl -sS -X "$1" "$API$2" -H 'Content-Type: application/json' ${4:+-H "$4"} ${3:+--data "$3"} -w '\n%{http_code}')" || die "$1 $2: no answer"
  status="${out##*$'\n'}"; out="${out%$'\n'*}"
  [[ "$status" == 2* ]] || die "$1 $2: $status $out"
  printf '%s' "$out"
}
TOKEN="$(call POST /auth/login "$(jq -nc --arg e "$ADMIN_EMAIL" --arg p "$ADMIN_PASSWORD" '{email: $e, password: $p}')" | jq -r .access_token)"
AUTH="Authorization: Bearer $TOKEN"
step "admin login ok"
KEY="$(call POST /api-keys '{"name":"compose test"}' "$AUTH" | jq -r .key)"
BOT="$(call POST /bots '{
  "name": "compose payment reminder", "active": true, "language": "en-US",
  "prompt": "You remind {{customer_name}} about an open invoice.",
  "greeting": "Hello {{customer_name}}, this is a reminder from Example Company.",
  "variables": [{"name": "customer_name", "required": true}],
  "policy": {"intents": [{"name": "pay", "examples": ["yes", "i will pay"], "reply": "Thank you, goodbye.", "end_call": true}],
             "fallback": {"reply": "Will you pay the open amount?"}},
  "max_call_seconds": 600}' "$AUTH" | jq -r .id)"
call POST /sip/outbound-trunks '{"name":"compose test phone","address":"phone:5060","numbers":["+15550001000"],"default":true}' "$AUTH" >/dev/null
step "seeded: an API key, bot $BOT, a default trunk to phone:5060"

TO=+15005550100   # the phone answers, says "yes i will pay" 5 s later and stays on (docs/design.md §7)
CALL_ID="$(call POST /sip/dialout "$(jq -nc --arg b "$BOT" --arg to "$TO" '{bot_id: $b, to_number: $to, variables: {customer_name: "Kay"}}')" "X-API-Key: $KEY" | jq -r .call_id)"
step "dial-out $CALL_ID to $TO queued; waiting for it to end"
t=$SECONDS; last=""
while :; do
  rec="$(call GET "/calls/$CALL_ID" "" "$AUTH")"
  st="$(jq -r .status <<<"$rec")"
  [ "$st" = "$last" ] || { step "  $(elapsed "$t") $st"; last="$st"; }
  case "$st" in
    completed) [ "$(jq -r '.recording_key // empty' <<<"$rec")" ] && break ;;
    failed|busy|no_answer|canceled) break ;;
  esac
  [ $((SECONDS - t)) -lt 240 ] || die "call $CALL_ID still $st after 240 s"
  sleep 1
done
echo "$rec" | jq . >"$ART/call.json"
jq -r '"==> call \(.call_id): \(.status) / \(.end_reason), \(.from_number) → \(.to_number)",
  (.transcript[] | "    \(.role)  \(.text)"), "    recording \(.recording_key // .recording_error // "none")"' <<<"$rec"
[ "$(jq -r '"\(.status)/\(.end_reason)"' <<<"$rec")" = completed/bot_hangup ] || die "the call did not complete with the bot's hang-up"
[ "$(jq -r '.transcript[0].text' <<<"$rec")" = "Hello Kay, this is a reminder from Example Company." ] || die "no greeting in the transcript"
jq -e '.recording_key | test("\\.wav$")' <<<"$rec" >/dev/null || die "no recording"
# The image's recogniser decodes live (PyPI pocketsphinx in the image: Debian trixie has no binding).
"${DC[@]}" logs --no-color worker >"$ART/worker.log" 2>&1 || true
grep -q 'live pocketsphinx decoders running' "$ART/worker.log" || die "the worker image does not decode live (see $ART/worker.log)"
! grep -q 'live pocketsphinx decoding unavailable' "$ART/worker.log" || die "the worker image says live decoding is unavailable (see $ART/worker.log)"
step "the worker decoded the call live"

# --- a bot test on the phone path: the platform dials the dialler's simulated phone (docs/design.md §17) ---
# Two dialler replicas: `dialler` resolves to both, and each one's phone must listen on its own address.
t=$SECONDS
"${DC[@]}" up -d --wait --wait-timeout 300 --scale dialler=2 dialler >"$ART/scale.log" 2>&1 || die "a second dialler did not become healthy (see $ART/scale.log)"
[ "$("${DC[@]}" ps -q dialler | wc -l)" = 2 ] || die "dialler is not at 2 replicas"
"${DC[@]}" logs --no-color dialler >"$ART/dialler.log" 2>&1 || true
addresses="$(grep 'simulated phone listening' "$ART/dialler.log" | grep -o '"address":"[0-9.:]*"' | sort -u | wc -l)"
[ "$addresses" = 2 ] || die "the 2 dialler replicas' simulated phones do not listen on 2 addresses: $addresses (see $ART/dialler.log)"
! grep -q 'the simulated phone could not listen' "$ART/dialler.log" || die "a dialler's simulated phone could not listen (see $ART/dialler.log)"
step "2 dialler replicas, each one's simulated phone on its own address, in $(elapsed "$t")"
CASE="$(call POST "/bots/$BOT/tests" '{"name": "promises on the phone", "transport": "sip", "variables": {"customer_name": "Kay"},
  "caller": {"script": [{"say": "yes i will pay", "wait_for_bot": true}]},
  "expect": {"end_reason": "bot_hangup", "said": ["thank you, goodbye"]}}' "$AUTH" | jq -r .id)"
RUN="$(call POST "/bots/$BOT/test-runs" "$(jq -nc --arg c "$CASE" '{cases: [$c]}')" "$AUTH" | jq -r .id)"
step "sip test case $CASE running ($RUN)"
t=$SECONDS
while :; do
  run="$(call GET "/bots/$BOT/test-runs/$RUN" "" "$AUTH")"
  [ "$(jq -r .status <<<"$run")" = done ] && break
  [ $((SECONDS - t)) -lt 180 ] || die "test run $RUN not done after 180 s: $run"
  sleep 1
done
echo "$run" | jq . >"$ART/test-run.json"
[ "$(jq -r '"\(.passed)/\(.failed)"' <<<"$run")" = 1/0 ] || die "the sip test case failed: $(jq -c '.cases[0].failures' <<<"$run")"
trec="$(call GET "/calls/$(jq -r '.cases[0].call_id' <<<"$run")" "" "$AUTH")"
[ "$(jq -r .direction <<<"$trec")" = outbound ] || die "the sip case's call is not a dial-out"
step "the sip test case passed in $(elapsed "$t"): $(jq -r '.transcript | map("\(.role): \(.text)") | join(" / ")' <<<"$trec")"
step "test-compose passed in $(elapsed "$started_all")"
