#!/usr/bin/env bash
# What a fresh release build of p2p spends its time on (issue 35 item 2): the first run of scripts/chat.sh
# is one `swift build -c release --product p2p` from nothing. This builds the same thing from an empty
# scratch folder one dependency at a time, in dependency order (`swift build --target T` builds T and what
# it needs that is not built yet), so each row is the extra wall time that dependency costs. A no-op build
# is timed first: its time (SwiftPM's planning) is taken off every row. The load average is printed before
# and after; figures taken at load 1 or more are marked.
#
# usage: Benchmarks/build_cost.sh [--scratch DIR]   (default: a new /tmp/p2p-build-cost.XXXXXX, removed after)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=
while [ $# -gt 0 ]; do
  case $1 in
    --scratch) SCRATCH=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "build_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
KEEP=1
[ -n "$SCRATCH" ] || { SCRATCH=$(mktemp -d /tmp/p2p-build-cost.XXXXXX); KEEP=0; }
cd "$ROOT"
load() { cut -d' ' -f1 /proc/loadavg; }
# Rows: label, then the targets built for it (each builds its own dependencies first).
ROWS=(
  "swift-crypto's BoringSSL copy (C)|CCryptoBoringSSL CCryptoBoringSSLShims CryptoBoringWrapper"
  "swift-crypto (Swift)|Crypto"
  "swift-nio core + posix (with atomics, collections)|NIOCore NIOPosix NIOConcurrencyHelpers"
  "swift-nio HTTP/1 + TLS glue|NIOHTTP1 NIOTLS"
  "swift-nio-ssl's BoringSSL copy (C)|CNIOBoringSSL CNIOBoringSSLShims"
  "swift-nio-ssl (Swift)|NIOSSL"
  "swift-asn1 + swift-certificates|SwiftASN1 X509"
  "swift-log|Logging"
  "GRDB (with SQLite)|GRDB"
  "swift-argument-parser|ArgumentParser"
  "p2p library (Sources/P2P)|P2P"
  "p2p command line (Sources/P2PCLI) + link|--product p2p"
)
START_LOAD=$(load)
echo "build_cost.sh: $(nproc) cores, load $START_LOAD at start, scratch $SCRATCH, commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
build() { swift build -c release --scratch-path "$SCRATCH" "$@" >>"$SCRATCH.log" 2>&1; }
# Resolving the packages (from the local copies) is part of a first run too: its own row.
t0=$(date +%s.%N); swift package --scratch-path "$SCRATCH" resolve >>"$SCRATCH.log" 2>&1 || { echo "resolve failed: $SCRATCH.log" >&2; exit 1; }
t1=$(date +%s.%N)
printf '| %-52s | %7s |\n' "step" "seconds"
printf '|%s|%s|\n' "$(printf -- '-%.0s' {1..54})" "---------"
printf '| %-52s | %7.1f |\n' "resolve the packages" "$(echo "$t1 - $t0" | bc)"
TOTAL=$(echo "$t1 - $t0" | bc)
for row in "${ROWS[@]}"; do
  label=${row%%|*} targets=${row#*|}
  t0=$(date +%s.%N)
  if [ "${targets#--product}" != "$targets" ]; then build $targets || { echo "build of $label failed: $SCRATCH.log" >&2; exit 1; }
  else for t in $targets; do build --target "$t" || { echo "build of $t failed: $SCRATCH.log" >&2; exit 1; }; done; fi
  t1=$(date +%s.%N)
  # Each `swift build` call plans before it builds; a call with nothing to do measures that planning.
  n=$(echo "$targets" | wc -w); [ "${targets#--product}" != "$targets" ] && n=1
  last=${targets##* }; if [ "${targets#--product}" != "$targets" ]; then noop=(--product p2p); else noop=(--target "$last"); fi
  p0=$(date +%s.%N); build "${noop[@]}"; p1=$(date +%s.%N)
  secs=$(echo "($t1 - $t0) - $n * ($p1 - $p0)" | bc)
  TOTAL=$(echo "$TOTAL + $secs" | bc)
  printf '| %-52s | %7.1f |\n' "$label" "$secs"
done
printf '| %-52s | %7.1f |\n' "**total** (planning taken off each row)" "$TOTAL"
END_LOAD=$(load)
echo "load $START_LOAD at start, $END_LOAD at end$(awk -v l="$START_LOAD" 'BEGIN{if (l>=1) print " (NOT a quiet machine: figures high)"}')"
[ $KEEP = 1 ] || rm -rf "$SCRATCH" "$SCRATCH.log"
