#!/usr/bin/env bash
# Fails when generated code differs from what `make generate` produces.
set -euo pipefail
cd "$(dirname "$0")/.."
generated=(openapi/openapi.gen.go openapi/scantasks/scantasks.gen.go)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${generated[@]}"; do
  mkdir -p "$tmp/$(dirname "$f")" && cp "$f" "$tmp/$f"
done
(cd openapi && go generate ./...)
stale=0
for f in "${generated[@]}"; do
  if ! diff -q "$tmp/$f" "$f" >/dev/null; then
    echo "generated code is stale: run 'make generate' and commit $f" >&2
    diff -u "$tmp/$f" "$f" | head -40 >&2
    stale=1
  fi
done
[ "$stale" = 0 ] || exit 1
echo "generated code is up to date"
