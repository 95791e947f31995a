#!/usr/bin/env bash
# standins.sh: local STAND-INS for the three images docker-compose.yml names,
# for a machine that cannot pull from Docker Hub (CI here). Each is labelled
# nightqueue.stand-in=<the image it stands in for> and
# nightqueue.stand-in.differs=<what differs>; tests/compose/standins/*.Dockerfile
# say the same at length. An image of that name that is not a stand-in (the
# real one, pulled) is left alone.
#
# Usage: tests/compose/standins.sh        (DOCKER_HOST must reach a daemon)
#
#   nightqueue-standin/bookworm-minbase:local
#       `debootstrap --variant=minbase bookworm` from the Debian mirror apt
#       uses here, cached as $COMPOSE_CACHE/rootfs/bookworm-minbase-<arch>.tar.gz
#       (default .cache/compose)
#       (minutes once; seconds to import after), then `docker import`
#   golang:1.26.8-bookworm                 base + the official image's packages + this machine's Go
#   amazon/dynamodb-local:3.3.1            base + JRE + the official DynamoDBLocal.jar 3.3.1 (queuekit servers install --dynamodb)
#   softwaremill/elasticmq-native:1.7.1    base + JRE + the ElasticMQ 1.7.1 jars (queuekit servers install --elasticmq) + busybox + tini
#
# Needs root for debootstrap (apt-get install debootstrap), go and Java (the two
# installs run queuekit servers install; javac compiles the loopback launcher).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/compose/standins"
# COMPOSE_CACHE: where the debootstrap tarball and build contexts live (default
# .cache/compose in the checkout; .ci/run sets a machine-wide one so a fresh
# clone reuses the tarball, and with it the stand-in images dockerd keeps).
CACHE="${COMPOSE_CACHE:-$ROOT/.cache/compose}"
PROGRESS_PREFIX=standins
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
say() { printf 'standins: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

BASE=nightqueue-standin/bookworm-minbase:local
GO_IMAGE="golang:$(go env GOVERSION | sed 's/^go//')-bookworm"

# mirror prints the Debian mirror apt uses on this machine.
mirror() {
  local m
  m="$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list |
    grep -oE 'https?://[^ ]*debian/?' | grep -v security | head -n 1 || true)"
  echo "${m:-http://deb.debian.org/debian}"
}

# logged LOG CMD...: CMD with its output in LOG (alive's lines stay on stderr).
logged() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1
}

# is_real IMAGE succeeds when IMAGE exists and is not one of our stand-ins.
is_real() {
  local label
  label="$(docker image inspect -f '{{index .Config.Labels "nightqueue.stand-in"}}' "$1" 2>/dev/null)" || return 1
  [[ -z "$label" || "$label" == "<no value>" ]]
}

base_image() {
  local arch tarball tmp
  arch="$(dpkg --print-architecture)"
  tarball="$CACHE/rootfs/bookworm-minbase-$arch.tar.gz"
  if [[ ! -f "$tarball" ]]; then
    command -v debootstrap >/dev/null || die "debootstrap is missing (Debian: apt-get install debootstrap)"
    tmp="$CACHE/rootfs/bookworm.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    say "debootstrap --variant=minbase bookworm from $(mirror) (minutes, once; cached as $tarball)"
    alive "debootstrapping bookworm (log $tmp.log)" logged "$tmp.log" debootstrap --variant=minbase bookworm "$tmp" "$(mirror)" ||
      { tail -n 20 "$tmp.log" >&2; die "debootstrap failed (log above: $tmp.log)"; }
    tar -C "$tmp" --numeric-owner -cf - . | gzip -1 >"$tarball.tmp"
    mv "$tarball.tmp" "$tarball"
    rm -rf "$tmp" "$tmp.log"
  fi
  if ! docker image inspect "$BASE" >/dev/null 2>&1 ||
    [[ "$(docker image inspect -f '{{index .Config.Labels "nightqueue.rootfs"}}' "$BASE")" != "$(stat -c %Y-%s "$tarball")" ]]; then
    say "importing $tarball as $BASE"
    docker import --change "LABEL nightqueue.stand-in=debian:bookworm nightqueue.rootfs=$(stat -c %Y-%s "$tarball")" \
      --change 'LABEL nightqueue.stand-in.differs="debootstrap --variant=minbase bookworm from the Debian mirror, not the debian:bookworm image"' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' "$tarball" "$BASE" >/dev/null
  fi
}

# build IMAGE DOCKERFILE CONTEXT [ARGS...]: docker build, unless IMAGE is the
# real one or a stand-in built from the same inputs (the label
# nightqueue.stand-in.key: a hash of the Dockerfile, the build arguments, the
# context's file names and sizes (jar names carry their versions; the Go
# toolchain's is a build argument) and its small files' contents), so a
# second run sends no context.
build() {
  local image="$1" file="$2" ctx="$3" key
  shift 3
  if is_real "$image"; then
    say "$image is present and is not a stand-in: using it"
    return
  fi
  key="$({
    cat "$HERE/$file"
    printf '%s\n' "$@"
    find "$ctx" -type f -printf '%P %s\n' | sort
    find "$ctx" -type f -size -1M -print0 | sort -z | xargs -0 -r cat
  } | sha256sum | cut -c1-16)"
  if [[ "$(docker image inspect -f '{{index .Config.Labels "nightqueue.stand-in.key"}}' "$image" 2>/dev/null)" == "$key" ]]; then
    say "stand-in $image is up to date"
    return
  fi
  say "building the stand-in $image"
  alive "building $image" docker build -q -t "$image" --label "nightqueue.stand-in.key=$key" \
    -f "$HERE/$file" "$@" "$ctx" >/dev/null ||
    die "docker build of the stand-in $image failed (rerun: docker build -f $HERE/$file $ctx)"
}

golang() {
  local ctx="$CACHE/ctx/golang" goroot
  goroot="$(go env GOROOT)"
  rm -rf "$ctx"
  mkdir -p "$ctx/sources" "$ctx/ca"
  cp "$HERE/debian.sources" "$ctx/sources/"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/ca/" 2>/dev/null || true
  # Hard links when the toolchain is on the same file system: no 270 MB copy.
  cp -al "$goroot" "$ctx/go" 2>/dev/null || cp -a "$goroot" "$ctx/go"
  build "$GO_IMAGE" golang.Dockerfile "$ctx" --build-arg "GO_VERSION=$(go env GOVERSION | sed 's/^go//')"
  rm -rf "$ctx"
}

dynamodb() {
  local ctx="$CACHE/ctx/dynamodb" dir
  (cd "$ROOT" && go run ./queuekit/cmd/queuekit servers install --dynamodb) >&2
  dir="${DYNAMODB_LOCAL_DIR:-$ROOT/.cache/dynamodb-local}/3.3.1"
  [[ -f "$dir/DynamoDBLocal.jar" ]] || die "$dir/DynamoDBLocal.jar is missing after queuekit servers install --dynamodb"
  rm -rf "$ctx"
  mkdir -p "$ctx/dynamodb"
  cp -a "$dir/DynamoDBLocal.jar" "$dir/DynamoDBLocal_lib" "$ctx/dynamodb/"
  build amazon/dynamodb-local:3.3.1 dynamodb-local.Dockerfile "$ctx"
  rm -rf "$ctx"
}

elasticmq() {
  local ctx="$CACHE/ctx/elasticmq" dir
  (cd "$ROOT" && go run ./queuekit/cmd/queuekit servers install --elasticmq) >&2
  dir="${ELASTICMQ_DIR:-$ROOT/.cache/elasticmq}/1.7.1"
  [[ -d "$dir/lib" ]] || die "$dir/lib is missing after queuekit servers install --elasticmq"
  rm -rf "$ctx"
  mkdir -p "$ctx/elasticmq"
  cp -a "$dir/lib" "$ctx/elasticmq/"
  cp "$HERE/elasticmq-native-server" "$ctx/elasticmq/"
  # The real image's /opt/elasticmq.conf (server/docker/elasticmq.conf at v1.7.1).
  echo 'include classpath("application.conf")' >"$ctx/elasticmq/elasticmq.conf"
  build softwaremill/elasticmq-native:1.7.1 elasticmq-native.Dockerfile "$ctx"
  rm -rf "$ctx"
}

docker info >/dev/null 2>&1 || die "no Docker daemon at ${DOCKER_HOST:-the default socket}"
step "stand-in base image"
base_image
step "stand-in $GO_IMAGE"
golang
step "stand-in amazon/dynamodb-local:3.3.1"
dynamodb
step "stand-in softwaremill/elasticmq-native:1.7.1"
elasticmq
step "stand-ins ready"
for image in "$BASE" "$GO_IMAGE" amazon/dynamodb-local:3.3.1 softwaremill/elasticmq-native:1.7.1; do
  docker image inspect -f "  $image  {{.Size}} bytes  stand-in: {{index .Config.Labels \"nightqueue.stand-in.differs\"}}" "$image" >&2
done
