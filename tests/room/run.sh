#!/usr/bin/env bash
# run.sh: the workshop room for real (make test-room; .ci/run runs it after
# make test-compose). As root on Debian, with the compose stage's mechanics:
#
#   1. Debian's docker.io and debootstrap when missing; its own dockerd on its
#      own socket and pid file (stopped by that pid when the run ends), on the
#      data root the compose stage uses, so the images that stage built in the
#      same CI run (the lab image, the stand-ins) are reused
#   2. the stand-ins (tests/compose/standins.sh: quick when they are there)
#   3. tests/room/room_test.py with the hub's venv: scripts/room.sh from this
#      checkout (it builds the participant image), 3 participants through the
#      real login form and REST API, notebooks 00 and 07 in their servers
#      through the proxy, every isolation attack, memory bomb and CPU spin,
#      listening-socket scan, hub killed and restarted, Ctrl-C
#   4. removes the test's containers, volumes and network
#
# Prints one line per check and "room: N passed, M failed"; exit 1 when a
# check failed, 2 when it cannot run (not root, not Debian).
#
# Environment:
#   ROOM_TEST_RUN        dockerd's socket, pid file and exec root (default /run/nightqueue-room-test)
#   ROOM_TEST_DATA_ROOT  dockerd's data root (default /var/lib/docker, as the compose stage)
#   ROOM_TEST_SCRIPT     what runs in step 3 with the hub's venv (default
#                        tests/room/room_test.py; make room-capacity: tests/room/capacity.py)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
PROGRESS_PREFIX=room-test
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
# shellcheck source=tests/lib/dockerd.sh
source "$ROOT/tests/lib/dockerd.sh"
say() { printf 'room-test: %s\n' "$*" >&2; }
die() { say "$*"; exit "${2:-1}"; }

RUN="${ROOM_TEST_RUN:-/run/nightqueue-room-test}"
DATA_ROOT="${ROOM_TEST_DATA_ROOT:-/var/lib/docker}"
LOGS="$ROOT/tests/artifacts/room"
export DOCKER_HOST="unix://$RUN/docker.sock"
export DOCKER_CONFIG="$ROOT/.cache/docker-config"
unset ROOM_PORT ROOM_CODE ROOM_ADMIN_CODE ROOM_STATE ROOM_TLS_CERT ROOM_TLS_KEY ROOM_SKIP_BUILD

[[ "$(id -u)" == 0 ]] || die "needs root (it installs docker.io and starts dockerd); CI runs it as root" 2
command -v apt-get >/dev/null || die "needs Debian/Ubuntu (apt-get) to install docker.io" 2
mkdir -p "$LOGS" "$RUN"
: >"$LOGS/room.log"

cleanup() {
  local status=$?
  trap '' INT TERM HUP
  if dockerd_running; then
    local left
    left="$(docker ps -aq --filter "name=^nightqueue-room-" 2>/dev/null || true)"
    # shellcheck disable=SC2086
    [[ -z "$left" ]] || docker rm -f $left >/dev/null 2>&1 || true
    for v in alice bob carol; do docker volume rm -f "nightqueue-room-$v" >/dev/null 2>&1 || true; done
    docker network rm nightqueue-room-test >/dev/null 2>&1 || true
    dockerd_stop
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

step "1/3 Docker engine (Debian docker.io), debootstrap"
dockerd_packages "$LOGS"
dockerd_start "$RUN" "$DATA_ROOT" "$LOGS" ROOM_TEST_DATA_ROOT
say "dockerd $(docker version -f '{{.Server.Version}}'), data root $DATA_ROOT, cgroups v$(docker info -f '{{.CgroupVersion}}')"
# Leftovers of an interrupted run.
left="$(docker ps -aq --filter "name=^nightqueue-room-" || true)"
# shellcheck disable=SC2086
[[ -z "$left" ]] || docker rm -f $left >/dev/null
for v in alice bob carol; do docker volume rm -f "nightqueue-room-$v" >/dev/null 2>&1 || true; done

step "2/3 stand-ins (tests/compose/standins.sh)"
"$ROOT/tests/compose/standins.sh"

step "3/3 the room (tests/room/room_test.py; room.sh's log: $LOGS/room.log)"
# The hub's venv, pinned, as room.sh makes it: the test drives the hub with its
# requests and tornado.
VENV="$ROOT/.cache/room/venv"
want="$(sha256sum room/requirements.txt | cut -c1-16)"
if [[ "$(cat "$VENV/.room-key" 2>/dev/null)" != "$want" ]]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  alive "pip install -r room/requirements.txt" "$VENV/bin/pip" install -q -r room/requirements.txt
  echo "$want" >"$VENV/.room-key"
fi
"$VENV/bin/python" "${ROOM_TEST_SCRIPT:-tests/room/room_test.py}"
