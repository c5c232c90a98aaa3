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
# Each step's name, duration and result, printed at the end whatever happens (a red run too).
STEP_ROWS=() RUN_START=$SECONDS
report_steps() {
  [ ${#STEP_ROWS[@]} -gt 0 ] || return 0
  echo "$ME: steps"
  printf '  %s\n' "${STEP_ROWS[@]}"
  printf '  %-34s %6ss\n' "total" $((SECONDS - RUN_START))
}
cleanup() {
  report_steps
  if [ "$started_mdns" = yes ]; then scripts/mdns-loopback.sh stop || true; fi
}
trap cleanup EXIT

# step NAME CMD...: runs CMD, records how long it took; a failing step ends the run with its status.
step() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "$ME: $name"
  "$@" || rc=$?
  STEP_ROWS+=("$(printf '%-34s %6ss  %s' "$name" $((SECONDS - start)) "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")")")
  [ $rc = 0 ] || exit $rc
}

# The ThreadSanitizer canary (Tests/P2PTests/ThreadSanitizerCanaryTests.swift) races on purpose: TSan,
# with our suppressions loaded, must flag it in racyIncrement, or the TSan step proves nothing.
tsan_catches_a_real_race() {
  local log=.build-tsan/canary.log
  if P2P_TSAN_CANARY=1 swift test --sanitize=thread --scratch-path .build-tsan \
       --filter ThreadSanitizerCanaryTests >"$log" 2>&1; then
    echo "$ME: the deliberate race ran without a ThreadSanitizer report (log: $log)" >&2; return 1
  fi
  # TSan names the same race a "data race" or, caught by Swift's exclusivity instrumentation first, a
  # "Swift access race"; it reports a place once, so a run may show either alone (one did).
  if grep -qE 'WARNING: ThreadSanitizer: (data race|Swift access race)' "$log" && grep -q 'racyIncrement' "$log"; then
    echo "$ME: ThreadSanitizer flagged the deliberate race in racyIncrement, as it must"
  else
    echo "$ME: the canary failed without a ThreadSanitizer report of racyIncrement (log: $log)" >&2
    tail -n 30 "$log" >&2; return 1
  fi
}

# A Mac's disk is case-insensitive by default: no two tracked paths (or their folders) may differ only in case.
case_collisions() {
  local dupes
  dupes=$(git ls-files | awk -F/ '{p=""; for (i=1; i<=NF; i++) {p=(i==1?$i:p"/"$i); print p}}' | sort -u | tr 'A-Z' 'a-z' | sort | uniq -d)
  [ -z "$dupes" ] || { echo "$ME: paths that differ only in case: $dupes" >&2; return 1; }
}
step "no paths that differ only in case" case_collisions
# A lower layer never names a higher one: the library's folders, and the session's parts, depend one way.
step "no two folders of the library or of the command line depend on each other" python3 scripts/layers.py Sources/P2P Sources/P2P/Session Sources/P2P/Features Sources/P2PCLI

# Only a daemon this run starts is stopped at the end; an avahi that already answers is left alone.
if ! scripts/mdns-loopback.sh status >/dev/null 2>&1; then started_mdns=yes; fi
step "setup" scripts/setup.sh

export AVAHI_COMPAT_NOWARN=1
step "build (debug)" swift build --build-tests

# A missing mDNS daemon must fail the discovery tests here, not skip them.
export P2P_REQUIRE_MDNS=1
step "unit and integration tests" swift test

# The same tests again under ThreadSanitizer (a build of its own in .build-tsan): any report fails the run.
export TSAN_OPTIONS="suppressions=$PWD/Tests/tsan-suppressions.txt"
step "build (ThreadSanitizer)" swift build --build-tests --sanitize=thread --scratch-path .build-tsan
# No swift-backtrace under ThreadSanitizer: on a crash TSan's fork interceptor fails in the backtracer's child
# (CHECK failed: tsan_rtl.cpp), which then hangs for good with the test process; the crash's message still
# prints, and the run goes on to say which step failed.
# Two suites stay out of this run: FieldElementTests is arithmetic on one thread (nothing for TSan to find)
# that kept both cores busy for a minute, and ExamplesTests starts the examples as processes of their own
# (instrumented too, their reports never reach this run); beside them, tests timed out on a starved machine.
# At most 6 tests at once: TSan slows every access ~10x, and ~100 suites at once on 2 cores timed tests out
# (at 6 at once: 2 runs of 2 green in 30-36 s; unbounded: 1 of 3).
step "tests under ThreadSanitizer" env SWIFT_BACKTRACE=enable=no swift test --sanitize=thread --scratch-path .build-tsan \
  --skip FieldElementTests --skip ExamplesTests --experimental-maximum-parallelization-width 6
step "ThreadSanitizer catches a real race" tsan_catches_a_real_race

# Every decoder of peer bytes under libFuzzer with ASan, briefly (22 targets x 15 s, after an ASan
# build of its own in .build-fuzz): a smoke test, not a campaign; scripts/fuzz.sh SECONDS runs longer.
step "fuzz smoke (build and run)" scripts/fuzz.sh "${P2P_FUZZ_SMOKE_SECONDS:-15}"

# The benchmarks once, small: they must run to the end (the session benchmark's handlers are
# subscribed per phase).
bench_smoke() {
  .build/debug/p2p bench session --messages 2000 --round-trips 200 --warmup 20 --rounds 2 --discovery-runs 1 >/dev/null &&
  .build/debug/p2p bench crypto --size 8 --runs 1 >/dev/null
}
step "benchmark smoke" bench_smoke

step "end-to-end tests" env P2P_BIN="$PWD/.build/debug/p2p" Tests/e2e/run.sh
