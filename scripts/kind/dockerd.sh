#!/usr/bin/env bash
# A private Docker engine for the local kind cluster on machines where the stock one cannot run kind
# (see docs/kind.md): Debian's dockerd with its own socket, bridge and address pool, no iptables rules
# of its own, and a runc wrapper as default runtime that drops CAP_SYS_RESOURCE (missing from this VM's
# capability bounding set, so privileged containers would fail). Images and layers live in
# ~/.cache/voice-platform/docker, so they survive `stop` and later builds are cached.
# Usage: scripts/kind/dockerd.sh start|stop|status      (DOCKER_HOST=unix:///run/vp-docker/docker.sock)
source "$(dirname "$0")/lib.sh"

RUN=/run/vp-docker
SOCK="$RUN/docker.sock"
PIDFILE="$RUN/dockerd.pid"
DATA="$CACHE/docker"
BRIDGE=vpdocker0
BRIDGE_CIDR=172.30.255.1/24
POOL=172.31.0.0/16
WRAPPER="$CACHE/docker-runtime/runc-no-sys-resource"

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

write_wrapper() {
  mkdir -p "$(dirname "$WRAPPER")"
  cat > "$WRAPPER.tmp" <<'EOF'
#!/bin/bash
# runc, minus CAP_SYS_RESOURCE in every capability set of the container (create/run: the bundle's
# config.json) and of exec'd processes (--process FILE). Written by scripts/kind/dockerd.sh.
strip() { [ -f "$1" ] && jq '(.. | objects | select(has("bounding"))) |= with_entries(.value |= (if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end))' "$1" > "$1.vp" && mv "$1.vp" "$1"; }
cmd=""; bundle="."; proc=""; prev=""
for a in "$@"; do
  case "$prev" in --bundle|-b) bundle="$a" ;; --process|-p) proc="$a" ;; esac
  case "$a" in --bundle=*) bundle="${a#--bundle=}" ;; --process=*) proc="${a#--process=}" ;; esac
  if [ -z "$cmd" ]; then case "$a" in create|run|exec) cmd="$a" ;; esac; fi
  prev="$a"
done
case "$cmd" in
  create|run) strip "$bundle/config.json" ;;
  exec) [ -n "$proc" ] && strip "$proc" ;;
esac
exec /usr/sbin/runc "$@"
EOF
  chmod +x "$WRAPPER.tmp"; mv "$WRAPPER.tmp" "$WRAPPER"
}

start() {
  if running; then step "private dockerd running ($SOCK)"; return; fi
  [ "$(id -u)" -eq 0 ] || die "the private dockerd needs root"
  apt_ensure docker.io jq
  mkdir -p "$RUN" "$DATA"
  write_wrapper
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_CIDR" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  step "starting private dockerd ($SOCK, data in $DATA)"
  # setsid: not killed with the shell (make) that started it. Listens on its unix socket only.
  setsid "${NICE[@]}" dockerd \
    --host "unix://$SOCK" --pidfile "$PIDFILE" --exec-root "$RUN/exec" --data-root "$DATA" \
    --bridge "$BRIDGE" --iptables=false --ip-masq=false --userland-proxy=true \
    --default-address-pool "base=$POOL,size=24" --ip 127.0.0.1 \
    --add-runtime "vp-runc=$WRAPPER" --default-runtime vp-runc \
    --storage-driver overlay2 --log-level warn \
    >"$RUN/dockerd.log" 2>&1 < /dev/null &
  for _ in $(seq 1 60); do
    DOCKER_HOST="unix://$SOCK" docker info >/dev/null 2>&1 && { step "private dockerd ready"; return; }
    sleep 1
  done
  tail -20 "$RUN/dockerd.log" >&2
  die "private dockerd did not start (log: $RUN/dockerd.log)"
}

stop() {
  if ! running; then step "private dockerd not running"; else
    local pid; pid="$(cat "$PIDFILE")"
    step "stopping private dockerd (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && die "dockerd $pid did not stop"
  fi
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE" || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "running: $SOCK (pid $(cat "$PIDFILE"))"; else echo "stopped"; exit 1; fi ;;
  *) die "usage: $0 start|stop|status" ;;
esac
