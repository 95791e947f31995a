#!/usr/bin/env bash
# workspace.sh: participants work on their own copies of the notebooks, in
# workspace/ (ignored by git), never on the committed notebooks/ that `make
# test` runs. make workshop serves workspace/.
#
# Usage: scripts/workspace.sh prepare|reset
#
#   prepare  copy each notebooks/NN-*.ipynb that workspace/ lacks; keep every
#            copy that exists (it is someone's work) and name those whose
#            committed notebook has changed since; refresh workspace/assets/
#   reset    (instructors) move every copy to workspace/.previous/<time>/, then
#            prepare fresh ones
#
# A copy carries the metadata this machine's GoNB kernel writes (its
# language_info, asked from the kernel once and kept in
# .venv/share/gonb-language-info.json), so opening an untouched copy does not
# mark it changed and closing it asks nothing. Needs scripts/setup.sh done.
#
# Environment: WORKSHOP_WORKSPACE (default <repo>/workspace)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORKSPACE="${WORKSHOP_WORKSPACE:-$ROOT/workspace}"
VENV="$ROOT/.venv"
INFO="$VENV/share/gonb-language-info.json"

say() { printf 'workspace: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ -x "$VENV/bin/python" && -x "$VENV/bin/gonb" ]] || die "$VENV has no python or gonb; run scripts/setup.sh first"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

# language_info writes what the gonb kernel reports as its language_info into
# INFO, unless INFO is already there for this gonb binary. The kernel is shut
# down cleanly and every process it started (gopls and gopls' telemetry child
# included, which live in process groups of their own) is gone afterwards.
language_info() {
  local key
  key="$(sha256sum "$VENV/bin/gonb" | cut -c1-16)"
  if [[ -f "$INFO" ]] && grep -q "\"gonb_sha256_16\": \"$key\"" "$INFO"; then
    return 0
  fi
  say "asking the gonb kernel for the metadata it writes into notebooks (once)"
  "$VENV/bin/python" - "$INFO" "$key" <<'PY' || die "could not start the gonb kernel to read its language_info; check: jupyter kernelspec list"
import json, os, signal, subprocess, sys, time
from jupyter_client.manager import start_new_kernel


def processes():
    """pid -> (ppid, command) of every process, from ps (Linux and macOS)."""
    out = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,command="], capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2:
            table[int(parts[0])] = (int(parts[1]), parts[2] if len(parts) > 2 else "")
    return table


def descendants(root):
    """The processes below root, with their commands. gonb starts gopls in a
    process group of its own, so killing the kernel's group misses it: they
    are found by parentage instead, while the kernel still lives."""
    table, found, todo = processes(), {}, [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, cmd) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = cmd
                todo.append(pid)
    return found


def alive(pid, cmd):
    now = processes().get(pid)
    return now is not None and now[1] == cmd  # the same process, not a reused pid


km, kc = start_new_kernel(kernel_name="gonb", startup_timeout=120, stderr=subprocess.DEVNULL)
try:
    info = kc.kernel_info(reply=True, timeout=120)["content"]["language_info"]
finally:
    kernel_pid = getattr(getattr(km, "provisioner", None), "pid", None) or km.kernel.pid
    below = descendants(kernel_pid)
    kc.stop_channels()
    # A clean shutdown (shutdown_request) lets gonb stop its gopls itself;
    # now=True would SIGKILL gonb and orphan it.
    km.shutdown_kernel(now=False)
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
        left = {pid: cmd for pid, cmd in below.items() if alive(pid, cmd)}
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(alive(p, c) for p, c in left.items()):
            time.sleep(0.1)
with open(sys.argv[1], "w") as f:
    json.dump({"gonb_sha256_16": sys.argv[2], "language_info": info}, f, indent=1)
PY
}

# copy_notebooks copies the committed notebooks workspace/ lacks, with the
# kernel's metadata, and lists the copies whose source changed since.
copy_notebooks() {
  mkdir -p "$WORKSPACE/.sources"
  "$VENV/bin/python" - "$ROOT/notebooks" "$WORKSPACE" "$INFO" <<'PY'
import glob, hashlib, json, os, sys
src_dir, ws, info_path = sys.argv[1:4]
with open(info_path) as f:
    language_info = json.load(f)["language_info"]
copied, stale = [], []
for src in sorted(glob.glob(os.path.join(src_dir, "[0-9][0-9]-*.ipynb"))):
    name = os.path.basename(src)
    dest = os.path.join(ws, name)
    stamp = os.path.join(ws, ".sources", name + ".sha256")
    with open(src, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if os.path.exists(dest):
        if os.path.exists(stamp) and open(stamp).read().strip() != digest:
            stale.append(name)
        continue
    nb = json.loads(data)
    nb.setdefault("metadata", {})["language_info"] = language_info
    tmp = dest + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        # As nbformat (and so JupyterLab) writes a notebook.
        f.write(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, dest)
    with open(stamp, "w") as f:
        f.write(digest + "\n")
    copied.append(name)
if copied:
    print("workspace: copied " + ", ".join(copied) + " into " + ws, file=sys.stderr)
if stale:
    print("workspace: notebooks/ has newer versions of " + ", ".join(stale)
          + "; your copies are kept (scripts/workspace.sh reset, or make reset-notebooks, replaces them and keeps yours in .previous/)",
          file=sys.stderr)
PY
}

# copy_assets keeps workspace/assets/ equal to notebooks/assets/ (the offline
# echarts asset, served at /files/assets/...; hidden in the file browser).
copy_assets() {
  [[ -d "$ROOT/notebooks/assets" ]] || die "notebooks/assets is missing; run scripts/setup.sh"
  mkdir -p "$WORKSPACE/assets"
  local f
  for f in "$ROOT/notebooks/assets"/*; do
    cmp -s "$f" "$WORKSPACE/assets/${f##*/}" || cp "$f" "$WORKSPACE/assets/"
  done
}

prepare() {
  language_info
  copy_notebooks
  copy_assets
}

reset() {
  local previous n=0 f
  previous="$WORKSPACE/.previous/$(date +%Y%m%d-%H%M%S)"
  for f in "$WORKSPACE"/[0-9][0-9]-*.ipynb; do
    [[ -e "$f" ]] || continue
    mkdir -p "$previous"
    mv "$f" "$previous/"
    rm -f "$WORKSPACE/.sources/${f##*/}.sha256"
    n=$((n + 1))
  done
  ((n == 0)) || say "moved $n notebook(s) to $previous"
  prepare
}

case "${1:-}" in
prepare) prepare ;;
reset) reset ;;
*)
  echo "usage: $0 prepare|reset" >&2
  exit 2
  ;;
esac
