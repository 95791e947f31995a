#!/usr/bin/env bash
# compose-plugin.sh: the Docker Compose v2 CLI plugin, built from source once
# and cached like the repository's other tools.
#
# Usage: tests/compose/compose-plugin.sh DOCKER_CONFIG_DIR
#
# Debian ships only compose v1 (1.29, no `configs: content:`), and
# `go install github.com/docker/compose/v2/cmd@VERSION` refuses (the module's
# go.mod has exclude directives), so this downloads the module through the Go
# module proxy, builds ./cmd inside a writable copy of it, keeps the binary in
# ${COMPOSE_CACHE:-.cache/compose}/<version>-<go version>-<os>-<arch>/docker-compose and links it
# into DOCKER_CONFIG_DIR/cli-plugins/, where `docker compose` finds it when
# DOCKER_CONFIG=DOCKER_CONFIG_DIR (nothing is written into ~/.docker).
# Cold: about 13 minutes on two busy cores; cached: instant.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VERSION="${COMPOSE_VERSION:-v2.40.3}"
MODULE=github.com/docker/compose/v2
PROGRESS_PREFIX=compose-plugin
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
say() { printf 'compose-plugin: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ $# -eq 1 ]] || { echo "usage: $0 DOCKER_CONFIG_DIR" >&2; exit 2; }
config="$1"
command -v go >/dev/null || die "go is not on PATH; install Go 1.26+ and rerun"

cache="${COMPOSE_CACHE:-$ROOT/.cache/compose}/$VERSION-$(go env GOVERSION GOOS GOARCH | paste -sd-)"
bin="$cache/docker-compose"
if [[ ! -x "$bin" ]]; then
  say "building docker compose $VERSION from $MODULE into $cache (about 13 min cold; cached after)"
  dir="$(go mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$dir" && -d "$dir" ]] || die "go mod download $MODULE@$VERSION gave no module directory"
  work="$cache.src"
  rm -rf "$work" "$cache.tmp"
  mkdir -p "$cache.tmp"
  cp -r "$dir" "$work"
  chmod -R u+w "$work"
  (cd "$work" && CGO_ENABLED=0 alive "compiling docker compose $VERSION" \
    go build -trimpath -ldflags "-s -w -X $MODULE/internal.Version=$VERSION" -o "$cache.tmp/docker-compose" ./cmd)
  rm -rf "$work" "$cache"
  mv "$cache.tmp" "$cache"
fi
mkdir -p "$config/cli-plugins"
ln -sfn "$bin" "$config/cli-plugins/docker-compose"
say "docker compose $VERSION: $bin"
