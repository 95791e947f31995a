#!/usr/bin/env bash
# elasticmq.sh: install, start and stop ElasticMQ, an SQS-compatible server,
# without Docker, for development, tests and the workshop, on 127.0.0.1 only.
#
# Usage: scripts/elasticmq.sh install|start|stop|status|run|endpoint|probe
#
#   install   fetch ElasticMQ (pinned, see below) from Maven Central into
#             .cache/elasticmq/; a no-op when that version is already there
#   start [--user PID]
#             install if needed, then run it in the background, in memory, on
#             127.0.0.1 only, and wait until it answers an SQS ListQueues;
#             register PID (default: you, "manual") as a user. A no-op apart
#             from the registration when an SQS server already answers on the
#             port; an error when something else holds the port
#   stop [--user PID | --force]
#             unregister PID (default: the manual user); stop the server this
#             script started once no live user remains (--force: now)
#   status    say whether it runs on the port (exit 0) or not (exit 1)
#   run       run the server in the foreground (what start runs in the background)
#   probe URL succeed when the server at URL answers its protocol (for an endpoint
#             given from outside, e.g. docker compose's)
#   endpoint  print the endpoint URL (for AWS_ENDPOINT_URL_SQS), e.g. http://127.0.0.1:9324
#
# Environment:
#   SQS_PORT                 port (default 9324)
#   SQS_START_TIMEOUT        seconds to wait for the server to answer (default 60)
#   ELASTICMQ_DIR            install directory (default <repo>/.cache/elasticmq)
#
# The pinned version is org.elasticmq:elasticmq-server_2.13:1.7.1 on Maven
# Central, which has no single runnable jar: `queuekit servers install
# --elasticmq` (Go, run with go run) downloads the server and its 38 runtime
# dependencies, as Maven resolved them, over HTTPS into
# .cache/elasticmq/1.7.1/lib, each checked against
# queuekit/internal/jars/servers.lock (size, SHA-256), resumably and
# atomically: no Maven. Running it needs Java 17+. The same server is the
# Docker image softwaremill/elasticmq-native:1.7.1.
set -euo pipefail

# As queuekit/internal/jars pins it; deploy/sqs_test.go reads this line.
VERSION="1.7.1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ELASTICMQ_DIR:-$ROOT/.cache/elasticmq}"
PORT="${SQS_PORT:-9324}"
TIMEOUT="${SQS_START_TIMEOUT:-60}"
HOME_DIR="$DIR/$VERSION" # holds lib/*.jar
RUN_DIR="$DIR/run"
ENDPOINT="http://127.0.0.1:$PORT"

SERVER_NAME="elasticmq"
SERVER_LABEL="ElasticMQ (SQS)"
SERVER_SCRIPT="scripts/elasticmq.sh"
PORT_VAR="SQS_PORT"
# When it cannot bind, ElasticMQ logs this and keeps running without a listener.
SERVER_FATAL="Cannot start SQS rest server|Bind failed"
# shellcheck source=scripts/local-server.sh
source "$ROOT/scripts/local-server.sh"

installed() { [[ -f "$HOME_DIR/.installed" && -d "$HOME_DIR/lib" ]]; }

# server_answers succeeds when an SQS server answers ListQueues (AWS JSON
# protocol, as aws-sdk-go-v2 speaks it), not merely some HTTP server.
server_answers() {
  local out
  out="$(curl -s -m 3 -H 'X-Amz-Target: AmazonSQS.ListQueues' -H 'Content-Type: application/x-amz-json-1.0' \
    -d '{}' "$ENDPOINT/" 2>/dev/null)" || return 1
  [[ "$out" == "{"* && "$out" != *'"__type"'* ]]
}

# server_install runs `queuekit servers install --elasticmq`, which takes its
# own lock, so concurrent installs download once.
server_install() {
  installed && return 0
  command -v go >/dev/null ||
    die "go is not installed; installing ElasticMQ runs queuekit (Go 1.26+: https://go.dev/dl/), then rerun: $SERVER_SCRIPT install"
  mkdir -p "$DIR"
  local abs
  abs="$(cd "$DIR" && pwd)" # go runs in $ROOT
  (cd "$ROOT" && go run ./queuekit/cmd/queuekit servers install --elasticmq --elasticmq-dir "$abs") >&2 ||
    die "could not install ElasticMQ $VERSION (the line above says why); rerun to resume: $SERVER_SCRIPT install"
  installed || die "queuekit servers install finished but $HOME_DIR has no lib/ and .installed"
}

# server_command writes this port's configuration and sets the command line.
# The configuration keeps the bundled defaults (the request timeout 20 s long
# polls need), then binds 127.0.0.1 only and makes queue URLs point there.
server_command() {
  local conf="$RUN_DIR/elasticmq-$PORT.conf"
  mkdir -p "$RUN_DIR"
  cat >"$conf" <<EOF
include classpath("application.conf")
node-address { protocol = http, host = 127.0.0.1, port = $PORT, context-path = "" }
rest-sqs { enabled = true, bind-port = $PORT, bind-hostname = "127.0.0.1", sqs-limits = strict }
aws { region = "us-east-1", accountId = "000000000000" }
EOF
  SERVER_DIR="$HOME_DIR"
  # A small heap and a quick JIT suit a test server on a shared 2-core machine.
  SERVER_CMD=(java -Djava.net.preferIPv4Stack=true -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
    -Dconfig.file="$conf" -cp "lib/*" org.elasticmq.server.Main)
}

dispatch "$@"
