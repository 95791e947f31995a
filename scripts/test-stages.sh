#!/usr/bin/env bash
# test-stages.sh: what `make test` runs. Every stage runs even when an earlier
# one failed, and the run ends with one line per stage (passed or failed, with
# its counts and time) and a final verdict.
#
# Usage: scripts/test-stages.sh STAGE...   (make test passes $(TEST_STAGES))
#
#   1. lint, then setup (make lint; make setup browser-deps; Chromium for the
#      browser tests: installed with apt-get when missing and this is root on
#      Debian/Ubuntu, otherwise the stage fails naming the command to run)
#   2. DynamoDB Local and ElasticMQ start, or are joined, on DYNAMODB_PORT and
#      SQS_PORT (`queuekit servers with`, held in the background for the run;
#      they stop when the run ends, unless someone else still uses them)
#   3. each STAGE as `make STAGE` (test-go, test-notebooks, ...)
#
# Each stage's output streams as usual and is also kept in
# tests/artifacts/stages/<stage>.log, from which its counts are read: Go
# packages (the summary lines of queuekit/internal/testjson, which counts
# go test -json's events), notebooks (run_notebooks.py), browser tests (node
# --test), checks (the shell tests' "N passed, M failed" lines).
#
# Each stage has a time budget in .ci/budgets (seconds on CI's 2 cores). Its
# result line gives its time and budget; a stage more than 25 % over its
# budget prints a WARNING line naming its slowest tests (not a failure: the
# machine is shared and noisy), read from tests/artifacts/stages/<stage>.times,
# which the stage's tools append to through STAGE_TIMES ("SECONDS<TAB>WHAT"
# lines: testjson for Go tests and packages, run_notebooks.py for cells; the
# browser tests' durations are read from the log). Every stage's time, budget
# and result also go to tests/artifacts/stages/times.tsv, which .ci/run's last
# line reads.
# Exit status: 0 when every stage passed, 1 otherwise, 130/143 when interrupted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MAKE="${MAKE:-make}"
LOGS="$ROOT/tests/artifacts/stages"
PROGRESS_PREFIX="make test"
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
LAUNCHER="$ROOT/.cache/bin/queuekit"
servers_pid=""

# servers_up holds the test servers for the run: `queuekit servers with`
# runs in the background, writes the endpoints it exports to a file and
# sleeps; servers_down's TERM ends it, and it leaves the servers.
servers_up() {
  local env_file="$LOGS/.servers.env" i
  (cd "$ROOT" && go build -o "$LAUNCHER" ./queuekit/cmd/queuekit) || return 1
  # shellcheck disable=SC2016 # $1 expands in the inner shell
  "$LAUNCHER" servers with -- bash -c 'env | grep "^AWS_ENDPOINT_URL_" >"$1.tmp" && mv "$1.tmp" "$1" && exec sleep infinity' servers "$env_file" &
  servers_pid=$!
  for ((i = 0; i < 1800; i++)); do
    if [[ -s "$env_file" ]]; then
      while IFS= read -r kv; do export "${kv?}"; done <"$env_file"
      return 0
    fi
    kill -0 "$servers_pid" 2>/dev/null || { servers_pid=""; return 1; }
    sleep 0.2
  done
  return 1
}

servers_down() {
  [[ -n "$servers_pid" ]] || return 0
  kill -TERM "$servers_pid" 2>/dev/null || true
  wait "$servers_pid" 2>/dev/null || true
  servers_pid=""
}

[[ $# -gt 0 ]] || { echo "usage: $0 STAGE...   (make targets, e.g. test-go test-notebooks)" >&2; exit 2; }
rm -rf "$LOGS"
mkdir -p "$LOGS"

names=() results=() counts=() times=()
# shellcheck source=scripts/budgets.sh
source "$ROOT/scripts/budgets.sh"

# slowest_of STAGE prints the stage's five slowest tests or cells, from its
# .times file and, for node --test, its log ("✔ name (1234.5ms)").
slowest_of() {
  local name="$1"
  {
    [[ -f "$LOGS/$name.times" ]] && grep -v ' (package)$' "$LOGS/$name.times"
    sed -nE 's/^ *[✔✖] (.*) \(([0-9.]+)ms\)$/\2\t\1/p' "$LOGS/$name.log" 2>/dev/null |
      awk -F'\t' '{printf "%.2f\t%s\n", $1 / 1000, $2}'
  } | sort -t$'\t' -k1,1 -rn | head -n 5 | sed 's#github.com/nightqueue/workshop/##' |
    awk -F'\t' '{printf "%s%s %.0f s", (NR > 1 ? ", " : ""), $2, $1} END {print ""}'
}

# over_budget NAME SECONDS: a WARNING line when SECONDS is more than 25 %
# over the stage's budget.
over_budget() {
  local name="$1" secs="$2" budget slow
  if budget_over "$name" "$secs"; then
    budget="$(budget_of "$name")"
    slow="$(slowest_of "$name")"
    echo "make test: WARNING: stage $name took $secs s, $(((secs - budget) * 100 / budget)) % over its budget of $budget s (.ci/budgets)${slow:+; slowest: $slow}"
  fi
}

summary() {
  local status="$1"
  trap '' INT TERM HUP
  servers_down
  ((${#names[@]})) || return 0
  local i failed=() w=0 b
  for i in "${!names[@]}"; do ((${#names[i]} > w)) && w=${#names[i]}; done
  echo
  echo "==== make test: summary (logs in tests/artifacts/stages/)"
  for i in "${!names[@]}"; do
    b="$(budget_of "${names[i]}")"
    printf "%-${w}s  %-6s  %-72s %5s s%s\n" "${names[i]}" "${results[i]}" "${counts[i]}" "${times[i]}" "${b:+ of $b}"
    [[ "${results[i]}" == passed ]] || failed+=("${names[i]}")
  done
  for i in "${!names[@]}"; do over_budget "${names[i]}" "${times[i]}"; done
  if ((${#failed[@]} == 0 && status == 0)); then
    echo "make test: PASSED (${#names[@]} of ${#names[@]} stages passed, $(elapsed) s)"
  elif ((${#failed[@]} == 0)); then
    echo "make test: FAILED (stopped with status $status after ${#names[@]} stages; $(elapsed) s)"
  else
    echo "make test: FAILED (${#failed[@]} of ${#names[@]} stages failed: ${failed[*]}; $(elapsed) s)"
  fi
}
trap 'status=$?; summary "$status"; exit $status' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# counts_of LOG prints what the log says was counted, e.g. "24 Go packages
# passed, 0 failed", each kind of count a stage has, joined by "; ".
counts_of() {
  local log="$1" ok fail tp f ts p parts=()
  # go test: counted from its -json event stream by queuekit/internal/testjson,
  # which ends each go test run with "testjson: N Go packages passed, M
  # failed; T tests passed, F failed, S skipped".
  if grep -qE '^testjson: [0-9]+ Go packages passed, [0-9]+ failed' "$log"; then
    read -r ok fail tp f ts < <(sed -nE 's/^testjson: ([0-9]+) Go packages passed, ([0-9]+) failed; ([0-9]+) tests passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3 \4 \5/p' "$log" |
      awk '{o += $1; x += $2; p += $3; t += $4; s += $5} END {print o + 0, x + 0, p + 0, t + 0, s + 0}')
    parts+=("$ok Go packages passed, $fail failed ($tp tests passed, $f failed, $ts skipped)")
  fi
  # node --test: "ℹ pass N" / "ℹ fail N" per file run.
  if grep -qE '^ℹ pass [0-9]+' "$log"; then
    p="$(awk '/^ℹ pass [0-9]+/ {s += $3} END {print s}' "$log")"
    f="$(awk '/^ℹ fail [0-9]+/ {s += $3} END {print s}' "$log")"
    parts+=("$p browser tests passed, $f failed")
  fi
  # run_notebooks.py and the shell tests: "[NAME: ]N passed, M failed" lines.
  if grep -qE '(^|: )[0-9]+ passed, [0-9]+ failed$' "$log"; then
    parts+=("$(grep -oE '[0-9]+ passed, [0-9]+ failed$' "$log" |
      awk '{p += $1; f += $3} END {printf "%d passed, %d failed\n", p, f}')")
  fi
  if ((${#parts[@]} == 0)); then
    echo "-"
    return
  fi
  p="${parts[0]}"
  for f in "${parts[@]:1}"; do p+="; $f"; done
  echo "$p"
}

# stage NAME COMMAND...: run one stage, tee its output, record its result.
stage() {
  local name="$1" t0 status=0 log="$LOGS/$1.log"
  shift
  t0="$(elapsed)"
  step "stage $name"
  rm -f "$LOGS/$name.times"
  STAGE_TIMES="$LOGS/$name.times" "$@" 2>&1 | tee "$log" || status=$?
  names+=("$name")
  times+=("$(($(elapsed) - t0))")
  counts+=("$(counts_of "$log")")
  if ((status == 0)); then results+=(passed); else results+=(FAILED); fi
  local b
  b="$(budget_of "$name")"
  printf '%s\t%s\t%s\t%s\n' "$name" "${times[-1]}" "${b:--}" "${results[-1]}" >>"$LOGS/times.tsv"
  step "stage $name: ${results[-1]} (${counts[-1]}) in ${times[-1]} s${b:+ (budget $b s)}"
  over_budget "$name" "${times[-1]}" >&2
}

# need_chromium makes sure the browser tests have a browser.
need_chromium() {
  local chromium="${CHROMIUM:-/usr/bin/chromium}"
  [[ -x "$chromium" ]] && return 0
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    step "installing Chromium for the browser tests (apt-get install chromium)"
    export DEBIAN_FRONTEND=noninteractive
    alive "installing Chromium" bash -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null' &&
      [[ -x "$chromium" ]] && return 0
  fi
  echo "Chromium is missing ($chromium) and the browser tests need it: sudo apt-get install chromium (Debian/Ubuntu), or set CHROMIUM=/path/to/chromium"
  return 1
}

setup_stage() {
  "$MAKE" --no-print-directory -C "$ROOT" setup browser-deps && need_chromium
}

stage lint "$MAKE" --no-print-directory -C "$ROOT" lint
stage setup setup_stage
step "starting the test servers"
if ! servers_up 2>&1; then
  names+=(servers) results+=(FAILED) counts+=("DynamoDB Local / ElasticMQ did not start (above)") times+=(0)
  exit 1
fi
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"
for s in "$@"; do
  stage "$s" "$MAKE" --no-print-directory -C "$ROOT" "$s"
done
for r in "${results[@]}"; do
  [[ "$r" == passed ]] || exit 1
done
