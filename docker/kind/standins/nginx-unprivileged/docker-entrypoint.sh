#!/bin/sh
# Like the official image's entrypoint: run the executable /docker-entrypoint.d/*.sh, then nginx.
set -e
if [ "$1" = nginx ] || [ "$1" = nginx-debug ]; then
  for f in $(find /docker-entrypoint.d/ -mindepth 1 -maxdepth 1 -type f -name '*.sh' | sort -V); do
    if [ -x "$f" ]; then echo "$0: running $f"; "$f"; else echo "$0: ignoring $f, not executable"; fi
  done
fi
exec "$@"
