#!/usr/bin/env bash
# Fetches the Iceberg Java REST fixture's jars (RESTCatalogServer, JDBC on
# SQLite) once into ~/.cache/lakehold/rest-fixture-1.11.0 and prints that
# directory. 1.11.0 is the newest release whose test-fixtures jar the
# registry serves (as for the compatibility kit in integration/rck). Used by
# scripts/bench-peers.sh and by the import tests of the Go tier.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lib="${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}/rest-fixture-1.11.0"
if [ ! -f "$lib/.complete" ]; then
  mkdir -p "$lib"
  mvn -q -f "$root/scripts/bench-peers/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$lib" >&2
  touch "$lib/.complete"
fi
echo "$lib"
