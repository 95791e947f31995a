# local-server.sh: what scripts/dynamodb-local.sh and scripts/elasticmq.sh share:
# start a local server in the background on 127.0.0.1, wait until it answers
# its own protocol, count who uses it, and stop it when the last user is done.
# Source it after defining:
#
#   SERVER_NAME    file-name prefix, e.g. dynamodb-local
#   SERVER_LABEL   what people read, e.g. "DynamoDB Local"
#   SERVER_SCRIPT  the command people run, e.g. scripts/dynamodb-local.sh
#   PORT_VAR       the variable that chooses the port, e.g. DYNAMODB_PORT
#   PORT RUN_DIR TIMEOUT ENDPOINT
#   server_install        install when needed (idempotent)
#   server_command        set SERVER_DIR (working directory) and the array
#                         SERVER_CMD (the server's command line, foreground)
#   server_answers        succeed when the server answers its protocol on ENDPOINT
#                         (a DynamoDB ListTables, an SQS ListQueues), not any HTTP
#   SERVER_FATAL (optional) an extended regex: a log line matching it while
#                         waiting means the server failed although it still runs
#
# Users. Several programs may use one server on one port at once (two `make
# test` runs, a workshop started while the tests run). Each one registers as a
# user with `start --user PID` and leaves with `stop --user PID`; a plain
# `start` registers the person at the terminal ("manual"), a plain `stop`
# removes that registration. The server stops when the last user leaves and
# only if this script started it; a user whose process has died no longer
# counts. Every decision is taken under one lock per port, so two runs starting
# or stopping together cannot both believe they own the server.
# shellcheck shell=bash

PID_FILE="$RUN_DIR/$SERVER_NAME-$PORT.pid"
LOG_FILE="$RUN_DIR/$SERVER_NAME-$PORT.log"
USERS_DIR="$RUN_DIR/$SERVER_NAME-$PORT.users"

say() { printf '%s: %s\n' "$SERVER_NAME" "$*" >&2; }
die() { say "$*"; exit 1; }

# lock takes the per-port lock on fd 8 (released when the script exits).
lock() {
  mkdir -p "$RUN_DIR"
  exec 8>"$RUN_DIR/.$SERVER_NAME-$PORT.lock"
  flock 8
}

# our_pid prints the pid of the server this script started on PORT, if it runs.
our_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# port_taken succeeds when anything accepts TCP connections on 127.0.0.1:PORT.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

# live_users prints the registered users that still count, one a line
# ("manual", or the pid of a running process), and forgets the dead ones.
live_users() {
  [[ -d "$USERS_DIR" ]] || return 0
  local f u
  for f in "$USERS_DIR"/*; do
    [[ -e "$f" ]] || continue
    u="${f##*/}"
    if [[ "$u" == manual ]] || kill -0 "$u" 2>/dev/null; then
      echo "$u"
    else
      rm -f "$f"
    fi
  done
}

add_user() {
  mkdir -p "$USERS_DIR"
  : >"$USERS_DIR/$1"
}

# describe_users prints "pid 123 (make test ...), manual" for messages.
describe_users() {
  local u out=()
  while read -r u; do
    [[ -n "$u" ]] || continue
    if [[ "$u" == manual ]]; then
      out+=("a manual start")
    else
      out+=("pid $u ($(ps -o args= -p "$u" 2>/dev/null | cut -c1-60))")
    fi
  done
  local IFS=,
  echo "${out[*]}"
}

# parse_user reads "--user PID" (or nothing: the manual user) into USER_ID.
parse_user() {
  USER_ID=manual
  FORCE=0
  while (($#)); do
    case "$1" in
    --user)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { say "--user needs a process id, e.g. --user \$\$"; exit 2; }
      USER_ID="$2"
      shift 2
      ;;
    --force) FORCE=1; shift ;;
    *) say "unknown argument $1"; exit 2 ;;
    esac
  done
}

cmd_start() {
  parse_user "$@"
  lock
  local pid
  if server_answers; then
    add_user "$USER_ID"
    if pid="$(our_pid)"; then
      say "already running on $ENDPOINT (pid $pid); $(live_users | grep -c .) user(s)"
    else
      say "$SERVER_LABEL already answers on $ENDPOINT (not started by $SERVER_SCRIPT); using it"
    fi
    return 0
  fi
  if pid="$(our_pid)"; then
    # Ours, but it does not answer: hung or half-started by a killed run.
    say "the $SERVER_LABEL this script started on port $PORT (pid $pid) does not answer; restarting it"
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$PID_FILE"
    sleep 0.5
  fi
  if port_taken; then
    die "port $PORT on 127.0.0.1 is taken by something that is not $SERVER_LABEL (it does not answer like one); stop it or choose another port: $PORT_VAR=<port> $SERVER_SCRIPT start"
  fi
  command -v java >/dev/null || die "java is not installed; $SERVER_LABEL needs Java 17+ (Debian: apt-get install openjdk-17-jdk-headless)"
  server_install
  server_command
  # A new server: registrations left from an earlier one that died belong to it.
  rm -f "$PID_FILE"
  rm -rf "$USERS_DIR"
  (
    cd "$SERVER_DIR" || exit
    exec 8>&- 9>&- # the server must not hold our locks
    # A session of its own (Ctrl-C in the terminal does not reach it); stdin and
    # stdout detached so a caller reading our output is not held open.
    exec setsid nohup "${SERVER_CMD[@]}" </dev/null >"$LOG_FILE" 2>&1
  ) &
  pid=$!
  echo "$pid" >"$PID_FILE"
  local waited=0
  local fatal
  while ! server_answers; do
    if [[ -n "${SERVER_FATAL:-}" ]] && fatal="$(grep -m1 -E "$SERVER_FATAL" "$LOG_FILE" 2>/dev/null)"; then
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$PID_FILE"
      die "$SERVER_LABEL failed on port $PORT: ${fatal:0:200} (log: $LOG_FILE)"
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      tail -n 20 "$LOG_FILE" >&2 || true
      die "$SERVER_LABEL exited before answering on $ENDPOINT (log above, full log in $LOG_FILE)"
    fi
    if ((waited >= TIMEOUT * 5)); then
      kill "$pid" 2>/dev/null || true
      rm -f "$PID_FILE"
      die "$SERVER_LABEL did not answer on $ENDPOINT within ${TIMEOUT}s (log: $LOG_FILE); check the log"
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
  add_user "$USER_ID"
  say "running on $ENDPOINT, 127.0.0.1 only (pid $pid, in memory, log $LOG_FILE)"
}

cmd_stop() {
  parse_user "$@"
  lock
  rm -f "$USERS_DIR/$USER_ID"
  local pid others
  others="$(live_users)"
  if ! pid="$(our_pid)"; then
    rm -f "$PID_FILE"
    if [[ -z "$others" ]] && server_answers; then
      say "$SERVER_LABEL answers on $ENDPOINT but was not started by $SERVER_SCRIPT; leaving it alone"
    elif [[ -z "$others" ]]; then
      say "not running on port $PORT"
    fi
    return 0
  fi
  if [[ -n "$others" ]] && ((!FORCE)); then
    say "still used by $(describe_users <<<"$others"); it stops when the last one is done (or: $SERVER_SCRIPT stop --force)"
    return 0
  fi
  kill "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
  rm -rf "$USERS_DIR"
  say "stopped (pid $pid, port $PORT)"
}

cmd_status() {
  local pid users
  if server_answers; then
    users="$(live_users | grep -c . || true)"
    if pid="$(our_pid)"; then
      echo "running on $ENDPOINT (pid $pid, $users user(s))"
    else
      echo "running on $ENDPOINT (not started by $SERVER_SCRIPT)"
    fi
    return 0
  fi
  echo "not running on port $PORT; start it with $SERVER_SCRIPT start"
  return 1
}

# dispatch runs the command named by the script's first argument.
dispatch() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
  install) server_install ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  status) cmd_status ;;
  run)
    # The server in the foreground, as start runs it, with no users and no pid file.
    server_install
    server_command
    cd "$SERVER_DIR" || exit
    exec "${SERVER_CMD[@]}"
    ;;
  endpoint) echo "$ENDPOINT" ;;
  probe)
    [[ -n "${1:-}" ]] || { say "probe needs a URL, e.g. $SERVER_SCRIPT probe http://127.0.0.1:$PORT"; exit 2; }
    ENDPOINT="${1%/}"
    server_answers
    ;;
  *)
    echo "usage: $SERVER_SCRIPT install|start [--user PID]|stop [--user PID|--force]|status|run|endpoint|probe URL   (port: $PORT_VAR)" >&2
    exit 2
    ;;
  esac
}
