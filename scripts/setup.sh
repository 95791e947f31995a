#!/usr/bin/env bash
# setup.sh: install everything the workshop runs on, inside the repository.
#
# Usage: scripts/setup.sh
#
# Installs, each step skipped when it is already done:
#   1. .venv/            Python venv with JupyterLab, nbclient, nbformat (requirements.txt, pinned)
#   2. .venv/bin/        gonb v0.11.4, goimports, gopls v0.23.0, built from tools/go.mod once
#                        into .cache/tools/<hash of go.mod, go.sum, Go version>/ and copied from
#                        there, so a new venv (or clone sharing .cache/) does not rebuild them
#   3. .venv/share/jupyter/kernels/gonb/
#                        the GoNB kernelspec, inside the venv (never in ~/.local); its env puts
#                        .venv/bin and the go binary's directory first on the kernel's PATH
#   4. notebooks/assets/echarts.min.js
#                        ECharts 5.4.3 (npm, tools/echarts/package-lock.json), served by Jupyter
#                        at /files/assets/echarts.min.js so charts draw with no internet
#   5. .venv/share/jupyter/lab/settings/overrides.d/workshop.json
#                        JupyterLab setting defaults from jupyter/overrides.json (no news
#                        prompt, no update check); the server side is jupyter/jupyter_server_config.json,
#                        read through JUPYTER_CONFIG_PATH (scripts/env.sh)
#   6. the Go build cache, warmed the way GoNB builds a cell (a temporary module that requires
#      the workshop module through a replace to notebooks/.., then `go get` and
#      `go build -o <bin>` with no extra flags), so the first notebook cell is fast.
#
# Every step prints a line with the time elapsed, and long ones a line every 15 s.
# Writes nothing in $HOME except Go's module and build caches: Jupyter and IPython
# use the directories scripts/env.sh sets, inside .venv.
# Needs: go 1.26+, python3 3.11+ with venv, npm. Environment:
#   PYTHON            python interpreter for the venv (default python3)
#   SETUP_SKIP_WARM   set to 1 to skip step 5
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMPS="$VENV/.setup"
PYTHON="${PYTHON:-python3}"
ECHARTS_VERSION="5.4.3"

# pip's and npm's download caches stay in the repository (.cache/ is ignored), so
# nothing but Go's caches is written to $HOME.
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$ROOT/.cache/pip}"
export npm_config_cache="${npm_config_cache:-$ROOT/.cache/npm}"

say() { printf 'setup: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
PROGRESS_PREFIX=setup
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"

# stamp_ok NAME VALUE succeeds when step NAME was last completed with VALUE.
stamp_ok() { [[ -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }
stamp_set() { mkdir -p "$STAMPS" && printf '%s' "$2" >"$STAMPS/$1"; }
hash_files() { cat "$@" | sha256sum | cut -d' ' -f1; }

check_prereqs() {
  command -v go >/dev/null ||
    die "go is not on PATH; install Go 1.26+ (https://go.dev/dl/) and rerun scripts/setup.sh"
  command -v "$PYTHON" >/dev/null ||
    die "$PYTHON is not on PATH; install Python 3.11+ with venv (Debian: apt-get install python3-venv), or set PYTHON=/path/to/python3"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "$PYTHON is $("$PYTHON" -V 2>&1); the workshop needs Python 3.11+ (set PYTHON=/path/to/python3.11)"
  command -v npm >/dev/null ||
    die "npm is not on PATH; install Node.js 20+ with npm (Debian: apt-get install npm) and rerun"
}

setup_venv() {
  local want
  want="$(hash_files "$ROOT/requirements.txt")"
  if [[ -x "$VENV/bin/python" ]] && stamp_ok requirements "$want"; then
    say "venv up to date ($VENV)"
    return
  fi
  if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating venv $VENV"
    "$PYTHON" -m venv "$VENV" ||
      die "could not create the venv; on Debian install python3-venv and rerun"
  fi
  say "installing requirements.txt into the venv (pinned)"
  alive "installing JupyterLab and its requirements" "$VENV/bin/python" -m pip install --quiet \
    --disable-pip-version-check --no-input -r "$ROOT/requirements.txt"
  stamp_set requirements "$want"
}

setup_tools() {
  local want cache t
  want="$(hash_files "$ROOT/tools/go.mod" "$ROOT/tools/go.sum")-$(go env GOVERSION GOOS GOARCH | tr '\n' -)"
  if [[ -x "$VENV/bin/gonb" && -x "$VENV/bin/goimports" && -x "$VENV/bin/gopls" ]] &&
    stamp_ok tools "$want"; then
    say "gonb, goimports, gopls up to date"
    return
  fi
  cache="$ROOT/.cache/tools/$(printf '%s' "$want" | sha256sum | cut -c1-16)"
  if [[ ! -x "$cache/gonb" || ! -x "$cache/goimports" || ! -x "$cache/gopls" ]]; then
    say "building gonb, goimports, gopls (tools/go.mod) into $cache; minutes on a cold Go cache"
    rm -rf "$cache.tmp"
    mkdir -p "$cache.tmp"
    (cd "$ROOT/tools" && GOBIN="$cache.tmp" alive "building gonb, goimports and gopls" go install tool)
    rm -rf "$cache"
    mv "$cache.tmp" "$cache"
  fi
  for t in gonb goimports gopls; do
    # A rename, not a copy over the file: a running kernel keeps its binary.
    cp "$cache/$t" "$VENV/bin/.$t.new" && mv -f "$VENV/bin/.$t.new" "$VENV/bin/$t"
  done
  say "gonb, goimports, gopls copied from $cache into $VENV/bin"
  stamp_set tools "$want"
}

setup_kernel() {
  local data="$VENV/share/jupyter" spec goroot_bin want
  spec="$data/kernels/gonb/kernel.json"
  goroot_bin="$(dirname "$(command -v go)")"
  want="$(hash_files "$STAMPS/tools")-$VENV-$goroot_bin"
  if [[ -f "$spec" ]] && stamp_ok kernel "$want"; then
    say "gonb kernelspec up to date ($spec)"
    return
  fi
  say "installing the gonb kernelspec into $data"
  PATH="$VENV/bin:$PATH" JUPYTER_DATA_DIR="$data" "$VENV/bin/gonb" --install >/dev/null 2>&1 ||
    die "gonb --install failed; run: JUPYTER_DATA_DIR=$data $VENV/bin/gonb --install"
  # The kernel inherits Jupyter's environment; put our tools and go first on its PATH
  # whoever starts Jupyter (jupyter_client expands ${PATH} in kernelspec env values).
  "$VENV/bin/python" - "$spec" "$VENV/bin:$goroot_bin" <<'PY'
import json, sys
path, prefix = sys.argv[1], sys.argv[2]
with open(path) as f:
    spec = json.load(f)
spec.setdefault("env", {})["PATH"] = prefix + ":${PATH}"
with open(path, "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
PY
  local listed
  listed="$("$VENV/bin/jupyter" kernelspec list 2>/dev/null || true)"
  grep -q "^ *gonb " <<<"$listed" ||
    die "jupyter does not list the gonb kernel after install; see $spec"
  stamp_set kernel "$want"
}

setup_echarts() {
  local pkg="$ROOT/tools/echarts" js dest="$ROOT/notebooks/assets/echarts.min.js"
  js="$pkg/node_modules/echarts/dist/echarts.min.js"
  if ! grep -qs "\"version\": \"$ECHARTS_VERSION\"" "$pkg/node_modules/echarts/package.json"; then
    say "installing echarts@$ECHARTS_VERSION (npm ci, tools/echarts/package-lock.json)"
    alive "installing echarts" npm ci --prefix "$pkg" --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
  fi
  [[ -f "$js" ]] || die "npm installed echarts but $js is missing"
  if cmp -s "$js" "$dest"; then
    say "echarts asset up to date ($dest)"
    return
  fi
  { mkdir -p "$(dirname "$dest")" && cp "$js" "$dest"; } ||
    die "cannot write $dest; make the repository writable for $(id -un) (in Docker the lab runs as the owner of workspace/: start it with docker compose up, not --user)"
  say "echarts asset copied to $dest (served at /files/assets/echarts.min.js)"
}

# warm_cache builds what notebooks import the way GoNB builds a cell, so the
# compiled packages are in the Go build cache under the same action IDs.
warm_cache() {
  if [[ "${SETUP_SKIP_WARM:-}" == 1 ]]; then
    say "skipping the build cache warm-up (SETUP_SKIP_WARM=1)"
    return
  fi
  local mod pkgs dir="$VENV/share/gonb-warm"
  mod="$(cd "$ROOT" && go list -m)"
  # Every library package of the workshop (not commands, not tests) plus what
  # notebooks use directly: gonbui, GoNB's cache, go-echarts.
  # Internal packages cannot be imported from another module, nor by notebooks.
  if ! pkgs="$(cd "$ROOT" && go list -f '{{if ne .Name "main"}}{{.ImportPath}}{{end}}' ./... |
    grep -v '/internal\(/\|$\)')"; then
    say "go list ./... failed (above); warming only the third-party packages"
    pkgs=""
  fi
  pkgs+=$'\n'"github.com/janpfeifer/gonb/gonbui"$'\n'"github.com/janpfeifer/gonb/cache"
  pkgs+=$'\n'"github.com/go-echarts/go-echarts/v2/charts"$'\n'"github.com/go-echarts/go-echarts/v2/opts"
  pkgs+=$'\n'"github.com/go-echarts/go-echarts/v2/components"
  rm -rf "$dir"
  mkdir -p "$dir"
  {
    echo "package main"
    echo
    echo "import ("
    grep -v '^$' <<<"$pkgs" | sort -u | sed 's/.*/\t_ "&"/'
    echo ")"
    echo
    echo "func main() {}"
  } >"$dir/main.go"
  (
    cd "$dir"
    go mod init gonb_warm >/dev/null 2>&1
    go mod edit -require "$mod@v0.0.0-00010101000000-000000000000" -replace "$mod=$ROOT/notebooks/.."
    go get >/dev/null 2>&1 || go get
    alive "compiling what the notebooks import" go build -o "$dir/warm"
  ) || {
    say "WARNING: warming the build cache failed (above); the notebooks still work, but the first cell will be slow. Fix the build and rerun scripts/setup.sh"
    return 0
  }
  rm -f "$dir/warm"
  say "Go build cache warm for $(grep -c . <<<"$pkgs") packages"
}

setup_jupyter_config() {
  local dest="$VENV/share/jupyter/lab/settings/overrides.d/workshop.json"
  if cmp -s "$ROOT/jupyter/overrides.json" "$dest"; then
    say "JupyterLab settings up to date ($dest)"
    return
  fi
  mkdir -p "$(dirname "$dest")"
  cp "$ROOT/jupyter/overrides.json" "$dest"
  say "JupyterLab settings installed ($dest: no news prompt, no update check)"
}

# run_step N TITLE FUNCTION runs one step between lines that say when it
# started and how long it took.
run_step() {
  local t0=$SECONDS
  step "step $1/6: $2"
  "$3"
  say "  ($3: $((SECONDS - t0)) s)"
}

main() {
  check_prereqs
  # Jupyter and IPython write into the venv, never into ~/.local or ~/.ipython.
  # shellcheck source=scripts/env.sh
  source "$ROOT/scripts/env.sh"
  run_step 1 "Python venv with JupyterLab (pinned)" setup_venv
  run_step 2 "gonb, goimports, gopls" setup_tools
  run_step 3 "the gonb kernelspec" setup_kernel
  run_step 4 "the offline ECharts asset" setup_echarts
  run_step 5 "JupyterLab settings" setup_jupyter_config
  run_step 6 "warming the Go build cache" warm_cache
  step "done: activate with 'source scripts/env.sh', or run scripts/workshop.sh"
}

main "$@"
