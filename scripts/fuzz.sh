#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/P2PFuzz: every decoder of peer bytes) with ASan and runs each
# for SECONDS (default 60), seeded from Protocol/vectors (Fuzz/make_seeds.py). Prints executions per
# target and, for a crash, the reproducer file; exits 1 if any target crashed (64 on bad usage).
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: every target; list: P2P_FUZZ_TARGET=list)
#   P2P_FUZZ_DIR   where corpora and crash files go (default .build-fuzz/work); corpora grow across runs
#   P2P_FUZZ_ARGS  extra libFuzzer flags (later ones win), e.g. "-max_len=70000": inputs are cut at
#                  4096 bytes by default, which keeps executions fast; the seeds' bigger frames are cut too
# Reproduce a crash:  SWIFT_BACKTRACE=enable=no P2P_FUZZ_TARGET=NAME .build-fuzz/debug/P2PFuzz CRASH-FILE
# Inputs that once crashed live in Fuzz/regressions/<target>/ and are replayed first on every run.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
ME=fuzz.sh

SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
case $SECONDS_PER_TARGET in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 64 ;; esac
[ "$(uname)" = Linux ] || { echo "$ME: libFuzzer targets are built on Linux only" >&2; exit 64; }

# P2P_FUZZ_CONFIG=release: optimized (several times more executions per second; a longer first build,
# in its own scratch path). Both keep -enable-testing: the targets reach internal decoders.
CONFIG=${P2P_FUZZ_CONFIG:-debug}
case $CONFIG in
  debug) SCRATCH=.build-fuzz EXTRA=() ;;  # debug builds have testing enabled already
  release) SCRATCH=.build-fuzz-release EXTRA=(-Xswiftc -enable-testing) ;;
  *) echo "$ME: P2P_FUZZ_CONFIG is debug or release" >&2; exit 64 ;;
esac
WORK=${P2P_FUZZ_DIR:-.build-fuzz/work}
BIN=$SCRATCH/$CONFIG/P2PFuzz

echo "$ME: building P2PFuzz ($CONFIG, -sanitize=fuzzer,address) in $SCRATCH"
build_start=$SECONDS
# -parse-as-library: the fuzz module has no main (libFuzzer's runtime has it). Only the P2PFuzz
# product is built, so the p2p executable's top-level code never sees that flag.
mkdir -p "$SCRATCH"
if ! P2P_FUZZ=1 swift build -c "$CONFIG" --scratch-path "$SCRATCH" --product P2PFuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library "${EXTRA[@]}" >"$SCRATCH/fuzz-build.log" 2>&1; then
  grep -Ev '^\[[0-9]+/[0-9]+\] (Compiling|Write|Emitting)' "$SCRATCH/fuzz-build.log" | tail -n 40 >&2
  echo "$ME: build failed (log: $SCRATCH/fuzz-build.log)" >&2
  exit 1
fi
echo "$ME: build took $((SECONDS - build_start)) s"

mapfile -t ALL < <(P2P_FUZZ_TARGET=list "$BIN")
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
for t in "${TARGETS[@]}"; do
  # Not `printf | grep -q`: grep leaves at the first match, printf may then die of SIGPIPE, and under
  # pipefail a known target read as unknown (it failed a test run that way).
  [[ " ${ALL[*]} " == *" $t "* ]] || { echo "$ME: unknown target $t (known: ${ALL[*]})" >&2; exit 64; }
done

python3 Fuzz/make_seeds.py "$WORK/seeds" >/dev/null
mkdir -p "$WORK/crashes"
# Swift's runtime keeps metadata caches alive to the end: leak reports would only be noise.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
# Swift's own crash backtracer would catch the trap first (and, under ASan, hang in it): let libFuzzer
# see the signal and write the reproducer.
export SWIFT_BACKTRACE=enable=no

crashed=0 rows=()
for t in "${TARGETS[@]}"; do
  corpus=$WORK/corpus/$t log=$WORK/$t.log
  mkdir -p "$corpus" "$WORK/seeds/$t"
  # Old crashes first: a fixed bug must stay fixed.
  if compgen -G "Fuzz/regressions/$t/*" >/dev/null; then
    if ! P2P_FUZZ_TARGET=$t "$BIN" Fuzz/regressions/"$t"/* >"$WORK/$t.regressions.log" 2>&1; then
      echo "$ME: $t: a regression input crashes again (log: $WORK/$t.regressions.log)"
      grep -E 'Running: |P2PFuzz contract|ERROR: AddressSanitizer|Fatal error' "$WORK/$t.regressions.log" | tail -n 5  || true
      crashed=1 rows+=("$(printf '%-10s regression input crashed' "$t")")
      continue
    fi
  fi
  set +e
  # shellcheck disable=SC2086
  P2P_FUZZ_TARGET=$t "$BIN" "$corpus" "$WORK/seeds/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix="$WORK/crashes/$t-" ${P2P_FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  set -e
  # (A crashed run prints no final stats: every lookup here may come back empty.)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1 || true)
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1 || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+' || true)
  files=$(find "$corpus" -type f | wc -l)
  if [ "$rc" = 0 ]; then
    rows+=("$(printf '%-10s %4d s %12s execs %8s/s  cov %6s  corpus %5d  ok' "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$files")")
  else
    crashed=1
    artifact=$(grep -o 'Test unit written to .*' "$log" | tail -n 1 | sed 's/Test unit written to //' || true)
    rows+=("$(printf '%-10s %4d s %12s execs  CRASH (exit %d): %s' "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "$rc" "${artifact:-see $log}")")
    echo "$ME: $t crashed; log $log"
    grep -E 'P2PFuzz contract|ERROR: AddressSanitizer|ERROR: libFuzzer|Fatal error|SUMMARY' "$log" | head -n 5 || true
    [ -z "$artifact" ] || echo "$ME: reproduce with: SWIFT_BACKTRACE=enable=no P2P_FUZZ_TARGET=$t $BIN $artifact"
  fi
  echo "${rows[-1]}"
done

echo "===== fuzz summary ($SECONDS_PER_TARGET s per target)"
printf '%s\n' "${rows[@]}"
if [ "$crashed" = 0 ]; then echo "$ME: no crashes"; else echo "$ME: CRASHES found"; fi
exit "$crashed"
