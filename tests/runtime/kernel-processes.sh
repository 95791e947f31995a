#!/usr/bin/env bash
# kernel-processes.sh: asking the gonb kernel for its metadata leaves no
# process behind. scripts/workspace.sh prepare starts a gonb kernel once (when
# .venv/share/gonb-language-info.json is missing) and shuts it down; gonb
# starts gopls in a process group of its own (and gopls a telemetry child),
# so a kernel killed rather than shut down used to leave gopls running after
# every `make workshop`.
#
# Usage: tests/runtime/kernel-processes.sh   (make test-runtime; needs scripts/setup.sh done)
#
# Runs prepare three times with the metadata file removed (each run starts
# and stops a kernel), then checks that no gonb or gopls of this
# repository's .venv runs that did not run before, and that the metadata was
# written. The metadata file is restored as it was.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="runtime (no kernel process left behind)"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

[[ -x "$ROOT/.venv/bin/gonb" && -x "$ROOT/.venv/bin/gopls" ]] ||
  { echo "kernel-processes.sh: $ROOT/.venv has no gonb or gopls; run scripts/setup.sh (or make setup) first" >&2; exit 2; }

INFO="$ROOT/.venv/share/gonb-language-info.json"
ws="$(mktemp -d)"
saved="$(mktemp)"
had_info=0
if [[ -f "$INFO" ]]; then cp "$INFO" "$saved" && had_info=1; fi
cleanup() {
  if ((had_info)); then cp "$saved" "$INFO"; fi
  rm -rf "$ws" "$saved"
}
on_exit cleanup

# ours lists the pids of this repository's gonb and gopls processes.
ours() { pgrep -f "^$ROOT/\.venv/bin/(gonb|gopls)( |$)" | sort || true; }
before="$(ours)"

for i in 1 2 3; do
  rm -f "$INFO"
  check "prepare $i starts and stops the gonb kernel" env WORKSHOP_WORKSPACE="$ws" "$ROOT/scripts/workspace.sh" prepare
  check "prepare $i wrote the kernel's language_info" grep -q '"language_info"' "$INFO"
done

# new_ones prints the processes that did not run before, if any.
new_ones() {
  local now pid found=1
  now="$(ours)"
  for pid in $now; do
    grep -qx "$pid" <<<"$before" && continue
    ps -o pid=,pgid=,command= -p "$pid" || true
    found=0
  done
  return "$found"
}
none_left() {
  local i
  for ((i = 0; i < 50; i++)); do # a process already signalled may take a moment to go
    new_ones >/dev/null || return 0
    sleep 0.2
  done
  echo "still running after the kernel was shut down:"
  new_ones
  return 1
}
check "no gonb or gopls of this repository is left running" none_left
check_done
