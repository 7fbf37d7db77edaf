#!/usr/bin/env bash
# The web app and the browser SDK in a real browser against a real cluster: headless Chromium
# (fake camera and microphone) driven by Selenium, with synthetic Swift clients on the other side.
# Scenarios (Tests/Browser/README.md), after the token server's and the WebSocket origin's refusals:
# a browser viewer decodes a Swift host (its frame counter read from the canvas); a Swift viewer
# decodes a browser host; a browser swipes through five live rooms; a browser calls a Swift host
# (1v1); a PK between two Swift hosts seen in a browser; the room list's previews; a Swift co-host
# seen in a browser; the SDK follows a CHANNEL_ELSEWHERE redirect and recovers from a decode error.
#
#   Tests/browser-check.sh [--bin-dir DIR] [--only 1,3] [--keep-run-dir]
#
# --bin-dir: where the built executables are (default .build/debug). The cluster, its logs, the
# screenshots and the clients' output go to a fresh run directory under $TMPDIR; its path is
# printed at the end (removed after a pass unless --keep-run-dir); the screenshots are copied to
# run/browser-check/ after every run. Exits non-zero on any failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="$root/.build/debug"
only=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) bin_dir="$(cd "$2" && pwd)"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --keep-run-dir) keep=1; shift ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "browser-check.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin_dir/showroomctl" ] || { echo "browser-check.sh: no showroomctl in $bin_dir (build first, or give --bin-dir)" >&2; exit 2; }

# Debian's Python, where python3-selenium installs (another python3 may come first on PATH).
python=/usr/bin/python3
if ! { command -v chromium && command -v chromedriver && "$python" -c 'import selenium'; } >/dev/null 2>&1; then
  echo "installing chromium, chromium-driver, python3-selenium ..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y chromium chromium-driver python3-selenium >/dev/null ||
    { apt-get update >/dev/null && apt-get install -y chromium chromium-driver python3-selenium >/dev/null; }
fi

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/showroom-browser.XXXXXX")"
out_dir="$run_dir/browser"
mkdir -p "$out_dir"
runner_pid=""
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  [ -z "$runner_pid" ] || kill -TERM "$runner_pid" 2>/dev/null || true
  # Whatever the scenarios started (clients, chromedriver, Chromium), by pid, even if they died first.
  if [ -f "$out_dir/pids" ]; then
    while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$out_dir/pids"
    sleep 0.5
    while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$out_dir/pids"
  fi
  [ -z "$runner_pid" ] || wait "$runner_pid" 2>/dev/null || true
  bash "$root/deploy/cluster.sh" down --run-dir "$run_dir" >"$run_dir/cluster-down.log" 2>&1 || true
  rm -rf "$out_dir"/profile-*
  # The screenshots stay after any run, in run/browser-check/ of the checkout: look at them.
  rm -rf "$root/run/browser-check" && mkdir -p "$root/run/browser-check"
  cp "$out_dir"/*.png "$root/run/browser-check/" 2>/dev/null || true
  echo "browser check: screenshots in $root/run/browser-check/"
  if [ "$status" -eq 0 ] && [ -z "$keep" ]; then
    rm -rf "$run_dir"
  else
    echo "browser check: screenshots, page counters and logs in $out_dir (cluster logs in $run_dir)"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A base port whose hundred ports are free (coordinators P, call-signal P+10, edges P+20, API P+90 …).
base_port="$("$python" - <<'PY'
import random, socket
for _ in range(200):
    base = random.randrange(20000, 60000, 100)
    try:
        for port in range(base, base + 100):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(base)
    break
PY
)"
[ -n "$base_port" ] || { echo "browser-check.sh: no free range of 100 ports" >&2; exit 1; }

started=$SECONDS
echo "starting a cluster (base port $base_port, executables in $bin_dir) ..."
bash "$root/deploy/cluster.sh" up --run-dir "$run_dir" --base-port "$base_port" --bin-dir "$bin_dir" \
  >"$run_dir/cluster-up.log" 2>&1 || { cat "$run_dir/cluster-up.log" >&2; exit 1; }
web="$(sed -n 's/^web app: \(http[^ ]*\).*/\1/p' "$run_dir/cluster-up.log" | head -1)"
[ -n "$web" ] || { echo "browser-check.sh: cluster.sh up printed no 'web app:' line:" >&2; cat "$run_dir/cluster-up.log" >&2; exit 1; }
# The web app's server may still be starting: its config answers once it serves.
deadline=$((SECONDS + 20))
until "$python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "${web%/app/*}/api/config" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || { echo "browser-check.sh: $web does not answer /api/config" >&2; exit 1; }
  sleep 0.2
done
echo "cluster up in $((SECONDS - started)) s; web app $web"

timeout -k 10 300 "$python" -B "$root/Tests/Browser/run.py" --root "$root" --run-dir "$run_dir" --bin-dir "$bin_dir" --web "$web" \
  ${only:+--only "$only"} &
runner_pid=$!
status=0
wait "$runner_pid" || status=$?
runner_pid=""
echo "browser check: $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - started)) s"
exit "$status"
