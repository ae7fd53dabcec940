#!/usr/bin/env bash
# Installs Azurite, Microsoft's Azure Storage emulator, once (from npm,
# cached outside the repository, keyed by the pinned version) and starts its
# Blob service over HTTPS with a throwaway self-signed certificate and
# OAuth checking on (--oauth basic: bearer tokens are checked for issuer,
# audience and lifetime, the way the user-delegation path needs), on a free
# loopback port. Prints
#   AZURITE_BLOB_ENDPOINT=https://127.0.0.1:PORT   AZURITE_CA=.../cert.pem
#   AZURITE_CA_BUNDLE=...   AZURITE_DIR=...   AZURITE_PID=...
# AZURITE_CA_BUNDLE is the system CA bundle plus that certificate, for
# SSL_CERT_FILE. Stop it with scripts/azurite-stop.sh.
set -euo pipefail
VERSION=3.37.0
CACHE=${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}
ROOT="$CACHE/azurite-$VERSION"
BIN="$ROOT/node_modules/.bin/azurite-blob"
if [ ! -x "$BIN" ]; then
  echo "azurite: installing azurite@$VERSION from npm (first time: ~20 s)" >&2
  rm -rf "$ROOT.tmp" && mkdir -p "$ROOT.tmp"
  npm install --prefix "$ROOT.tmp" --no-audit --no-fund --loglevel=error "azurite@$VERSION" >&2
  rm -rf "$ROOT" && mv "$ROOT.tmp" "$ROOT"
fi
DIR=$(mktemp -d /tmp/azurite.XXXXXX)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
  -keyout "$DIR/key.pem" -out "$DIR/cert.pem" >/dev/null 2>&1
cat "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$DIR/cert.pem" >"$DIR/bundle.pem" 2>/dev/null || cp "$DIR/cert.pem" "$DIR/bundle.pem"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BIN" --blobHost 127.0.0.1 --blobPort "$PORT" --location "$DIR/data" \
  --cert "$DIR/cert.pem" --key "$DIR/key.pem" --oauth basic \
  --skipApiVersionCheck --disableProductStyleUrl --disableTelemetry --silent \
  >"$DIR/azurite.log" 2>&1 &
PID=$!
for _ in $(seq 1 60); do
  curl -s -o /dev/null --cacert "$DIR/cert.pem" "https://127.0.0.1:$PORT/devstoreaccount1?comp=list" && break
  sleep 0.5
done
curl -s -o /dev/null --cacert "$DIR/cert.pem" "https://127.0.0.1:$PORT/devstoreaccount1?comp=list" ||
  { echo "azurite did not start" >&2; tail -30 "$DIR/azurite.log" >&2; kill "$PID" 2>/dev/null; exit 1; }
echo "AZURITE_BLOB_ENDPOINT=https://127.0.0.1:$PORT"
echo "AZURITE_CA=$DIR/cert.pem"
echo "AZURITE_CA_BUNDLE=$DIR/bundle.pem"
echo "AZURITE_DIR=$DIR"
echo "AZURITE_PID=$PID"
