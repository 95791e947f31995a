#!/usr/bin/env bash
# shared-servers.sh: two programs using one DynamoDB Local and one ElasticMQ
# never stop them under each other, and "running" means the server answers its
# own protocol, not that something holds the port.
#
# Usage: tests/runtime/shared-servers.sh   (make test-runtime)
#
#   1. Two scripts/with-servers.sh runs start together on the same ports (both
#      race to start the servers). The shorter one ends first; the longer one
#      then still finds both servers, and the table and queue it made before.
#      When it ends too, both servers are stopped.
#   2. A server started by hand (scripts/dynamodb-local.sh start) outlives a
#      with-servers.sh run that joined it, and stops on the hand's stop.
#   3. A port held by an HTTP server that is not DynamoDB / SQS: start fails
#      with one line naming the port and the variable to change.
#
# Ports: free ones the kernel picks, or the first free ones of TEST_PORTS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="runtime (shared servers)"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

tmp="$(mktemp -d)"
ports="$(free_ports 3)" || exit 1
mapfile -t ports <<<"$ports"
export DYNAMODB_PORT="${ports[0]}" SQS_PORT="${ports[1]}"
other_port="${ports[2]}"
DDB="http://127.0.0.1:$DYNAMODB_PORT" SQS="http://127.0.0.1:$SQS_PORT"
fake_pid=""

cleanup() {
  [[ -z "$fake_pid" ]] || kill "$fake_pid" 2>/dev/null || true
  stop_test_servers # whatever a failed check left running on these test ports
  rm -rf "$tmp"
}
on_exit cleanup

ddb_answers() { "$ROOT/scripts/dynamodb-local.sh" probe "$DDB"; }
sqs_answers() { "$ROOT/scripts/elasticmq.sh" probe "$SQS"; }
both_down() {
  ! ddb_answers || { echo "DynamoDB Local still answers on $DDB"; return 1; }
  ! sqs_answers || { echo "ElasticMQ still answers on $SQS"; return 1; }
  [[ ! -e "$ROOT/.cache/dynamodb-local/run/dynamodb-local-$DYNAMODB_PORT.pid" ]] || { echo "DynamoDB Local's pid file is left"; return 1; }
  [[ ! -e "$ROOT/.cache/elasticmq/run/elasticmq-$SQS_PORT.pid" ]] || { echo "ElasticMQ's pid file is left"; return 1; }
}

echo "== two runs share the servers on ports $DYNAMODB_PORT and $SQS_PORT"
# The long run makes a table and a queue, waits until the short run has ended
# and left, then checks that both are still there.
cat >"$tmp/long.sh" <<'EOF'
set -eu
ddb() { curl -s -m 10 --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user local:local -H "X-Amz-Target: DynamoDB_20120810.$1" -H 'Content-Type: application/x-amz-json-1.0' -d "$2" "$AWS_ENDPOINT_URL_DYNAMODB/"; }
sqs() { curl -s -m 10 -H "X-Amz-Target: AmazonSQS.$1" -H 'Content-Type: application/x-amz-json-1.0' -d "$2" "$AWS_ENDPOINT_URL_SQS/"; }
ddb CreateTable '{"TableName":"long-run","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}' >/dev/null
sqs CreateQueue '{"QueueName":"long-run"}' >/dev/null
touch "$SYNC/long.ready"
while [ ! -f "$SYNC/short.done" ]; do sleep 0.2; done
ddb DescribeTable '{"TableName":"long-run"}' >"$SYNC/long.table"
sqs GetQueueUrl '{"QueueName":"long-run"}' >"$SYNC/long.queue"
EOF
export SYNC="$tmp"
"$ROOT/scripts/with-servers.sh" bash "$tmp/long.sh" >"$tmp/long.log" 2>&1 &
long_pid=$!
# shellcheck disable=SC2016 # $SYNC expands in the inner shell
"$ROOT/scripts/with-servers.sh" bash -c 'while [ ! -f "$SYNC/long.ready" ]; do sleep 0.2; done' >"$tmp/short.log" 2>&1 &
short_pid=$!
short_status=0
wait "$short_pid" || short_status=$?
touch "$tmp/short.done"
long_status=0
wait "$long_pid" || long_status=$?
check "the short run succeeded" test "$short_status" = 0
check "the long run succeeded" test "$long_status" = 0
check "after the short run left, the long run still had DynamoDB Local and its table" \
  grep -q '"TableStatus":"ACTIVE"' "$tmp/long.table"
check "after the short run left, the long run still had ElasticMQ and its queue" \
  grep -q '"QueueUrl":"http://127.0.0.1:'"$SQS_PORT"'/000000000000/long-run"' "$tmp/long.queue"
check "exactly one run started each server" \
  test "$(cat "$tmp/long.log" "$tmp/short.log" | grep -c 'running on http://127.0.0.1:.*127.0.0.1 only')" = 2
check "when the last run ended, both servers stopped" both_down
for f in long short; do sed "s/^/      $f: /" "$tmp/$f.log"; done

echo "== a server started by hand outlives a run that joined it"
"$ROOT/scripts/dynamodb-local.sh" start 2>"$tmp/hand.log"
SERVERS=dynamodb "$ROOT/scripts/with-servers.sh" true 2>>"$tmp/hand.log"
check "DynamoDB Local still answers after the run" ddb_answers
"$ROOT/scripts/dynamodb-local.sh" stop 2>>"$tmp/hand.log"
ddb_down() { ! ddb_answers; }
check "scripts/dynamodb-local.sh stop stopped it" ddb_down
sed 's/^/      /' "$tmp/hand.log"

echo "== a port held by something else is not taken for the server"
python3 -m http.server --bind 127.0.0.1 "$other_port" >/dev/null 2>&1 &
fake_pid=$!
wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$other_port" || not_ok "the stand-in HTTP server did not start"
refused() { # refused SCRIPT VAR: start on the stand-in's port fails with one line naming VAR
  local status=0 err
  err="$(env "$2=$other_port" "$ROOT/scripts/$1" start 2>&1)" || status=$?
  ((status != 0)) || { echo "exit 0: $err"; return 1; }
  [[ "$(grep -c . <<<"$err")" == 1 && "$err" == *"port $other_port"*"$2="* ]] ||
    { echo "want one line naming port $other_port and $2, got: $err"; return 1; }
  echo "$err"
}
check "scripts/dynamodb-local.sh start refuses a port an HTTP server holds" refused dynamodb-local.sh DYNAMODB_PORT
check "scripts/elasticmq.sh start refuses a port an HTTP server holds" refused elasticmq.sh SQS_PORT
check "status says not running there (an HTTP answer is not DynamoDB)" \
  bash -c "! DYNAMODB_PORT=$other_port '$ROOT/scripts/dynamodb-local.sh' status"

check_done
