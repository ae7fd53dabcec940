#!/usr/bin/env bash
# start.sh TRINO_DIR CATALOG_URI WAREHOUSE [NAME=[CLIENT_ID:SECRET][@s3:WAREHOUSE] ...]:
# starts the assembled Trino 483
# (integration/trino/assemble.sh) as a single coordinator on a free
# loopback port, with one Iceberg catalog "lake" configured as the README
# shows, and waits until it accepts queries. Prints
#   TRINO_URI=...  TRINO_PID=...  TRINO_DIR_RUN=...
# Stop it with: kill $TRINO_PID. With NAME=... arguments it instead
# configures one catalog NAME per argument: with a CLIENT_ID:SECRET it
# authenticates with OAUTH2 as the README shows for a catalog with
# authentication on; with @s3:WAREHOUSE it uses that warehouse, on S3 at
# $TRINO_S3_ENDPOINT, through vended credentials only (the README's S3
# snippet).
set -euo pipefail
trino=$1 uri=$2 wh=$3
shift 3
JAVA_HOME=${TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
run=$(mktemp -d /tmp/trino-run.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$run/etc/catalog"
cat >"$run/etc/config.properties" <<CFG
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$port
discovery.uri=http://127.0.0.1:$port
node.environment=interop
node.id=lakehold-interop
node.internal-address=127.0.0.1
plugin.dir=$trino/plugin
catalog.config-dir=$run/etc/catalog
query.max-memory=512MB
query.max-memory-per-node=512MB
CFG
# Exactly the README's snippet: Trino 483 reads and writes file:// only
# with its native local file system enabled, and needs local.location=/
# (without it, metadata files that other engines wrote are "not found").
catalog() { # catalog NAME [CREDENTIAL] [S3_WAREHOUSE]
  local s3wh=${3:-}
  if [ -n "$s3wh" ]; then
    # The README's S3 snippet: keys and tokens come from the catalog.
    cat >"$run/etc/catalog/$1.properties" <<CFG
connector.name=iceberg
iceberg.catalog.type=rest
iceberg.rest-catalog.uri=$uri
iceberg.rest-catalog.warehouse=$s3wh
iceberg.rest-catalog.vended-credentials-enabled=true
fs.native-s3.enabled=true
s3.region=us-east-1
s3.endpoint=$TRINO_S3_ENDPOINT
s3.path-style-access=true
CFG
  else
    cat >"$run/etc/catalog/$1.properties" <<CFG
connector.name=iceberg
iceberg.catalog.type=rest
iceberg.rest-catalog.uri=$uri
iceberg.rest-catalog.warehouse=$wh
fs.native-local.enabled=true
local.location=/
CFG
  fi
  if [ -n "${2:-}" ]; then
    cat >>"$run/etc/catalog/$1.properties" <<CFG
iceberg.rest-catalog.security=OAUTH2
iceberg.rest-catalog.oauth2.credential=$2
iceberg.rest-catalog.oauth2.server-uri=$uri/v1/oauth/tokens
iceberg.rest-catalog.oauth2.scope=catalog
CFG
  fi
}
if [ $# -eq 0 ]; then
  catalog lake
fi
for pair in "$@"; do
  name=${pair%%=*} rest=${pair#*=} s3wh=
  case $rest in *@s3:*) s3wh=${rest##*@s3:}; rest=${rest%@s3:*} ;; esac
  catalog "$name" "$rest" "$s3wh"
done
(cd "$run" && exec "$JAVA_HOME/bin/java" -Xmx${TRINO_HEAP:-1536m} -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
  --add-modules=jdk.incubator.vector -Djdk.attach.allowAttachSelf=true -Dfile.encoding=UTF-8 --enable-native-access=ALL-UNNAMED \
  --add-opens=java.base/java.nio=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
  -Dconfig="$run/etc/config.properties" -Dlog.levels-file=/dev/null \
  -cp "$trino/lib/*:$trino/launcher" TrinoMain >"$run/server.log" 2>&1) &
pid=$!
for _ in $(seq 1 300); do
  if ! kill -0 "$pid" 2>/dev/null; then echo "trino exited:" >&2; tail -50 "$run/server.log" >&2; exit 1; fi
  if grep -q "SERVER STARTED" "$run/server.log"; then
    echo "TRINO_URI=http://127.0.0.1:$port"; echo "TRINO_PID=$pid"; echo "TRINO_DIR_RUN=$run"; exit 0
  fi
  sleep 1
done
echo "trino did not start in 300 s:" >&2; tail -50 "$run/server.log" >&2; kill "$pid"; exit 1
