#!/usr/bin/env bash
# with-dynamodb.sh: run a command with DynamoDB Local up and its endpoint exported.
#
# Usage: scripts/with-dynamodb.sh COMMAND [ARG...]
#
# Starts DynamoDB Local on ${DYNAMODB_PORT:-8000} through scripts/dynamodb-local.sh
# unless something already answers there, exports AWS_ENDPOINT_URL_DYNAMODB and
# local credentials, runs COMMAND, and stops DynamoDB Local again only if it
# started it. Exits with COMMAND's status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DYNAMODB_PORT="${DYNAMODB_PORT:-8000}"
[[ $# -gt 0 ]] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

started=0
if ! "$ROOT/scripts/dynamodb-local.sh" status >/dev/null 2>&1; then
  started=1
fi
stop() {
  if ((started)); then
    "$ROOT/scripts/dynamodb-local.sh" stop || true
  fi
}
trap stop EXIT
"$ROOT/scripts/dynamodb-local.sh" start
AWS_ENDPOINT_URL_DYNAMODB="$("$ROOT/scripts/dynamodb-local.sh" endpoint)"
export AWS_ENDPOINT_URL_DYNAMODB
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"
"$@"
