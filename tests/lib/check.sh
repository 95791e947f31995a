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
