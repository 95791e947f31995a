#!/usr/bin/env bash
# workshop.sh: the one command that starts the workshop (make workshop).
#
# Usage: scripts/workshop.sh
#
#   1. scripts/setup.sh (venv, GoNB kernel, echarts asset, warm build cache; quick when done)
#   2. DynamoDB Local via scripts/dynamodb-local.sh start, unless AWS_ENDPOINT_URL_DYNAMODB
#      is already set (docker-compose sets it to its dynamodb service)
#   3. seeds the sample nights: go run ./queuekit/cmd/queuekit seed --sample
#   4. JupyterLab on LAB_IP:LAB_PORT with a token, server root notebooks/, and prints its URL
#
# Ctrl-C stops JupyterLab, and DynamoDB Local if this script started it.
#
# Environment:
#   LAB_PORT        JupyterLab port (default 8888)
#   LAB_IP          address JupyterLab listens on (default 127.0.0.1; the container uses 0.0.0.0
#                   and docker-compose publishes it on 127.0.0.1 only)
#   JUPYTER_TOKEN   token to use (default: a new random one each start)
#   DYNAMODB_PORT   DynamoDB Local port (default 8000)
#   AWS_ENDPOINT_URL_DYNAMODB
#                   an already running DynamoDB (Local) to use instead of starting one
#   LAB_PUBLIC_URL  the URL people open, when it differs from http://127.0.0.1:LAB_PORT
#                   (docker-compose sets it to the port published on the host)
#   WORKSHOP_SKIP_SETUP=1   skip step 1
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAB_PORT="${LAB_PORT:-8888}"
LAB_IP="${LAB_IP:-127.0.0.1}"
export DYNAMODB_PORT="${DYNAMODB_PORT:-8000}"

say() { printf 'workshop: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

started_dynamodb=0
lab_pid=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  # If our output went to a pipe that Ctrl-C closed (make workshop | tee ...),
  # writing a message must not kill the cleanup before it stops the servers.
  trap '' PIPE
  say() { printf 'workshop: %s\n' "$*" >&2 2>/dev/null || true; }
  if [[ -n "$lab_pid" ]] && kill -0 "$lab_pid" 2>/dev/null; then
    say "stopping JupyterLab (pid $lab_pid)"
    kill -TERM "$lab_pid" 2>/dev/null || true
    # jupyter asks for confirmation on the first SIGINT; TERM shuts it down,
    # with its kernels. Give it a few seconds, then insist.
    for _ in $(seq 1 50); do
      kill -0 "$lab_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$lab_pid" 2>/dev/null || true
  fi
  if ((started_dynamodb)); then
    say "stopping DynamoDB Local (port $DYNAMODB_PORT)"
    "$ROOT/scripts/dynamodb-local.sh" stop || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_http URL: wait until URL answers any HTTP status (DynamoDB answers 400 to GET /).
wait_http() {
  local url="$1" i code
  for i in $(seq 1 150); do
    code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$url" 2>/dev/null || true)"
    [[ -n "$code" && "$code" != 000 ]] && return 0
    ((i % 25 == 0)) && say "waiting for $url ..."
    sleep 0.2
  done
  return 1
}

main() {
  cd "$ROOT"
  if [[ "${WORKSHOP_SKIP_SETUP:-}" != 1 ]]; then
    "$ROOT/scripts/setup.sh"
  fi
  # shellcheck source=scripts/env.sh
  source "$ROOT/scripts/env.sh"

  if [[ -n "${AWS_ENDPOINT_URL_DYNAMODB:-}" ]]; then
    say "using DynamoDB at $AWS_ENDPOINT_URL_DYNAMODB (AWS_ENDPOINT_URL_DYNAMODB is set)"
    wait_http "$AWS_ENDPOINT_URL_DYNAMODB/" ||
      die "nothing answers on $AWS_ENDPOINT_URL_DYNAMODB; start it, or unset AWS_ENDPOINT_URL_DYNAMODB to start DynamoDB Local here"
  else
    if ! "$ROOT/scripts/dynamodb-local.sh" status >/dev/null 2>&1; then
      started_dynamodb=1
    fi
    "$ROOT/scripts/dynamodb-local.sh" start
    AWS_ENDPOINT_URL_DYNAMODB="$("$ROOT/scripts/dynamodb-local.sh" endpoint)"
    export AWS_ENDPOINT_URL_DYNAMODB
  fi

  say "seeding the sample nights into $AWS_ENDPOINT_URL_DYNAMODB"
  go run ./queuekit/cmd/queuekit seed --sample ||
    die "seeding failed (output above); DynamoDB answers on $AWS_ENDPOINT_URL_DYNAMODB, so check: go run ./queuekit/cmd/queuekit seed --sample"

  local token="${JUPYTER_TOKEN:-}"
  if [[ -z "$token" ]]; then
    token="$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
  fi
  # JupyterLab reads the token from the environment, so it never shows in `ps`.
  export JUPYTER_TOKEN="$token"
  local log="$WORKSHOP_VENV/share/jupyter/workshop-lab.log" extra=()
  mkdir -p "$JUPYTER_RUNTIME_DIR"
  # Containers and CI machines often run as root; JupyterLab refuses that unless told.
  if [[ "$(id -u)" == 0 ]]; then
    extra+=(--allow-root)
  fi
  jupyter lab \
    --no-browser \
    --ServerApp.ip="$LAB_IP" \
    --ServerApp.port="$LAB_PORT" \
    --ServerApp.port_retries=0 \
    --ServerApp.root_dir="$ROOT/notebooks" \
    --ServerApp.open_browser=False \
    --LabApp.news_url=None \
    --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
    --LabApp.extension_manager=readonly \
    "${extra[@]}" \
    >"$log" 2>&1 &
  lab_pid=$!
  local url="http://127.0.0.1:$LAB_PORT"
  if ! wait_http "$url/api"; then
    tail -n 30 "$log" >&2 || true
    die "JupyterLab did not start on $url (log above; is port $LAB_PORT free? set LAB_PORT=...)"
  fi
  cat >&2 <<EOF

  The workshop is running. Open this URL in your browser:

      ${LAB_PUBLIC_URL:-$url}/lab?token=$token

  Notebooks: $ROOT/notebooks    DynamoDB: $AWS_ENDPOINT_URL_DYNAMODB
  JupyterLab log: $log
  Press Ctrl-C to stop everything this command started.

EOF
  wait "$lab_pid"
}

main "$@"
