#!/usr/bin/env bash
# room-server.sh: what a participant's container runs in the workshop room
# (room/Dockerfile's CMD; DockerSpawner starts it with the JUPYTERHUB_*
# environment). As the image's user:
#   1. DynamoDB Local and ElasticMQ on 127.0.0.1 inside this container
#      (queuekit servers, as on a laptop): no other container can reach them;
#      this script runs again under `queuekit servers with`, which stops them
#      when it ends (docker stop's TERM reaches queuekit, PID 1, first and is
#      passed on to this script)
#   2. seeds the sample nights, as make workshop does
#   3. the participant's copies of the notebooks in the volume (workspace/)
#   4. jupyterhub-singleuser (JupyterLab) on the address DockerSpawner gives,
#      which only accepts the hub's tokens for this participant
# TERM (docker stop) stops JupyterLab and the servers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PROGRESS_PREFIX=room-server
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
# The room's network is internal: no route out, and a name lookup takes 20 s
# to fail. GoNB's goimports runs the go command before every cell, so the go
# command answers from the image's module cache or fails at once; it never
# waits for the module proxy or the checksum database (env.sh keeps a GOPROXY
# that already starts with the cache).
GOPROXY="file://$(go env GOMODCACHE)/cache/download,off" GOSUMDB=off
export GOPROXY GOSUMDB
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
say() { printf 'room-server: %s\n' "$*" >&2; }

if [[ "${ROOM_SERVERS_UP:-}" != 1 ]]; then
  step "1/4 DynamoDB Local and ElasticMQ on 127.0.0.1 in this container"
  unset AWS_ENDPOINT_URL_DYNAMODB AWS_ENDPOINT_URL_SQS
  ROOM_SERVERS_UP=1 exec "$ROOT/.cache/bin/queuekit" servers with -- "$0" "$@"
fi

lab_pid=""
cleanup() {
  local status=$?
  trap '' INT TERM HUP
  if [[ -n "$lab_pid" ]]; then
    kill -TERM "$lab_pid" 2>/dev/null || true
    wait "$lab_pid" 2>/dev/null || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

step "2/4 seeding the sample nights"
go run ./queuekit/cmd/queuekit seed --sample >&2
step "3/4 your notebooks in workspace/"
go run ./queuekit/cmd/queuekit workspace prepare
step "4/4 jupyterhub-singleuser"
jupyterhub-singleuser --ServerApp.root_dir="$ROOT/workspace" &
lab_pid=$!
wait "$lab_pid"
