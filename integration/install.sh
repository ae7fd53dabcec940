#!/usr/bin/env bash
# Installs the interop tier's clients into $LAKEHOLD_CACHE (default
# ~/.cache/lakehold), each once, keyed by its pins: Keycloak (for the Go
# tier's sign-in tests too), the Python clients'
# virtualenv (integration/python/requirements.txt), the lakehold library's
# (its dependencies; run.sh reinstalls the library itself), the Spark
# runtime, Comet's jars, Trino 483 and the REST compatibility kit. Safe to
# run twice at once: the second waits for the first (flock), then finds
# everything in place. scripts/check.sh runs it in the background while the
# Go tier runs, so that a fresh machine downloads behind the compiles;
# integration/run.sh runs it again first. Exits non-zero when an install
# fails, removing what it left half-installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
exec 9>"$CACHE/install.lock"
flock 9

# Keycloak first: the Go tier starts it (scripts/keycloak-start.sh, which
# waits for this fetch).
bash "$root/scripts/keycloak-start.sh" --fetch

# Virtualenvs are built in place (one cannot be moved); a failed install
# is removed.
if [ ! -x "$PY_VENV/bin/pytest" ]; then
  rm -rf "$PY_VENV"
  python3 -m venv "$PY_VENV" && "$PY_VENV/bin/pip" install -q -r "$here/python/requirements.txt" ||
    { rm -rf "$PY_VENV"; echo "install: pip install of the Python clients failed" >&2; exit 1; }
fi
if [ ! -x "$LAKEHOLD_VENV/bin/pytest" ]; then
  rm -rf "$LAKEHOLD_VENV"
  python3 -m venv "$LAKEHOLD_VENV" &&
    "$LAKEHOLD_VENV/bin/pip" install -q -c "$root/clients/python/constraints.txt" "$root/clients/python[test]" "pyiceberg==0.12.0" ||
    { rm -rf "$LAKEHOLD_VENV"; echo "install: pip install of the lakehold library failed" >&2; exit 1; }
fi
if [ ! -f "$SPARK_JAR" ]; then
  mvn -q dependency:copy -Dartifact=org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0 \
    -DoutputDirectory="$CACHE/spark-jars" >&2 || { echo "install: cannot fetch the Spark runtime" >&2; exit 1; }
fi
if [ ! -f "$SPARK_AWS_JAR" ]; then
  mvn -q dependency:copy -Dartifact=org.apache.iceberg:iceberg-aws-bundle:1.12.0 \
    -DoutputDirectory="$CACHE/spark-jars" >&2 || { echo "install: cannot fetch the AWS bundle" >&2; exit 1; }
fi
for a in "${COMET_ARTIFACTS[@]}"; do
  IFS=: read -r _ art ver <<<"$a"
  [ -f "$COMET_DIR/$art-$ver.jar" ] || mvn -q dependency:copy -Dartifact="$a" -DoutputDirectory="$COMET_DIR" >&2 ||
    { echo "install: cannot fetch $a" >&2; exit 1; }
done
bash "$here/trino/assemble.sh" >/dev/null || { echo "install: cannot assemble Trino 483" >&2; exit 1; }
if [ ! -f "$RCK_LIB/.complete" ]; then
  mvn -q -f "$here/rck/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$RCK_LIB" >&2
  mvn -q dependency:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:1.14.4 -DoutputDirectory="$RCK_LIB/launcher" >&2
  touch "$RCK_LIB/.complete"
fi
