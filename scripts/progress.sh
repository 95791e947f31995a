# progress.sh: step lines with the time elapsed since the command started, and
# a sign of life during long steps, so no minute passes without output.
# Source it (bash) after setting PROGRESS_PREFIX (e.g. "setup"). Times count
# from PROGRESS_START (epoch seconds), which is exported, so a script started
# by another (setup.sh by workshop.sh) counts from the same start.
#
#   step MESSAGE        print "PREFIX: [12 s] MESSAGE"
#   alive LABEL CMD...  run CMD in the foreground; every PROGRESS_EVERY seconds
#                       (default 15) print "PREFIX: [52 s] still LABEL (40 s so far)"
# shellcheck shell=bash

PROGRESS_START="${PROGRESS_START:-$(date +%s)}"
export PROGRESS_START

elapsed() { echo $(($(date +%s) - PROGRESS_START)); }

step() {
  printf '%s: [%d s] %s\n' "${PROGRESS_PREFIX:-progress}" "$(elapsed)" "$*" >&2
}

alive() {
  local label="$1" every="${PROGRESS_EVERY:-15}" t0=$SECONDS hb status=0
  shift
  # The ticker stops by itself when this shell is gone (kill -9 included).
  (
    trap - INT TERM
    while sleep "$every" && kill -0 $$ 2>/dev/null; do
      printf '%s: [%d s] still %s (%d s so far)\n' "${PROGRESS_PREFIX:-progress}" \
        "$(elapsed)" "$label" "$((SECONDS - t0))" >&2 2>/dev/null || exit 0
    done
  ) &
  hb=$!
  "$@" || status=$?
  kill "$hb" 2>/dev/null || true
  wait "$hb" 2>/dev/null || true
  return "$status"
}
