#!/usr/bin/env bash
# run.sh: the docker compose path, for real, with a real Docker engine (make
# test-compose; .ci/run runs it after make test). As root on Debian:
#
#   1. installs Debian's docker.io and debootstrap when missing, starts its own
#      dockerd with default settings on its own socket and pid file, and stops
#      it (by that pid) when the run ends, whatever happens
#   2. the compose v2 plugin (tests/compose/compose-plugin.sh, cached in
#      .cache/compose/), built in the background while step 3 runs
#   3. stand-ins for the three images docker-compose.yml names, labelled as
#      such (tests/compose/standins.sh): no registry is reachable here; an image
#      already present that is not a stand-in is used as it is
#   4. the user's path, with DYNAMODB_PORT, SQS_PORT and LAB_PORT set to free
#      ports: `docker compose up --build -d`, then checks that both servers are
#      healthy, the lab prints its URL, the API answers 403 without the token,
#      only the gonb kernel is offered, notebooks 00 and 07 run inside the lab
#      container (against dynamodb:8000 and sqs:9324), every published port is
#      on 127.0.0.1 only, `down` then `up` keeps the catalog (a marker table
#      written from the host), the lab runs as the owner of the mounted
#      workspace (root here, and uid 4321 on a second workspace), and
#      `down -v` leaves no container, network or volume of the project
#
# Prints one line per check and "compose: N passed, M failed"; exit 1 when a
# check failed, 2 when it cannot run (not root, not Debian).
#
# Environment:
#   COMPOSE_TEST_PROJECT   compose project name (default nightqueue-compose-test)
#   COMPOSE_TEST_RUN       directory for dockerd's socket, pid file and exec root
#                          (default /run/nightqueue-compose-test)
#   COMPOSE_TEST_DATA_ROOT dockerd's data root (default /var/lib/docker: images
#                          stay for the next run)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
PROGRESS_PREFIX=compose
# shellcheck source=scripts/progress.sh
source "$ROOT/scripts/progress.sh"
# shellcheck source=tests/lib/check.sh
source "$ROOT/tests/lib/check.sh"
# shellcheck source=tests/lib/dockerd.sh
source "$ROOT/tests/lib/dockerd.sh"
CHECK_NAME=compose
say() { printf 'compose: %s\n' "$*" >&2; }
die() { say "$*"; exit "${2:-1}"; }

PROJECT="${COMPOSE_TEST_PROJECT:-nightqueue-compose-test}"
RUN="${COMPOSE_TEST_RUN:-/run/nightqueue-compose-test}"
DATA_ROOT="${COMPOSE_TEST_DATA_ROOT:-/var/lib/docker}"
LOGS="$ROOT/tests/artifacts/compose"
export DOCKER_HOST="unix://$RUN/docker.sock"
export DOCKER_CONFIG="$ROOT/.cache/docker-config"
# The user's environment, not the test runner's: the lab makes its own token.
unset JUPYTER_TOKEN COMPOSE_FILE COMPOSE_PROJECT_NAME

[[ "$(id -u)" == 0 ]] || die "needs root (it installs docker.io and starts dockerd); CI runs it as root" 2
command -v apt-get >/dev/null || die "needs Debian/Ubuntu (apt-get) to install docker.io" 2
mkdir -p "$LOGS" "$RUN"

plugin_pid="" up=0 extra_ws=""
timings=()
t_phase=$SECONDS
phase_done() { timings+=("$1 $((SECONDS - t_phase)) s"); t_phase=$SECONDS; }

dc() { docker compose -p "$PROJECT" "$@"; }

cleanup() {
  local status=$?
  trap '' INT TERM HUP
  if ((up)) && dockerd_running; then
    dc down -v --remove-orphans >/dev/null 2>&1 || true
    dc -f docker-compose.yml -f "$LOGS/owner.override.yml" down -v >/dev/null 2>&1 || true
  fi
  [[ -z "$extra_ws" ]] || rm -rf "$extra_ws"
  if [[ -n "$plugin_pid" ]] && kill -0 "$plugin_pid" 2>/dev/null; then
    kill "$plugin_pid" 2>/dev/null || true
  fi
  dockerd_stop
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---- 1. engine
step "1/4 Docker engine (Debian docker.io), debootstrap"
dockerd_packages "$LOGS"

# The compose plugin takes minutes on a cold cache: build it while the engine
# starts and the stand-ins build.
rm -f "$LOGS/compose-plugin.status"
{
  status=0
  "$ROOT/tests/compose/compose-plugin.sh" "$DOCKER_CONFIG" >"$LOGS/compose-plugin.log" 2>&1 || status=$?
  echo "$status" >"$LOGS/compose-plugin.status"
} &
plugin_pid=$!

dockerd_start "$RUN" "$DATA_ROOT" "$LOGS" COMPOSE_TEST_DATA_ROOT
say "dockerd $(docker version -f '{{.Server.Version}}') (API $(docker version -f '{{.Server.APIVersion}}')), storage $(docker info -f '{{.Driver}}'), docker CLI $(docker version -f '{{.Client.Version}}')"
phase_done "engine"

# ---- 2. stand-ins, 3. compose plugin
step "2/4 stand-ins for the three images (tests/compose/standins.sh)"
"$ROOT/tests/compose/standins.sh"
phase_done "stand-ins"
step "3/4 the compose v2 plugin (tests/compose/compose-plugin.sh; log $LOGS/compose-plugin.log)"
plugin_done() {
  while [[ ! -f "$LOGS/compose-plugin.status" ]]; do sleep 1; done
  return "$(cat "$LOGS/compose-plugin.status")"
}
if ! alive "waiting for the compose plugin build" plugin_done; then
  tail -n 20 "$LOGS/compose-plugin.log" >&2
  die "building the compose plugin failed (log above)"
fi
plugin_pid=""
say "$(docker compose version)"
phase_done "compose plugin (after the stand-ins)"

# ---- 4. the user's path
step "4/4 docker compose up --build -d, then the checks"
read -r DYNAMODB_PORT SQS_PORT LAB_PORT < <(free_ports 3 | paste -sd' ')
export DYNAMODB_PORT SQS_PORT LAB_PORT
say "project $PROJECT; ports: DYNAMODB_PORT=$DYNAMODB_PORT SQS_PORT=$SQS_PORT LAB_PORT=$LAB_PORT"
images_before="$(docker image ls -q --no-trunc | sort -u)"
up=1
t_up=$SECONDS
# logged LOG CMD...: CMD with its output in LOG (alive's lines stay on stderr).
logged() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1
}
if ! alive "docker compose up --build -d (log $LOGS/up.log)" logged "$LOGS/up.log" dc up --build -d; then
  tail -n 40 "$LOGS/up.log" >&2
  dc logs --no-color >"$LOGS/services.log" 2>&1 || true
  not_ok "docker compose up --build -d (log above; services: $LOGS/services.log)"
  check_done
  exit 1
fi
ok "docker compose up --build -d ($((SECONDS - t_up)) s)"
phase_done "up --build -d"

cid() { dc ps -q "$1"; }
health() { docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$(cid "$1")" 2>/dev/null; }
for svc in dynamodb sqs; do
  check "$svc is healthy (its compose healthcheck, run in its image)" test "$(health "$svc")" = healthy
done

# wait_url: the URL the lab prints, http://127.0.0.1:LAB_PORT/lab/tree/00-welcome.ipynb?token=...
# (notebook 00 open), or fail after 5 min.
wait_url() {
  local i url
  for ((i = 0; i < 300; i++)); do
    url="$(dc logs --no-color lab 2>/dev/null | grep -oE "http://127\.0\.0\.1:$LAB_PORT/lab(/tree/[^ ?]+)?\?token=[0-9a-f]+" | tail -n 1 || true)"
    if [[ -n "$url" ]]; then
      echo "$url"
      return 0
    fi
    [[ "$(docker inspect -f '{{.State.Running}}' "$(cid lab)" 2>/dev/null)" == true ]] || break
    sleep 1
  done
  return 1
}
t_url=$SECONDS
if url="$(alive "waiting for the lab's URL" wait_url)"; then
  ok "the lab prints its URL $((SECONDS - t_url)) s after up returned (${url%%\?*}?token=...)"
else
  not_ok "the lab printed no URL within 5 min (logs: $LOGS/lab.log)"
  dc logs --no-color lab >"$LOGS/lab.log" 2>&1 || true
  tail -n 30 "$LOGS/lab.log" >&2
  check_done
  exit 1
fi
check "the URL opens notebook 00 (${url%%\?*})" test "${url%%\?*}" = "http://127.0.0.1:$LAB_PORT/lab/tree/00-welcome.ipynb"
phase_done "lab URL"
token="${url##*token=}"
base="http://127.0.0.1:$LAB_PORT"

code() { curl -s -o /dev/null -m 10 -w '%{http_code}' "$@" || true; }
check "no token: GET /api/contents answers 403" test "$(code "$base/api/contents")" = 403
check "no token: GET /api/kernelspecs answers 403" test "$(code "$base/api/kernelspecs")" = 403
check "with the token: GET /api/contents answers 200" test "$(code -H "Authorization: token $token" "$base/api/contents")" = 200
kernels="$(curl -s -m 10 -H "Authorization: token $token" "$base/api/kernelspecs" |
  python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["kernelspecs"])))' 2>&1 || true)"
check "the lab offers the gonb kernel only (got: $kernels)" test "$kernels" = gonb
# lab_uid: the uid JupyterLab runs as in the lab container (docker top is ps on the host).
lab_uid() { { docker top "$(cid lab)" -eo pid,uid,args || true; } | awk '/jupyter-lab/ {print $2; exit}'; }
lab_user="$(lab_uid)"
ws_uid="$(stat -c %u "$ROOT/workspace")"
check "JupyterLab runs as the owner of ./workspace (uid $ws_uid; got ${lab_user:-none})" test "${lab_user:-x}" = "$ws_uid"
check "the lab put the notebooks into ./workspace on the host" test -f "$ROOT/workspace/00-welcome.ipynb"

# Ports: every published port of the project on 127.0.0.1, as docker and the
# kernel's listening sockets both say.
mapfile -t cids < <(dc ps -q)
ports_json="$(docker inspect -f '{{json .NetworkSettings.Ports}}' "${cids[@]}")"
check "every published port is on 127.0.0.1 (docker inspect)" python3 -c '
import json, sys
bound = []
for line in sys.stdin.read().splitlines():
    for port, binds in (json.loads(line) or {}).items():
        for b in binds or []:
            bound.append((b["HostIp"], b["HostPort"]))
bad = [b for b in bound if b[0] != "127.0.0.1"]
assert len(bound) == 3, f"want 3 published ports, got {bound}"
assert not bad, f"not on 127.0.0.1: {bad}"
' <<<"$ports_json"
listen_ok() {
  local p out
  for p in "$DYNAMODB_PORT" "$SQS_PORT" "$LAB_PORT"; do
    out="$(ss -ltnH "sport = :$p" | awk '{print $4}')"
    [[ -n "$out" ]] || { echo "nothing listens on :$p"; return 1; }
    if grep -v "^127\.0\.0\.1:$p\$" <<<"$out"; then echo "port $p also listens beyond 127.0.0.1"; return 1; fi
  done
}
check "the host listens on the three ports at 127.0.0.1 only (ss -ltn)" listen_ok

# Notebooks 00 and 07 inside the lab container, as the same user as the lab.
t_nb=$SECONDS
if alive "running notebooks 00 and 07 in the lab container (log $LOGS/notebooks.log)" logged "$LOGS/notebooks.log" \
  dc exec -T -e LAB_ENTRYPOINT_QUIET=1 lab scripts/lab-entrypoint.sh bash -c \
  'source scripts/env.sh && python tests/notebooks/run_notebooks.py --timings /tmp/notebook-timings.json notebooks/00-welcome.ipynb notebooks/07-fan-out-with-sqs.ipynb'; then
  ok "notebooks 00 and 07 ran inside the lab container against dynamodb:8000 and sqs:9324 ($((SECONDS - t_nb)) s; log $LOGS/notebooks.log)"
else
  not_ok "notebooks 00 and 07 inside the lab container (log: $LOGS/notebooks.log)"
  tail -n 30 "$LOGS/notebooks.log" >&2
fi
phase_done "notebooks 00, 07"

# DynamoDB from the host, signed (curl --aws-sigv4), on the published port.
ddb() {
  curl -s -m 10 --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user local:local \
    -H "X-Amz-Target: DynamoDB_20120810.$1" -H 'Content-Type: application/x-amz-json-1.0' \
    -d "$2" "http://127.0.0.1:$DYNAMODB_PORT/"
}
tables() { ddb ListTables '{}' | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["TableNames"]))'; }
marker="compose-test-marker-$$"
ddb CreateTable "{\"TableName\":\"$marker\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}" >/dev/null || true
ddb PutItem "{\"TableName\":\"$marker\",\"Item\":{\"pk\":{\"S\":\"kept\"},\"v\":{\"S\":\"$PROJECT\"}}}" >/dev/null || true
before="$(tables || true)"
# has_marker TABLES: the marker and at least one table the lab seeded.
has_marker() { [[ " $1 " == *" $marker "* && $(wc -w <<<"$1") -ge 2 ]]; }
check "the catalog holds the seeded tables and the marker before down (tables: $before)" has_marker "$before"

t_rs=$SECONDS
dc down >"$LOGS/down.log" 2>&1 || not_ok "docker compose down (log: $LOGS/down.log)"
check "after down, the DynamoDB volume is still there" test -n "$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")"
check "after down, no container of the project is left" test -z "$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")"
dc up -d >"$LOGS/up-again.log" 2>&1 || { tail -n 20 "$LOGS/up-again.log" >&2; not_ok "docker compose up -d after down"; }
after="$(tables || true)"
item="$(ddb GetItem "{\"TableName\":\"$marker\",\"Key\":{\"pk\":{\"S\":\"kept\"}},\"ConsistentRead\":true}")"
kept() { [[ "$before" == "$after" && "$item" == *"\"$PROJECT\""* ]]; }
check "down then up keeps the catalog (every table, and the marker item; after: $after)" kept
if url2="$(wait_url)" && [[ "$(code "$base/api/kernelspecs")" == 403 ]]; then
  ok "the lab is back after down and up ($((SECONDS - t_rs)) s from down to its URL)"
else
  not_ok "the lab did not come back after down and up"
fi
phase_done "down, up, catalog"
: "${url2:=}"

# A second workspace owned by a user that exists nowhere (uid 4321): the lab
# must run as 4321 and write its notebooks as 4321, with no uid passed in.
extra_ws="$(mktemp -d /tmp/compose-ws.XXXXXX)"
chown 4321:4321 "$extra_ws"
cat >"$LOGS/owner.override.yml" <<EOF
services:
  lab:
    volumes:
      - $extra_ws:/home/workshop/workshop/workspace
EOF
if dc -f docker-compose.yml -f "$LOGS/owner.override.yml" up -d --no-build lab >"$LOGS/owner.log" 2>&1 && wait_url >/dev/null; then
  lab_user="$(lab_uid)"
  check "with a workspace owned by uid 4321, JupyterLab runs as 4321 (got ${lab_user:-none})" test "${lab_user:-x}" = 4321
  check "and the notebooks it copied there belong to 4321:4321" \
    test "$(stat -c %u:%g "$extra_ws/00-welcome.ipynb" 2>/dev/null)" = 4321:4321
  # shellcheck disable=SC2016 # expanded in the container
  check "and uid 4321 can build Go in the image's caches (go build ./queuekit/...)" \
    dc exec -T -e LAB_ENTRYPOINT_QUIET=1 lab scripts/lab-entrypoint.sh bash -c 'test "$(id -u)" = 4321 && go build ./queuekit/... && touch workspace/written-by-4321'
  check "and what it writes is 4321's on the host" test "$(stat -c %u "$extra_ws/written-by-4321" 2>/dev/null)" = 4321
else
  tail -n 20 "$LOGS/owner.log" >&2
  not_ok "the lab with a workspace owned by uid 4321 did not start (log: $LOGS/owner.log)"
fi
phase_done "workspace owned by uid 4321"

dc logs --no-color >"$LOGS/services.log" 2>&1 || true
dc -f docker-compose.yml -f "$LOGS/owner.override.yml" down -v >"$LOGS/down-v.log" 2>&1
up=0
left="$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT")$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")"
check "down -v leaves no container, network or volume of the project" test -z "$left"
pulled="$(comm -13 <(echo "$images_before") <(docker image ls -q --no-trunc | sort -u) | while read -r id; do
  docker image inspect -f '{{join .RepoTags ","}}' "$id"; done | grep -v '^nightqueue-workshop-lab:local$' || true)"
check "no image came from a registry: the only new image is the lab's (new: ${pulled:-none})" test -z "$pulled"
phase_done "down -v"

say "timings: $(IFS=';'; echo "${timings[*]}"); total $(elapsed) s"
check_done
