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
#   2. scripts/setup.sh (its quick path, as make workshop starts it) succeeds
#      and prints no WARNING;
#   3. DynamoDB Local and ElasticMQ start (scripts/with-servers.sh, on ports
#      free here, OFFLINE_DYNAMODB_PORT / OFFLINE_SQS_PORT) and the sample
#      nights are seeded (go run ./queuekit/cmd/queuekit seed --sample);
#   4. in the real gonb kernel, for each of notebooks 00-04, the first code
#      cell and then the middle cell restart_cells.py's MIDDLE names run with
#      no error and print no module, proxy, checksum or name-lookup failure
#      (tests/offline/session_one.py). GOPROXY stays as scripts/env.sh sets it
#      (the module cache first, then proxy.golang.org), GOSUMDB as go sets it.
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
  mapfile -t ports < <(free_ports 2)
  export OFFLINE_DYNAMODB_PORT="${OFFLINE_DYNAMODB_PORT:-${ports[0]}}" OFFLINE_SQS_PORT="${OFFLINE_SQS_PORT:-${ports[1]}}"
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

echo "== scripts/setup.sh, offline"
setup_ok() {
  local out
  out="$(scripts/setup.sh 2>&1)" || { printf '%s\n' "$out" | tail -n 20; return 1; }
  if grep -i 'warning' <<<"$out"; then return 1; fi
}
t=$SECONDS
check "scripts/setup.sh succeeds with no WARNING" setup_ok
echo "      ($((SECONDS - t)) s)"

echo "== servers and session one in the gonb kernel"
t=$SECONDS
if DYNAMODB_PORT="$OFFLINE_DYNAMODB_PORT" SQS_PORT="$OFFLINE_SQS_PORT" \
  scripts/with-servers.sh .venv/bin/python tests/offline/session_one.py; then
  ok "servers up, seeded, session one's cells ran offline ($((SECONDS - t)) s)"
else
  not_ok "servers, seeding or session one's cells (above; $((SECONDS - t)) s)"
fi
echo "offline: took $((SECONDS - T0)) s"
check_done
