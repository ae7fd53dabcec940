#!/usr/bin/env bash
# CPU per operation of two revisions of this catalog, side by side:
#   scripts/bench-ab.sh OLD [NEW]     (NEW defaults to the work tree)
# Builds both revisions' cmd/catalog (OLD from a throwaway git worktree),
# starts each on its own store (embedded SQLite; Postgres when
# CATALOG_TEST_DATABASE_URL is set), and runs cmd/loadgen's CPU phase
# against both in interleaved rounds: the utime+stime of each catalog's
# process per operation, and OLD/NEW. Postgres's own CPU is not counted:
# this compares the catalog's code, not the database. Used to check that a
# refactor costs no CPU (issue 48: "bench-peers no worse"); the peer
# comparison with the Java fixture is `make bench-peers`.
# Knobs: BENCH_AB_OPS (SCENARIO=N,... per round), BENCH_AB_ROUNDS (5),
# BENCH_AB_SNAPSHOTS (2000, the big table's snapshots).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OLD-REV [NEW-REV]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/integration/lib.sh" # free_port, start_catalog
OPS=${BENCH_AB_OPS:-load-small=5000,load-big=300,commit-distinct=1000,create=600,list=5000}
ROUNDS=${BENCH_AB_ROUNDS:-5}
SNAPSHOTS=${BENCH_AB_SNAPSHOTS:-2000}

work=$(mktemp -d /tmp/bench-ab.XXXXXX)
pids=()
dirs=()
trees=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  for t in "${trees[@]}"; do git -C "$root" worktree remove --force "$t"; done
  rm -rf "$work" "${dirs[@]}"
}
trap cleanup EXIT

# build REV OUT: REV's catalog binary at OUT ("" is the work tree).
build() {
  local src=$root
  if [ -n "$1" ]; then
    src="$work/src-$(basename "$2")"
    git -C "$root" worktree add --detach "$src" "$1" >/dev/null 2>&1
    trees+=("$src")
  fi
  (cd "$src" && go build -o "$2" ./cmd/catalog)
}
build "$1" "$work/old"
build "${2:-}" "$work/new"
(cd "$root" && go build -o "$work/loadgen" ./cmd/loadgen)

targets=()
for side in old new; do
  CATALOG_BIN="$work/$side" start_catalog "ab-$side" bench
  pids+=("$CATALOG_PID")
  dirs+=("${WAREHOUSE_DIR%/warehouse}")
  targets+=(-target "$side=$CATALOG_URI,warehouse=bench,cpu=$CATALOG_PID")
done
store=sqlite
[ -n "${CATALOG_TEST_DATABASE_URL:-}" ] && store=postgres
echo "bench-ab: old=$1 new=${2:-work tree}, store=$store, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$work/loadgen" "${targets[@]}" -ref old -rate=false -snapshots "$SNAPSHOTS" \
  -cpu-ops "$OPS" -cpu-rounds "$ROUNDS" -cpu-clients 4
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
