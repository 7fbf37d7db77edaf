#!/usr/bin/env bash
# Fails when Sources/ShowroomWeb/sdk/proto/ is not what proto/generate-js.sh produces from the
# current .proto files (a .proto edited without regenerating, or generated code edited by hand),
# then runs the JavaScript protobuf tests (Tests/Web/proto.test.mjs, which cross-check against
# protoc).
#
#   Tests/Web/check-generated-js.sh
#
# Needs protoc, python3 and Node 20.19+ or 22+ (older Node cannot tell showroom.js is an ES module).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
committed="$root/Sources/ShowroomWeb/sdk/proto"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

if ! "$root/proto/generate-js.sh" --out "$scratch/proto" >"$scratch/generate.log" 2>&1; then
    echo "check-generated-js.sh: proto/generate-js.sh failed:" >&2
    cat "$scratch/generate.log" >&2
    exit 1
fi

# runtime.js is hand-written, not generated; hidden files (.DS_Store) are not code.
if ! report="$(diff -r -q -x '.*' -x runtime.js "$scratch/proto" "$committed")"; then
    {
        echo "check-generated-js.sh: Sources/ShowroomWeb/sdk/proto/ is not current with proto/:"
        echo "$report" | sed -e "s|$scratch/proto|generate-js.sh output|g" -e "s|$root/||g" -e 's/^/  /'
        echo "Fix: run proto/generate-js.sh and commit the .proto files and Sources/ShowroomWeb/sdk/proto/"
        echo "together; never edit generated files by hand."
    } >&2
    exit 1
fi
echo "check-generated-js.sh: Sources/ShowroomWeb/sdk/proto/ is current with proto/ ($(find "$committed" -maxdepth 1 -type f ! -name '.*' ! -name runtime.js | wc -l) generated files)"

command -v node >/dev/null 2>&1 || { echo "check-generated-js.sh: node not found; install Node.js 20.19 or later" >&2; exit 1; }
node "$root/Tests/Web/proto.test.mjs"
