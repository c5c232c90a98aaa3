#!/usr/bin/env bash
# Byte-stream benchmark: SIZE (default 1 GiB) of random bytes from a pipe, over loopback (127.0.0.1),
# into a file on tmpfs, RUNS times each (interleaved) with
#   p2p     `cat SRC | p2p send - --as bench.bin --connect 127.0.0.1:P` into `p2p receive --stdout --yes > OUT`
#           (TLS 1.3, SHA-256 on both ends, flow control by what the receiver wrote out)
#   socat   `cat SRC | socat -u -b 262144 STDIN TCP:…` into `socat -u -b 262144 TCP-LISTEN:… STDOUT > OUT`
#           (plain copy, no encryption, no hash)
# Wall time from starting the sender until both ends have exited, the median of each, the ratio
# socat time / p2p time (>= 1 means p2p is as fast), and the CPU seconds both ends used (cat not
# counted). The 1-minute load average is printed before every run and at the end: other work on the
# machine slows every row. Every output is checked with sha256sum. Build first: swift build -c release.
#
# usage: Benchmarks/stream.sh [--runs N] [--size-mib N] [--summary FILE]
#   --summary FILE  also writes the figures as "key value" lines (for Benchmarks/run.sh)
# needs: socat, python3, /usr/bin/time (package time)
# env:   P2P_BIN (default .build/release/p2p), BENCH_TMPFS (default /dev/shm)
# Exit status 0 whatever the ratio; 1 if a run failed or a tool is missing.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/Benchmarks/lib.sh"
P2P=${P2P_BIN:-$ROOT/.build/release/p2p}
[[ "$P2P" = /* ]] || P2P=$ROOT/$P2P
TMPFS=${BENCH_TMPFS:-/dev/shm}
RUNS=5 SIZE_MIB=1024 SUMMARY=
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --summary) SUMMARY=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
export AVAHI_COMPAT_NOWARN=1 LANG=C.UTF-8 LC_ALL=C.UTF-8
for tool in socat sha256sum python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done
[ -x "$P2P" ] || { echo "bench: no p2p binary at $P2P (swift build -c release)" >&2; exit 1; }

W=$(mktemp -d "$TMPFS/p2p-stream-bench.XXXXXX")
TAG=$$-$RANDOM
SID=bench-$TAG
declare -a OURS=()
cleanup() {
  local pid
  for pid in "${OURS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${OURS[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bad() { say "FAILED: $*"; echo "$*" >>"$W/failures"; }

# run_X SRC OUT -> seconds on stdout, CPU seconds in $W/cpu.
run_p2p() {
  local src=$1 out=$2 port rpid t0 t1 rc
  port=$(free_port)
  rm -f "$W/p2p-recv.err"   # so that the wait below cannot see the last run's "listening"
  /usr/bin/time -v -o "$W/p2p-recv.time" env P2P_HOME="$W/home-r" "$P2P" receive --stdout --yes --json --port "$port" \
    --session-id "$SID" --name "bench-r-$TAG" >"$out" 2>"$W/p2p-recv.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 20 grep -qs '"event":"listening"' "$W/p2p-recv.err" || { bad "p2p receive --stdout did not start"; cat "$W/p2p-recv.err" >&2; }
  t0=$(now)
  cat "$src" | /usr/bin/time -v -o "$W/p2p-send.time" env P2P_HOME="$W/home-s" "$P2P" send - --as bench.bin --json \
    --connect "127.0.0.1:$port" --session-id "$SID" --name "bench-s-$TAG" >"$W/p2p-send.out" 2>"$W/p2p-send.err"
  rc=$?
  # A sender that failed leaves the receiver waiting for a stream: stop it.
  [ "$rc" = 0 ] || kill "$rpid" 2>/dev/null
  wait "$rpid" || bad "p2p receive --stdout exited $?"
  t1=$(now)
  [ "$rc" = 0 ] || { bad "p2p send - exited $rc"; tail -3 "$W/p2p-send.err" >&2; }
  cpu_of "$W/p2p-send.time" "$W/p2p-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

run_socat() {
  local src=$1 out=$2 port rpid t0 t1
  port=$(free_port)
  /usr/bin/time -v -o "$W/socat-recv.time" socat -u -b 262144 "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" STDOUT >"$out" 2>"$W/socat.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 10 listening "$port" || bad "socat did not listen"
  t0=$(now)
  cat "$src" | /usr/bin/time -v -o "$W/socat-send.time" socat -u -b 262144 STDIN "TCP:127.0.0.1:$port" || bad "socat send failed"
  wait "$rpid" || bad "socat receive failed"
  t1=$(now)
  cpu_of "$W/socat-send.time" "$W/socat-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

verify() { # verify METHOD OUT
  local got
  got=$(sha256sum "$2" 2>/dev/null | cut -d' ' -f1)
  [ "$got" = "$SRC_SHA" ] || bad "$1: output differs (sha256 ${got:-none})"
  rm -f "$2"
}


echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r)"
echo "p2p: $P2P ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null))   tmpfs: $TMPFS   runs: $RUNS"
SRC=$W/src.bin
say "making a $SIZE_MIB MiB random file on $TMPFS"
make_file "$SRC" "$SIZE_MIB"
SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
BYTES=$((SIZE_MIB << 20))
methods=(p2p socat)
[ -z "$SUMMARY" ] || : >"$SUMMARY"
summary() { [ -z "$SUMMARY" ] || echo "$*" >>"$SUMMARY"; }
summary stream_size_mib "$SIZE_MIB"; summary stream_runs "$RUNS"
declare -A TIMES=() CPUS=()
for run in $(seq "$RUNS"); do
  for m in "${methods[@]}"; do
    before=$(load)
    t=$("run_$m" "$SRC" "$W/out.bin")
    c=$(cat "$W/cpu")
    verify "$m" "$W/out.bin"
    TIMES[$m]="${TIMES[$m]:-} $t"
    CPUS[$m]="${CPUS[$m]:-} $c"
    say "run $run: $m ${t}s ($(rate "$BYTES" "$t") MiB/s), ${c} CPU-s, load average before: $before"
  done
done
echo
echo "== $SIZE_MIB MiB stream, pipe -> 127.0.0.1 -> tmpfs, $RUNS runs each, interleaved (seconds; median)"
declare -A MED=() MEDCPU=()
for m in "${methods[@]}"; do
  # shellcheck disable=SC2086
  MED[$m]=$(median ${TIMES[$m]}); MEDCPU[$m]=$(median ${CPUS[$m]})
  printf '%-6s wall:%s   median %ss = %s MiB/s;  CPU-s (both ends):%s   median %s\n' "$m" "${TIMES[$m]}" "${MED[$m]}" \
    "$(rate "$BYTES" "${MED[$m]}")" "${CPUS[$m]}" "${MEDCPU[$m]}"
  summary "stream_${m}_median_s" "${MED[$m]}"; summary "stream_${m}_runs_s" "${TIMES[$m]# }"; summary "stream_${m}_cpu_s" "${MEDCPU[$m]}"
done
echo "p2p send - vs socat: $(ratio "${MED[socat]}" "${MED[p2p]}")x by wall time; $(ratio "${MEDCPU[socat]}" "${MEDCPU[p2p]}")x by CPU time"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
[ ! -s "$W/failures" ] || { echo "FAILED:"; sed 's/^/  /' "$W/failures"; exit 1; }
