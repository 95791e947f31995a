# dockerd.sh: the Docker engine of the stages that need one (tests/compose,
# tests/room): Debian's docker.io and debootstrap when missing, a dockerd of
# the test's own on its own socket, pid file and exec root, refused next to
# another dockerd on the same data root, and stopped by its pid. Source it
# (bash) after scripts/progress.sh (for alive); the caller defines say and
# die (die MESSAGE [STATUS]) and exports DOCKER_HOST=unix://RUN/docker.sock.
# shellcheck shell=bash

# dockerd_pid is the pid of the dockerd dockerd_start started, "" before.
dockerd_pid=""

# dockerd_packages LOGS: installs docker.io and debootstrap when missing
# (apt-get's output in LOGS/apt.log).
dockerd_packages() {
  local logs="$1" p missing=()
  for p in docker.io debootstrap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    say "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    alive "apt-get update" apt-get update -qq
    alive "installing ${missing[*]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$logs/apt.log" 2>&1 ||
      { tail -n 20 "$logs/apt.log" >&2; die "apt-get install ${missing[*]} failed (log: $logs/apt.log)"; }
  fi
  command -v docker >/dev/null || die "no docker CLI after installing docker.io"
}

# dockerd_start RUN DATA_ROOT LOGS DATA_ROOT_VAR: starts dockerd with
# default settings on RUN/docker.sock (pid file and exec root under RUN, log
# LOGS/dockerd.log) and waits up to 30 s for it to answer; dies when another
# dockerd already uses DATA_ROOT (DATA_ROOT_VAR names the variable that moves
# it) or when dockerd exits or does not answer.
dockerd_start() {
  local run="$1" data_root="$2" logs="$3" var="$4" d root_of i
  # One data root, one daemon: refuse to start next to a dockerd that uses ours.
  for d in /proc/[0-9]*; do
    [[ "$(cat "$d/comm" 2>/dev/null)" == dockerd ]] || continue
    root_of="$(tr '\0' '\n' <"$d/cmdline" 2>/dev/null | sed -n 's/^--data-root=//p; /^--data-root$/{n;p}' || true)"
    root_of="${root_of%%$'\n'*}"
    if [[ "$(realpath -m "${root_of:-/var/lib/docker}")" == "$(realpath -m "$data_root")" ]]; then
      die "a dockerd (pid ${d#/proc/}) already uses $data_root; stop it, or set $var to another directory"
    fi
  done
  say "starting dockerd (socket $run/docker.sock, data root $data_root; log $logs/dockerd.log)"
  dockerd --host "unix://$run/docker.sock" --pidfile "$run/dockerd.pid" --exec-root "$run/exec" \
    --data-root "$data_root" >"$logs/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for ((i = 0; i < 150; i++)); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || { tail -n 20 "$logs/dockerd.log" >&2; die "dockerd exited (log above)"; }
    sleep 0.2
  done
  docker info >/dev/null 2>&1 || die "dockerd did not answer on $DOCKER_HOST within 30 s (log: $logs/dockerd.log)"
}

# dockerd_running: whether the dockerd dockerd_start started still runs.
dockerd_running() { [[ -n "$dockerd_pid" ]] && kill -0 "$dockerd_pid" 2>/dev/null; }

# dockerd_stop: stops that dockerd by its pid (TERM, up to 20 s, then KILL).
dockerd_stop() {
  dockerd_running || return 0
  say "stopping dockerd (pid $dockerd_pid)"
  kill -TERM "$dockerd_pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$dockerd_pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$dockerd_pid" 2>/dev/null || true
}
