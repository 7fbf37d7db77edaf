#!/usr/bin/env bash
# Proves that the client SDK stands alone: builds Tests/SDKOnly, an app whose only dependency is
# ShowroomKit, and fails if anything outside the SDK's own modules was compiled for it or linked
# into it (the edge, the coordinator, membership, node runtime, rooms and their store, GRDB,
# Hummingbird, NIO ... any module not listed below).
#
#   Tests/sdk-isolation.sh
#
# The first run resolves and builds the SDK's modules in Tests/SDKOnly/.build (about 2 minutes on
# 2 cores); later runs take seconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$here/SDKOnly"
scratch="$package/.build"
product="sdk-only-app"

# What an app that uses the SDK may link: ShowroomKit, what it is built on, and the app itself.
allowed=(
  ShowroomKit EdgeProtocol ShowroomWire MediaCodecs ZeroMQ Ownership CallAPI  # Showroom
  SwiftProtobuf HeapModule InternalCollectionsUtilities             # swift-protobuf, swift-collections
  sdk_only_app                                                      # the app
)

start=$(date +%s)
if ! output="$(swift build --package-path "$package" --scratch-path "$scratch" --product "$product" 2>&1)"; then
  echo "$output" | grep -E "error" | head -20
  echo "sdk-isolation: FAILED: the app that imports only ShowroomKit does not build" >&2
  exit 1
fi
bin="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)"
link_list="$bin/$product.product/Objects.LinkFileList"
[ -f "$link_list" ] || { echo "sdk-isolation: FAILED: no link file list at $link_list" >&2; exit 1; }

# The modules whose object files the executable links (…/NAME.build/file.o), and those compiled
# for it (Modules/NAME.swiftmodule).
linked="$(sed -E 's#^"?.*/([^/]+)\.build/[^/]+"?$#\1#' "$link_list" | sort -u)"
compiled="$(ls "$bin/Modules" 2>/dev/null | sed -E 's/\..*$//' | sort -u)"

outside=()
for module in $(printf '%s\n%s\n' "$linked" "$compiled" | sort -u); do
  case " ${allowed[*]} " in
    *" $module "*) ;;
    *) outside+=("$module") ;;
  esac
done
if [ "${#outside[@]}" -gt 0 ]; then
  echo "sdk-isolation: FAILED: an app that depends on ShowroomKit alone builds or links modules outside the client SDK: ${outside[*]}" >&2
  echo "  (ShowroomKit's dependency closure must stay within: ${allowed[*]})" >&2
  exit 1
fi
# It runs, too: without arguments it only prints its usage.
"$bin/$product" >/dev/null
echo "sdk-isolation: ok: $product links only $(echo $linked | tr ' ' ',') ($(( $(date +%s) - start )) s)"
