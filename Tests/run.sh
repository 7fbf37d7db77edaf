#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs the Debian packages that are missing,
# builds everything (the tests start the real server executables), then runs every test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
deploy/install-deps.sh
swift build --build-tests
swift test --skip-build
# Fuzzing: every decoder and the state machine behind it, on the committed seed corpus, 20 s per
# target (5 targets; the first fuzz build takes about 5 minutes on 2 cores). Fails on any crash.
Tests/Fuzz/fuzz.sh --seconds 20
