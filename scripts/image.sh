#!/usr/bin/env bash
# Builds the catalog image offline (Dockerfile: FROM scratch, no base image
# to pull) and, with --check, runs it read-only as its non-root user and
# asks /readyz from outside the container.
#
#   scripts/image.sh [--check] [--tag NAME]     (default tag: lakehold)
#
# Uses podman when installed, else docker (a running daemon). The context
# is staged in a temporary directory: a static binary (CGO_ENABLED=0,
# -trimpath; the VCS revision stamped when built from a git clone), the host's CA bundle
# and zoneinfo database, and passwd/group files for uid 65532.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tag=lakehold check=
while [ $# -gt 0 ]; do
  case $1 in
    --check) check=1 ;;
    --tag) tag=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if command -v podman >/dev/null; then tool=podman
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then tool=docker
else echo "image.sh: neither podman nor a running docker daemon is available" >&2; exit 1
fi
ca=/etc/ssl/certs/ca-certificates.crt zi=/usr/share/zoneinfo
[ -f "$ca" ] || { echo "image.sh: no CA bundle at $ca (Debian: apt-get install ca-certificates)" >&2; exit 1; }
[ -d "$zi" ] || { echo "image.sh: no zoneinfo at $zi (Debian: apt-get install tzdata)" >&2; exit 1; }

ctx=$(mktemp -d /tmp/lakehold-image.XXXXXX)
cid=
cleanup() {
  [ -n "$cid" ] && $tool rm -f "$cid" >/dev/null 2>&1 && $tool volume rm -f "lakehold-check-$$" >/dev/null 2>&1
  rm -rf "$ctx"
}
trap cleanup EXIT
vcs=-buildvcs=false
git -C "$root" rev-parse HEAD >/dev/null 2>&1 && vcs=-buildvcs=true # `catalog version` shows the revision
(cd "$root" && GOFLAGS= CGO_ENABLED=0 go build "$vcs" -trimpath -ldflags "-s -w" -o "$ctx/catalog" ./cmd/catalog)
cp "$ca" "$ctx/ca-certificates.crt"
cp -r "$zi" "$ctx/zoneinfo"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n' >"$ctx/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$ctx/group"
mkdir -p "$ctx/data/tmp"
cp "$root/Dockerfile" "$ctx/Dockerfile"
$tool build --pull=never -t "$tag" "$ctx" >&2
echo "image.sh: built $tag with $tool ($(du -sh "$ctx/catalog" | cut -f1) binary)" >&2
[ -n "$check" ] || exit 0

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cid=$($tool run -d --read-only --user 65532:65532 --cap-drop ALL --security-opt no-new-privileges \
  -p "127.0.0.1:$port:8181" -e CATALOG_INSECURE_NO_AUTH=1 -e CATALOG_ALLOWED_HOSTS="127.0.0.1:$port" \
  -v "lakehold-check-$$:/data" "$tag")
for _ in $(seq 1 60); do
  if code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz") && [ "$code" = 200 ]; then
    echo "image.sh: /readyz answered 200 from outside the container (port $port)"
    $tool exec "$cid" /usr/local/bin/catalog version
    uid=$($tool inspect -f '{{.Config.User}}' "$cid")
    ro=$($tool inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$cid")
    echo "image.sh: user $uid, read-only root file system: $ro"
    exit 0
  fi
  sleep 1
done
echo "image.sh: /readyz did not answer 200 within 60 s; container log:" >&2
$tool logs "$cid" >&2 || true
exit 1
