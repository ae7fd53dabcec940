#!/usr/bin/env bash
# Builds SeaweedFS's `weed` once (cached outside the repository, keyed by the
# pinned pseudo-version) and starts `weed mini` with S3 + STS enforcing
# session policies, on free loopback ports. Prints
#   SEAWEED_S3_ENDPOINT=...   SEAWEED_DIR=...   SEAWEED_PID=...
# Stop it with scripts/seaweed-stop.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
VERSION=v0.0.0-20261109003541-7506e5f91cd6
CACHE=${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}
BIN="$CACHE/weed-${VERSION##*-}"
if [ ! -x "$BIN" ]; then
  echo "seaweed: building weed $VERSION (first time: ~5-10 min)" >&2
  build=$(mktemp -d)
  cat >"$build/go.mod" <<MOD
module example.com/weedbuild

go 1.26

require github.com/seaweedfs/seaweedfs $VERSION

replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
MOD
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/seaweedfs/seaweedfs/weed"\n' >"$build/tools.go"
  (cd "$build" && GOFLAGS=-mod=mod go mod tidy >&2 && go build -o "$BIN.tmp" github.com/seaweedfs/seaweedfs/weed >&2)
  mv "$BIN.tmp" "$BIN"
  rm -rf "$build"
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# gRPC ports are HTTP + 10000: pick HTTP ports whose +10000 is free too.
pick() { while :; do p=$(free_port); [ "$p" -lt 55000 ] && ! (exec 3<>/dev/tcp/127.0.0.1/$((p+10000))) 2>/dev/null && { echo "$p"; return; }; done; }
DIR=$(mktemp -d /tmp/seaweed.XXXXXX)
S3=$(pick); MASTER=$(pick); VOLUME=$(pick); FILER=$(pick)
KEY=$(head -c 32 /dev/urandom | base64)
sed "s#SIGNING_KEY#$KEY#" "$here/integration/seaweed/iam.json" >"$DIR/iam.json"
"$BIN" mini -dir "$DIR/data" -ip 127.0.0.1 -ip.bind 127.0.0.1 \
  -master.port "$MASTER" -volume.port "$VOLUME" -filer.port "$FILER" -s3.port "$S3" \
  -s3.config "$DIR/iam.json" -s3.iam.config "$DIR/iam.json" -s3.iam.readOnly=false \
  -webdav=false -admin.ui=false -s3.port.iceberg=0 -s3.port.lance=0 -master.telemetry=false \
  >"$DIR/weed.log" 2>&1 &
PID=$!
for _ in $(seq 1 120); do
  curl -sf -o /dev/null "http://127.0.0.1:$S3/status" && break
  sleep 0.5
done
curl -sf -o /dev/null "http://127.0.0.1:$S3/status" || { echo "seaweed did not start" >&2; tail -30 "$DIR/weed.log" >&2; exit 1; }
echo "SEAWEED_S3_ENDPOINT=http://127.0.0.1:$S3"
echo "SEAWEED_DIR=$DIR"
echo "SEAWEED_PID=$PID"
