#!/usr/bin/env bash
# Builds a platform wheel of the Python library (clients/python) that ships
# the catalog binary at lakehold/_bin/catalog, so `pip install` of it is
# enough for lakehold.local(path). Host platform only.
#
# usage: scripts/wheel.sh [OUT_DIR]   (default: dist/)
# CATALOG_BIN=path reuses a built binary instead of building one (the
# interop tier does); PYTHON picks the interpreter whose pip builds the pure
# wheel (default: python3; pip fetches hatchling, the build backend, from
# its cache or the index). Prints the wheel's path last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
work=$(mktemp -d /tmp/lakehold-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT

bin=${CATALOG_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/catalog
  # Static (the SQLite driver is pure Go), stripped, no build paths.
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$bin" ./cmd/catalog)
fi
[ -x "$bin" ] || { echo "wheel: $bin is not an executable catalog binary" >&2; exit 1; }

"$py" -m pip wheel -q --no-deps "$root/clients/python" -w "$work/pure" >&2
pure=$(ls "$work"/pure/lakehold-*-py3-none-any.whl)
"$py" "$root/scripts/wheel_inject.py" "$pure" "$bin" "$out"
