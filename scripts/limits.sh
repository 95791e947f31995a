#!/usr/bin/env bash
# limits.sh: start and stop the limits layer (queuekit limits) in front of
# DynamoDB Local, on 127.0.0.1 only, so that DynamoDB throttles as on AWS
# (docs/limits.md).
#
# Usage: scripts/limits.sh start|stop|status|endpoint
#
#   start     build queuekit into .cache/bin, run `queuekit limits` in the
#             background and wait until it answers (its "listening" line);
#             an error when something else holds the port
#   stop      stop the layer this script started on the port (TERM: it
#             writes its counters to LIMITS_STATS first, when set)
#   status    say whether the layer runs on the port (exit 0) or not (exit 1)
#   endpoint  print the layer's endpoint, e.g. http://127.0.0.1:8400
#
# Environment:
#   LIMITS_PORT    the layer's port (default 8400)
#   LIMITS_SCALE   S: every limit divided by S (default 1)
#   LIMITS_TARGET  DynamoDB Local's endpoint (default http://127.0.0.1:$DYNAMODB_PORT,
#                  DYNAMODB_PORT default 8000)
#   LIMITS_STATS   a file for the per-second counters (JSON), optional
#
# scripts/with-servers.sh starts it too when LIMITS_PORT is set, and points
# AWS_ENDPOINT_URL_DYNAMODB at it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${LIMITS_PORT:-8400}"
SCALE="${LIMITS_SCALE:-1}"
TARGET="${LIMITS_TARGET:-http://127.0.0.1:${DYNAMODB_PORT:-8000}}"
RUN="$ROOT/.cache/limits/run"
PIDFILE="$RUN/limits-$PORT.pid"
LOG="$RUN/limits-$PORT.log"
BIN="$ROOT/.cache/bin/queuekit"

say() { printf 'limits: %s\n' "$*" >&2; }

running() { [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  if running; then
    say "already running on http://127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"
    return 0
  fi
  mkdir -p "$RUN" "$(dirname "$BIN")"
  (cd "$ROOT" && go build -o "$BIN" ./queuekit/cmd/queuekit) || { say "could not build queuekit (go build ./queuekit/cmd/queuekit)"; return 1; }
  local args=(limits --listen "127.0.0.1:$PORT" --target "$TARGET" --scale "$SCALE")
  [[ -n "${LIMITS_STATS:-}" ]] && args+=(--json-stats "$LIMITS_STATS")
  : >"$LOG"
  "$BIN" "${args[@]}" 2>"$LOG" &
  echo $! >"$PIDFILE"
  local i
  for ((i = 0; i < 300; i++)); do
    if grep -q '^limits: listening on ' "$LOG"; then
      cat "$LOG" >&2
      return 0
    fi
    if ! running; then
      cat "$LOG" >&2
      rm -f "$PIDFILE"
      return 1
    fi
    sleep 0.2
  done
  say "no answer on port $PORT within 60 s (log: $LOG)"
  stop
  return 1
}

stop() {
  if ! running; then
    rm -f "$PIDFILE"
    return 0
  fi
  local pid i
  pid="$(cat "$PIDFILE")"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  rm -f "$PIDFILE"
  say "stopped (port $PORT)"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status)
  if running; then
    say "running on http://127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"
  else
    say "not running on port $PORT"
    exit 1
  fi
  ;;
endpoint) printf 'http://127.0.0.1:%s\n' "$PORT" ;;
*)
  echo "usage: $0 start|stop|status|endpoint" >&2
  exit 2
  ;;
esac
