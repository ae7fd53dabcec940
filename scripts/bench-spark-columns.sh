#!/usr/bin/env bash
# A column refresh on Spark local[2] (not part of `make check`): Spark's own
# copy-on-write UPDATE of one column of a v3 table against
# lakehold.spark.update_columns (v4 column files), on the same rows, printed
# side by side. Default 10M rows in 100 files; arguments go to
# scripts/bench-spark-columns/bench.py (--rows N --files N). Uses the
# interop clients' venv (integration/install.sh: PySpark 4.1, the Iceberg
# runtime jar) with the working tree's library installed into it, and a
# catalog on SQLite with a file:// warehouse in a temp dir.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/integration/lib.sh" # CACHE, PY_VENV, SPARK_JAR, start_catalog
bash "$root/integration/install.sh" >&2
"$PY_VENV/bin/pip" install -q --no-deps --force-reinstall "$root/clients/python" >&2

work=$(mktemp -d /tmp/bench-spark-columns.XXXXXX)
catalog_dir=
cleanup() {
  set +e
  stop_catalog
  rm -rf "$work" "$catalog_dir"
}
trap cleanup EXIT
if [ -z "${CATALOG_BIN:-}" ]; then
  export CATALOG_BIN="$work/catalog"
  (cd "$root" && go build -o "$CATALOG_BIN" ./cmd/catalog)
fi
CATALOG_TEST_DATABASE_URL='' start_catalog bench-spark lake
catalog_dir=${WAREHOUSE_DIR%/warehouse}
echo "bench-spark-columns: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run" >&2
"$PY_VENV/bin/python" "$root/scripts/bench-spark-columns/bench.py" --uri "$CATALOG_URI" --warehouse lake \
  --spark-jars "$SPARK_JAR" "$@"
