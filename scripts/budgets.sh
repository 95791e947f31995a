# budgets.sh: the time budgets of .ci/budgets, for .ci/run and
# scripts/test-stages.sh (source it).
#
#   budget_of STEP          print STEP's budget in seconds, or nothing when it has none
#   budget_over STEP SECS   succeed when SECS is more than 25 % over STEP's budget
# shellcheck shell=bash

BUDGETS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.ci/budgets"

budget_of() {
  [[ -f "$BUDGETS" ]] || return 0
  awk -v s="$1" '$1 == s {print $2; exit}' "$BUDGETS"
}

budget_over() {
  local b
  b="$(budget_of "$1")"
  [[ -n "$b" ]] && (($2 * 4 > b * 5))
}
