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
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
HTTP=$(free_port); MGMT=$(free_port)
DIR=$(mktemp -d /tmp/keycloak.XXXXXX)
mkdir -p "$KC/data/import"
cp "$here/integration/keycloak/realm.json" "$KC/data/import/lakehold-realm.json"
JAVA_HOME=$JH KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD="$(head -c 12 /dev/urandom | base64)" \
  JAVA_OPTS_APPEND="-Xms64m -Xmx512m -XX:TieredStopAtLevel=1" \
  "$KC/bin/kc.sh" start-dev --db=dev-mem --http-host=127.0.0.1 --http-port="$HTTP" \
  --http-management-port="$MGMT" --health-enabled=true --import-realm \
  >"$DIR/keycloak.log" 2>&1 &
PID=$!
for _ in $(seq 1 240); do
  curl -sf -o /dev/null "http://127.0.0.1:$MGMT/health/ready" && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.5
done
curl -sf -o /dev/null "http://127.0.0.1:$MGMT/health/ready" || { echo "keycloak did not start" >&2; tail -30 "$DIR/keycloak.log" >&2; kill "$PID" 2>/dev/null; exit 1; }
echo "KEYCLOAK_URL=http://127.0.0.1:$HTTP"
echo "KEYCLOAK_ISSUER=http://127.0.0.1:$HTTP/realms/lakehold"
echo "KEYCLOAK_PID=$PID"
echo "KEYCLOAK_DIR=$DIR"
