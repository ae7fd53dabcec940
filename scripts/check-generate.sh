#!/usr/bin/env bash
# Fails when generated code differs from what `make generate` produces.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp openapi/openapi.gen.go "$tmp/before.go"
(cd openapi && go generate ./...)
if ! diff -q "$tmp/before.go" openapi/openapi.gen.go >/dev/null; then
  echo "generated code is stale: run 'make generate' and commit openapi/openapi.gen.go" >&2
  diff -u "$tmp/before.go" openapi/openapi.gen.go | head -40 >&2
  exit 1
fi
echo "generated code is up to date"
