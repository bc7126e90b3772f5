#!/bin/sh
# Copies the built SPA to a writable dir and fills in VITE_API_URL (the root filesystem is read-only), and
# writes the console's Content-Security-Policy for that API and LIVEKIT_PUBLIC_URL (the LiveKit URL the
# backend answers test calls with): the same policy as console/csp.js.
set -eu
rm -rf /tmp/html && cp -r /usr/share/nginx/html /tmp/html
url="${VITE_API_URL:-http://localhost:8080}"
find /tmp/html -type f \( -name '*.js' -o -name '*.html' \) -exec sed -i "s#__VITE_API_URL__#${url}#g" {} +

# scheme://host[:port] of a URL (CSP sources name origins; a path would narrow them).
origin() { printf '%s' "$1" | sed -E 's|^([A-Za-z][A-Za-z0-9+.-]*://[^/?#]+).*|\1|'; }
connect="'self' $(origin "$url")"
lk="${LIVEKIT_PUBLIC_URL:-}"
if [ -n "$lk" ]; then
  host="$(origin "$lk" | sed -E 's|^[A-Za-z]+://||')"
  case "$lk" in
    wss:* | https:*) connect="$connect wss://$host https://$host" ;;
    *) connect="$connect ws://$host http://$host" ;;
  esac
fi
csp="default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' blob:; connect-src $connect; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
cat > /tmp/console-headers.conf <<CONF
add_header Content-Security-Policy "$csp" always;
add_header X-Content-Type-Options nosniff always;
add_header Referrer-Policy no-referrer always;
add_header X-Frame-Options DENY always;
CONF
