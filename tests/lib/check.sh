# check.sh: the few helpers the shell tests share. Source it (bash), set
# CHECK_NAME, call check/ok/not_ok, and end with check_done, which prints the
# summary line "NAME: N passed, M failed" and exits 1 when anything failed.
# shellcheck shell=bash

CHECK_PASSED=0
CHECK_FAILED=0

ok() {
  CHECK_PASSED=$((CHECK_PASSED + 1))
  printf 'ok    %s\n' "$*"
}

not_ok() {
  CHECK_FAILED=$((CHECK_FAILED + 1))
  printf 'FAIL  %s\n' "$*"
}

# check DESCRIPTION COMMAND...: ok when COMMAND succeeds, otherwise FAIL with
# the command's output.
check() {
  local desc="$1" out
  shift
  if out="$("$@" 2>&1)"; then
    ok "$desc"
  else
    not_ok "$desc"
    [[ -z "$out" ]] || printf '      %s\n' "${out//$'\n'/$'\n'      }"
  fi
}

check_done() {
  printf '%s: %d passed, %d failed\n' "${CHECK_NAME:-checks}" "$CHECK_PASSED" "$CHECK_FAILED"
  ((CHECK_FAILED == 0))
}

# free_ports N prints N ports nothing listens on: the next ones from
# TEST_PORTS (space-separated) when set, otherwise ports the kernel picks.
free_ports() {
  local n="$1" p
  if [[ -n "${TEST_PORTS:-}" ]]; then
    for p in $TEST_PORTS; do
      ((n > 0)) || break
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
        echo "$p"
        n=$((n - 1))
      fi
    done
    ((n == 0)) || { echo "TEST_PORTS=\"$TEST_PORTS\" has fewer than $1 free ports" >&2; return 1; }
    return 0
  fi
  python3 - "$n" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print("\n".join(str(s.getsockname()[1]) for s in socks))
PY
}

# wait_for SECONDS COMMAND...: retry COMMAND every 0.2 s until it succeeds or
# SECONDS have passed.
wait_for() {
  local i limit=$(($1 * 5))
  shift
  for ((i = 0; i < limit; i++)); do
    "$@" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# on_exit FUNCTION: run FUNCTION once on any exit, INT, TERM and HUP included,
# with further signals ignored while it runs so that it finishes.
on_exit() {
  # shellcheck disable=SC2064 # FUNCTION is expanded now, on purpose
  trap "trap '' INT TERM HUP; $1" EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
}
