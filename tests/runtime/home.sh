#!/usr/bin/env bash
# home.sh: setting up and preparing the workshop writes nothing into the home
# directory but Go's own files: Jupyter's and IPython's directories live in
# .venv (scripts/env.sh), pip's and npm's downloads and the servers' jars in .cache/.
#
# Usage: tests/runtime/home.sh   (make test-runtime; needs scripts/setup.sh done once)
#
# Runs scripts/setup.sh (its kernelspec step forced to run again, the one that
# starts jupyter), scripts/workspace.sh prepare (which starts the gonb
# kernel) and `jupyter kernelspec list` with HOME set to an empty directory
# (Go's caches kept where they are, so nothing is rebuilt), then lists what
# appeared there. Allowed: Go's telemetry and configuration (~/.config/go).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHECK_NAME="runtime (nothing in the home directory)"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"

home="$(mktemp -d)"
ws="$(mktemp -d)"
cleanup() { rm -rf "$home" "$ws"; }
on_exit cleanup

gocache="$(go env GOCACHE)" gomodcache="$(go env GOMODCACHE)" gopath="$(go env GOPATH)"
in_home() {
  env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u JUPYTER_DATA_DIR -u JUPYTER_CONFIG_DIR \
    -u JUPYTER_RUNTIME_DIR -u IPYTHONDIR \
    HOME="$home" GOCACHE="$gocache" GOMODCACHE="$gomodcache" GOPATH="$gopath" "$@"
}
# Without its stamp the kernelspec step runs again, and with it jupyter.
rm -f "$ROOT/.venv/.setup/kernel"
check "scripts/setup.sh succeeds with an empty home" in_home "$ROOT/scripts/setup.sh"
check "scripts/workspace.sh prepare succeeds with an empty home" in_home env WORKSHOP_WORKSPACE="$ws" "$ROOT/scripts/workspace.sh" prepare
check "jupyter kernelspec list (after source scripts/env.sh) lists gonb" \
  in_home bash -c "source '$ROOT/scripts/env.sh' && jupyter kernelspec list | grep -q '^ *gonb '"
written="$(cd "$home" && find . -mindepth 1 \( -path ./.config/go -o -path './.config/go/*' -o -path ./.config \) -prune -o -print | sort)"
nothing_else() { [[ -z "$written" ]] || { echo "written into the home directory:"; echo "$written" | head -20; return 1; }; }
check "nothing but ~/.config/go was written into the home directory" nothing_else

check_done
