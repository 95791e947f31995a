#!/usr/bin/env bash
# lint-shell.sh: a lint that cannot run its check fails. `make lint-shell`
# (the first part of `make lint`) with no shellcheck on PATH must exit
# non-zero and say how to install it, never print "skipped" and pass; when
# ShellCheck is installed it passes on the repository's scripts.
#
# Usage: tests/runtime/lint-shell.sh   (make test-runtime)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="runtime (lint fails without shellcheck)"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

make_bin="$(command -v make)"
bin="$(mktemp -d)"
cleanup() { rm -rf "$bin"; }
on_exit cleanup
# A PATH with what the recipe needs (bash for make's SHELL) and no shellcheck.
ln -s "$(command -v bash)" "$bin/bash"

status=0
lint_out="$(env PATH="$bin" "$make_bin" -C "$ROOT" --no-print-directory lint-shell 2>&1)" || status=$?
check "make lint-shell without shellcheck exits non-zero (status $status)" test "$status" != 0
says_install() { grep -q "shellcheck is not installed" <<<"$lint_out" && grep -q "apt-get install shellcheck" <<<"$lint_out"; }
check "it says shellcheck is missing and how to install it" says_install
check "it does not call the check skipped" bash -c "! grep -qi skipped <<<\"\$1\"" _ "$lint_out"
if command -v shellcheck >/dev/null; then
  check "make lint-shell passes with shellcheck installed" "$make_bin" -C "$ROOT" --no-print-directory lint-shell
else
  not_ok "shellcheck is not installed here, so lint-shell cannot pass: apt-get install shellcheck"
fi
check_done
