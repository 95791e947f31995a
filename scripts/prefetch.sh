#!/usr/bin/env bash
# prefetch.sh: fill every cache the workshop needs, so that a laptop or a room
# with no network (venue Wi-Fi, a plane) starts the workshop and runs its
# notebooks. Run it at home, online: `make prefetch`. Then `make workshop`
# needs no network (tests/offline/run.sh, `make test-offline`, checks it with
# the network cut).
#
# Steps, one line each with what was fetched and how big it is:
#   1. scripts/setup.sh in full (the venv, gonb, goimports and gopls, the
#      kernelspec, the echarts asset through npm, the Go build cache warm)
#   2. `queuekit servers install`: DynamoDB Local's and ElasticMQ's jars into .cache/
#   3. `go mod download all` for the workshop module and tools/go.mod: every
#      module of both graphs, test dependencies included (a kernel's goimports
#      lists the whole graph, and the workshop's go.sum names them), with their
#      checksum database lookups, into Go's module cache
#   4. the Python wheels of requirements.txt into .cache/wheels, marked
#      complete, so scripts/setup.sh installs a new venv from there with
#      --no-index (no PyPI)
#   5. npm: nothing more (step 1 installed echarts into tools/echarts/node_modules;
#      setup needs npm only when that is missing); the line says what is there
#   6. the Go build cache: what step 1 warmed for the kernel, plus the queuekit
#      command (`go run` by workshop.sh's seeding and the server scripts)
#
# Needs the network and what scripts/setup.sh needs. Quick when done (each step
# skips what is there). Writes nothing in $HOME except Go's caches.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
WHEELS="$ROOT/.cache/wheels"
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$ROOT/.cache/pip}"
export npm_config_cache="${npm_config_cache:-$ROOT/.cache/npm}"

say() { printf 'prefetch: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
# size PATH...: the disk use of the paths that exist, e.g. "312 MB".
size() {
  local kb
  kb="$(du -skc "$@" 2>/dev/null | tail -n1 | cut -f1)"
  if ((kb >= 10 * 1024 * 1024)); then
    printf '%d GB' $((kb / 1024 / 1024))
  else
    printf '%d MB' $((kb / 1024))
  fi
}
step_line() { say "$1/6 $2 ($((SECONDS - T0)) s)"; T0=$SECONDS; }

cd "$ROOT"
# The module cache first (scripts/env.sh), then the network: what is cached
# already is not fetched again.
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
T0=$SECONDS

scripts/setup.sh
step_line 1 "setup: .venv $(size "$VENV"), tools built in .cache/tools $(size "$ROOT/.cache/tools")"

go run ./queuekit/cmd/queuekit servers install --dynamodb --elasticmq >&2 ||
  die "queuekit servers install failed (above)"
step_line 2 "servers: DynamoDB Local $(size "$ROOT/.cache/dynamodb-local"), ElasticMQ $(size "$ROOT/.cache/elasticmq") in .cache/"

# go mod download -json prints one object per module, with its Zip's path; the
# zips' total is what the modules take in the cache (extracted: about 3x).
# It runs on a copy of go.mod and go.sum: `go mod download all` adds the zips'
# checksums to go.sum, and the checkout's go.sum must not change (git status
# stays clean, and setup's tools stamp hashes tools/go.sum).
zips=()
modtmp="$(mktemp -d)"
trap 'rm -rf "$modtmp"' EXIT
for mod in "$ROOT" "$ROOT/tools"; do
  rm -f "$modtmp"/go.*
  cp "$mod/go.mod" "$mod/go.sum" "$modtmp/"
  out="$(cd "$modtmp" && go mod download -json all)" || {
    printf '%s\n' "$out" | grep '"Error"' >&2 || true
    die "go mod download all failed in $mod (above)"
  }
  mapfile -t -O "${#zips[@]}" zips < <(sed -n 's/^\t"Zip": "\(.*\)",$/\1/p' <<<"$out")
done
mapfile -t zips < <(printf '%s\n' "${zips[@]}" | sort -u)
# sum.golang.org's answers for them (go verifies a module go.sum does not name)
step_line 3 "Go modules: ${#zips[@]} modules (workshop and tools/go.mod, test dependencies included), $(size "${zips[@]}") of zips in $(go env GOMODCACHE), checksum database answers $(size "$(go env GOMODCACHE)/cache/download/sumdb")"

want="$(sha256sum "$ROOT/requirements.txt" | cut -c1-16)-$("$VENV/bin/python" -c 'import sys, sysconfig; print(sys.implementation.cache_tag + "-" + sysconfig.get_platform())')"
if [[ "$(cat "$WHEELS/.complete" 2>/dev/null)" != "$want" ]]; then
  rm -f "$WHEELS/.complete"
  "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$ROOT/requirements.txt" -d "$WHEELS" >&2 ||
    die "pip download -r requirements.txt failed (above)"
  printf '%s' "$want" >"$WHEELS/.complete"
fi
step_line 4 "Python wheels: $(find "$WHEELS" -name '*.whl' | wc -l) wheels, $(size "$WHEELS") in .cache/wheels (setup.sh installs from there with --no-index)"

ec="$ROOT/tools/echarts/node_modules/echarts"
[[ -f "$ec/dist/echarts.min.js" ]] || die "tools/echarts/node_modules has no echarts after setup; rerun scripts/setup.sh"
step_line 5 "npm: echarts $(sed -n 's/^ *"version": "\([^"]*\)".*/\1/p' "$ec/package.json" | head -n1) in tools/echarts/node_modules $(size "$ROOT/tools/echarts/node_modules") (npm cache .cache/npm $(size "$npm_config_cache")); setup needs no npm now"

go build -o /dev/null ./queuekit/cmd/queuekit || die "go build ./queuekit/cmd/queuekit failed (above)"
step_line 6 "Go build cache: the notebooks' packages (setup step 6) and the queuekit command, $(go env GOCACHE) $(size "$(go env GOCACHE)")"
say "done: everything the workshop needs is cached; make workshop runs with no network (check: sudo make test-offline)"
