#!/usr/bin/env bash
# room.sh: the workshop room from one host (make room). JupyterHub 6 with the
# room code sign-in (room/roomauth.py) and one Docker container per participant
# (DockerSpawner, room/Dockerfile on top of the lab image), on one port.
#
#   1. checks: Docker answers, no other room from this checkout, the ports are free
#   2. the hub's own venv (room/requirements.txt, pinned) and
#      configurable-http-proxy (npm, pinned) in .cache/room/
#   3. the lab image (Dockerfile) and the participant image (room/Dockerfile)
#   4. the room's Docker network: internal (no route out, nothing routed in)
#      and inter-container traffic off, so a participant reaches only the hub
#   5. the room code and the admin code (generated once and kept in
#      ROOM_STATE when not set), then JupyterHub in the foreground
#
# Ctrl-C or TERM stops the hub, which stops every participant's server; their
# notebooks stay in their volumes (nightqueue-room-<name>). A hub that dies
# otherwise (killed, crashed) leaves the servers running: make room again
# finds them.
#
# Environment (defaults in brackets):
#   ROOM_PORT [8900]           the one public port (the hub's proxy)
#   ROOM_BIND_IP [0.0.0.0]     its address (127.0.0.1: this machine only)
#   ROOM_CODE, ROOM_ADMIN_CODE [generated once, kept in ROOM_STATE/codes]
#   ROOM_TLS_CERT, ROOM_TLS_KEY  PEM files: serve HTTPS
#   ROOM_MEM_LIMIT [2G] ROOM_CPU_LIMIT [1] ROOM_PIDS_LIMIT [1024]  per participant
#   ROOM_IDLE_TIMEOUT [3600]   seconds before an idle server is stopped (work kept)
#   ROOM_PROXY_API_PORT [ROOM_PORT+1] ROOM_HUB_PORT [ROOM_PORT+2]  internal ports
#   ROOM_BOARD_PORT [ROOM_PORT+3]  the room board (queuekit board, a hub service),
#                              on the room network's gateway like the hub
#   ROOM_STATE [<repo>/.room]  the hub's database, cookie secret, codes, claims
#   ROOM_SIGNAL_STATUS [128+signal]  exit status after a stop by INT, TERM or HUP
#                              (make room sets 0: a stop is not a failure)
#   ROOM_NETWORK [nightqueue-room]  ROOM_IMAGE [nightqueue-room:local]
#   ROOM_SKIP_BUILD=1          use the images as they are (tests)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PROGRESS_PREFIX=room
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
say() { printf 'room: %s\n' "$*" >&2; }
die() { say "$*"; exit "${2:-1}"; }

ROOM_PORT="${ROOM_PORT:-8900}"
if ! [[ "$ROOM_PORT" =~ ^[0-9]+$ ]] || ((ROOM_PORT < 1 || ROOM_PORT > 65532)); then
  die "ROOM_PORT=$ROOM_PORT is not a port number: set ROOM_PORT to a free port such as 8900" 2
fi
ROOM_PROXY_API_PORT="${ROOM_PROXY_API_PORT:-$((ROOM_PORT + 1))}"
ROOM_HUB_PORT="${ROOM_HUB_PORT:-$((ROOM_PORT + 2))}"
ROOM_BOARD_PORT="${ROOM_BOARD_PORT:-$((ROOM_PORT + 3))}"
ROOM_BIND_IP="${ROOM_BIND_IP:-0.0.0.0}"
ROOM_STATE="${ROOM_STATE:-$ROOT/.room}"
ROOM_NETWORK="${ROOM_NETWORK:-nightqueue-room}"
ROOM_IMAGE="${ROOM_IMAGE:-nightqueue-room:local}"
LAB_IMAGE="${ROOM_LAB_IMAGE:-nightqueue-workshop-lab:local}"
VENV="$ROOT/.cache/room/venv"
CHP_DIR="$ROOT/.cache/room/chp"
CHP_VERSION=5.3.0
export ROOM_PORT ROOM_PROXY_API_PORT ROOM_HUB_PORT ROOM_BOARD_PORT ROOM_BIND_IP ROOM_STATE ROOM_NETWORK ROOM_IMAGE

if [[ -n "${ROOM_TLS_CERT:-}${ROOM_TLS_KEY:-}" ]]; then
  [[ -r "${ROOM_TLS_CERT:-}" && -r "${ROOM_TLS_KEY:-}" ]] ||
    die "HTTPS needs both ROOM_TLS_CERT and ROOM_TLS_KEY as readable PEM files (got '${ROOM_TLS_CERT:-}' and '${ROOM_TLS_KEY:-}')" 2
fi

# ---- 1. checks
mkdir -p "$ROOM_STATE"
chmod 0700 "$ROOM_STATE"
ROOM_STATE="$(cd "$ROOM_STATE" && pwd -P)"
exec 9>"$ROOM_STATE/lock"
if ! flock -n 9; then
  die "a room already runs from this checkout (port $(cat "$ROOM_STATE/port" 2>/dev/null || echo '?')): open it, or stop it with Ctrl-C in its terminal first"
fi
echo "$ROOM_PORT" >"$ROOM_STATE/port"
command -v docker >/dev/null ||
  die "no docker command: install Docker (Debian/Ubuntu: apt-get install docker.io), start it, then run make room again"
docker info >/dev/null 2>&1 ||
  die "no Docker engine answers at ${DOCKER_HOST:-the default socket}: start it (systemctl start docker, or dockerd as root), then run make room again"
for p in "$ROOM_PORT" "$ROOM_PROXY_API_PORT" "$ROOM_HUB_PORT" "$ROOM_BOARD_PORT"; do
  if [[ -n "$(ss -ltnH "sport = :$p" 2>/dev/null)" ]]; then
    die "port $p is in use (another room or program): set ROOM_PORT to a free port (the room also uses the next three), e.g. ROOM_PORT=$((ROOM_PORT + 10)) make room"
  fi
done

# ---- 2. hub software
step "1/4 JupyterHub and configurable-http-proxy (pinned; .cache/room/)"
want="$(sha256sum room/requirements.txt | cut -c1-16)"
if [[ "$(cat "$VENV/.room-key" 2>/dev/null)" != "$want" ]]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  alive "pip install -r room/requirements.txt" "$VENV/bin/pip" install -q -r room/requirements.txt ||
    die "installing the hub's packages failed (above); check that PyPI answers, then rerun"
  echo "$want" >"$VENV/.room-key"
fi
CHP="$CHP_DIR/node_modules/.bin/configurable-http-proxy"
if [[ ! -x "$CHP" || "$(cat "$CHP_DIR/.room-key" 2>/dev/null)" != "$CHP_VERSION" ]]; then
  npm_config_cache="$ROOT/.cache/npm" alive "npm install configurable-http-proxy@$CHP_VERSION" \
    npm install --prefix "$CHP_DIR" --no-audit --no-fund --loglevel=error "configurable-http-proxy@$CHP_VERSION" >&2 ||
    die "npm could not install configurable-http-proxy@$CHP_VERSION (above); check that the npm registry answers"
  echo "$CHP_VERSION" >"$CHP_DIR/.room-key"
fi
export ROOM_CHP="$CHP"

# ---- 3. images
step "2/4 images: $LAB_IMAGE (Dockerfile), $ROOM_IMAGE (room/Dockerfile)"
if [[ "${ROOM_SKIP_BUILD:-}" != 1 ]]; then
  # Like make: the lab image is rebuilt when one of its inputs (the tracked
  # files it installs and serves) is newer than it, or it is missing; so an
  # image docker compose built from this checkout is used as it is,
  # whichever builder made it. The room's own files are not its inputs.
  newest="$(git ls-files -z -- Dockerfile requirements.txt go.mod go.sum tools jupyter scripts notebooks queuekit data \
    ':!scripts/room.sh' ':!scripts/room-server.sh' 2>/dev/null | xargs -0 -r stat -c %Y 2>/dev/null | sort -n | tail -n 1 || true)"
  created="$(date -d "$(docker image inspect -f '{{.Created}}' "$LAB_IMAGE" 2>/dev/null || echo 1970-01-01)" +%s 2>/dev/null || echo 0)"
  if [[ -z "$newest" || "$created" -le "$newest" ]]; then
    alive "docker build $LAB_IMAGE (log $ROOM_STATE/build.log)" docker build -q -t "$LAB_IMAGE" . >"$ROOM_STATE/build.log" 2>&1 ||
      { tail -n 20 "$ROOM_STATE/build.log" >&2; die "docker build of the lab image failed (above): docker build -t $LAB_IMAGE . shows it all"; }
  else
    say "$LAB_IMAGE is newer than every file it is built from: using it"
  fi
  go run ./queuekit/cmd/queuekit servers install >&2
  ctx="$ROOT/.cache/room/image"
  rm -rf "$ctx"
  mkdir -p "$ctx/dynamodb-local" "$ctx/elasticmq"
  cp -a "$ROOT/.cache/dynamodb-local/3.3.1" "$ctx/dynamodb-local/"
  cp -a "$ROOT/.cache/elasticmq/1.7.1" "$ctx/elasticmq/"
  rm -rf "$ctx/elasticmq/1.7.1/run"
  cp room/Dockerfile scripts/room-server.sh "$ctx/"
  alive "docker build $ROOM_IMAGE (log $ROOM_STATE/build.log)" docker build -q --build-arg "LAB_IMAGE=$LAB_IMAGE" -t "$ROOM_IMAGE" "$ctx" >"$ROOM_STATE/build.log" 2>&1 ||
    { tail -n 20 "$ROOM_STATE/build.log" >&2; die "docker build of the participant image failed (above; log $ROOM_STATE/build.log)"; }
  rm -rf "$ctx"
fi
docker image inspect "$ROOM_IMAGE" >/dev/null 2>&1 || die "no image $ROOM_IMAGE: run make room without ROOM_SKIP_BUILD"
# The room board (queuekit board, run by the hub as a service): built from
# this checkout with the host's Go, or in the lab image when there is none;
# its page draws with the offline echarts.min.js of make setup or of the image.
ROOM_QUEUEKIT="$ROOT/.cache/room/bin/queuekit"
mkdir -p "$ROOT/.cache/room/bin"
if command -v go >/dev/null; then
  alive "go build queuekit (the room board)" go build -o "$ROOM_QUEUEKIT" ./queuekit/cmd/queuekit ||
    die "go build ./queuekit/cmd/queuekit failed (above): the room board needs it"
else
  if ! docker run --rm --entrypoint bash "$LAB_IMAGE" -c 'go build -o /tmp/queuekit ./queuekit/cmd/queuekit && cat /tmp/queuekit' \
    >"$ROOM_QUEUEKIT.new" 2>"$ROOM_STATE/build.log"; then
    tail -n 5 "$ROOM_STATE/build.log" >&2
    die "building queuekit in $LAB_IMAGE failed (above): install Go 1.26+ or rebuild the lab image"
  fi
  chmod +x "$ROOM_QUEUEKIT.new"
  mv "$ROOM_QUEUEKIT.new" "$ROOM_QUEUEKIT"
fi
ROOM_ECHARTS="$ROOT/notebooks/assets/echarts.min.js"
if [[ ! -s "$ROOM_ECHARTS" ]]; then
  ROOM_ECHARTS="$ROOT/.cache/room/echarts.min.js"
  [[ -s "$ROOM_ECHARTS" ]] || docker run --rm --entrypoint cat "$LAB_IMAGE" notebooks/assets/echarts.min.js >"$ROOM_ECHARTS" 2>/dev/null ||
    say "no echarts.min.js (make setup makes it): the board shows its tables without the chart"
fi
export ROOM_QUEUEKIT ROOM_ECHARTS

# ---- 4. network
step "3/4 the room network $ROOM_NETWORK (internal, no traffic between participants)"
if ! docker network inspect "$ROOM_NETWORK" >/dev/null 2>&1; then
  docker network create --internal -o com.docker.network.bridge.enable_icc=false \
    --label nightqueue.room=1 "$ROOM_NETWORK" >/dev/null ||
    die "docker network create $ROOM_NETWORK failed (above)"
fi
ROOM_HUB_IP="$(docker network inspect -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}' "$ROOM_NETWORK")"
[[ -n "$ROOM_HUB_IP" ]] || die "the network $ROOM_NETWORK has no gateway address: docker network rm $ROOM_NETWORK, then rerun"
export ROOM_HUB_IP

# ---- 5. codes, then the hub
code_of() { # NAME LENGTH: the environment's value, the kept one, or a new one
  local name="$1" len="$2" file="$ROOM_STATE/codes" val
  val="${!name:-}"
  if [[ -z "$val" ]]; then
    val="$(sed -n "s/^$name=//p" "$file" 2>/dev/null | head -n 1)"
  fi
  if [[ -z "$val" ]]; then
    val="$(python3 -c "import secrets; a='abcdefghjkmnpqrstuvwxyz23456789'; print(''.join(secrets.choice(a) for _ in range($len)))")"
    (umask 077 && echo "$name=$val" >>"$file")
  fi
  printf '%s' "$val"
}
ROOM_CODE="$(code_of ROOM_CODE 6)"
ROOM_ADMIN_CODE="$(code_of ROOM_ADMIN_CODE 20)"
[[ "$ROOM_CODE" != "$ROOM_ADMIN_CODE" ]] || die "ROOM_CODE and ROOM_ADMIN_CODE must differ" 2
export ROOM_CODE ROOM_ADMIN_CODE
CONFIGPROXY_AUTH_TOKEN="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
export CONFIGPROXY_AUTH_TOKEN

hub_pid="" stopping=0
cleanup() {
  local status=$?
  trap '' INT TERM HUP
  if [[ -n "$hub_pid" ]] && kill -0 "$hub_pid" 2>/dev/null; then
    say "stopping the hub (pid $hub_pid) and every participant's server"
    kill -TERM "$hub_pid" 2>/dev/null || true
    wait "$hub_pid" 2>/dev/null || true
  fi
  # What the hub started (the proxy, the idle culler) runs in ROOM_STATE: a
  # hub that was killed leaves them behind; the next hub starts its own.
  local d i left_pids=()
  for d in /proc/[0-9]*; do
    [[ "$(readlink "$d/cwd" 2>/dev/null)" == "$ROOM_STATE" && "${d#/proc/}" != "$$" ]] || continue
    kill -TERM "${d#/proc/}" 2>/dev/null && left_pids+=("${d#/proc/}")
  done
  for ((i = 0; i < 50; i++)); do
    local alive=0 p
    for p in "${left_pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  if ((stopping)); then
    # The hub stops the servers it knows; a server it lost track of is stopped too.
    local left
    left="$(docker ps -q --filter "name=^nightqueue-room-" 2>/dev/null || true)"
    if [[ -n "$left" ]]; then
      # shellcheck disable=SC2086
      docker stop $left >/dev/null 2>&1 || true
    fi
    say "stopped; participants' work is kept in the volumes nightqueue-room-<name>"
    status="${ROOM_SIGNAL_STATUS:-$status}"
  elif ((status != 0)); then
    say "the hub stopped (status $status; log $ROOM_STATE/hub.log); participants' servers keep running: make room brings it back"
  fi
  exit "$status"
}
trap cleanup EXIT
trap "trap '' INT TERM HUP; stopping=1; exit 130" INT
trap "trap '' INT TERM HUP; stopping=1; exit 143" TERM
trap "trap '' INT TERM HUP; stopping=1; exit 129" HUP

step "4/4 JupyterHub on $ROOM_BIND_IP:$ROOM_PORT (log $ROOM_STATE/hub.log)"
(cd "$ROOM_STATE" && exec "$VENV/bin/jupyterhub" -f "$ROOT/room/jupyterhub_config.py") 9>&- >>"$ROOM_STATE/hub.log" 2>&1 &
hub_pid=$!
scheme=http
[[ -z "${ROOM_TLS_CERT:-}" ]] || scheme=https
for ((i = 0; i < 300; i++)); do
  kill -0 "$hub_pid" 2>/dev/null || { tail -n 20 "$ROOM_STATE/hub.log" >&2; hub_pid=""; die "the hub exited at start (log above)"; }
  [[ "$(curl -sk -o /dev/null -m 2 -w '%{http_code}' "$scheme://127.0.0.1:$ROOM_PORT/hub/api/" || true)" == 200 ]] && break
  sleep 0.5
done
host_ip="$(hostname -I 2>/dev/null | awk '{print $1}')"
cat >&2 <<EOF

  The room is open. Participants open:

      $scheme://${host_ip:-127.0.0.1}:$ROOM_PORT/

  and sign in with a name of their choice and the room code:   $ROOM_CODE
  (first sign-in claims the name and shows a personal code for coming back)

  Instructor: name instructor, code $ROOM_ADMIN_CODE  -> $scheme://${host_ip:-127.0.0.1}:$ROOM_PORT/hub/admin
  Room board (instructor only):  $scheme://${host_ip:-127.0.0.1}:$ROOM_PORT/services/board/
EOF
if [[ "$scheme" == http ]]; then
  cat >&2 <<EOF

  Plain HTTP: anyone on this network can read the room code and session cookies
  in transit. Set ROOM_TLS_CERT and ROOM_TLS_KEY for HTTPS (docs/room.md).
EOF
fi
printf '\n  Ctrl-C stops the room (work stays in the volumes).\n\n' >&2
step "ready"
wait "$hub_pid"
