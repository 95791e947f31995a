#!/usr/bin/env bash
# signals.sh: `make workshop` stopped by TERM or by Ctrl-C (INT), however many
# arrive, cleans up completely: JupyterLab, DynamoDB Local and ElasticMQ stop,
# no pid file is left, and no message says the cleanup was cut short.
#
# Usage: tests/runtime/signals.sh   (make test-runtime; needs scripts/setup.sh done)
#
# For TERM, then INT, then TERM to make's PID alone: `make workshop` runs in a
# session of its own (setsid), with default signal handling (a background job
# of a script would ignore INT), on free ports. Once it prints its URL, the
# signal goes three times, 0.3 s apart, either to its whole process group, as a
# terminal's Ctrl-C or a service manager's stop of a cgroup would send it (make,
# workshop.sh and JupyterLab each get every one, and make also forwards TERM to
# workshop.sh, so the cleanup receives several while it runs), or to make's PID
# alone, as `kill -TERM <pid>` from a script or a supervisor sends it: then only
# make's forwarded TERM reaches workshop.sh, which must still stop everything
# (the second TERM kills make itself, by its default action, while workshop.sh
# finishes its cleanup). Each must read as a normal stop: no make error line,
# one line saying which signal stopped it.
# Ports: free ones the kernel picks, or the first free ones of TEST_PORTS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="runtime (make workshop stopped by signals)"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

[[ -x "$ROOT/.venv/bin/jupyter" ]] || { echo "signals.sh: $ROOT/.venv/bin/jupyter is missing; run scripts/setup.sh (or make setup) first" >&2; exit 2; }

tmp="$(mktemp -d)"
ports="$(free_ports 3)" || exit 1
mapfile -t ports <<<"$ports"
export DYNAMODB_PORT="${ports[0]}" SQS_PORT="${ports[1]}" LAB_PORT="${ports[2]}"
export WORKSHOP_SKIP_SETUP=1 JUPYTER_TOKEN="signals-test-$$"
unset AWS_ENDPOINT_URL_DYNAMODB AWS_ENDPOINT_URL_SQS # the workshop must start its own
ws_pid=""

cleanup() {
  [[ -z "$ws_pid" ]] || kill -KILL -- "-$ws_pid" 2>/dev/null || true
  stop_test_servers
  rm -rf "$tmp"
}
on_exit cleanup

# stop_by SIG [group|pid]: start make workshop, send SIG three times to its
# process group (default) or to make's PID alone, check.
stop_by() {
  local sig="$1" to="${2:-group}" i status ws_pid_was target
  log="$tmp/workshop-$sig-$to.log"
  echo "== $sig to the $to: make workshop on DynamoDB $DYNAMODB_PORT, SQS $SQS_PORT, JupyterLab $LAB_PORT"
  env --default-signal=INT,TERM setsid make -C "$ROOT" workshop >"$log" 2>&1 &
  ws_pid=$!
  if ! wait_for 600 grep -q "The workshop is running" "$log"; then
    not_ok "make workshop printed no URL within 600 s"
    sed 's/^/      /' "$log"
    return
  fi
  ok "make workshop is up"
  check "JupyterLab answers" lab_answers
  check "DynamoDB Local answers" "$ROOT/scripts/dynamodb-local.sh" status
  check "ElasticMQ answers" "$ROOT/scripts/elasticmq.sh" status

  target="-$ws_pid"
  [[ "$to" == group ]] || target="$ws_pid"
  for i in 1 2 3; do
    kill "-$sig" -- "$target" 2>/dev/null || true
    sleep 0.3
  done
  # A make that ignores the signal must fail the test, not hang it.
  if ! wait_for 60 make_gone "$ws_pid"; then
    not_ok "make workshop still runs 60 s after the last $sig to the $to"
    kill -KILL -- "-$ws_pid" 2>/dev/null || true
  fi
  status=0
  wait "$ws_pid" || status=$?
  check "every process of make workshop's group is gone" wait_for 30 group_gone "$ws_pid"
  ws_pid_was="$ws_pid"
  ws_pid=""
  check "make workshop exited non-zero (interrupted), status $status" test "$status" != 0
  check "DynamoDB Local stopped" down dynamodb-local.sh
  check "ElasticMQ stopped" down elasticmq.sh
  check "JupyterLab stopped" lab_down
  check "no pid file left" test ! -e "$ROOT/.cache/dynamodb-local/run/dynamodb-local-$DYNAMODB_PORT.pid" \
    -a ! -e "$ROOT/.cache/elasticmq/run/elasticmq-$SQS_PORT.pid"
  check "the cleanup said it stopped both servers" \
    bash -c "grep -q 'dynamodb-local: stopped' '$log' && grep -q 'elasticmq: stopped' '$log'"
  check "no sign of a cleanup cut short (Broken pipe, write error, Terminated)" cut_short
  # Ctrl-C and a service manager's TERM are the workshop's normal stops: no
  # make error line ("make: *** [Makefile:NN: workshop] Error 130"), and a
  # line saying what stopped it.
  local said="Ctrl-C"
  [[ "$sig" == INT ]] || said="$sig"
  check "$sig reads as a normal stop: no make error line" bash -c "! grep -F 'make: ***' '$log'"
  check "$sig reads as a normal stop: the workshop says it stopped" grep -qF "workshop: stopped ($said)" "$log"
  echo "      process group $ws_pid_was; the workshop's output from the ${sig}s on:"
  sed -n '/The workshop is running/,$p' "$log" | grep -v '^\s*$' | sed 's/^/      /'
}
lab_answers() { curl -s -m 2 -o /dev/null "http://127.0.0.1:$LAB_PORT/api"; }
lab_down() { ! lab_answers; }
group_gone() { ! pgrep -g "$1" >/dev/null; }
make_gone() { ! kill -0 "$1" 2>/dev/null || [[ "$(ps -o stat= -p "$1" 2>/dev/null)" == Z* ]]; }
down() { ! "$ROOT/scripts/$1" status >/dev/null; }
cut_short() { ! grep -Ei 'broken pipe|write error|Terminated' "$log"; }

stop_by TERM
stop_by INT
stop_by TERM pid
check_done
