#!/usr/bin/env bash
# The one test command: set up (packages, mDNS on loopback), build, then run every test:
# unit and integration (swift test, with real avahi on loopback), a short fuzz smoke of every decoder
# (scripts/fuzz.sh), then the end-to-end scripts
# (two p2p processes in two network namespaces, avahi interop, hostile input).
# Stops everything it started, by PID, whatever happens.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
ME=test.sh

started_mdns=no
cleanup() {
  if [ "$started_mdns" = yes ]; then scripts/mdns-loopback.sh stop || true; fi
}
trap cleanup EXIT

# Only a daemon this run starts is stopped at the end; an avahi that already answers is left alone.
if ! scripts/mdns-loopback.sh status >/dev/null 2>&1; then started_mdns=yes; fi
scripts/setup.sh

export AVAHI_COMPAT_NOWARN=1
echo "$ME: building"
swift build --build-tests

echo "$ME: unit and integration tests"
# A missing mDNS daemon must fail the discovery tests here, not skip them.
P2P_REQUIRE_MDNS=1 swift test

# The same tests again under ThreadSanitizer (a build of its own in .build-tsan): any report fails the run.
echo "$ME: unit and integration tests under ThreadSanitizer"
TSAN_OPTIONS="suppressions=$PWD/Tests/tsan-suppressions.txt" P2P_REQUIRE_MDNS=1 \
  swift test --sanitize=thread --scratch-path .build-tsan

# Every decoder of peer bytes under libFuzzer with ASan, briefly (18 targets x 15 s, after an ASan
# build of its own in .build-fuzz): a smoke test, not a campaign; scripts/fuzz.sh SECONDS runs longer.
echo "$ME: fuzz smoke"
scripts/fuzz.sh "${P2P_FUZZ_SMOKE_SECONDS:-15}"

# The session benchmark once, small: it must run to the end (its handlers are subscribed per phase).
echo "$ME: benchmark smoke"
.build/debug/p2p bench session --messages 2000 --round-trips 200 --warmup 20 --rounds 2 --discovery-runs 1 >/dev/null
.build/debug/p2p bench crypto --size 8 --runs 1 >/dev/null

echo "$ME: end-to-end tests"
P2P_BIN="$PWD/.build/debug/p2p" Tests/e2e/run.sh
