# servers.sh: the workshop's local servers for one program: start them (or
# join them when they already run), export their endpoints, and leave them when
# the program ends. Source it (bash); workshop.sh and with-servers.sh do.
#
#   servers_up start|use-preset
#       for each server in SERVERS (default "dynamodb sqs"): start it through
#       its script with `start --user $$`, so this shell counts as one of its
#       users, and export its endpoint (AWS_ENDPOINT_URL_DYNAMODB,
#       AWS_ENDPOINT_URL_SQS). With use-preset, an endpoint already set in the
#       environment (docker compose sets both) is checked and used instead;
#       with start (tests), the servers always run on the ports chosen.
#   servers_down
#       leave every server servers_up joined (`stop --user $$`); each stops
#       when its last user is done, never under someone else. Call it from an
#       EXIT trap: it ignores INT, TERM and HUP from its first line, so a second
#       Ctrl-C or a TERM forwarded by make cannot cut it short, and the scripts
#       it runs inherit that.
#
#   dynamodb  scripts/dynamodb-local.sh  DYNAMODB_PORT (default 8000)
#   sqs       scripts/elasticmq.sh       SQS_PORT (default 9324)
# shellcheck shell=bash

_servers_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_servers_joined=()

# _server_of NAME sets _script, _var and _label for a server name.
_server_of() {
  case "$1" in
  dynamodb) _script=dynamodb-local.sh _var=AWS_ENDPOINT_URL_DYNAMODB _label="DynamoDB" ;;
  sqs) _script=elasticmq.sh _var=AWS_ENDPOINT_URL_SQS _label="SQS" ;;
  *)
    printf 'servers: unknown server %s in SERVERS; known: dynamodb sqs\n' "$1" >&2
    return 2
    ;;
  esac
}

servers_up() {
  local preset name i
  case "${1:-}" in
  start) preset=0 ;;
  use-preset) preset=1 ;;
  *) printf 'servers_up: want start or use-preset, got %s\n' "${1:-nothing}" >&2; return 2 ;;
  esac
  for name in ${SERVERS:-dynamodb sqs}; do
    _server_of "$name" || return
    if ((preset)) && [[ -n "${!_var:-}" ]]; then
      for ((i = 0; i < 150; i++)); do
        "$_servers_root/scripts/$_script" probe "${!_var}" && break
        sleep 0.2
      done
      if ((i == 150)); then
        printf 'servers: %s=%s does not answer like %s; start it, or unset %s to start one here\n' \
          "$_var" "${!_var}" "$_label" "$_var" >&2
        return 1
      fi
      printf 'servers: using %s at %s (%s is set)\n' "$_label" "${!_var}" "$_var" >&2
      continue
    fi
    # Joined before start: if start is interrupted, servers_down still stops
    # what it may have left running.
    _servers_joined+=("$_script")
    "$_servers_root/scripts/$_script" start --user $$ || return 1
    export "$_var=$("$_servers_root/scripts/$_script" endpoint)"
  done
}

servers_down() {
  trap '' INT TERM HUP
  local script
  for script in "${_servers_joined[@]}"; do
    "$_servers_root/scripts/$script" stop --user $$ || true
  done
  _servers_joined=()
}
