#!/usr/bin/env bash
# Starts a real Keycloak (the keycloak-quarkus-dist zip from Maven Central,
# unpacked once into the cache outside the repository) in dev mode with an
# in-memory database and the test realm integration/keycloak/realm.json, on
# free loopback ports. Keycloak 26 needs Java 21 or newer: JAVA_HOME, else the
# newest JDK under /usr/lib/jvm. Prints
#   KEYCLOAK_URL=...   KEYCLOAK_ISSUER=...   KEYCLOAK_PID=...   KEYCLOAK_DIR=...
# Stop it with scripts/keycloak-stop.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
VERSION=26.5.6
CACHE=${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}
KC="$CACHE/keycloak-$VERSION"
# The fetch holds a lock: integration/install.sh may be fetching it in the
# background already (--fetch: fetch, do not start).
mkdir -p "$CACHE"
exec 8>"$CACHE/keycloak.lock"
flock 8
if [ ! -x "$KC/bin/kc.sh" ]; then
  echo "keycloak: fetching keycloak-quarkus-dist $VERSION from Maven Central (first time)" >&2
  tmp=$(mktemp -d)
  mvn -q dependency:copy -Dartifact="org.keycloak:keycloak-quarkus-dist:$VERSION:zip" -DoutputDirectory="$tmp" >&2
  (cd "$tmp" && unzip -q "keycloak-quarkus-dist-$VERSION.zip")
  rm -rf "$KC" && mv "$tmp/keycloak-$VERSION" "$KC"
  rm -rf "$tmp"
fi
flock -u 8; exec 8>&-
[ "${1:-}" = --fetch ] && exit 0
java_major() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
JH=${JAVA_HOME:-}
if [ -z "$JH" ] || [ "$(java_major "$JH")" -lt 21 ]; then
  JH=
  for d in /usr/lib/jvm/*; do
    [ -x "$d/bin/java" ] || continue
    m=$(java_major "$d"); [ -n "$m" ] && [ "$m" -ge 21 ] && JH=$d
  done
fi
[ -n "$JH" ] || { echo "keycloak: needs a Java 21+ JDK (none under /usr/lib/jvm)" >&2; exit 1; }
# Ports below the kernel's ephemeral range (32768+), so that an outgoing
# connection (the background installs download meanwhile) cannot take the
# port between picking it and Keycloak binding it; a start that still loses
# the port (another test's server) is retried on fresh ports.
busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick() { local p; while :; do p=$((20000 + RANDOM % 12000)); busy "$p" || busy $((p + 1)) || { echo "$p"; return; }; done; }
DIR=$(mktemp -d /tmp/keycloak.XXXXXX)
mkdir -p "$KC/data/import"
cp "$here/integration/keycloak/realm.json" "$KC/data/import/lakehold-realm.json"
ready=
for attempt in 1 2 3; do
  HTTP=$(pick); MGMT=$((HTTP + 1))
  # --add-opens: on Java 24+ JBoss threads otherwise fail to reset
  # thread-locals (IllegalAccessError on Keycloak's worker threads).
  JAVA_HOME=$JH KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD="$(head -c 12 /dev/urandom | base64)" \
    JAVA_OPTS_APPEND="-Xms64m -Xmx512m -XX:TieredStopAtLevel=1 --add-opens=java.base/java.lang=ALL-UNNAMED" \
    "$KC/bin/kc.sh" start-dev --db=dev-mem --http-host=127.0.0.1 --http-port="$HTTP" \
    --http-management-port="$MGMT" --health-enabled=true --import-realm \
    >"$DIR/keycloak.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 240); do
    curl -sf -o /dev/null "http://127.0.0.1:$MGMT/health/ready" && { ready=1; break; }
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.5
  done
  [ -n "$ready" ] && break
  echo "keycloak: start $attempt failed:" >&2; tail -30 "$DIR/keycloak.log" >&2
  kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true
  grep -q 'Port already bound' "$DIR/keycloak.log" || break
done
[ -n "$ready" ] || { echo "keycloak did not start" >&2; rm -rf "$DIR"; exit 1; }
echo "KEYCLOAK_URL=http://127.0.0.1:$HTTP"
echo "KEYCLOAK_ISSUER=http://127.0.0.1:$HTTP/realms/lakehold"
echo "KEYCLOAK_PID=$PID"
echo "KEYCLOAK_DIR=$DIR"
