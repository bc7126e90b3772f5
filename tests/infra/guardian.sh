#!/usr/bin/env bash
# A detached watchdog for test services: when the test process that started them dies without
# cleaning up (Ctrl-C, SIGKILL, a crash), kill their process groups and remove their temp folder.
# Usage: guardian.sh <parentPid> <stateFile>. The state file's first line is the folder, each further
# line a process-group id; the launcher rewrites it as services start and stop, and deletes it on a
# clean shutdown, which ends the guardian.
parent="$1"; state="$2"
while kill -0 "$parent" 2>/dev/null; do
  [ -f "$state" ] || exit 0
  sleep 0.5
done
[ -f "$state" ] || exit 0
dir="$(head -n 1 "$state")"
pgids="$(tail -n +2 "$state")"
for g in $pgids; do kill -TERM -- "-$g" 2>/dev/null; done
sleep 3
for g in $pgids; do kill -KILL -- "-$g" 2>/dev/null; done
case "$dir" in /tmp/*|"${TMPDIR:-/tmp}"/*) rm -rf "$dir" ;; esac
