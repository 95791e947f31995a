#!/usr/bin/env bash
# workshop.sh: the one command that starts the workshop (make workshop).
#
# Usage: scripts/workshop.sh
#
#   1. scripts/setup.sh (venv, GoNB kernel, echarts asset, warm build cache; quick when done),
#      without gopls when it is not built yet: it only serves completion and hover, so it is
#      built after the URL is printed (scripts/setup.sh gopls, in the background, log in
#      .venv/share/jupyter/gopls-build.log), and a line says when it is ready
#   2. DynamoDB Local and ElasticMQ (SQS) on 127.0.0.1 through scripts/servers.sh, which
#      starts them or joins them when they already run; AWS_ENDPOINT_URL_DYNAMODB and
#      AWS_ENDPOINT_URL_SQS, when already set (docker-compose sets both), are used instead
#   3. seeds the sample nights: go run ./queuekit/cmd/queuekit seed --sample
#   4. your own copies of the notebooks in workspace/ (scripts/workspace.sh prepare: copies
#      what is missing, keeps what is there), so notebooks/ and git never change
#   5. JupyterLab on LAB_IP:LAB_PORT with a token, server root workspace/, and prints its URL;
#      its configuration (Go kernel only, assets/ hidden, no news) is jupyter/, read
#      through JUPYTER_CONFIG_PATH (scripts/env.sh)
#
# It prints its version first (queuekit.Version, the CHANGELOG's top entry), so an
# instructor can say which workshop a room used. Every step prints a line with the
# time elapsed. Ctrl-C, TERM or HUP (however many arrive) stops JupyterLab and
# leaves the servers, which stop once no other program (a `make test` on the same
# ports) still uses them; a line says which signal stopped it ("workshop: stopped
# (TERM)") and the status is 130, 143 or 129, or 0 with WORKSHOP_SIGNAL_STATUS=0
# (make workshop: a stop is how the workshop ends, so make prints no error line).
#
# Environment:
#   LAB_PORT        JupyterLab port (default 8888)
#   LAB_IP          address JupyterLab listens on (default 127.0.0.1; the container uses 0.0.0.0
#                   and docker-compose publishes it on 127.0.0.1 only)
#   JUPYTER_TOKEN   token to use (default: a new random one each start)
#   DYNAMODB_PORT   DynamoDB Local port (default 8000)
#   SQS_PORT        ElasticMQ port (default 9324)
#   AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS
#                   already running servers to use instead of starting them
#   LAB_PUBLIC_URL  the URL people open, when it differs from http://127.0.0.1:LAB_PORT
#                   (docker-compose sets it to the port published on the host)
#   WORKSHOP_SKIP_SETUP=1   skip step 1
#   WORKSHOP_SIGNAL_STATUS  exit status after a stop by INT, TERM or HUP (default 128+signal)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAB_PORT="${LAB_PORT:-8888}"
LAB_IP="${LAB_IP:-127.0.0.1}"
PROGRESS_PREFIX=workshop
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
# shellcheck source=scripts/servers.sh
source "$ROOT/scripts/servers.sh"

say() { printf 'workshop: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

lab_pid=""
gopls_pid=""

# cleanup runs once, on any exit. Its first line ignores INT, TERM and HUP, so
# a second Ctrl-C or the TERM that make forwards cannot cut it short (the
# scripts it runs inherit that), and PIPE, so a closed output pipe
# (make workshop | tee) cannot either.
cleanup() {
  local status=$? stopped_by=""
  trap '' INT TERM HUP PIPE
  trap - EXIT
  say() { printf 'workshop: %s\n' "$*" >&2 2>/dev/null || true; }
  if [[ -n "$lab_pid" ]] && kill -0 "$lab_pid" 2>/dev/null; then
    say "stopping JupyterLab (pid $lab_pid)"
    kill -TERM "$lab_pid" 2>/dev/null || true
    # jupyter asks for confirmation on the first SIGINT; TERM shuts it down,
    # with its kernels. Give it a few seconds, then insist.
    local i
    for ((i = 0; i < 50; i++)); do
      kill -0 "$lab_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$lab_pid" 2>/dev/null || true
  fi
  if [[ -n "$gopls_pid" ]]; then
    # Its own session (setsid): the whole group, the go command's compilers too.
    kill -TERM -- "-$gopls_pid" 2>/dev/null || true
  fi
  servers_down
  case "$status" in
    130) stopped_by="Ctrl-C" ;;
    143) stopped_by="TERM" ;;
    129) stopped_by="HUP: the terminal closed" ;;
  esac
  if [[ -n "$stopped_by" ]]; then
    say "stopped ($stopped_by)"
    status="${WORKSHOP_SIGNAL_STATUS:-$status}"
  fi
  exit "$status"
}
trap cleanup EXIT
# Each signal's trap ignores the next signals before it exits: a second TERM
# (a supervisor, make forwarding to the group) arriving between this exit and
# cleanup's own first line would otherwise run `exit` again inside the EXIT
# trap and end the script with the servers still up (seen once in a test run
# on a loaded machine).
trap "trap '' INT TERM HUP; exit 130" INT
trap "trap '' INT TERM HUP; exit 143" TERM
trap "trap '' INT TERM HUP; exit 129" HUP

# version: the workshop's version, read from queuekit/version.go (no build
# needed, so it prints before setup).
version() {
  sed -n 's/^const Version = "\(.*\)"$/\1/p' "$ROOT/queuekit/version.go"
}

# wait_http URL: wait until URL (JupyterLab's /api) answers any HTTP status.
wait_http() {
  local url="$1" i code
  for ((i = 1; i <= 150; i++)); do
    code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$url" 2>/dev/null || true)"
    [[ -n "$code" && "$code" != 000 ]] && return 0
    ((i % 25 == 0)) && say "waiting for $url ..."
    sleep 0.2
  done
  return 1
}

# gopls_behind builds gopls in the background when setup left it out, and says
# when completion and hover work. The build runs in a session of its own, so
# cleanup can stop it with its compilers.
gopls_behind() {
  [[ "${WORKSHOP_SKIP_SETUP:-}" != 1 && ! -x "$WORKSHOP_VENV/bin/gopls" ]] || return 0
  local log="$WORKSHOP_VENV/share/jupyter/gopls-build.log"
  say "building gopls in the background (completion and hover; cells already run); log: $log"
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's arguments
  setsid bash -c '
    if "$1/scripts/setup.sh" gopls >"$2" 2>&1; then
      printf "workshop: gopls ready: completion and hover work in notebooks opened from now (Kernel > Restart for an open one)\n" >&2
    else
      printf "workshop: gopls did not build (%s); cells still run, without completion and hover: rerun scripts/setup.sh\n" "$2" >&2
    fi' gopls-behind "$ROOT" "$log" &
  gopls_pid=$!
}

main() {
  cd "$ROOT"
  say "nightly job queue workshop, version $(version) (CHANGELOG.md)"
  if [[ "${WORKSHOP_SKIP_SETUP:-}" != 1 ]]; then
    step "1/5 setup (scripts/setup.sh; quick when done)"
    SETUP_DEFER_GOPLS=1 "$ROOT/scripts/setup.sh"
  fi
  # shellcheck source=scripts/env.sh
  source "$ROOT/scripts/env.sh"

  step "2/5 DynamoDB Local and ElasticMQ (SQS), 127.0.0.1 only"
  servers_up use-preset

  step "3/5 seeding the sample nights into $AWS_ENDPOINT_URL_DYNAMODB"
  alive "compiling and seeding" go run ./queuekit/cmd/queuekit seed --sample ||
    die "seeding failed (output above); DynamoDB answers on $AWS_ENDPOINT_URL_DYNAMODB, so check: go run ./queuekit/cmd/queuekit seed --sample"

  step "4/5 your copies of the notebooks (workspace/)"
  "$ROOT/scripts/workspace.sh" prepare

  step "5/5 starting JupyterLab on $LAB_IP:$LAB_PORT"
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
    --ServerApp.root_dir="$ROOT/workspace" \
    --ServerApp.open_browser=False \
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

  Notebooks: $ROOT/workspace (your copies; make reset-notebooks starts them afresh)
  DynamoDB: $AWS_ENDPOINT_URL_DYNAMODB    SQS: ${AWS_ENDPOINT_URL_SQS:-}
  JupyterLab log: $log
  Press Ctrl-C to stop everything this command started.

EOF
  step "ready"
  gopls_behind
  wait "$lab_pid"
}

main "$@"
