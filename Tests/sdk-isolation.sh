#!/usr/bin/env bash
# Proves that the client SDK stands alone: builds Tests/SDKOnly, an app whose only dependency is
# ShowroomKit, and fails
#   - if anything outside the SDK's own modules was compiled for it or linked into it (the edge, the
#     coordinator, membership, node runtime, rooms and their store, channel placement and relays
#     (Routing), the call-signal book (Calls), GRDB, Hummingbird, NIO ... any module not listed
#     below), or any of the servers' files named below;
#   - if a public declaration an app sees (ShowroomKit's, and ShowroomError's, which it re-exports)
#     names a generated wire type, a type of a module apps must not see, or one of ShowroomKit's
#     internals: Tests/SDKOnly/check-public-api.swift reads the symbol graphs of the modules the app
#     was built with;
#   - if an app that imports ShowroomKit can name such a type at all (a re-exported module).
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
# The servers' decisions, which must not reach an app even if a module of the SDK took them in.
server_files=(PlacementTable RelayPlanner CallBook Presence UserRecord DialRateLimit)

start=$(date +%s)
bin="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)"
# Modules outside the SDK left in the build directory by an earlier run (say, of a build that did
# leak) go first: one the app really needs is compiled again below, and caught.
for built in "$bin"/Modules/*; do
  [ -e "$built" ] || continue
  name="$(basename "$built")"
  case " ${allowed[*]} " in
    *" ${name%%.*} "*) ;;
    *) rm -rf "$built" ;;
  esac
done
# No cached build plan: a source file added to the SDK since the last run must be built and seen.
if ! output="$(swift build --package-path "$package" --scratch-path "$scratch" --product "$product" \
    --disable-build-manifest-caching 2>&1)"; then
  echo "$output" | grep -E "error" | head -20
  echo "sdk-isolation: FAILED: the app that imports only ShowroomKit does not build" >&2
  exit 1
fi
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
taken="$(grep -oE "/($(IFS='|'; echo "${server_files[*]}"))\.swift\.o" "$link_list" | sort -u | tr '\n' ' ' || true)"
if [ -n "$taken" ]; then
  echo "sdk-isolation: FAILED: an app that depends on ShowroomKit alone links the servers' code: $taken" >&2
  exit 1
fi

# What an app sees: the public symbol graphs of ShowroomKit and of ShowroomWire (for the
# re-exported ShowroomError), from the modules just built, checked by check-public-api.swift.
graphs="$scratch/public-api"
rm -rf "$graphs" && mkdir -p "$graphs"
includes=(-I "$bin/Modules")
for map in "$here"/../Sources/C*/module.modulemap; do includes+=(-I "$(dirname "$map")"); done
for flag in $(pkg-config --cflags-only-I opus vpx libzmq 2>/dev/null); do includes+=(-Xcc "$flag"); done
# The extractor comes with the toolchain, beside swift (through xcrun on macOS).
extract="$(command -v swift-symbolgraph-extract || xcrun --find swift-symbolgraph-extract 2>/dev/null ||
  echo "$(dirname "$(readlink -f "$(command -v swift)")")/swift-symbolgraph-extract")"
for module in ShowroomKit ShowroomWire; do
  if ! "$extract" -module-name "$module" "${includes[@]}" -minimum-access-level public \
      -output-dir "$graphs" >"$graphs/$module.log" 2>&1; then
    cat "$graphs/$module.log" >&2
    echo "sdk-isolation: FAILED: no symbol graph of $module" >&2
    exit 1
  fi
done
if ! swift "$package/check-public-api.swift" "$graphs" >"$graphs/check.log" 2>&1; then
  cat "$graphs/check.log" >&2
  echo "sdk-isolation: FAILED: ShowroomKit's public API shows apps what they must not see" >&2
  exit 1
fi
# And what an app can name at all (a whole module re-exported would show it every type without a
# declaration of ShowroomKit naming one): none of these may be in scope after `import ShowroomKit`.
hidden=(
  WireErrorCode WireError WireRedirect WireEnvelope AdminClusterStatus SignalCallInfo  # generated
  EdgeRequest EdgeCodec EventLoop Context NodeRole OwnerRing RendezvousHashing  # the SDK's own modules
  PlacementTable RelayPlanner Call CallBook CallNotice Presence UserRecord DialRateLimit  # servers
  EngineShell EngineState AnchorBook ChannelPlacement EdgeAddress CountingVideoSink  # SDK internals
)
probe="$graphs/probe.swift"
{ echo "import ShowroomKit"; for name in "${hidden[@]}"; do echo "let _: $name.Type? = nil"; done; } >"$probe"
swiftc -typecheck "${includes[@]}" "$probe" >"$graphs/probe.log" 2>&1 || true
seen=()
for name in "${hidden[@]}"; do
  grep -q "cannot find type '$name' in scope" "$graphs/probe.log" || seen+=("$name")
done
if [ "${#seen[@]}" -gt 0 ]; then
  echo "sdk-isolation: FAILED: an app that imports ShowroomKit can name: ${seen[*]}" >&2
  exit 1
fi
# It runs, too: without arguments it only prints its usage.
"$bin/$product" >/dev/null
echo "sdk-isolation: ok: $product links only $(echo $linked | tr ' ' ','); $(tail -1 "$graphs/check.log" | sed 's/^check-public-api: ok: //') ($(( $(date +%s) - start )) s)"
