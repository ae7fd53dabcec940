#!/usr/bin/env bash
# Checks the Kubernetes deployment offline: lints the Helm chart
# (deploy/helm/lakehold), renders it with each value set in its ci/ and
# validates the objects, and the plain example deploy/kubernetes/lakehold.yaml,
# against the strict Kubernetes schemas of 1.30 (the oldest the chart
# supports: the preStop sleep action) and 1.37, the ServiceMonitor against
# prometheus-operator's CRD, and the rules of scripts/chartcheck/policy.py.
# Then it proves the check bites: each input under deploy/testdata must be
# refused with the finding written beside it. With CATALOG_TEST_DATABASE_URL
# (scripts/test.sh's Postgres) it also runs the rendered pods' containers
# with their exact environment (scripts/chartcheck/smoke.py), the binary
# from CATALOG_BIN or built here.
#
#   scripts/chart-check.sh             install what is missing, then check
#   scripts/chart-check.sh --install   only install (make check starts this early)
#
# Installed once into ~/.cache/lakehold (LAKEHOLD_CACHE), keyed by version:
# helm, built from its Go module (no Debian package; ~5 min cold on 2 busy
# cores), a venv with kubernetes-validate (bundled schemas, pinned in
# scripts/chartcheck/requirements.txt), and the CRD from the
# prometheus-operator Go module.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
HELM_VERSION=v3.22.0
PROM_OPERATOR_VERSION=v0.85.0
KUBE_VERSIONS=(1.30.0 1.37.0)
CACHE=${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}
HELM="$CACHE/helm-$HELM_VERSION/helm"
req="$root/scripts/chartcheck/requirements.txt"
VENV="$CACHE/chartcheck-venv-$(sha256sum "$req" | cut -c1-12)"
mkdir -p "$CACHE"

install_helm() {
  [ -x "$HELM" ] && return
  echo "chart-check: building helm $HELM_VERSION (first time: ~5 min)" >&2
  local tmp; tmp=$(mktemp -d "$CACHE/helm-build.XXXXXX")
  # Outside the repository, so that its go.mod is not consulted.
  (cd "$tmp" && GOFLAGS= GOBIN="$tmp" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2)
  mkdir -p "$(dirname "$HELM")"
  mv "$tmp/helm" "$HELM" # atomic: a concurrent run sees all of it or nothing
  rm -rf "$tmp"
}

install_venv() {
  [ -f "$VENV/.complete" ] && return
  echo "chart-check: installing kubernetes-validate into $VENV" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
  touch "$VENV/.complete"
}

# The ServiceMonitor CRD, from the operator's Go module (sumdb-verified).
crd_file() {
  local dir
  dir=$(cd "$CACHE" && GOFLAGS= go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROM_OPERATOR_VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  echo "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
}

install_helm
install_venv
CRD=$(crd_file)
[ "${1:-}" = --install ] && exit 0

chart="$root/deploy/helm/lakehold"
testdata="$root/deploy/testdata"
kv_args=()
for v in "${KUBE_VERSIONS[@]}"; do kv_args+=(--kube-version "$v"); done
validate() { "$VENV/bin/python" "$root/scripts/chartcheck/check.py" "${kv_args[@]}" --crd "$CRD" "$@"; }
render() { "$HELM" template t "$chart" --namespace lakehold "$@"; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for values in "$chart"/ci/*.yaml; do
  name=$(basename "$values" .yaml)
  "$HELM" lint --strict "$chart" -f "$values" >"$out/lint" 2>&1 || { cat "$out/lint" >&2; exit 1; }
  render -f "$values" >"$out/$name.yaml"
  validate "$out/$name.yaml" || { echo "chart-check: the chart rendered with ci/$name.yaml is invalid" >&2; exit 1; }
done
validate "$root/deploy/kubernetes/lakehold.yaml" || { echo "chart-check: deploy/kubernetes/lakehold.yaml is invalid" >&2; exit 1; }

# The negative cases: each must be refused, with the expected message.
refused_render() { # values-file message
  if render -f "$testdata/$1" >/dev/null 2>"$out/err"; then
    echo "chart-check: rendering with testdata/$1 succeeded; it must fail" >&2; exit 1
  fi
  grep -qF -- "$2" "$out/err" || { echo "chart-check: testdata/$1 failed without '$2':" >&2; cat "$out/err" >&2; exit 1; }
}
refused_objects() { # manifest expect-file
  if validate "$1" >"$out/findings" 2>/dev/null; then
    echo "chart-check: $1 passed validation; it must not" >&2; exit 1
  fi
  while IFS= read -r want; do
    grep -qF -- "$want" "$out/findings" || { echo "chart-check: no finding '$want' for $1; got:" >&2; cat "$out/findings" >&2; exit 1; }
  done <"$2"
}
refused_render missing-database-values.yaml "database.existingSecret is required"
refused_render auth-on-unquoted-values.yaml 'auth.mode "true": want "on" or "none"'
render -f "$testdata/broken-values.yaml" >"$out/broken.yaml"
refused_objects "$out/broken.yaml" "$testdata/broken-values.expect"
refused_objects "$testdata/broken-manifest.yaml" "$testdata/broken-manifest.expect"
# The rendered pods, run: each set on a fresh database of the test Postgres.
smoke() { # label manifest replicas
  local db="chartcheck_$$_$1" url
  url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' \
    "$CATALOG_TEST_DATABASE_URL" "$db")
  "$PSQL" -q "$CATALOG_TEST_DATABASE_URL" -c "CREATE DATABASE $db"
  local rc=0
  "$VENV/bin/python" "$root/scripts/chartcheck/smoke.py" --bin "$bin" --replicas "$3" \
    --secret "lakehold-db/url=$url" --secret "lakehold-key/secret-key=$(head -c 32 /dev/urandom | base64)" "$2" || rc=$?
  "$PSQL" -q "$CATALOG_TEST_DATABASE_URL" -c "DROP DATABASE $db WITH (FORCE)"
  [ "$rc" = 0 ] || { echo "chart-check: the pods of $1 did not come up" >&2; exit 1; }
}
smoked="the rendered pods not run (no CATALOG_TEST_DATABASE_URL; scripts/test.sh sets one)"
if [ -n "${CATALOG_TEST_DATABASE_URL:-}" ]; then
  PSQL=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)
  bin=${CATALOG_BIN:-}
  if [ -z "$bin" ]; then bin="$out/catalog"; (cd "$root" && go build -o "$bin" ./cmd/catalog); fi
  smoke job "$out/default-values.yaml" 3
  # OIDC off: its issuer in ci/ is not reachable from here.
  render -f "$chart/ci/serve-migrates-values.yaml" --set oidc.enabled=false >"$out/serve-migrates-smoke.yaml"
  smoke serve "$out/serve-migrates-smoke.yaml" 3
  smoke plain "$root/deploy/kubernetes/lakehold.yaml" 2
  smoked="the rendered pods ran against Postgres (migration Job then 3 replicas; 3 replicas migrating at once; the plain example)"
elif [ -n "${CATALOG_TEST_REQUIRE_POSTGRES:-}" ]; then
  echo "chart-check: CATALOG_TEST_REQUIRE_POSTGRES is set but CATALOG_TEST_DATABASE_URL is not" >&2; exit 1
fi
echo "chart-check: $smoked" >&2
echo "chart-check: helm $HELM_VERSION lint and $(ls "$chart"/ci/*.yaml | wc -l) value sets valid on Kubernetes ${KUBE_VERSIONS[*]}, the plain example valid, 4 broken inputs refused" >&2
