#!/usr/bin/env bash
# setup.sh: install everything the workshop runs on, inside the repository.
#
# Usage: scripts/setup.sh          everything below
#        scripts/setup.sh gopls    only gopls (scripts/workshop.sh runs it in the background
#                                  after the URL, when it started setup with SETUP_DEFER_GOPLS=1)
#
# Installs, each step skipped when it is already done:
#   1. .venv/            Python venv with JupyterLab, nbclient, nbformat (requirements.txt, pinned)
#   2. .venv/bin/        gonb v0.11.4, goimports, gopls v0.23.0, built from tools/go.mod once
#                        into .cache/tools/<hash of go.mod, go.sum, Go version>/ and copied from
#                        there, so a new venv (or clone sharing .cache/) does not rebuild them.
#                        A kernel needs gonb and goimports to run a cell; gopls only serves
#                        completion and hover, so with SETUP_DEFER_GOPLS=1 it is left for
#                        `scripts/setup.sh gopls` (make workshop builds it behind the URL)
#   3. .venv/share/jupyter/kernels/gonb/
#                        the GoNB kernelspec, inside the venv (never in ~/.local); its env puts
#                        .venv/bin and the go binary's directory first on the kernel's PATH.
#                        It starts gonb with -go_work=<this repository>: every kernel, a
#                        restarted one too, begins with a go.work that uses the workshop
#                        module (and a replace to it), so a cell importing
#                        github.com/nightqueue/workshop/... builds from this checkout with no
#                        setup cell and no module proxy (nothing is fetched: the room is offline).
#                        Its env also sets GOFLAGS to setup's GOFLAGS plus -ldflags=-s: every
#                        cell is a go build, mostly a link, and a binary without symbol table
#                        and DWARF links with about a quarter less CPU (docs/speed.md, Cells)
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
#   SETUP_SKIP_WARM   set to 1 to skip step 6
#   SETUP_DEFER_GOPLS set to 1 to leave gopls out of step 2 when it is not built yet
#   KERNEL_GOFLAGS    the GOFLAGS the kernel's cells build with (default: go env GOFLAGS
#                     plus -ldflags=-s; set it empty for go build's defaults)
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
  # npm only installs echarts (step 4); a prefetched checkout has it already.
  [[ -f "$ROOT/tools/echarts/node_modules/echarts/dist/echarts.min.js" ]] || command -v npm >/dev/null ||
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
  # make prefetch leaves every wheel of requirements.txt in .cache/wheels, with
  # a .complete stamp for this requirements.txt and interpreter: then nothing
  # comes from PyPI (offline, venue Wi-Fi). Otherwise pip asks PyPI, as always.
  local from=() wheels="$ROOT/.cache/wheels"
  if [[ "$(cat "$wheels/.complete" 2>/dev/null)" == "$(sha256sum "$ROOT/requirements.txt" | cut -c1-16)-$("$VENV/bin/python" -c 'import sys, sysconfig; print(sys.implementation.cache_tag + "-" + sysconfig.get_platform())')" ]]; then
    from=(--no-index --find-links "$wheels")
    say "installing requirements.txt into the venv (pinned) from $wheels (make prefetch), not PyPI"
  else
    say "installing requirements.txt into the venv (pinned)"
  fi
  alive "installing JupyterLab and its requirements" "$VENV/bin/python" -m pip install --quiet \
    --disable-pip-version-check --no-input ${from[@]+"${from[@]}"} -r "$ROOT/requirements.txt"
  stamp_set requirements "$want"
}

# tools_cache prints the directory that holds the tools built for this
# tools/go.mod, go.sum and Go version.
tools_cache() {
  local want="$1"
  printf '%s/.cache/tools/%s' "$ROOT" "$(printf '%s' "$want" | sha256sum | cut -c1-16)"
}

tools_want() {
  printf '%s' "$(hash_files "$ROOT/tools/go.mod" "$ROOT/tools/go.sum")-$(go env GOVERSION GOOS GOARCH | tr '\n' -)"
}

# build_tools DIR TOOL...: go install the tools' packages into DIR, through a
# temporary directory so a build cut short leaves nothing half-written.
build_tools() {
  local dir="$1" pkgs=() t
  shift
  for t in "$@"; do
    case "$t" in
      gonb) pkgs+=(github.com/janpfeifer/gonb) ;;
      goimports) pkgs+=(golang.org/x/tools/cmd/goimports) ;;
      gopls) pkgs+=(golang.org/x/tools/gopls) ;;
    esac
  done
  rm -rf "$dir.tmp-$1"
  mkdir -p "$dir.tmp-$1" "$dir"
  (cd "$ROOT/tools" && GOBIN="$dir.tmp-$1" alive "building $*" go install "${pkgs[@]}")
  for t in "$@"; do
    mv -f "$dir.tmp-$1/$t" "$dir/$t"
  done
  rm -rf "$dir.tmp-$1"
}

# install_tools DIR TOOL...: copy built tools into the venv. A rename, not a
# copy over the file: a running kernel keeps its binary.
install_tools() {
  local dir="$1" t
  shift
  for t in "$@"; do
    cp "$dir/$t" "$VENV/bin/.$t.new" && mv -f "$VENV/bin/.$t.new" "$VENV/bin/$t"
  done
}

# setup_tools: gonb and goimports, which a kernel needs to run a cell, then
# gopls (completion and hover), unless SETUP_DEFER_GOPLS=1 and it is not
# built yet: then `scripts/setup.sh gopls` builds it later.
setup_tools() {
  local want cache need=() t
  want="$(tools_want)"
  cache="$(tools_cache "$want")"
  if [[ -x "$VENV/bin/gonb" && -x "$VENV/bin/goimports" ]] && stamp_ok tools "$want"; then
    say "gonb, goimports up to date"
  else
    for t in gonb goimports; do
      [[ -x "$cache/$t" ]] || need+=("$t")
    done
    if ((${#need[@]})); then
      say "building ${need[*]} (tools/go.mod) into $cache; minutes on a cold Go cache"
      build_tools "$cache" "${need[@]}"
    fi
    install_tools "$cache" gonb goimports
    say "gonb, goimports copied from $cache into $VENV/bin"
    stamp_set tools "$want"
  fi
  if [[ "${SETUP_DEFER_GOPLS:-}" == 1 ]] && ! [[ -x "$cache/gopls" ]]; then
    say "gopls (completion and hover only) is left for later: scripts/setup.sh gopls"
    return
  fi
  setup_gopls
}

setup_gopls() {
  local want cache
  want="$(tools_want)"
  cache="$(tools_cache "$want")"
  if [[ -x "$VENV/bin/gopls" ]] && stamp_ok gopls "$want"; then
    say "gopls up to date"
    return
  fi
  if ! [[ -x "$cache/gopls" ]]; then
    say "building gopls (tools/go.mod) into $cache; minutes on a cold Go cache"
    build_tools "$cache" gopls
  fi
  install_tools "$cache" gopls
  say "gopls copied from $cache into $VENV/bin"
  stamp_set gopls "$want"
}

# kernel_goflags prints the GOFLAGS a kernel runs with: this environment's
# (go env: the Docker image's -modcacherw, say) less any -mod=... (the kernel's
# go.work puts go in workspace mode, which refuses -mod=mod) plus -ldflags=-s,
# unless they set -ldflags already. Each cell is a `go build`, mostly a link of everything
# the cell imports; -s leaves out the symbol table and DWARF (since Go 1.22 -s
# implies -w), which no cell uses: panics still name file and line (that is
# pclntab, kept), and the link takes about a quarter less CPU (docs/speed.md,
# Cells; measured by make bench-cells). Only the link changes: the compiled
# packages in the build cache stay valid. KERNEL_GOFLAGS overrides it all.
kernel_goflags() {
  if [[ -n "${KERNEL_GOFLAGS+set}" ]]; then
    printf '%s' "$KERNEL_GOFLAGS"
    return
  fi
  local flags="" f
  for f in $(go env GOFLAGS); do
    [[ "$f" == -mod=* ]] || flags+="${flags:+ }$f"
  done
  case " $flags" in
    *" -ldflags"*) printf '%s' "$flags" ;;
    *) printf '%s' "${flags:+$flags }-ldflags=-s" ;;
  esac
}

setup_kernel() {
  local data="$VENV/share/jupyter" spec goroot_bin want goflags
  spec="$data/kernels/gonb/kernel.json"
  goroot_bin="$(dirname "$(command -v go)")"
  goflags="$(kernel_goflags)"
  want="$(hash_files "$STAMPS/tools")-$VENV-$goroot_bin-go_work=$ROOT-goflags=$goflags"
  if [[ -f "$spec" ]] && stamp_ok kernel "$want"; then
    say "gonb kernelspec up to date ($spec)"
    return
  fi
  say "installing the gonb kernelspec into $data"
  # -go_work takes a comma-separated list of directories.
  [[ "$ROOT" != *,* ]] ||
    die "the repository's path $ROOT holds a comma, which gonb -go_work cannot take; move the checkout to a path without one"
  # --force_deps: gopls may still be building (SETUP_DEFER_GOPLS); a kernel
  # started without it runs cells and only lacks completion and hover.
  # --go_work (GoNB 0.11.3+, kept in the kernelspec's argv): each kernel runs
  # `go work init; go work use $ROOT .` in its temporary module and adds the
  # replace, so the module wiring is the kernel's, not a notebook cell's, and
  # Kernel > Restart strands nobody.
  PATH="$VENV/bin:$PATH" JUPYTER_DATA_DIR="$data" "$VENV/bin/gonb" --install --force_deps --go_work="$ROOT" >/dev/null 2>&1 ||
    die "gonb --install failed; run: JUPYTER_DATA_DIR=$data $VENV/bin/gonb --install --force_deps --go_work=$ROOT"
  # The kernel inherits Jupyter's environment; put our tools and go first on its PATH
  # whoever starts Jupyter (jupyter_client expands ${PATH} in kernelspec env values).
  # GOFLAGS (kernel_goflags) is fixed here, not "${GOFLAGS} ...": jupyter_client
  # leaves an unset ${VAR} as it is, and go rejects that entry.
  "$VENV/bin/python" - "$spec" "$VENV/bin:$goroot_bin" "$ROOT" "$goflags" <<'PY' || die "the gonb kernelspec $spec is not what setup.sh wrote (above); rerun scripts/setup.sh"
import json, sys
path, prefix, root, goflags = sys.argv[1:5]
with open(path) as f:
    spec = json.load(f)
if "-go_work=" + root not in spec.get("argv", []):
    sys.exit(f"setup: gonb --install wrote no -go_work={root} into {path}: is .venv/bin/gonb older than 0.11.3?")
spec.setdefault("env", {})["PATH"] = prefix + ":${PATH}"
spec["env"]["GOFLAGS"] = goflags
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
  # GoNB's goimports lists every module of the kernel's workspace (go list -m
  # -e -json ...) before each cell: the metadata of modules nothing builds
  # (.info files) must be in the module cache too, or an offline kernel (the
  # room's network has no route out) asks the proxy for them every cell.
  (cd "$ROOT" && go list -m -json all >/dev/null) ||
    say "WARNING: go list -m all failed (above); offline, each cell will wait for the module proxy"
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
  if [[ "${1:-}" == gopls ]]; then
    # shellcheck source=scripts/env.sh
    source "$ROOT/scripts/env.sh"
    [[ -x "$VENV/bin/python" ]] || die "no venv at $VENV; run scripts/setup.sh first"
    run_step 1 "gopls (completion and hover)" setup_gopls
    return
  fi
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
