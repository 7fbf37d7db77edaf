#!/usr/bin/env bash
# Fails when Sources/ShowroomWire/Generated/ is not what proto/generate.sh produces from the current
# .proto files (a .proto edited without regenerating, or generated code edited by hand).
#
#   proto/check-generated.sh
#
# Regenerates into a temporary folder and compares it with the committed one, file by file.
# Tests/run.sh runs it once, before the unit tests; the first run builds protoc-gen-swift
# (about a minute on 2 cores), later runs reuse it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
committed="$root/Sources/ShowroomWire/Generated"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

if ! "$root/proto/generate.sh" --out "$scratch/Generated" >"$scratch/generate.log" 2>&1; then
    echo "check-generated.sh: proto/generate.sh failed:" >&2
    cat "$scratch/generate.log" >&2
    exit 1
fi

# Hidden files (.DS_Store) are not part of the generated code.
if ! report="$(diff -r -q -x '.*' "$scratch/Generated" "$committed")"; then
    {
        echo "check-generated.sh: Sources/ShowroomWire/Generated/ is not current with proto/:"
        echo "$report" | sed -e "s|$scratch/Generated|generate.sh output|g" -e "s|$root/||g" -e 's/^/  /'
        echo "Fix: run proto/generate.sh and commit the .proto files and Sources/ShowroomWire/Generated/"
        echo "together; never edit generated files by hand."
    } >&2
    exit 1
fi
echo "check-generated.sh: Sources/ShowroomWire/Generated/ is current with proto/ ($(find "$committed" -maxdepth 1 -type f ! -name '.*' | wc -l) files)"

# The server API's code: its README records the SHA-256 of the document, the generator's
# configuration and each generated file (proto/generate-api.sh); all must still match, and no
# generated file may be missing or extra. No generator build is needed for this check.
api="$root/Sources/ServerAPI/Generated"
recorded="$(sed -n 's/^    \([0-9a-f]\{64\}\)  /\1  /p' "$api/README.md")"
if ! actual="$(cd "$root" && { sha256sum proto/api/openapi.yaml proto/api/openapi-generator-config.yaml; \
        (cd "$api" && LC_ALL=C ls *.swift | LC_ALL=C sort | xargs sha256sum); })" || [[ "$recorded" != "$actual" ]]; then
    {
        echo "check-generated.sh: Sources/ServerAPI/Generated/ is not current with proto/api/openapi.yaml:"
        diff <(echo "$recorded") <(echo "$actual") | sed 's/^/  /' || true
        echo "Fix: run proto/generate-api.sh and commit the document and Sources/ServerAPI/Generated/"
        echo "together; never edit generated files by hand."
    } >&2
    exit 1
fi
echo "check-generated.sh: Sources/ServerAPI/Generated/ is current with proto/api/openapi.yaml ($(ls "$api"/*.swift | wc -l) files)"
