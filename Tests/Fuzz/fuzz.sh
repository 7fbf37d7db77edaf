#!/usr/bin/env bash
# Builds the libFuzzer targets (release, -sanitize=fuzzer) and runs each on a copy of its seed
# corpus for a while. Exits 1 on any crash, printing the crashing input and the report's start.
#
#   Tests/Fuzz/fuzz.sh [--seconds S] [--target NAME] [--no-build]
#
# Targets: envelope, gossip, edge-session, room-requests, state-batch (default: all).
# The committed corpus (Tests/Fuzz/Corpus/<target>/) is never grown: the fuzzer works on a copy.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
seconds=30
targets=(envelope gossip edge-session room-requests state-batch)
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --target) targets=("$2"); shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "usage: $0 [--seconds S] [--target NAME] [--no-build]" >&2; exit 2 ;;
  esac
done

scratch="$here/.build"
bin="$(swift build -c release --package-path "$here" --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer --show-bin-path)"
if [ "$build" -eq 1 ]; then
  start=$(date +%s)
  # -sanitize=fuzzer on the command line instruments the Showroom modules too, so libFuzzer sees
  # their coverage. One product at a time: a plain `swift build` would also link the corpus
  # generator, which must not get libFuzzer's main.
  for target in "${targets[@]}"; do
    swift build -c release --package-path "$here" --scratch-path "$scratch" \
      -Xswiftc -sanitize=fuzzer --product "fuzz-$target" 2>&1 | grep -E "error|warning: unre|Compiling|Build" | tail -3 || true
    [ -x "$bin/fuzz-$target" ] || { echo "fuzz $target: build failed" >&2; exit 1; }
  done
  echo "fuzz build: $(( $(date +%s) - start )) s"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
for target in "${targets[@]}"; do
  case "$target" in
    edge-session) max_len=131072 ;;  # a join, then media frames with VP8-sized payloads
    *) max_len=65536 ;;
  esac
  corpus="$work/$target/corpus"
  mkdir -p "$corpus" "$work/$target/artifacts"
  cp "$here/Corpus/$target/"* "$corpus/"
  log="$work/$target/log"
  set +e
  # Swift's own backtracer would catch the crash signal first and libFuzzer would not save the
  # input, so it is turned off for the fuzzer.
  SWIFT_BACKTRACE=enable=no "$bin/fuzz-$target" "$corpus" -max_total_time="$seconds" -max_len="$max_len" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$work/$target/artifacts/" >"$log" 2>&1
  status=$?
  set -e
  crash="$(ls "$work/$target/artifacts/" 2>/dev/null | head -1)"
  if [ "$status" -ne 0 ] || [ -n "$crash" ]; then
    failed=1
    kept="$here/.build/crashes/$target"
    mkdir -p "$kept"
    [ -n "$crash" ] && cp "$work/$target/artifacts/$crash" "$kept/"
    cp "$log" "$kept/log"
    echo "fuzz $target: CRASH (exit $status); input: ${crash:+$kept/$crash}; log: $kept/log"
    grep -m1 -B2 -A12 -E "Fatal error|ERROR: libFuzzer|SUMMARY" "$log" | head -20
    continue
  fi
  done_line="$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1)"
  runs="$(echo "$done_line" | sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1/')"
  secs="$(echo "$done_line" | sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/')"
  echo "fuzz $target: ${runs:-?} inputs in ${secs:-?} s, 0 crashes"
done
exit "$failed"
