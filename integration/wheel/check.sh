#!/usr/bin/env bash
# The platform wheel (scripts/wheel.sh, `make wheel`) in a fresh venv:
# lakehold.local(dir) must find the catalog inside the wheel, with no
# LAKEHOLD_CATALOG_BIN and no catalog on PATH, create, append, scan, close,
# then reopen the directory and find the rows.
#
# usage: integration/wheel/check.sh LAKEHOLD_VENV   (CATALOG_BIN: a built binary, reused)
# The wheel is installed with --no-deps --no-index; its dependencies
# (pyarrow, numpy, ...) come from LAKEHOLD_VENV's site-packages through a
# .pth file, so nothing is downloaded. Prints "wheel: N passed, M failed, 0 skipped" last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lvenv=$1
work=$(mktemp -d /tmp/interop-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "  FAILED $1"; echo "wheel: 0 passed, 1 failed, 0 skipped ($1)"; exit 1; }

whl=$(CATALOG_BIN=${CATALOG_BIN:?CATALOG_BIN must name a built catalog} PYTHON="$lvenv/bin/python" \
  "$root/scripts/wheel.sh" "$work/dist" 2>"$work/build.err" | tail -1)
[ -f "$whl" ] || { tail -20 "$work/build.err"; fail "wheel build"; }
"$lvenv/bin/python" -m venv "$work/venv" || fail "venv"
"$work/venv/bin/pip" install -q --no-deps --no-index "$whl" >"$work/install.out" 2>&1 ||
  { tail -20 "$work/install.out"; fail "pip install of the wheel"; }
deps=$("$lvenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$deps" >"$site/lakehold-deps.pth" # appended after the venv's own site-packages: its lakehold wins

# No help finding the binary: only the wheel's copy can be found.
env -u LAKEHOLD_CATALOG_BIN PATH=/usr/bin:/bin "$work/venv/bin/python" - "$work/lake" "$site" <<'PY' >"$work/run.out" 2>&1
import shutil, sys
import pyarrow as pa
import lakehold

lake, site = sys.argv[1], sys.argv[2]
assert lakehold.__file__.startswith(site), f"lakehold imported from {lakehold.__file__}, not the wheel"
assert shutil.which("catalog") is None, "a catalog binary is on PATH"
rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]})
with lakehold.local(lake) as cat:
    assert cat.binary.startswith(site), f"ran {cat.binary}, not the wheel's binary"
    cat.create_namespace("db")
    cat.create_table("db.t", rows.schema).append(rows)
    assert cat.load_table("db.t").scan().to_arrow().num_rows == 3
assert not cat.running
with lakehold.local(lake) as cat:
    got = cat.load_table("db.t").scan().to_arrow().sort_by("id")
    assert got.to_pylist() == rows.to_pylist(), got.to_pylist()
print("ok")
PY
rc=$?
[ $rc = 0 ] || { tail -30 "$work/run.out"; fail "lakehold.local from the installed wheel"; }
echo "wheel: 1 passed, 0 failed, 0 skipped"
