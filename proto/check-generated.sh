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
