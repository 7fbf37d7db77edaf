#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs the Debian packages that are missing,
# builds everything (the tests start the real server executables), then runs every test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
deploy/install-deps.sh
swift build --build-tests
# The client SDK links no server module and shows apps no wire, server or internal type: an app
# that depends on ShowroomKit alone is built, its linked modules checked, and the public API it
# sees read from symbol graphs (about 2 minutes the first time, 20 s after).
Tests/sdk-isolation.sh
# The committed generated code must be what proto/ generates (a step of its own: it builds
# protoc-gen-swift, which the unit tests have no need of).
proto/check-generated.sh
# The same for the JavaScript protobuf code (proto/generate-js.sh), then its tests against protoc
# (Node.js; Debian's nodejs when there is none).
command -v node >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null
Tests/Web/check-generated-js.sh
swift test --skip-build
# The server API against its OpenAPI document: the document validates, and schemathesis's
# generated requests against a live cluster find no 5xx and no answer the document does not allow
# (about a minute; installs schemathesis and openapi-spec-validator from PyPI when missing).
Tests/api-check.sh
# Fuzzing: every decoder and the state machine behind it, on the committed seed corpus, 15 s per
# target (5 targets; the first fuzz build takes about 3 minutes on 2 cores). Fails on any crash.
Tests/Fuzz/fuzz.sh --seconds 15
# The web app and the JavaScript SDK in headless Chromium against a real cluster, with Swift
# clients on the other side (about 40 s; installs chromium, chromium-driver and python3-selenium
# when missing). Screenshots are left in run/browser-check/.
Tests/browser-check.sh
