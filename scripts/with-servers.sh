#!/usr/bin/env bash
# with-servers.sh: run a command with DynamoDB Local and ElasticMQ (SQS) up and
# their endpoints exported.
#
# Usage: scripts/with-servers.sh COMMAND [ARG...]
#
# Starts DynamoDB Local on ${DYNAMODB_PORT:-8000} and ElasticMQ on
# ${SQS_PORT:-9324} (127.0.0.1 only), or joins them when they already run,
# exports AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS and local
# credentials, runs COMMAND, then leaves the servers: each stops when its last
# user is done, so two runs sharing a port never stop the server under each
# other. SERVERS="dynamodb" starts only DynamoDB Local. With LIMITS_PORT set,
# the limits layer (scripts/limits.sh, LIMITS_SCALE) starts in front of
# DynamoDB Local on that port and AWS_ENDPOINT_URL_DYNAMODB names it. Exits
# with COMMAND's status (130/143 when interrupted).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -gt 0 ]] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
# shellcheck source=scripts/servers.sh
source "$ROOT/scripts/servers.sh"

limits_down() { trap '' INT TERM HUP; "$ROOT/scripts/limits.sh" stop || true; }
trap 'limits_down; servers_down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
# Tests get servers on the ports they choose, never an endpoint preset in the environment.
servers_up start
if [[ -n "${LIMITS_PORT:-}" ]]; then
  LIMITS_TARGET="$AWS_ENDPOINT_URL_DYNAMODB" "$ROOT/scripts/limits.sh" start
  AWS_ENDPOINT_URL_DYNAMODB="$("$ROOT/scripts/limits.sh" endpoint)"
  export AWS_ENDPOINT_URL_DYNAMODB
fi
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"
"$@"
