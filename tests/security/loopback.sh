#!/usr/bin/env bash
# loopback.sh: nobody else on the network reaches the workshop's DynamoDB Local
# or ElasticMQ, no web page gets CORS permission from them, and both still work
# through 127.0.0.1.
#
# Usage: tests/security/loopback.sh
#   (make test-security; it expects the servers `queuekit servers with` starts,
#   with their endpoints in AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS)
#
# "Another host" is a network namespace joined to this one by a veth pair, both
# made here and removed on every exit. The pair's addresses are a /30 from
# 10.213.0.0/16 that nothing on this machine uses yet: host end .1, namespace
# end .2. From the namespace, connecting to the host end's address on each
# server's port must fail, while a control server listening on every interface
# answers on the same address and from the same namespace (without that, a
# broken namespace would look like a pass). Where no namespace can be made (not
# root, no CAP_NET_ADMIN, no `ip`), one line says so, and the check falls back
# to the listening sockets: `ss -ltn` must show each port on 127.0.0.1 only,
# which is also checked when the namespace works.
#
# Also: DynamoDB Local's launcher, asked to listen on a port it cannot bind on
# 127.0.0.1, exits non-zero with one line instead of listening elsewhere.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="security (loopback only, no CORS)"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

DDB="${AWS_ENDPOINT_URL_DYNAMODB:-}"
SQS="${AWS_ENDPOINT_URL_SQS:-}"
if [[ -z "$DDB" || -z "$SQS" ]]; then
  echo "loopback.sh: AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS must be set; run it as: .cache/bin/queuekit servers with -- tests/security/loopback.sh (or make security)" >&2
  exit 2
fi

ns="" host_if="" control_pid="" tmp="$(mktemp -d)"
cleanup() {
  [[ -z "$control_pid" ]] || kill "$control_pid" 2>/dev/null || true
  [[ -z "$host_if" ]] || ip link del "$host_if" 2>/dev/null || true
  [[ -z "$ns" ]] || ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
on_exit cleanup

# port_of URL prints the port of http://127.0.0.1:PORT, or fails.
port_of() { [[ "$1" =~ ^http://127\.0\.0\.1:([0-9]+)/?$ ]] && echo "${BASH_REMATCH[1]}"; }

ddb() { # ddb OPERATION JSON: a signed DynamoDB call (Local accepts any key)
  curl -s -m 10 --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user local:local \
    -H "X-Amz-Target: DynamoDB_20120810.$1" -H 'Content-Type: application/x-amz-json-1.0' -d "$2" "$DDB/"
}
sqs() { # sqs OPERATION JSON [CURL ARG...]: an SQS call in the AWS JSON protocol
  curl -s -m 10 -H "X-Amz-Target: AmazonSQS.$1" -H 'Content-Type: application/x-amz-json-1.0' -d "$2" "${@:3}" "$SQS/"
}

# contains TEXT WANT: succeeds when TEXT contains WANT, else prints TEXT.
contains() { [[ "$1" == *"$2"* ]] || { echo "got: ${1:0:300}"; return 1; }; }

echo "== through 127.0.0.1"
ddb_port="" sqs_port=""
if ddb_port="$(port_of "$DDB")"; then ok "DynamoDB endpoint $DDB is on 127.0.0.1"; else not_ok "DynamoDB endpoint $DDB is not http://127.0.0.1:PORT"; fi
if sqs_port="$(port_of "$SQS")"; then ok "SQS endpoint $SQS is on 127.0.0.1"; else not_ok "SQS endpoint $SQS is not http://127.0.0.1:PORT"; fi
table="loopback-test-$$"
check "DynamoDB CreateTable" contains "$(ddb CreateTable "{\"TableName\":\"$table\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}")" '"TableStatus"'
check "DynamoDB PutItem" contains "$(ddb PutItem "{\"TableName\":\"$table\",\"Item\":{\"pk\":{\"S\":\"k\"},\"v\":{\"S\":\"written through loopback\"}}}")" '{}'
check "DynamoDB GetItem reads it back" contains "$(ddb GetItem "{\"TableName\":\"$table\",\"Key\":{\"pk\":{\"S\":\"k\"}}}")" 'written through loopback'
check "DynamoDB DeleteTable" contains "$(ddb DeleteTable "{\"TableName\":\"$table\"}")" '"TableName"'
queue="loopback-test-$$"
url="$(sqs CreateQueue "{\"QueueName\":\"$queue\"}" | sed -n 's/.*"QueueUrl":"\([^"]*\)".*/\1/p')"
check "SQS CreateQueue returns a 127.0.0.1 queue URL" contains "$url" "http://127.0.0.1:$sqs_port/"
check "SQS SendMessage" contains "$(sqs SendMessage "{\"QueueUrl\":\"$url\",\"MessageBody\":\"sent through loopback\"}")" '"MessageId"'
check "SQS ReceiveMessage gets it" contains "$(sqs ReceiveMessage "{\"QueueUrl\":\"$url\",\"WaitTimeSeconds\":1}")" 'sent through loopback'
check "SQS DeleteQueue" contains "$(sqs DeleteQueue "{\"QueueUrl\":\"$url\"}" -o /dev/null -w '%{http_code}')" 200

echo "== no CORS permission for a web page"
# no_cors URL TARGET: a browser-style POST with an Origin and the preflight a
# browser sends before it (X-Amz-Target is not a simple header) both get an
# HTTP answer without Access-Control-Allow-Origin.
no_cors() {
  local url="$1" target="$2" kind headers
  for kind in POST OPTIONS; do
    if [[ "$kind" == POST ]]; then
      headers="$(curl -s -m 10 -D - -o /dev/null -H 'Origin: http://attacker.example' \
        -H "X-Amz-Target: $target" -H 'Content-Type: application/x-amz-json-1.0' -d '{}' "$url/")"
    else
      headers="$(curl -s -m 10 -D - -o /dev/null -X OPTIONS -H 'Origin: http://attacker.example' \
        -H 'Access-Control-Request-Method: POST' \
        -H 'Access-Control-Request-Headers: authorization,content-type,x-amz-target' "$url/")"
    fi
    [[ "$headers" == HTTP/* ]] || { echo "$kind: no HTTP answer from $url"; return 1; }
    if grep -qi '^access-control-allow-origin' <<<"$headers"; then
      echo "$kind with an Origin header got: $(grep -i '^access-control-allow-origin' <<<"$headers")"
      return 1
    fi
  done
}
check "DynamoDB Local grants no Access-Control-Allow-Origin (POST and preflight)" no_cors "$DDB" DynamoDB_20120810.ListTables
check "ElasticMQ grants no Access-Control-Allow-Origin (POST and preflight)" no_cors "$SQS" AmazonSQS.ListQueues

echo "== listening sockets (ss -ltn)"
# loopback_only PORT: every listening socket on PORT is on 127.0.0.1, and there is one.
loopback_only() {
  local addrs a
  addrs="$(ss -ltnH "( sport = :$1 )" | awk '{print $4}')"
  [[ -n "$addrs" ]] || { echo "nothing listens on port $1"; return 1; }
  while read -r a; do
    [[ "$a" == "127.0.0.1:$1" || "$a" == "[::ffff:127.0.0.1]:$1" ]] ||
      { echo "port $1 listens on $a (all: $(tr '\n' ' ' <<<"$addrs"))"; return 1; }
  done <<<"$addrs"
}
[[ -z "$ddb_port" ]] || check "DynamoDB Local's port $ddb_port listens on 127.0.0.1 only" loopback_only "$ddb_port"
[[ -z "$sqs_port" ]] || check "ElasticMQ's port $sqs_port listens on 127.0.0.1 only" loopback_only "$sqs_port"

# The control server: answers "control" on every interface, on a port the kernel picks.
python3 - "$tmp/control.port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"control")
    def log_message(self, *a): pass
srv = http.server.HTTPServer(("0.0.0.0", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(srv.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
PY
control_pid=$!
for ((i = 0; i < 50; i++)); do [[ -s "$tmp/control.port" ]] && break; sleep 0.1; done
control_port="$(cat "$tmp/control.port" 2>/dev/null || true)"
[[ -n "$control_port" ]] || { not_ok "the control server did not start"; check_done; }
check "the control server listens on every interface (0.0.0.0:$control_port)" \
  bash -c "ss -ltnH '( sport = :$control_port )' | awk '{print \$4}' | grep -qx '0.0.0.0:$control_port'"

echo "== DynamoDB Local's launcher refuses what it cannot bind on 127.0.0.1"
# The control server holds the port on every interface, so 127.0.0.1 cannot be bound.
refuses() {
  local status=0 err
  (cd "$ROOT" && DYNAMODB_PORT="$control_port" .cache/bin/queuekit servers run dynamodb) >"$tmp/run.out" 2>"$tmp/run.err" || status=$?
  err="$(cat "$tmp/run.err")"
  ((status != 0)) || { echo "exit status 0; stderr: $err"; return 1; }
  [[ "$(grep -c . <<<"$err")" == 1 && "$err" == dynamodb-launcher:* ]] ||
    { echo "exit $status, but stderr is not one dynamodb-launcher line: $err"; return 1; }
  echo "exit $status: $err"
}
check "launcher exits non-zero with one line when 127.0.0.1:$control_port is taken" refuses
sed 's/^/      /' "$tmp/run.err"

echo "== from another host (network namespace + veth pair)"
# free_net prints a /30 prefix "10.213.X.Y" whose .Y+1 and .Y+2 nothing uses.
free_net() {
  local i a x y used
  used="$(ip -4 -o addr show 2>/dev/null; ip -4 route show 2>/dev/null)"
  for ((i = 0; i < 16384; i++)); do
    a=$((($$ + i) % 16384)) x=$((a / 64)) y=$((a % 64 * 4))
    grep -qE "10\.213\.$x\.($y|$((y + 1))|$((y + 2))|$((y + 3)))[/ ]" <<<"$used" || { echo "10.213.$x.$y"; return 0; }
  done
  return 1
}
make_ns() {
  command -v ip >/dev/null || { echo "no ip command (Debian: apt-get install iproute2)"; return 1; }
  local net
  net="$(free_net)" || { echo "no free /30 in 10.213.0.0/16"; return 1; }
  host_addr="${net%.*}.$((${net##*.} + 1))" ns_addr="${net%.*}.$((${net##*.} + 2))"
  ns="qksec$$" host_if="qks$$h"
  ip netns add "$ns" 2>&1 || { ns=""; host_if=""; return 1; }
  ip link add "$host_if" type veth peer name "qks$$n" 2>&1 || { host_if=""; return 1; }
  ip link set "qks$$n" netns "$ns" &&
    ip addr add "$host_addr/30" dev "$host_if" &&
    ip link set "$host_if" up &&
    ip -n "$ns" addr add "$ns_addr/30" dev "qks$$n" &&
    ip -n "$ns" link set "qks$$n" up &&
    ip -n "$ns" link set lo up
}
# from_ns PORT: curl from the namespace to the host end; prints "<curl exit> <HTTP code>".
from_ns() {
  local code status=0
  code="$(ip netns exec "$ns" curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$host_addr:$1/")" || status=$?
  echo "$status $code"
}
unreachable() { # curl exit 7: connection refused, no HTTP answer
  local got
  got="$(from_ns "$1")"
  [[ "$got" == "7 000" ]] || { echo "from $ns_addr to $host_addr:$1: curl exit and HTTP code = $got, want 7 000 (refused)"; return 1; }
}
reachable_control() {
  local got
  got="$(from_ns "$control_port")"
  [[ "$got" == "0 200" ]] || { echo "the control server at $host_addr:$control_port is not reachable from the namespace ($got): the test cannot tell anything"; return 1; }
}
if make_ns >"$tmp/ns.err" 2>&1; then
  echo "namespace $ns: host end $host_if $host_addr/30, namespace end $ns_addr/30"
  check "the control server (0.0.0.0:$control_port) is reachable from the other host at $host_addr" reachable_control
  [[ -z "$ddb_port" ]] || check "DynamoDB Local ($host_addr:$ddb_port) is not reachable from the other host" unreachable "$ddb_port"
  [[ -z "$sqs_port" ]] || check "ElasticMQ ($host_addr:$sqs_port) is not reachable from the other host" unreachable "$sqs_port"
else
  echo "cannot create a network namespace here ($(tr '\n' ' ' <"$tmp/ns.err" | cut -c1-160)); the listening-socket check above (ss -ltn) stands in for it"
fi

check_done
