#!/usr/bin/env bash
# The local cluster launcher: start, inspect and stop Showroom processes on this machine.
#
#   deploy/cluster.sh demo                       start a small cluster, show it, stop it
#   deploy/cluster.sh up [--edges N] [--coordinators N] [--callsignals N] [--base-port P] [--run-dir DIR]
#   deploy/cluster.sh status [--run-dir DIR] [--json]
#   deploy/cluster.sh down [--run-dir DIR]
#
# Every process gets its own log (DIR/ID.log), ready line (DIR/ID.out) and pid file (DIR/ID.pid).
# Two clusters with different --base-port and --run-dir run side by side.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
run_dir="$root/run/cluster"
base_port=7100
edges=2
coordinators=1
callsignals=1
json=""
configuration="${SHOWROOM_BUILD_CONFIGURATION:-release}"

usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

command="${1:-}"
[ -n "$command" ] || usage 1
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --run-dir) run_dir="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --edges) edges="$2"; shift 2 ;;
    --coordinators) coordinators="$2"; shift 2 ;;
    --callsignals) callsignals="$2"; shift 2 ;;
    --json) json="--json"; shift ;;
    -h|--help) usage 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
for n in "$base_port" "$edges" "$coordinators" "$callsignals"; do
  [[ "$n" =~ ^[0-9]+$ ]] || die "numbers expected, got '$n'"
done

bin_dir() { echo "$root/.build/$configuration"; }

build() {
  "$root/deploy/install-deps.sh"
  echo "building ($configuration) ..."
  (cd "$root" && swift build -c "$configuration" 2>&1 | grep -E "error|warning: unre|Compiling|Build complete" | tail -3)
  [ -x "$(bin_dir)/showroomctl" ] || die "build failed: run 'swift build -c $configuration' to see why"
}

# Ports: coordinators from P, call-signal nodes from P+10, edges from P+20.
port_of() {
  local id="$1" kind="${1%-*}" n="${1##*-}"
  case "$kind" in
    coordinator) echo $((base_port + n - 1)) ;;
    callsignal) echo $((base_port + 10 + n - 1)) ;;
    edge) echo $((base_port + 20 + n - 1)) ;;
    *) die "unknown node id $id" ;;
  esac
}

is_running() { [ -f "$run_dir/$1.pid" ] && kill -0 "$(cat "$run_dir/$1.pid")" 2>/dev/null; }

start_node() {
  local id="$1" kind="${1%-*}"
  is_running "$id" && { echo "  $id already running (pid $(cat "$run_dir/$id.pid"))"; return; }
  local port seed
  port="$(port_of "$id")"
  seed="tcp://127.0.0.1:$base_port"
  args=(--node-id "$id" --bind "tcp://127.0.0.1:$port")
  [ "$id" = "coordinator-1" ] || args+=(--seed "$seed")
  : > "$run_dir/$id.out"
  nohup "$(bin_dir)/showroom-$kind" "${args[@]}" >"$run_dir/$id.out" 2>"$run_dir/$id.log" </dev/null &
  echo $! > "$run_dir/$id.pid"
}

wait_ready() {
  local id="$1" deadline=$((SECONDS + 20))
  until grep -q '^ready ' "$run_dir/$id.out" 2>/dev/null; do
    is_running "$id" || die "$id exited during start-up; its log ($run_dir/$id.log) ends with:
$(tail -5 "$run_dir/$id.log")"
    [ $SECONDS -lt $deadline ] || die "$id not ready within 20 s; see $run_dir/$id.log"
    sleep 0.05
  done
}

node_ids() {
  local i
  for i in $(seq 1 "$coordinators"); do echo "coordinator-$i"; done
  for i in $(seq 1 "$callsignals"); do echo "callsignal-$i"; done
  for i in $(seq 1 "$edges"); do echo "edge-$i"; done
}

running_ids() { ls "$run_dir"/*.pid 2>/dev/null | xargs -rn1 basename | sed 's/\.pid$//' | sort -V; }

cmd_up() {
  [ "$coordinators" -ge 1 ] || die "a cluster needs at least one coordinator"
  build
  mkdir -p "$run_dir"
  echo "starting in $run_dir (base port $base_port)"
  local ids
  ids="$(node_ids)"
  for id in $ids; do start_node "$id"; done
  for id in $ids; do wait_ready "$id"; echo "  $(sed -n 's/^ready //p' "$run_dir/$id.out")"; done
  echo "seed: tcp://127.0.0.1:$base_port"
}

cmd_status() {
  local ids
  ids="$(running_ids)"
  [ -n "$ids" ] || die "no cluster in $run_dir (start one with: deploy/cluster.sh up --run-dir $run_dir)"
  for id in $ids; do
    if is_running "$id"; then
      "$(bin_dir)/showroomctl" info --endpoint "tcp://127.0.0.1:$(port_of "$id")" $json || true
    elif [ -z "$json" ]; then
      echo "$id  not running (pid file $run_dir/$id.pid)"
    fi
  done
}

stop_nodes() {
  local ids=("$@") id pid deadline
  for id in "${ids[@]}"; do is_running "$id" && kill -TERM "$(cat "$run_dir/$id.pid")"; done
  deadline=$((SECONDS + 10))
  for id in "${ids[@]}"; do
    while is_running "$id" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    if is_running "$id"; then
      pid="$(cat "$run_dir/$id.pid")"
      echo "  $id did not stop within 10 s: SIGKILL pid $pid"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$run_dir/$id.pid"
  done
}

cmd_down() {
  local ids
  ids="$(running_ids)"
  [ -n "$ids" ] || { echo "nothing running in $run_dir"; return; }
  # Edges first, coordinators last, so members leave before the seed.
  local order=()
  for kind in edge callsignal coordinator; do
    for id in $ids; do [ "${id%-*}" = "$kind" ] && order+=("$id"); done
  done
  echo "stopping ${order[*]}"
  stop_nodes "${order[@]}"
  echo "stopped"
}

cmd_demo() {
  [ "$run_dir" != "$root/run/cluster" ] || run_dir="$root/run/demo"
  trap 'cmd_down' EXIT
  cmd_up
  echo
  echo "== status =="
  cmd_status
  echo
}

case "$command" in
  up) cmd_up ;;
  status) cmd_status ;;
  down) cmd_down ;;
  demo) cmd_demo ;;
  -h|--help|help) usage 0 ;;
  *) die "unknown command '$command' (see --help)" ;;
esac
