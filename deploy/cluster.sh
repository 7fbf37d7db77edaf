#!/usr/bin/env bash
# The local cluster launcher: start, grow, shrink, inspect and stop Showroom processes on this machine.
#
#   deploy/cluster.sh demo                        a fresh cluster with three live rooms (hosts and viewers), a 1v1
#                                                 call, a PK between rooms 1 and 2, a co-host in room 3, the
#                                                 status view, first-frame times, an edge killed and its viewers
#                                                 back, stop; fails naming a viewer that decodes no video. Its
#                                                 run directory is run/demo (clients' output in run/demo/clients)
#   deploy/cluster.sh up [--edges N] [--coordinators N] [--callsignals N] [--base-port P] [--plain-cluster] [--room-expiry S]
#   deploy/cluster.sh status [--json] [--watch]   the status tool against this cluster
#   deploy/cluster.sh scale-edges N               add edges, or drain and remove the newest ones
#   deploy/cluster.sh kill NODE_ID                SIGKILL one process (failure drills)
#   deploy/cluster.sh restart NODE_ID             stop (gracefully) and start one process again
#   deploy/cluster.sh down                        graceful stop, then SIGKILL stragglers by pid
#
# Every subcommand takes --run-dir DIR (default run/cluster): each process keeps its log
# (DIR/ID.log), its ready and event lines (DIR/ID.out) and its pid (DIR/ID.pid) there, so two
# clusters with different run directories and base ports run side by side. Ports: coordinators
# from P (default 7100), call-signal nodes from P+10, edges from P+20; --base-port 0 lets every
# process pick a free port. --bin-dir DIR uses executables already built there instead of building.
# Tokens: `up` writes the app's id and certificate to DIR/app.json (mode 600) and every process
# reads it; --app-id / --app-certificate set them, default the local demo app's (never use those
# outside this machine). showroomctl and showroom-bench read them there when SHOWROOM_RUN_DIR (or
# their --run-dir) names DIR; this script sets it for the showroomctl commands it runs.
# Coordinators keep their database in DIR/data/; `--webhook URL` (repeatable) and `--webhook-secret S`
# make them post channel events there (kept in DIR/coordinator.json, the coordinators' configuration).
# Cluster links: `up` makes a CURVE keyring in DIR/keys/ (showroomctl keys generate: cluster.key, and
# a key pair per process and for the operator's showroomctl) and every process admits only those
# keys on its cluster endpoint; `--plain-cluster` runs without (plain links, for comparisons).
# `--client-encryption curve` makes the edges encrypt client links too. `--relay-threshold N` lets a
# channel's origin edge take N of its viewers before coordinators place more on relay edges. Clients (the SDK) are given
# the coordinators' client endpoints as seeds (`client=` in their ready lines). `--room-expiry S`
# sets rooms' lifetime (default 1200 s, the seeds' 20 minutes; a soak longer than that wants more).
# Server API: every coordinator serves it on a port of its own (P+90 up; `api=` in its ready line);
# `up` makes a customer key with every scope and keeps it in DIR/api-key (mode 600) as id:secret,
# for `curl -u "$(cat DIR/api-key)" http://127.0.0.1:PORT/v1/rooms`; the coordinators hold only
# its SHA-256 (DIR/coordinator.json). `--api-rate N` gives that key N requests a second (burst 2N;
# default 10).
# Recordings: edges write them to DIR/recordings/<channel>/<uid>/<start ms>-<n>.webm; start one with
# `curl -u "$(cat DIR/api-key)" -X POST -d '{}' http://127.0.0.1:PORT/v1/channels/CHANNEL/recordings`.
# Browsers: every process also takes WebSocket connections (`ws=` in its ready line, a free
# loopback port; the same protocol, framed as proto/README.md says): edges their client sessions,
# coordinators and call-signal nodes their client kinds. `up` starts the web app's server
# (`showroomctl web`: the pages and the JavaScript SDK of Sources/ShowroomWeb/, and the token
# endpoints a business server gives its pages) on P+80 (`--web-port N` to choose; a free port
# with --base-port 0), lets pages from there connect, and prints `web app: http://…/app/`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
run_dir="$root/run/cluster"
base_port=""
edges=2
coordinators=1
callsignals=1
status_flags=()
bin_dir=""
app_id="5f0c5d7e5c1a4f3e9b2d8a6c4e1f0a7b"
app_certificate="9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"
webhooks=()
webhook_secret=""
plain_cluster=""
client_encryption=""
relay_threshold=0
room_expiry=1200
api_rate=10
web_port=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

command="${1:-}"
[ -n "$command" ] || usage 1
shift
target=""
case "$command" in
  scale-edges|kill|restart)
    { [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; } || die "$command needs an argument (see --help)"
    target="$1"; shift ;;
esac
while [ $# -gt 0 ]; do
  case "$1" in
    --run-dir) mkdir -p "$2"; run_dir="$(cd "$2" && pwd)"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --edges) edges="$2"; shift 2 ;;
    --coordinators) coordinators="$2"; shift 2 ;;
    --callsignals) callsignals="$2"; shift 2 ;;
    --bin-dir) bin_dir="$(cd "$2" && pwd)"; shift 2 ;;
    --app-id) app_id="$2"; shift 2 ;;
    --web-port) web_port="$2"; shift 2 ;;
    --app-certificate) app_certificate="$2"; shift 2 ;;
    --webhook) webhooks+=("$2"); shift 2 ;;
    --webhook-secret) webhook_secret="$2"; shift 2 ;;
    --plain-cluster) plain_cluster=1; shift ;;
    --client-encryption) client_encryption="$2"; shift 2 ;;
    --relay-threshold) relay_threshold="$2"; shift 2 ;;
    --room-expiry) room_expiry="$2"; shift 2 ;;
    --api-rate) api_rate="$2"; shift 2 ;;
    --json|--watch) status_flags+=("$1"); shift ;;
    -h|--help) usage 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
for n in ${base_port:-0} "$edges" "$coordinators" "$callsignals"; do
  [[ "$n" =~ ^[0-9]+$ ]] || die "a number was expected, got '$n'"
done

# The base port is remembered in the run directory, so later subcommands need only --run-dir.
if [ -z "$base_port" ]; then
  if [ -f "$run_dir/base-port" ]; then base_port="$(cat "$run_dir/base-port")"; else base_port=7100; fi
fi

build() {
  if [ -n "$bin_dir" ]; then
    [ -x "$bin_dir/showroomctl" ] || die "no showroomctl in --bin-dir $bin_dir"
    return
  fi
  "$root/deploy/install-deps.sh"
  echo "building (release) ..."
  local product
  for product in showroom-edge showroom-coordinator showroom-callsignal showroomctl showroom-bench; do
    (cd "$root" && swift build -c release --product "$product" 2>&1 | grep -E "error|Compiling|Build of" | tail -1)
  done
  bin_dir="$root/.build/release"
  [ -x "$bin_dir/showroomctl" ] || die "build failed: run 'swift build -c release --product showroomctl' to see why"
}

ctl() {
  [ -n "$bin_dir" ] || bin_dir="$root/.build/release"
  SHOWROOM_KEYRING="$(keyring_dir)" SHOWROOM_RUN_DIR="$run_dir" "$bin_dir/showroomctl" "$@"
}

# The cluster's keyring directory, or nothing for a plain cluster.
keyring_dir() { [ -f "$run_dir/keys/cluster.key" ] && echo "$run_dir/keys"; return 0; }

bind_of() {
  local kind="${1%-*}" n="${1##*-}"
  if [ "$base_port" = 0 ]; then echo "tcp://127.0.0.1:*"; return; fi
  case "$kind" in
    coordinator) echo "tcp://127.0.0.1:$((base_port + n - 1))" ;;
    callsignal) echo "tcp://127.0.0.1:$((base_port + 10 + n - 1))" ;;
    edge) echo "tcp://127.0.0.1:$((base_port + 20 + n - 1))" ;;
    *) die "unknown node id '$1' (ids look like edge-3, coordinator-1, callsignal-1)" ;;
  esac
}

# Where a coordinator's server API listens: P+90 up, or a free port.
api_listen_of() {
  if [ "$base_port" = 0 ]; then echo "127.0.0.1:0"; return; fi
  echo "127.0.0.1:$((base_port + 90 + ${1##*-} - 1))"
}

# Running = the pid exists and is not a zombie (a killed process whose parent, gone, left it to an
# init that has not reaped it yet still answers kill -0).
is_running() {
  [ -f "$run_dir/$1.pid" ] || return 1
  local state
  state="$(ps -o stat= -p "$(cat "$run_dir/$1.pid")" 2>/dev/null)" || return 1
  [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}
known_ids() { ls "$run_dir"/*.pid 2>/dev/null | xargs -rn1 basename | sed 's/\.pid$//' | sort -V; }
live_ids() { local id; for id in $(known_ids); do is_running "$id" && echo "$id"; done; return 0; }
endpoint_of() { sed -n 's/^ready .*endpoint=\([^ ]*\).*/\1/p' "$run_dir/$1.out" 2>/dev/null | head -1; }
seed_flags() {
  local id endpoint
  for id in $(live_ids); do
    endpoint="$(endpoint_of "$id")"
    [ -n "$endpoint" ] && echo "--seed $endpoint"
  done
  return 0
}
# Seeds for clients (the SDK): the client endpoints of the running coordinators.
client_of() { sed -n 's/^ready .* client=\([^ ]*\).*/\1/p' "$run_dir/$1.out" 2>/dev/null | head -1; }
api_of() { sed -n 's/^ready .* api=\([^ ]*\).*/\1/p' "$run_dir/$1.out" 2>/dev/null | head -1; }
ws_of() { sed -n 's/^ready .* ws=\([^ ]*\).*/\1/p' "$run_dir/$1.out" 2>/dev/null | head -1; }

client_seed_flags() {
  local id
  for id in $(live_ids); do [ "${id%-*}" = coordinator ] && echo "--seed $(client_of "$id")"; done
  return 0
}

start_node() {
  local id="$1" kind="${1%-*}" seeds=() other
  is_running "$id" && { echo "  $id already runs (pid $(cat "$run_dir/$id.pid"))"; return; }
  # Join through up to three running members.
  for other in $(live_ids | head -3); do seeds+=(--seed "$(endpoint_of "$other")"); done
  local bind
  bind="$(bind_of "$id")"
  # A new member gets its key pair in the keyring before it starts (existing keys are kept).
  if [ -n "$(keyring_dir)" ]; then ctl keys generate --dir "$(keyring_dir)" --id "$id" >/dev/null; fi
  # Emptied before the process starts: wait_ready must not take an earlier run's ready line.
  : >"$run_dir/$id.out"
  (
    # The process gets only stdin/stdout/stderr: descriptors the caller left open (a pipe a
    # supervisor watches, say) must not be held open by a process that outlives this script.
    for fd in /dev/fd/*; do
      n="${fd##*/}"
      [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-" 2>/dev/null
    done
    role_flags=()
    # A coordinator keeps its rooms in DIR/data/ID.sqlite: restarting it loses none.
    [ "$kind" = coordinator ] && role_flags=(--data-dir "$run_dir/data" --api "$(api_listen_of "$id")")
    [ -n "$(keyring_dir)" ] && role_flags+=(--keyring "$(keyring_dir)")
    [ "$kind" = edge ] && [ -f "$run_dir/client-encryption" ] && role_flags+=(--client-encryption "$(cat "$run_dir/client-encryption")")
    # Edges write recordings to DIR/recordings/<channel>/<uid>/.
    [ "$kind" = edge ] && role_flags+=(--recording-dir "$run_dir/recordings")
    # Pages of the web app may connect over WebSocket (the origin a browser sends).
    if [ -f "$run_dir/web-port" ]; then
      role_flags+=(--websocket-origin "http://127.0.0.1:$(cat "$run_dir/web-port")" --websocket-origin "http://localhost:$(cat "$run_dir/web-port")")
    fi
    config="$run_dir/app.json"
    [ "$kind" = coordinator ] && config="$run_dir/coordinator.json"
    exec setsid "$bin_dir/showroom-$kind" --config "$config" --node-id "$id" --bind "$bind" \
      "${role_flags[@]}" "${seeds[@]}"
  ) >"$run_dir/$id.out" 2>>"$run_dir/$id.log" </dev/null &
  echo $! > "$run_dir/$id.pid"
  disown "$!" 2>/dev/null || true  # the script reports nothing when the process dies later
  wait_ready "$id"
}

wait_ready() {
  local id="$1" deadline=$((SECONDS + 20))
  until grep -q '^ready ' "$run_dir/$id.out" 2>/dev/null; do
    is_running "$id" || die "$id exited during start-up; its log ($run_dir/$id.log) ends with:
$(tail -5 "$run_dir/$id.log")"
    [ $SECONDS -lt $deadline ] || die "$id not ready within 20 s; see $run_dir/$id.log"
    sleep 0.05
  done
  echo "  $(sed -n 's/^ready //p' "$run_dir/$id.out")"
}

# Returns once every running member sees every running member alive.
await_converged() {
  local seeds n
  # Counted from the seeds (running nodes with a ready line), so the count and the members asked agree.
  seeds="$(seed_flags)"
  n="$(grep -c -- '--seed' <<<"$seeds" || true)"
  [ "$n" -gt 0 ] || return 0
  # shellcheck disable=SC2086
  ctl await-members --count "$n" --timeout 30 $seeds ||
    die "the cluster did not converge within 30 s; logs are in $run_dir"
}

stop_nodes() {
  local id pid deadline
  for id in "$@"; do is_running "$id" && kill -TERM "$(cat "$run_dir/$id.pid")"; done
  deadline=$((SECONDS + 10))
  for id in "$@"; do
    while is_running "$id" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    if is_running "$id"; then
      pid="$(cat "$run_dir/$id.pid")"
      echo "  $id did not stop within 10 s: SIGKILL pid $pid"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$run_dir/$id.pid"
  done
}

cmd_up() {
  [ "$coordinators" -ge 1 ] || die "a cluster needs at least one coordinator"
  [ -z "$(live_ids)" ] || die "a cluster already runs in $run_dir (deploy/cluster.sh down --run-dir $run_dir)"
  build
  mkdir -p "$run_dir"
  # A node's log is appended to across its restarts; a new cluster starts new logs.
  rm -f "$run_dir"/coordinator-*.log "$run_dir"/callsignal-*.log "$run_dir"/edge-*.log "$run_dir"/edge-*.out
  echo "$base_port" > "$run_dir/base-port"
  if [ -z "$web_port" ]; then
    if [ "$base_port" = 0 ]; then web_port="$(shuf -i 20000-59999 -n 1)"; else web_port=$((base_port + 80)); fi
  fi
  [[ "$web_port" =~ ^[0-9]+$ ]] && [ "$web_port" -ge 1 ] && [ "$web_port" -le 65535 ] || die "--web-port takes a port number"
  echo "$web_port" > "$run_dir/web-port"
  [[ "$app_id$app_certificate" =~ ^[0-9a-fA-F]{64}$ ]] || die "--app-id and --app-certificate take 32 hexadecimal characters each"
  local hooks="" url
  for url in "${webhooks[@]}"; do
    [[ "$url" =~ ^https?://[^\"[:space:]]+$ ]] || die "--webhook takes an http(s) URL, got '$url'"
    hooks="${hooks:+$hooks, }\"$url\""
  done
  [[ "$webhook_secret" =~ ^[^\"\\]*$ ]] || die "--webhook-secret may not contain quotes or backslashes"
  [[ "$relay_threshold" =~ ^[0-9]+$ ]] || die "--relay-threshold takes a number of viewers (0: off)"
  [[ "$room_expiry" =~ ^[0-9]+$ ]] && [ "$room_expiry" -ge 1 ] || die "--room-expiry takes a number of seconds (at least 1)"
  [[ "$api_rate" =~ ^[0-9]+$ ]] && [ "$api_rate" -ge 1 ] || die "--api-rate takes a number of requests a second (at least 1)"
  # Every member reads the app from app.json; coordinators read their own settings too, from
  # coordinator.json (an edge refuses keys that are not its own), with the server API's customer
  # key as its secret's SHA-256; the secret itself stays in api-key.
  local api_secret api_hash
  api_secret="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  api_hash="$(printf '%s' "$api_secret" | sha256sum | cut -d' ' -f1)"
  ( umask 077
    printf '{"appID": "%s", "appCertificate": "%s"}\n' "$app_id" "$app_certificate" > "$run_dir/app.json"
    printf 'business:%s\n' "$api_secret" > "$run_dir/api-key"
    printf '{"appID": "%s", "appCertificate": "%s", "webhookURLs": [%s], "webhookSecret": "%s", "relayThreshold": %s, "roomExpirySeconds": %s, "apiKeys": [{"id": "business", "secretSHA256": "%s", "scopes": ["read", "rooms", "moderation", "calls", "recording"], "requestsPerSecond": %s, "burst": %s}]}\n' \
      "$app_id" "$app_certificate" "$hooks" "$webhook_secret" "$relay_threshold" "$room_expiry" "$api_hash" "$api_rate" "$((api_rate * 2))" > "$run_dir/coordinator.json" )
  rm -rf "$run_dir/keys" "$run_dir/client-encryption"
  if [ -z "$plain_cluster" ]; then
    ( umask 077; mkdir -p "$run_dir/keys" )
    SHOWROOM_KEYRING="" "$bin_dir/showroomctl" keys generate --dir "$run_dir/keys" --id operator >/dev/null
  fi
  case "$client_encryption" in
    ""|off) ;;
    curve) echo curve > "$run_dir/client-encryption" ;;
    *) die "--client-encryption takes off or curve" ;;
  esac
  echo "starting in $run_dir ($([ -n "$plain_cluster" ] && echo "plain cluster links" || echo "cluster links: CURVE, keyring $run_dir/keys"))"
  local i
  for i in $(seq 1 "$coordinators"); do start_node "coordinator-$i"; done
  for i in $(seq 1 "$callsignals"); do start_node "callsignal-$i"; done
  for i in $(seq 1 "$edges"); do start_node "edge-$i"; done
  await_converged
  echo "seed: $(endpoint_of coordinator-1) (cluster)  client seed: $(client_of coordinator-1)"
  echo "server API: $(api_of coordinator-1)  customer key: $run_dir/api-key (curl -u \"\$(cat $run_dir/api-key)\" $(api_of coordinator-1)/v1/rooms)"
  local browsers=()
  for i in $(seq 1 "$edges"); do browsers+=("edge-$i $(ws_of "edge-$i")"); done
  echo "browsers (WebSocket client sessions): $(IFS=,; echo "${browsers[*]}" | sed 's/,/, /g')"
  start_web
}

# The web app's server (showroomctl web), its pid in DIR/web-app.pidfile (not a node: no .pid).
start_web() {
  local flags=() id deadline
  for id in $(live_ids); do [ "${id%-*}" = coordinator ] && flags+=(--coordinator "$(ws_of "$id")"); done
  : >"$run_dir/web-app.out"
  ( for fd in /dev/fd/*; do
      n="${fd##*/}"
      [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-" 2>/dev/null
    done
    SHOWROOM_RUN_DIR="$run_dir" exec setsid "$bin_dir/showroomctl" web --listen "127.0.0.1:$(cat "$run_dir/web-port")" \
      --root "$root/Sources/ShowroomWeb" "${flags[@]}"
  ) >"$run_dir/web-app.out" 2>>"$run_dir/web-app.log" </dev/null &
  echo $! > "$run_dir/web-app.pidfile"
  disown "$!" 2>/dev/null || true
  deadline=$((SECONDS + 20))
  until grep -q '^web app: ' "$run_dir/web-app.out" 2>/dev/null; do
    kill -0 "$(cat "$run_dir/web-app.pidfile")" 2>/dev/null || die "the web app's server exited; its log ($run_dir/web-app.log) ends with:
$(tail -5 "$run_dir/web-app.log")"
    [ $SECONDS -lt $deadline ] || die "the web app's server was not ready within 20 s; see $run_dir/web-app.log"
    sleep 0.05
  done
  sed -n 's/ pid=.*//p' "$run_dir/web-app.out" | head -1
}

stop_web() {
  [ -f "$run_dir/web-app.pidfile" ] || return 0
  local pid deadline=$((SECONDS + 10))
  pid="$(cat "$run_dir/web-app.pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$run_dir/web-app.pidfile"
}

cmd_status() {
  local seeds
  seeds="$(seed_flags)"
  [ -n "$seeds" ] || die "no cluster runs in $run_dir (start one with: deploy/cluster.sh up --run-dir $run_dir)"
  # shellcheck disable=SC2086
  ctl status $seeds "${status_flags[@]}"
}

cmd_scale_edges() {
  [[ "$target" =~ ^[0-9]+$ ]] || die "scale-edges takes a number of edges"
  local live=() id next=0
  for id in $(live_ids); do [ "${id%-*}" = edge ] && live+=("$id"); done
  # New edges get numbers never used in this run directory, so each is a new member.
  # (Every edge ever started left its .out file; a stopped one's pid file is gone.)
  for id in $(ls "$run_dir"/edge-*.out 2>/dev/null | xargs -rn1 basename | sed 's/\.out$//'); do
    [ "${id##*-}" -gt "$next" ] && next="${id##*-}"
  done
  if [ "$target" -gt "${#live[@]}" ]; then
    build
    local count=${#live[@]}
    while [ "$count" -lt "$target" ]; do
      next=$((next + 1)); count=$((count + 1))
      start_node "edge-$next"
    done
  elif [ "$target" -lt "${#live[@]}" ]; then
    local victims=("${live[@]:$target}")
    echo "removing ${victims[*]} (draining: their clients move to the other edges first)"
    stop_nodes "${victims[@]}"
  fi
  await_converged
  echo "edges: $target"
}

cmd_kill() {
  is_running "$target" || die "$target does not run in $run_dir"
  local pid
  pid="$(cat "$run_dir/$target.pid")"
  kill -KILL "$pid"
  echo "killed $target (pid $pid)"
}

cmd_restart() {
  bind_of "$target" >/dev/null
  [ -f "$run_dir/$target.pid" ] || die "$target is not part of the cluster in $run_dir"
  [ -n "$bin_dir" ] || bin_dir="$root/.build/release"
  stop_nodes "$target"
  start_node "$target"
  await_converged
}

cmd_down() {
  local ids order=() kind id
  ids="$(known_ids)"
  stop_web
  [ -n "$ids" ] || { echo "nothing runs in $run_dir"; return 0; }
  # Edges first, coordinators last.
  for kind in edge callsignal coordinator; do
    for id in $ids; do [ "${id%-*}" = "$kind" ] && order+=("$id"); done
  done
  echo "stopping ${order[*]}"
  stop_nodes "${order[@]}"
  echo "stopped"
}

# Synthetic clients of the demo: `showroomctl client` processes, their output in DIR/clients/.
client_pids=()
declare -A client_pid_of=()
start_client() {
  local name="$1"; shift
  mkdir -p "$run_dir/clients"
  # Emptied before the client starts (its own redirection happens later, in the background), so
  # that nothing waiting on it reads an earlier run's lines.
  : >"$run_dir/clients/$name.out"
  : >"$run_dir/clients/$name.log"
  # The binary itself in the background (not through a function, whose subshell would be the pid
  # recorded and killed while the client lived on).
  # shellcheck disable=SC2046
  SHOWROOM_RUN_DIR="$run_dir" "$bin_dir/showroomctl" client $(client_seed_flags) "$@" >>"$run_dir/clients/$name.out" 2>>"$run_dir/clients/$name.log" </dev/null &
  client_pids+=($!)
  client_pid_of[$name]=$!
}
stop_clients() {
  local pid deadline=$((SECONDS + 5))
  for pid in "${client_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${client_pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  client_pids=()
  client_pid_of=()
}
# Whether client NAME still runs (an exited one stays a zombie until stop_clients waits for it).
client_running() {
  local state
  state="$(ps -o stat= -p "${client_pid_of[$1]:-0}" 2>/dev/null)" || return 1
  [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}
# Prints the first line of NAME's output starting with WHAT — with AFTER, the first one after a line
# starting with AFTER — once there is one; fails, saying why on stderr, after 20 s or as soon as
# the client has exited.
await_line() {
  local name="$1" what="$2" after="${3:-}" deadline=$((SECONDS + 20)) line gone=""
  while :; do
    # Whether it still ran is checked before reading, so a last line written on exit is seen.
    client_running "$name" || gone=1
    line="$(awk -v what="^$what" -v after="${after:+^$after}" \
      'after != "" && !seen { if ($0 ~ after) seen = 1; next } $0 ~ what { print; exit }' \
      "$run_dir/clients/$name.out" 2>/dev/null || true)"
    [ -z "$line" ] || { echo "$line"; return 0; }
    if [ -n "$gone" ]; then
      echo "  $name: exited without $what${after:+ after $after}: $(tail -1 "$run_dir/clients/$name.out" 2>/dev/null)" >&2
      return 1
    fi
    [ $SECONDS -lt $deadline ] ||
      { echo "  $name: no $what${after:+ after $after} within 20 s (see $run_dir/clients/$name.out and .log)" >&2; return 1; }
    sleep 0.05
  done
}
# The frames client NAME decoded of its host so far (its `decoded` line, printed twice a second).
decoded_frames() {
  local count
  count="$(sed -n 's/^decoded .* frames=\([0-9]*\).*/\1/p' "$run_dir/clients/$1.out" 2>/dev/null | tail -1)"
  echo "${count:-0}"
}
# Checks what the viewers see, not what the servers say: every viewer of the rooms numbered in
# ROOMS decodes its own host again, at least 5 more frames within 5 s of the check (at 15 fps
# a show that plays does so in well under a second); and no host's frames are refused.
check_shows() {
  local when="$1" i v name deadline=$((SECONDS + 5)) waiting=()
  shift
  declare -A start=()
  for i in "$@"; do for v in 1 2 3; do
    name="viewer-$i-$v"; start[$name]="$(decoded_frames "$name")"; waiting+=("$name")
  done; done
  while [ "${#waiting[@]}" -gt 0 ] && [ "$SECONDS" -le "$deadline" ]; do
    local still=()
    for name in "${waiting[@]}"; do
      [ "$(decoded_frames "$name")" -ge $((start[$name] + 5)) ] || still+=("$name")
    done
    waiting=("${still[@]}")
    [ "${#waiting[@]}" -eq 0 ] || sleep 0.1
  done
  for name in "${waiting[@]}"; do
    i="${name#viewer-}"; i="${i%-*}"
    failed+=("$name does not decode host-$i $when (decoded ${start[$name]} frames, then $(decoded_frames "$name"))")
  done
  for i in "$@"; do
    if grep -q "code=E3000" "$run_dir/clients/host-$i.out" 2>/dev/null; then
      failed+=("host-$i's frames were refused (not joined) $when: $(grep -m1 'code=E3000' "$run_dir/clients/host-$i.out")")
    fi
  done
  [ "${#waiting[@]}" -gt 0 ] || echo "  every viewer of rooms $* decodes its own host $when"
}
elapsed_ms() { sed -n 's/.* elapsed_ms=\([0-9]*\).*/\1/p' <<<"$1"; }
# The edge hosting CHANNEL in the status document STATUS_JSON (empty before its edge reported it).
edge_of() { tr '{' '\n' <<<"$1" | grep "\"name\":\"$2\"" | sed -n 's/.*"edge":"\([^"]*\)".*/\1/p' | head -1 || true; }

# Asks the server API at $1 for the open rooms and the users of room $2's channel (Python's standard
# library, as a business server might), and prints them; fails unless it lists three rooms and
# room $2's host with its three viewers.
api_demo() {
  SHOWROOM_API="$1" SHOWROOM_API_KEY="$(cat "$run_dir/api-key")" python3 - "$2" <<'PY'
import base64, json, os, sys, urllib.request
def get(path):
    request = urllib.request.Request(os.environ["SHOWROOM_API"] + path, headers={
        "Authorization": "Basic " + base64.b64encode(os.environ["SHOWROOM_API_KEY"].encode()).decode()})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
rooms = get("/v1/rooms?page_size=20")["rooms"]
print("  GET /v1/rooms: %d open: %s" % (len(rooms), ", ".join(sorted(r["name"] for r in rooms))))
users = get("/v1/channels/%s/users" % sys.argv[1])
hosts = [u["uid"] for u in users["users"] if u["role"] == "host"]
print("  GET /v1/channels/%s/users: hosts %s, %d in the audience, on %s" % (sys.argv[1], hosts, users["audience_total"],
      ", ".join(sorted({u["edge"] for u in users["users"]}))))
sys.exit(0 if len(rooms) == 3 and len(hosts) == 1 and users["audience_total"] == 3 else 1)
PY
}

api_record() {
  # api_record API start CHANNEL        prints the recording's id
  # api_record API stop CHANNEL ID      stops it, waits for the host's file, reads each file with ffprobe
  SHOWROOM_API="$1" SHOWROOM_API_KEY="$(cat "$run_dir/api-key")" SHOWROOM_RECORDINGS="$run_dir/recordings" python3 - "${@:2}" <<'PY'
import base64, json, os, subprocess, sys, time, urllib.request
def call(method, path, body=None):
    request = urllib.request.Request(os.environ["SHOWROOM_API"] + path, method=method,
        data=None if body is None else json.dumps(body).encode(), headers={"Content-Type": "application/json",
        "Authorization": "Basic " + base64.b64encode(os.environ["SHOWROOM_API_KEY"].encode()).decode()})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
if sys.argv[1] == "start":
    print(call("POST", "/v1/channels/%s/recordings" % sys.argv[2], {})["id"])
    sys.exit(0)
channel, rid, host = sys.argv[2], sys.argv[3], int(sys.argv[4])
call("POST", "/v1/channels/%s/recordings/%s/stop" % (channel, rid))
deadline, files = time.time() + 10, []
while time.time() < deadline and not any(f["path"].split("/")[-2] == str(host) for f in files):
    time.sleep(0.2)  # the edge reports the finished file with its next activities
    files = call("GET", "/v1/channels/%s/recordings/%s" % (channel, rid))["files"]
ok = bool(files)
for f in files:
    path = os.path.join(os.environ["SHOWROOM_RECORDINGS"], f["path"])
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                           capture_output=True, text=True)
    read = probe.stdout.strip() if probe.returncode == 0 else "unreadable: " + probe.stderr.strip()[:80]
    ok = ok and probe.returncode == 0 and not f.get("failure")
    print("  %s on %s: %.1f s of %s, %d bytes; ffprobe reads %s s" % (f["path"], f["edge"], f["duration_ms"] / 1000,
          "+".join(f["codecs"]), f["bytes"], read))
sys.exit(0 if ok and any(f["path"].split("/")[-2] == str(host) for f in files) else 1)
PY
}

cmd_demo() {
  [ "$run_dir" != "$root/run/cluster" ] || run_dir="$root/run/demo"
  [ -z "$(live_ids)" ] || cmd_down
  trap 'stop_clients; cmd_down' EXIT
  coordinators=2
  # A demo starts from nothing: no rooms, no clients' output from an earlier run.
  rm -rf "$run_dir/data" "$run_dir/clients"
  cmd_up
  echo
  echo "== three rooms, each with a synthetic host (VP8 + Opus) and three viewers =="
  local i v room rooms=() seeds failed=() name line
  seeds="$(seed_flags)"
  for i in 1 2 3; do
    # shellcheck disable=SC2086
    room="$(ctl rooms create $seeds --name "Demo show $i" --owner $((1000 + i)) --owner-name "host-$i" --json |
      sed -n 's/.*"roomId":"\([^"]*\)".*/\1/p')"
    [ -n "$room" ] || die "creating room $i failed"
    rooms+=("$room")
    echo "  room $room: Demo show $i, owner $((1000 + i))"
    start_client "host-$i" --channel "$room" --uid $((1000 + i)) --role broadcaster --fps 15 --width 320 --height 240 \
      --accept-calls
  done
  for i in 1 2 3; do await_line "host-$i" joined >/dev/null || failed+=("host-$i did not join"); done
  for i in 1 2 3; do
    for v in 1 2 3; do
      start_client "viewer-$i-$v" --channel "${rooms[$((i - 1))]}" --room "${rooms[$((i - 1))]}" --uid $((2000 + 10 * i + v)) \
        --role audience --host-uid $((1000 + i))
    done
  done
  echo
  echo "== first decoded video frame after joining (viewers) =="
  for i in 1 2 3; do
    for v in 1 2 3; do
      name="viewer-$i-$v"
      if line="$(await_line "$name" first_frame)"; then
        echo "  $name: $line"
      else
        failed+=("$name decoded no video")
      fi
    done
  done
  # The viewers also join their rooms, so the rooms count them in their audience.
  for i in 1 2 3; do for v in 1 2 3; do await_line "viewer-$i-$v" room_join >/dev/null || true; done; done
  echo
  echo "== status: members, rooms, channels =="
  cmd_status
  echo
  echo "== the server API: what a business server sees (HTTP, the run directory's customer key) =="
  local api_view
  api_view="$(api_demo "$(api_of coordinator-2)" "${rooms[0]}")" || failed+=("the server API: $api_view")
  echo "$api_view"
  echo
  echo "== recording: ${rooms[2]} is recorded through the server API while the show goes on =="
  local recording
  if recording="$(api_record "$(api_of coordinator-1)" start "${rooms[2]}")"; then
    echo "  POST /v1/channels/${rooms[2]}/recordings: $recording (every broadcaster, to $run_dir/recordings/)"
  else
    failed+=("the recording of ${rooms[2]} did not start")
    recording=""
  fi
  echo
  echo "== show → 1v1: a viewer of ${rooms[0]} calls host-1, who pauses the show while they talk =="
  local call_out
  await_line host-1 calls_accepted >/dev/null || failed+=("host-1 did not log in to signaling")
  local call_file="$run_dir/clients/caller-2019.out" call_pid
  # shellcheck disable=SC2086
  ctl call $seeds --from 2019 --to 1001 --seconds 3 >"$call_file" 2>&1 &
  call_pid=$!
  # While they talk, the status view shows the call and host-1's room in it.
  if await_line host-1 "connected" >/dev/null; then
    echo "  -- status during the call --"
    cmd_status | grep -E -A4 '^(calls|rooms):' | sed 's/^/  /' || true
  fi
  if wait "$call_pid"; then
    sed 's/^/  caller 2019: /' "$call_file"
  else
    sed 's/^/  caller 2019: /' "$call_file"
    failed+=("the 1v1 call from 2019 to host-1 did not connect")
  fi
  await_line host-1 disconnected >/dev/null || true
  grep -E '^(state|connected|disconnected|timeline)' "$run_dir/clients/host-1.out" | sed 's/^/  host-1: /' || true
  for v in 1 2 3; do
    name="viewer-1-$v"
    if await_line "$name" "video_state channel=${rooms[0]} uid=1001 state=decoding" \
         "video_state channel=${rooms[0]} uid=1001 state=stopped" >/dev/null; then
      echo "  $name: the show stopped during the call and decodes again"
    else
      failed+=("$name did not see the show pause and resume around the call")
    fi
  done
  check_shows "after the call" 1 2 3
  echo
  echo "== PK: ${rooms[0]} vs ${rooms[1]}; the cluster forwards each host into the other's room =="
  local invitation pk_id
  # shellcheck disable=SC2086
  invitation="$(ctl pk invite $seeds --room "${rooms[0]}" --uid 1001 --peer "${rooms[1]}" --json |
    sed -n 's/.*"request":{[^}]*"id":"\([^"]*\)".*/\1/p')"
  # shellcheck disable=SC2086
  if [ -n "$invitation" ] && pk_id="$(ctl pk answer $seeds --room "${rooms[1]}" --uid 1002 --invitation "$invitation" --accept --json |
       sed -n 's/.*"interactionId":"\([^"]*\)".*/\1/p')" && [ -n "$pk_id" ]; then
    echo "  PK $pk_id started"
    for i in 1 2; do
      local peer=$((1003 - i))
      for v in 1 2 3; do
        name="viewer-$i-$v"
        if line="$(await_line "$name" "first_frame channel=${rooms[$((i - 1))]} uid=$peer")"; then
          echo "  $name decodes both hosts; the peer's $line"
        else
          failed+=("$name did not decode the PK peer host $peer")
        fi
      done
    done
    echo "  -- status during the PK --"
    cmd_status | grep -E -A3 '^interactions:' | sed 's/^/  /' || true
    # shellcheck disable=SC2086
    ctl pk stop $seeds --room "${rooms[0]}" --uid 1001 --pk "$pk_id" >/dev/null || failed+=("stopping PK $pk_id failed")
    if line="$(await_line viewer-1-1 "user_offline channel=${rooms[0]} uid=1002")"; then
      echo "  PK stopped; viewer-1-1: $line"
    else
      failed+=("viewer-1-1 did not see the PK peer go offline")
    fi
  else
    failed+=("the PK between ${rooms[0]} and ${rooms[1]} did not start")
  fi
  check_shows "after the PK" 1 2 3
  echo
  echo "== co-host: a viewer of ${rooms[2]} applies, goes on stage and steps down =="
  local application seat
  start_client "cohost-3" --channel "${rooms[2]}" --room "${rooms[2]}" --uid 2039 --role audience --cohost
  if line="$(await_line cohost-3 cohost_applied)"; then
    application="$(sed -n 's/.* request=\([^ ]*\).*/\1/p' <<<"$line")"
    # shellcheck disable=SC2086
    ctl cohost answer $seeds --room "${rooms[2]}" --uid 1003 --request "$application" --accept >/dev/null ||
      failed+=("host-3 could not seat viewer 2039")
    if line="$(await_line cohost-3 on_stage)"; then
      seat="$(sed -n 's/.* seat=\([^ ]*\).*/\1/p' <<<"$line")"
      echo "  cohost-3: $line"
      if line="$(await_line viewer-3-1 "first_frame channel=${rooms[2]} uid=2039")"; then
        echo "  viewer-3-1 decodes the co-host: $line"
      else
        failed+=("viewer-3-1 did not decode the co-host")
      fi
      # shellcheck disable=SC2086
      ctl cohost stop $seeds --room "${rooms[2]}" --uid 1003 --seat "$seat" >/dev/null || failed+=("ending seat $seat failed")
      if line="$(await_line viewer-3-1 "user_offline channel=${rooms[2]} uid=2039")"; then
        echo "  stepped down; viewer-3-1: $line"
      else
        failed+=("viewer-3-1 did not see the co-host step down")
      fi
    else
      failed+=("viewer 2039 did not go on stage$(grep -m1 '^on_stage_failed' "$run_dir/clients/cohost-3.out" | sed 's/^/: /')")
    fi
  else
    failed+=("viewer 2039 could not apply for a seat")
  fi
  check_shows "after the co-host" 1 2 3
  if [ -n "$recording" ]; then
    echo "  recording $recording stopped; its files (the host's, and the co-host's while on stage):"
    api_record "$(api_of coordinator-2)" stop "${rooms[2]}" "$recording" 1003 || failed+=("the recording of ${rooms[2]} left no readable file of its host")
  fi
  echo
  echo "== failure drill: SIGKILL the edge hosting ${rooms[0]}; its clients rejoin elsewhere =="
  local victim="" status_json moved=() rejoined decoded deadline=$((SECONDS + 5))
  # The channel list is the edges' latest reports to a coordinator: asked again (for up to 5 s)
  # while the one asked has no report of the room's channel yet.
  while [ -z "$victim" ] && [ "$SECONDS" -le "$deadline" ]; do
    # shellcheck disable=SC2086
    status_json="$(ctl status $seeds --json || true)"
    victim="$(edge_of "$status_json" "${rooms[0]}")"
    [ -n "$victim" ] || sleep 0.2
  done
  # Kept for whoever reads why the drill found no edge.
  [ -n "$victim" ] || echo "$status_json" > "$run_dir/drill-status.json"
  if [ -n "$victim" ]; then
    # Every room on that edge moves, not only the first.
    for i in 1 2 3; do
      if [ "$(edge_of "$status_json" "${rooms[$((i - 1))]}")" = "$victim" ]; then moved+=("$i"); fi
    done
    target="$victim" cmd_kill
    echo "  (times from the moment each viewer noticed its edge was gone)"
    for i in "${moved[@]}"; do
      for v in 1 2 3; do
        name="viewer-$i-$v"
        if rejoined="$(await_line "$name" rejoined)" && decoded="$(await_line "$name" first_frame rejoined)"; then
          echo "  $name: rejoined after $(elapsed_ms "$rejoined") ms, first decoded frame after $(elapsed_ms "$decoded") ms"
        else
          failed+=("$name did not decode video again after $victim was killed")
        fi
      done
    done
    await_converged
    cmd_status
    check_shows "after $victim was killed" 1 2 3
  else
    echo "  (no channel report for ${rooms[0]} yet; skipping the drill)"
    failed+=("no edge reported ${rooms[0]}, so no edge was killed")
  fi
  echo
  echo "== stopping the clients and the cluster =="
  stop_clients
  echo "logs: $run_dir/ (ID.log and ID.out per process), clients' output in $run_dir/clients/ (NAME.out, NAME.log)"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "demo failed:" >&2
    for line in "${failed[@]}"; do echo "  $line" >&2; done
    exit 1
  fi
}

case "$command" in
  up) cmd_up ;;
  status) cmd_status ;;
  scale-edges) cmd_scale_edges ;;
  kill) cmd_kill ;;
  restart) cmd_restart ;;
  down) cmd_down ;;
  demo) cmd_demo ;;
  -h|--help|help) usage 0 ;;
  *) die "unknown command '$command' (see --help)" ;;
esac
