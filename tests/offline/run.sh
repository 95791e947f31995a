#!/usr/bin/env bash
# run.sh: after `make prefetch`, session one (notebooks 00-04) runs with the
# network cut: the workshop's real configuration, nothing switched off.
#
# Usage: sudo tests/offline/run.sh      (make test-offline; needs root for unshare -n)
#
# Everything below runs in a new network namespace with only loopback up
# (`unshare -n`, as root): no route out, so every name lookup, the module
# proxy, the checksum database, PyPI and npm fail at once. In it:
#   1. the cut is real: a name lookup and an HTTPS request to the module proxy
#      fail (without that, a pass would prove nothing);
#   2. make workshop (queuekit workshop, on free ports: OFFLINE_DYNAMODB_PORT,
#      OFFLINE_SQS_PORT, OFFLINE_LAB_PORT) reaches "The workshop is running"
#      and its URL answers: setup's quick path (no WARNING printed), both
#      servers started, the sample nights seeded, JupyterLab up;
#   3. in the real gonb kernel, for each of notebooks 00-04, the first code
#      cell and then the middle cell restart_cells.py's MIDDLE names run with
#      no error and print no module, proxy, checksum or name-lookup failure
#      (tests/offline/session_one.py, against the workshop's servers). GOPROXY
#      stays as the launcher sets it (the module cache first, then
#      proxy.golang.org), GOSUMDB as go sets it;
#   4. the workshop stops on TERM (as Ctrl-C stops it).
# The repository's caches are the ones under test: run make prefetch first.
# Ends with "offline: N passed, M failed"; exits 1 when anything failed, 2 when
# it cannot cut the network here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="offline"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

if [[ "${OFFLINE_INSIDE:-}" != 1 ]]; then
  if [[ "$(id -u)" != 0 ]] || ! command -v unshare >/dev/null || ! command -v ip >/dev/null; then
    echo "offline: needs root, unshare and ip to cut the network (a new network namespace); run: sudo make test-offline" >&2
    exit 2
  fi
  # Ports nothing on this machine uses: the namespace has its own loopback,
  # but the servers' pid files are shared with the host's.
  mapfile -t ports < <(free_ports 3)
  export OFFLINE_DYNAMODB_PORT="${OFFLINE_DYNAMODB_PORT:-${ports[0]}}" OFFLINE_SQS_PORT="${OFFLINE_SQS_PORT:-${ports[1]}}" \
    OFFLINE_LAB_PORT="${OFFLINE_LAB_PORT:-${ports[2]}}"
  OFFLINE_INSIDE=1 exec unshare -n "$0" "$@"
fi

ip link set lo up
T0=$SECONDS
cd "$ROOT"

echo "== the network is cut"
no_lookup() { ! getent hosts proxy.golang.org; }
no_https() { ! curl -sS -m 5 -o /dev/null https://proxy.golang.org/; }
check "no name lookup (getent hosts proxy.golang.org fails)" no_lookup
check "no route out (curl https://proxy.golang.org/ fails)" no_https

echo "== make workshop, offline"
log="$(mktemp)" wpid=""
stop_workshop() {
  [[ -n "$wpid" ]] && kill -0 "$wpid" 2>/dev/null || return 0
  kill -TERM -- "-$wpid" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$wpid" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}
cleanup() { stop_workshop || true; rm -f "$log"; }
on_exit cleanup
t=$SECONDS
DYNAMODB_PORT="$OFFLINE_DYNAMODB_PORT" SQS_PORT="$OFFLINE_SQS_PORT" LAB_PORT="$OFFLINE_LAB_PORT" \
  setsid make --no-print-directory workshop >"$log" 2>&1 &
wpid=$!
running() { grep -q 'The workshop is running' "$log"; }
for _ in $(seq 1 600); do
  running || ! kill -0 "$wpid" 2>/dev/null && break
  sleep 0.5
done
if running; then
  ok "make workshop printed its URL, offline ($((SECONDS - t)) s)"
else
  not_ok "make workshop did not print its URL offline ($((SECONDS - t)) s); its output:"
  sed 's/^/      /' "$log" | tail -n 30
fi
no_warning() { ! grep -i warning "$log"; }
check "setup's quick path printed no WARNING" no_warning
check "both servers started" bash -c "grep -q 'dynamodb answers on' '$log' && grep -q 'sqs answers on' '$log'"
check "JupyterLab answers on its URL" curl -sf -m 10 -o /dev/null "http://127.0.0.1:$OFFLINE_LAB_PORT/api"

echo "== session one in the gonb kernel"
t=$SECONDS
if running && AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$OFFLINE_DYNAMODB_PORT" AWS_ENDPOINT_URL_SQS="http://127.0.0.1:$OFFLINE_SQS_PORT" \
  .venv/bin/python tests/offline/session_one.py; then
  ok "session one's cells ran offline ($((SECONDS - t)) s)"
else
  not_ok "session one's cells (above; $((SECONDS - t)) s)"
fi
check "make workshop stops on TERM" stop_workshop
echo "offline: took $((SECONDS - T0)) s"
check_done
