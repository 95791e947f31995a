#!/usr/bin/env bash
# lab-entrypoint.sh: the lab container's entrypoint (Dockerfile). It starts as
# root, looks at who owns the mounted workspace/ folder, and runs the command
# (default: the image's launcher, queuekit workshop) as that user, so the notebooks you save belong
# to you on the host whoever you are, with no uid to pass in:
#
#   - owned by uid U > 0 (Linux, a checkout of any user; Docker Desktop shows
#     your files with your uid): runs as U:G, with a passwd entry for U if the
#     image has none and the group `workshop` added, which owns and can write
#     the image's venv, Go caches and tools (built group-writable);
#   - owned by root (you are root on Linux, rootless Docker, or a Docker Desktop
#     file sharing that shows every file as root): runs as root, which inside
#     such a container is you on the host.
#
# The privileges are dropped with setpriv (util-linux, in every Debian), so the
# process tree is the command itself, not a su or sudo.
#
# Usage: lab-entrypoint.sh [COMMAND ARGS...]
#   docker compose exec lab scripts/lab-entrypoint.sh bash   (a shell as the same user)
# Environment: LAB_WORKSPACE (default /home/workshop/workshop/workspace)
set -euo pipefail

WORKSPACE="${LAB_WORKSPACE:-/home/workshop/workshop/workspace}"
say() { printf 'lab-entrypoint: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ $# -gt 0 ]] || set -- .cache/bin/queuekit workshop
[[ -d "$WORKSPACE" ]] ||
  die "$WORKSPACE is not there; docker-compose.yml mounts ./workspace onto it (run docker compose from the repository)"

if [[ "$(id -u)" != 0 ]]; then
  # Started with --user (or docker compose run -u): nothing to adopt; say so
  # when that user cannot write the workspace.
  [[ -w "$WORKSPACE" ]] ||
    die "running as uid $(id -u), which cannot write $WORKSPACE (owned by $(stat -c %u:%g "$WORKSPACE")); start the lab without --user/user:, the entrypoint adopts the folder's owner"
  exec "$@"
fi

uid="$(stat -c %u "$WORKSPACE")"
gid="$(stat -c %g "$WORKSPACE")"
export HOME=/home/workshop
if [[ "$uid" == 0 ]]; then
  [[ -n "${LAB_ENTRYPOINT_QUIET:-}" ]] || say "workspace/ is owned by root: running as root (root on the host, rootless Docker or Docker Desktop)"
  export USER=root LOGNAME=root
  exec "$@"
fi

workshop_gid="$(getent group workshop | cut -d: -f3)"
[[ -n "$workshop_gid" ]] || die "the image has no group workshop; rebuild it: docker compose build lab"
if ! getent group "$gid" >/dev/null; then
  groupadd --non-unique --gid "$gid" participants
fi
if ! name="$(getent passwd "$uid" | cut -d: -f1)" || [[ -z "$name" ]]; then
  name=participant
  getent passwd "$name" >/dev/null && name="participant$uid"
  useradd --non-unique --no-create-home --home-dir "$HOME" --shell /bin/bash \
    --uid "$uid" --gid "$gid" --groups workshop "$name"
fi
[[ -n "${LAB_ENTRYPOINT_QUIET:-}" ]] || say "workspace/ is owned by $uid:$gid: running as $name ($uid:$gid, groups $gid,$workshop_gid)"
export USER="$name" LOGNAME="$name"
exec setpriv --reuid="$uid" --regid="$gid" --groups="$gid,$workshop_gid" --inh-caps=-all --bounding-set=-all -- "$@"
