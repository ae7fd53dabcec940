#!/usr/bin/env bash
# Sign-in flood: how much memory concurrent wrong logins cost a fresh
# catalog, and how they are answered (401 wrong secret, 429 locked out,
# 503 no verification slot free).
#
#   scripts/signin-flood.sh [BINARY]      (default: builds ./cmd/catalog into a temp dir)
#
# For each round it starts a fresh `catalog serve --auth on` on an embedded
# SQLite data dir with one principal, then fires N concurrent wrong
# sign-ins (scripts/signinflood): "same" names the principal's real client
# id with a wrong secret, "distinct" a different unknown id per request.
# It prints the answers and the server's RSS before and at peak (VmHWM),
# then 25 wrong secrets in a row. Rounds: ROUNDS (default "24 200").
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  bin=$tmp/catalog
  go build -o "$bin" ./cmd/catalog
fi
go build -o "$tmp/flood" ./scripts/signinflood
port=${PORT:-18181}
url=http://127.0.0.1:$port

start() { # fresh data dir, one principal, server in the background
  rm -rf "$tmp/data"
  id=$("$bin" principal create flood --data-dir "$tmp/data" | awk '/client id:/ {print $3}')
  "$bin" serve --auth on --data-dir "$tmp/data" --listen "127.0.0.1:$port" --log-level error 2>"$tmp/log" &
  pid=$!
  for _ in $(seq 100); do curl -fs "$url/healthz" >/dev/null && return; sleep 0.1; done
  echo "server did not start:"; cat "$tmp/log"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }

for n in ${ROUNDS:-24 200}; do
  for mode in same distinct; do
    start
    before=$(kib VmRSS)
    flag=; [ "$mode" = distinct ] && flag=-distinct
    out=$("$tmp/flood" -url "$url" -n "$n" -client-id "$id" $flag)
    echo "$mode $out rss_before_mb=$((before / 1024)) rss_peak_mb=$(($(kib VmHWM) / 1024))"
    stop
  done
done

start
codes=$(for _ in $(seq 25); do
  curl -s -o /dev/null -w '%{http_code}\n' "$url/v1/oauth/tokens" \
    -d grant_type=client_credentials -d "client_id=$id" -d client_secret=wrong
done | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')
echo "sequential 25 wrong secrets: $codes"
stop
