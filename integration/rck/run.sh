#!/usr/bin/env bash
# Runs the Iceberg REST compatibility kit (CatalogTests + ViewCatalogTests,
# Java client, rck.local=false) against the built catalog. Prints
#   RCK: N passed, M failed, K skipped
# and exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"

LIB=$RCK_LIB
[ -f "$LIB/.complete" ] || bash "$here/../install.sh"

# The kit creates tables and views at locations of its own choosing under
# /tmp (custom locations, a JUnit temp dir), so its warehouse lists /tmp as
# an allowed location; every other client stays inside its warehouse.
start_catalog rck rck_warehouse file:///tmp
trap stop_catalog EXIT
reports=$(mktemp -d /tmp/rck-reports.XXXXXX)
cp_jars=$(ls "$LIB"/*.jar | grep -v -E '/junit-(jupiter|platform)' | tr '\n' ':')
set +e
java -Drck.local=false -Drck.requires-namespace-create=true -Drck.supports-names-with-dot=true \
  -Duri="$CATALOG_URI/" -Dwarehouse=rck_warehouse \
  -jar "$LIB"/launcher/junit-platform-console-standalone-1.14.4.jar execute \
  --class-path "$cp_jars" \
  --select-class org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests \
  --select-class org.apache.iceberg.rest.RESTCompatibilityKitViewCatalogTests \
  --config rck.local=false --details=tree --disable-banner --reports-dir="$reports" >"$reports/out.txt" 2>&1
set -e
python3 "$here/../summarize_junit.py" RCK "$reports" "$here/skips.txt"
