#!/bin/sh
# Copies the built SPA to a writable dir and fills in VITE_API_URL (the root filesystem is read-only).
set -eu
rm -rf /tmp/html && cp -r /usr/share/nginx/html /tmp/html
url="${VITE_API_URL:-http://localhost:8080}"
find /tmp/html -type f \( -name '*.js' -o -name '*.html' \) -exec sed -i "s#__VITE_API_URL__#${url}#g" {} +
