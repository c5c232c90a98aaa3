#!/usr/bin/env bash
# File-transfer benchmark, one command, everything on loopback (127.0.0.1) and tmpfs:
#   1. a SIZE (default 1 GiB) random file, tmpfs -> tmpfs, RUNS times each (interleaved) with
#        p2p        `p2p receive --yes --port P` and `p2p send --connect 127.0.0.1:P` (TLS 1.3, SHA-256 both ends)
#        socat      `socat -u -b 262144` file -> TCP -> file (plain copy, no encryption, no hash)
#        nc         netcat-openbsd: `nc -l` > file, `nc -N` < file (plain copy, no encryption, no hash)
#        iperf3     `iperf3 -c -n SIZE` memory to memory, no file at all: the loopback TCP ceiling
#        wormhole   magic-wormhole with its own mailbox server and transit relay on 127.0.0.1, both
#                   sides --no-listen (so the bytes go through the relay)
#      wall time from starting the sender until both ends have exited, medians, and the ratios
#      p2p vs socat and p2p vs wormhole (time of the other / time of p2p: >= 1 means p2p is as fast);
#      also the CPU seconds both ends used (wormhole: plus its relay), which other load disturbs less;
#   2. a tree of TREE (default 10,000) files of 4 KiB in folders of 100, tmpfs -> tmpfs, RUNS times each
#      (interleaved): `p2p send --connect` of the folder (one tree transfer) vs `tar c | socat -u -b 262144`
#      -> TCP -> `socat | tar x` (plain, no encryption, no hash); medians and the ratio p2p / tar
#      (target <= 3x); every copy checked with `diff -r`, and p2p's per-file JSON events counted on both
#      ends (file-sent, file-received: all N, none dropped); --empty-tree N adds the same row for N empty files;
#   3. two receivers: the SIZE file to two `p2p receive` on 127.0.0.1 at once (`p2p send --to r1 --to r2`,
#      found by DNS-SD: needs an avahi-daemon on the system bus; as root the loopback one,
#      scripts/mdns-loopback.sh, is started if none answers and stopped at the end) vs two sequential
#      sends (`--to r1`, then `--to r2`), RUNS times each (interleaved); wall time from starting the
#      (first) sender until every process exited, medians, and the ratio sequential / parallel;
#   4. peak RSS (getrusage maxrss via /usr/bin/time -v, and RssAnon sampled from /proc) of the p2p
#      sender and receiver for 256 MiB and 4 GiB files (the 4 GiB run needs ~8 GiB free on the tmpfs).
# Every received file is checked with sha256sum against the source. Build first: swift build -c release.
# The load average is printed at the start and end of each section.
#
# usage: Benchmarks/transfer.sh [--runs N] [--size-mib N] [--rss-sizes "256 4096"] [--no-wormhole]
#                               [--tree N] [--empty-tree N] [--no-multi] [--summary FILE]
#   --tree N        files in the tree row (default 10000; 0 skips the row)
#   --empty-tree N  also a row of N empty files (default 0: skipped), e.g. 100000
#   --no-multi      skip the two-receivers row (without an mDNS daemon, and not root, it is skipped anyway)
#   --summary FILE  also writes the figures as "key value" lines (for Benchmarks/run.sh)
# needs: socat, python3, /usr/bin/time (package time), tar, diff; optional rows: nc (netcat-openbsd), iperf3,
#        magic-wormhole (scripts/setup.sh --bench installs all of them; a missing one's row is skipped)
# env:   P2P_BIN (default .build/release/p2p), BENCH_TMPFS (default /dev/shm),
#        WORMHOLE_VENV (default ~/.cache/p2p-bench/wormhole; `scripts/setup.sh --bench` creates it; without
#        it the wormhole row is skipped: nothing is installed here; a venv another user owns or can
#        write to is not run)
# Exit status 0 whether or not the targets are met; 1 if a transfer failed or a tool is missing.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/Benchmarks/lib.sh"
P2P=${P2P_BIN:-$ROOT/.build/release/p2p}
[[ "$P2P" = /* ]] || P2P=$ROOT/$P2P
TMPFS=${BENCH_TMPFS:-/dev/shm}
WH_VENV=${WORMHOLE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/p2p-bench/wormhole}
RUNS=3 SIZE_MIB=1024 RSS_SIZES="256 4096" WORMHOLE=1 SUMMARY= TREE=10000 EMPTY_TREE=0 MULTI=1
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --rss-sizes) RSS_SIZES=$2; shift 2 ;;
    --no-wormhole) WORMHOLE=0; shift ;;
    --tree) TREE=$2; shift 2 ;;
    --empty-tree) EMPTY_TREE=$2; shift 2 ;;
    --no-multi) MULTI=0; shift ;;
    --summary) SUMMARY=$2; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
export AVAHI_COMPAT_NOWARN=1 LANG=C.UTF-8 LC_ALL=C.UTF-8
for tool in socat sha256sum python3 /usr/bin/time tar diff; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done
[ -x "$P2P" ] || { echo "bench: no p2p binary at $P2P (swift build -c release)" >&2; exit 1; }

W=$(mktemp -d "$TMPFS/p2p-bench.XXXXXX")
TAG=$$-$RANDOM
SID=bench-$TAG
declare -a OURS=()
MDNS_STARTED=0
cleanup() {
  local pid
  for pid in "${OURS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${OURS[@]}"; do wait "$pid" 2>/dev/null; done
  [ "$MDNS_STARTED" = 0 ] || "$ROOT/scripts/mdns-loopback.sh" stop >&2 || true
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

maxrss() { sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$1"; }
# ticks PID: user + system CPU of a running process, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)
# sample_anon PID FILE: the largest RssAnon (KiB: heap and buffers, without the mapped binary and
# libraries) seen every 20 ms while PID lives, into FILE.
sample_anon() {
  local pid=$1 max=0 k v _
  while [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; do
    while read -r k v _; do [ "$k" = RssAnon: ] && [ "$v" -gt "$max" ] && max=$v; done <"/proc/$pid/status" 2>/dev/null
    sleep 0.02
  done
  echo "$max" >"$2"
}
# Failures are recorded in a file: the run_* functions run in command substitutions (subshells).
bad() { say "FAILED: $*"; echo "$*" >>"$W/failures"; }

# ---------------------------------------------------------------- the three methods
# Each: run_X SRC OUTFILE -> seconds on stdout; checks the copy against $SRC_SHA.

RPORT=$(free_port)
run_p2p() {
  local src=$1 out=$2 rpid spid t0 t1 rc
  rm -rf "$W/in"; mkdir -p "$W/in"
  /usr/bin/time -v -o "$W/p2p-recv.time" env P2P_HOME="$W/home-r" "$P2P" receive --yes --once --json --dir "$W/in" --port "$RPORT" \
    --session-id "$SID" --name "bench-r-$TAG" >"$W/p2p-recv.out" 2>"$W/p2p-recv.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 20 grep -qs '"event":"listening"' "$W/p2p-recv.out" || { bad "p2p receive did not start"; cat "$W/p2p-recv.err" >&2; }
  sample_anon "$(child_of "$rpid")" "$W/p2p-recv.anon" &
  t0=$(now)
  /usr/bin/time -v -o "$W/p2p-send.time" env P2P_HOME="$W/home-s" "$P2P" send --json --connect "127.0.0.1:$RPORT" \
    --session-id "$SID" --name "bench-s-$TAG" "$src" >"$W/p2p-send.out" 2>"$W/p2p-send.err" &
  spid=$!
  sample_anon "$(child_of "$spid")" "$W/p2p-send.anon" &
  wait "$spid"
  rc=$?
  wait "$rpid"
  t1=$(now)
  wait   # the samplers
  [ "$rc" = 0 ] || { bad "p2p send exited $rc"; tail -3 "$W/p2p-send.err" >&2; }
  mv "$W/in/$(basename "$src")" "$out" 2>/dev/null
  cpu_of "$W/p2p-send.time" "$W/p2p-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

run_socat() {
  local src=$1 out=$2 port rpid t0 t1
  port=$(free_port)
  /usr/bin/time -v -o "$W/socat-recv.time" socat -u -b 262144 "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" \
    "OPEN:$out,creat,trunc,wronly" 2>"$W/socat.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 10 listening "$port" || bad "socat did not listen"
  t0=$(now)
  /usr/bin/time -v -o "$W/socat-send.time" socat -u -b 262144 "OPEN:$src,rdonly" "TCP:127.0.0.1:$port" || bad "socat send failed"
  wait "$rpid" || bad "socat receive failed"
  t1=$(now)
  cpu_of "$W/socat-send.time" "$W/socat-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

# nc (netcat-openbsd): the receiver exits at the sender's EOF (-N shuts the socket down after stdin).
run_nc() {
  local src=$1 out=$2 port rpid t0 t1
  port=$(free_port)
  /usr/bin/time -v -o "$W/nc-recv.time" nc -l 127.0.0.1 "$port" >"$out" </dev/null 2>"$W/nc.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 10 listening "$port" || bad "nc did not listen"
  t0=$(now)
  /usr/bin/time -v -o "$W/nc-send.time" nc -N 127.0.0.1 "$port" <"$src" || bad "nc send failed"
  wait "$rpid" || bad "nc receive failed"
  t1=$(now)
  cpu_of "$W/nc-send.time" "$W/nc-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

# iperf3: the same number of bytes memory to memory in 256 KiB writes; no file is read or written, so
# this is the ceiling of one TCP stream on loopback with these CPUs. Copies the source to OUT so that
# the common check passes (it checks nothing about iperf3).
run_iperf3() {
  local src=$1 out=$2 port spid t0 t1
  port=$(free_port)
  /usr/bin/time -v -o "$W/iperf-recv.time" iperf3 -s -1 -B 127.0.0.1 -p "$port" >"$W/iperf-s.out" 2>&1 &
  spid=$!; OURS+=("$spid")
  wait_until 10 listening "$port" || bad "iperf3 server did not listen"
  t0=$(now)
  /usr/bin/time -v -o "$W/iperf-send.time" iperf3 -c 127.0.0.1 -p "$port" -n "$BYTES" -l 256K >"$W/iperf-c.out" 2>&1 \
    || { bad "iperf3 client failed"; tail -3 "$W/iperf-c.out" >&2; }
  wait "$spid"
  t1=$(now)
  cp "$src" "$out"
  cpu_of "$W/iperf-send.time" "$W/iperf-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

MPORT= TPORT=
start_wormhole_servers() {
  if [ ! -x "$WH_VENV/bin/wormhole" ] || [ ! -x "$WH_VENV/bin/twist" ]; then
    say "no magic-wormhole in $WH_VENV (scripts/setup.sh --bench installs it): skipping its row"
    WORMHOLE=0; return
  fi
  # Programs someone else could have planted or changed are not run (as root, often).
  local p owner mode
  for p in "$WH_VENV" "$WH_VENV/bin" "$WH_VENV/bin/wormhole" "$WH_VENV/bin/twist"; do
    owner=$(stat -L -c %u "$p") mode=$(stat -L -c %a "$p")
    if { [ "$owner" != "$(id -u)" ] && [ "$owner" != 0 ]; } || [ $((8#$mode & 8#022)) != 0 ]; then
      say "$p belongs to uid $owner with mode $mode: not running programs from $WH_VENV; skipping the wormhole row"
      WORMHOLE=0; return
    fi
  done
  MPORT=$(free_port); TPORT=$(free_port)
  (cd "$W" && exec "$WH_VENV/bin/twist" wormhole-mailbox --port="tcp:$MPORT:interface=127.0.0.1" --channel-db="$W/relay.sqlite") >"$W/mailbox.log" 2>&1 &
  MAILBOX_PID=$!; OURS+=("$MAILBOX_PID")
  (cd "$W" && exec "$WH_VENV/bin/twist" transitrelay --port="tcp:$TPORT:interface=127.0.0.1") >"$W/transit.log" 2>&1 &
  RELAY_PID=$!; OURS+=("$RELAY_PID")
  wait_until 20 listening "$MPORT" && wait_until 20 listening "$TPORT" || { say "wormhole servers did not start: skipping"; WORMHOLE=0; }
}

run_wormhole() {
  local src=$1 out=$2 code rpid t0 t1 servers wh=("$WH_VENV/bin/wormhole" --relay-url "ws://127.0.0.1:$MPORT/v1" --transit-helper "tcp:127.0.0.1:$TPORT")
  code="$((RANDOM % 90 + 10))-bench-$RANDOM"
  rm -f "$out"
  servers=$(( $(ticks "$MAILBOX_PID") + $(ticks "$RELAY_PID") ))
  t0=$(now)
  /usr/bin/time -v -o "$W/wh-recv.time" "${wh[@]}" receive --no-listen --accept-file --hide-progress -o "$out" "$code" >"$W/wh-recv.out" 2>&1 &
  rpid=$!; OURS+=("$rpid")
  /usr/bin/time -v -o "$W/wh-send.time" "${wh[@]}" send --no-listen --hide-progress --code "$code" "$src" >"$W/wh-send.out" 2>&1 \
    || { bad "wormhole send failed"; tail -5 "$W/wh-send.out" >&2; }
  wait "$rpid" || { bad "wormhole receive failed"; tail -5 "$W/wh-recv.out" >&2; }
  t1=$(now)
  servers=$(( $(ticks "$MAILBOX_PID") + $(ticks "$RELAY_PID") - servers ))
  python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) + int(sys.argv[2]) / int(sys.argv[3])))' \
    "$(cpu_of "$W/wh-send.time" "$W/wh-recv.time")" "$servers" "$HZ" >"$W/cpu"
  elapsed "$t0" "$t1"
}

verify() { # verify METHOD OUT
  local got
  got=$(sha256sum "$2" 2>/dev/null | cut -d' ' -f1)
  [ "$got" = "$SRC_SHA" ] || bad "$1: received file differs (sha256 ${got:-none})"
  rm -f "$2"
}

# ---------------------------------------------------------------- trees: p2p vs tar | socat | tar
# make_tree DIR N SIZE: N files of SIZE random bytes in folders of 100 (DIR/d000/f000.bin ...).
make_tree() {
  python3 - "$1" "$2" "$3" <<'EOF'
import os, sys
base, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    folder = f"{base}/d{i // 100:04d}"
    if i % 100 == 0: os.makedirs(folder, exist_ok=True)
    with open(f"{folder}/f{i % 100:03d}.bin", "wb") as f: f.write(os.urandom(size))
EOF
}
# Each: run_X_tree -> seconds on stdout; the copy of $W/tree is left in $W/tin/tree, CPU-s in $W/cpu.
run_p2p_tree() {
  local rpid spid t0 t1 rc rrc
  rm -rf "$W/tin"; mkdir -p "$W/tin"
  /usr/bin/time -v -o "$W/tree-recv.time" env P2P_HOME="$W/home-r" "$P2P" receive --yes --once --json --dir "$W/tin" --port "$RPORT" \
    --session-id "$SID" --name "bench-r-$TAG" >"$W/tree-recv.out" 2>"$W/tree-recv.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 20 grep -qs '"event":"listening"' "$W/tree-recv.out" || { bad "p2p receive (tree) did not start"; cat "$W/tree-recv.err" >&2; }
  t0=$(now)
  /usr/bin/time -v -o "$W/tree-send.time" env P2P_HOME="$W/home-s" "$P2P" send --json --connect "127.0.0.1:$RPORT" \
    --session-id "$SID" --name "bench-s-$TAG" "$W/tree" >"$W/tree-send.out" 2>"$W/tree-send.err" &
  spid=$!
  wait "$spid"; rc=$?
  wait "$rpid"; rrc=$?
  t1=$(now)
  [ "$rc" = 0 ] || { bad "p2p send (tree) exited $rc"; tail -3 "$W/tree-send.err" >&2; }
  [ "$rrc" = 0 ] || { bad "p2p receive (tree) exited $rrc"; tail -3 "$W/tree-recv.err" >&2; }
  cpu_of "$W/tree-send.time" "$W/tree-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

# tar c | socat -> TCP -> socat | tar x: the plain way to move a tree (no encryption, no hash).
run_tar_tree() {
  local port rpid t0 t1
  rm -rf "$W/tin"; mkdir -p "$W/tin"
  port=$(free_port)
  /usr/bin/time -v -o "$W/tar-recv.time" bash -c 'set -o pipefail; socat -u -b 262144 "TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr" STDOUT | tar x -C "$2"' \
    _ "$port" "$W/tin" 2>"$W/tar-recv.err" &
  rpid=$!; OURS+=("$rpid")
  wait_until 10 listening "$port" || bad "socat | tar x did not listen"
  t0=$(now)
  /usr/bin/time -v -o "$W/tar-send.time" bash -c 'set -o pipefail; tar c -C "$1" tree | socat -u -b 262144 STDIN "TCP:127.0.0.1:$2"' \
    _ "$W" "$port" 2>"$W/tar-send.err" || { bad "tar c | socat failed"; tail -3 "$W/tar-send.err" >&2; }
  wait "$rpid" || { bad "socat | tar x failed"; tail -3 "$W/tar-recv.err" >&2; }
  t1=$(now)
  cpu_of "$W/tar-send.time" "$W/tar-recv.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}

# ---------------------------------------------------------------- two receivers, found by DNS-SD
# mdns_ready: an avahi-daemon answers on the default system bus; as root, start the loopback one
# (scripts/mdns-loopback.sh) if none does, and stop it at exit.
mdns_ready() {
  unset DBUS_SYSTEM_BUS_ADDRESS   # p2p and the loopback daemon use the default system bus
  "$ROOT/scripts/mdns-loopback.sh" status >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || { say "no mDNS daemon answers and not root (scripts/mdns-loopback.sh start needs root)"; return 1; }
  say "starting the loopback avahi-daemon (scripts/mdns-loopback.sh; stopped at the end)"
  "$ROOT/scripts/mdns-loopback.sh" start >&2 || return 1
  MDNS_STARTED=1
}
MSID=bench-multi-$TAG
# start_receivers: `p2p receive --once` twice on loopback (free ports), bench-r1/r2-TAG, each with its
# own identity and folder ($W/min1, $W/min2); returns once both are registered in DNS-SD.
start_receivers() {
  local i
  RPIDS=()
  for i in 1 2; do
    rm -rf "$W/min$i"; mkdir -p "$W/min$i"
    /usr/bin/time -v -o "$W/multi-r$i.time" env P2P_HOME="$W/home-r$i" "$P2P" receive --yes --once --json --dir "$W/min$i" \
      --session-id "$MSID" --name "bench-r$i-$TAG" >"$W/multi-r$i.out" 2>"$W/multi-r$i.err" &
    RPIDS+=("$!"); OURS+=("$!")
  done
  for i in 1 2; do
    wait_until 20 grep -qs '"event":"advertising"' "$W/multi-r$i.out" || { bad "p2p receive r$i did not advertise"; tail -3 "$W/multi-r$i.err" >&2; }
  done
}
# run_multi parallel|sequential SRC -> seconds from starting the (first) sender until every process
# exited; both copies are checked. parallel: `send --to r1 --to r2`; sequential: `send --to r1`, then `--to r2`.
run_multi() {
  local how=$1 src=$2 t0 t1 i pid times=()
  start_receivers
  t0=$(now)
  if [ "$how" = parallel ]; then
    /usr/bin/time -v -o "$W/multi-s.time" env P2P_HOME="$W/home-s" "$P2P" send --json --session-id "$MSID" --name "bench-s-$TAG" \
      --to "bench-r1-$TAG" --to "bench-r2-$TAG" "$src" >"$W/multi-s.out" 2>"$W/multi-s.err" \
      || { bad "p2p send --to r1 --to r2 exited $?"; tail -3 "$W/multi-s.err" >&2; }
    times=("$W/multi-s.time")
  else
    for i in 1 2; do
      /usr/bin/time -v -o "$W/multi-s$i.time" env P2P_HOME="$W/home-s" "$P2P" send --json --session-id "$MSID" --name "bench-s-$TAG" \
        --to "bench-r$i-$TAG" "$src" >"$W/multi-s$i.out" 2>"$W/multi-s$i.err" \
        || { bad "p2p send --to r$i exited $?"; tail -3 "$W/multi-s$i.err" >&2; }
      times+=("$W/multi-s$i.time")
    done
  fi
  for pid in "${RPIDS[@]}"; do wait "$pid" || bad "p2p receive ($how) exited $?"; done
  t1=$(now)
  for i in 1 2; do verify "$how to r$i" "$W/min$i/$(basename "$src")"; done
  cpu_of "${times[@]}" "$W/multi-r1.time" "$W/multi-r2.time" >"$W/cpu"
  elapsed "$t0" "$t1"
}


# ---------------------------------------------------------------- 1. throughput
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r)"
echo "p2p: $P2P ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null))   tmpfs: $TMPFS   runs: $RUNS"
echo "load average (1/5/15 min) at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
SRC=$W/src.bin
say "making a $SIZE_MIB MiB random file on $TMPFS"
make_file "$SRC" "$SIZE_MIB"
SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
BYTES=$((SIZE_MIB << 20))
[ "$WORMHOLE" = 1 ] && start_wormhole_servers
methods=(p2p socat)
if command -v nc >/dev/null && nc -h 2>&1 | grep -q -- '-N'; then methods+=(nc); else say "no netcat-openbsd (nc -N): skipping its row"; fi
if command -v iperf3 >/dev/null; then methods+=(iperf3); else say "no iperf3 (scripts/setup.sh --bench installs it): skipping its row"; fi
[ "$WORMHOLE" = 1 ] && methods+=(wormhole)
[ -z "$SUMMARY" ] || : >"$SUMMARY"
summary() { [ -z "$SUMMARY" ] || echo "$*" >>"$SUMMARY"; }
summary size_mib "$SIZE_MIB"; summary runs "$RUNS"
declare -A TIMES=() CPUS=()
for run in $(seq "$RUNS"); do
  for m in "${methods[@]}"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    t=$("run_$m" "$SRC" "$W/out.bin")
    c=$(cat "$W/cpu")
    verify "$m" "$W/out.bin"
    TIMES[$m]="${TIMES[$m]:-} $t"
    CPUS[$m]="${CPUS[$m]:-} $c"
    say "run $run: $m ${t}s ($(rate "$BYTES" "$t") MiB/s), ${c} CPU-s, load average before: $load"
  done
done
echo
echo "== $SIZE_MIB MiB, tmpfs -> tmpfs over 127.0.0.1, $RUNS runs each (seconds; median)"
declare -A MED=() MEDCPU=()
for m in "${methods[@]}"; do
  # shellcheck disable=SC2086
  MED[$m]=$(median ${TIMES[$m]}); MEDCPU[$m]=$(median ${CPUS[$m]})
  printf '%-9s wall:%s   median %ss = %s MiB/s;  CPU-s (both ends%s):%s   median %s\n' "$m" "${TIMES[$m]}" "${MED[$m]}" \
    "$(rate "$BYTES" "${MED[$m]}")" "$([ "$m" = wormhole ] && echo " + relay")" "${CPUS[$m]}" "${MEDCPU[$m]}"
  summary "${m}_median_s" "${MED[$m]}"; summary "${m}_runs_s" "${TIMES[$m]# }"; summary "${m}_cpu_s" "${MEDCPU[$m]}"
done
for m in nc iperf3; do
  [ -n "${MED[$m]:-}" ] && echo "p2p vs $m: $(ratio "${MED[$m]}" "${MED[p2p]}")x by wall time; $(ratio "${MEDCPU[$m]}" "${MEDCPU[p2p]}")x by CPU time"
done
echo "p2p vs socat:    $(ratio "${MED[socat]}" "${MED[p2p]}")x by wall time (target >= 1.0x); $(ratio "${MEDCPU[socat]}" "${MEDCPU[p2p]}")x by CPU time"
# The floor under any verified, encrypted copy on this machine: what socat spends (the kernel's copies)
# plus SHA-256 on both ends and AES-GCM in both directions, spread perfectly over every core.
if "$P2P" bench crypto --size 256 --json >"$W/crypto.json" 2>"$W/crypto.err"; then
  read -r sha aes < <(python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); print(c["sha256_cpu_s_per_gib"], c["aes128gcm_cpu_s_per_gib"])' "$W/crypto.json")
  floor=$(python3 -c 'import sys; socat, sha, aes, gib, cores = map(float, sys.argv[1:]); print("%.3f" % ((socat + gib * (2 * sha + 2 * aes)) / cores))'     "${MEDCPU[socat]}" "$sha" "$aes" "$(python3 -c "print($BYTES / 2**30)")" "$(nproc)")
  echo "floor: SHA-256 ${sha} and AES-128-GCM ${aes} CPU-s per GiB on one core (p2p bench crypto); socat's ${MEDCPU[socat]} CPU-s plus both hashed and both ciphered, over $(nproc) cores: ${floor} s at best = $(ratio "${MED[socat]}" "$floor")x socat for any verified, encrypted transfer"
  summary floor_s "$floor"; summary sha256_cpu_s_per_gib "$sha"; summary aes128gcm_cpu_s_per_gib "$aes"
else
  say "p2p bench crypto failed: no floor row"; cat "$W/crypto.err" >&2
fi
[ "$WORMHOLE" = 1 ] && echo "p2p vs wormhole: $(ratio "${MED[wormhole]}" "${MED[p2p]}")x by wall time (target >= 10x); $(ratio "${MEDCPU[wormhole]}" "${MEDCPU[p2p]}")x by CPU time" \
  || echo "p2p vs wormhole: skipped (magic-wormhole unavailable)"
echo "load average (1 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (other work on the machine slows every row)"

# ---------------------------------------------------------------- 2. trees of small files
# tree_row N SIZE LABEL KEY: the tree row for N files of SIZE bytes (p2p vs tar, RUNS runs each),
# with the per-file JSON events both p2p ends printed (every one must be there: none dropped).
tree_row() {
  local n=$1 size=$2 label=$3 key=$4 run m t c load sent received
  echo
  tree_load=$(cut -d' ' -f1-3 /proc/loadavg)
  say "making a tree of $n files of $size bytes on $TMPFS"
  make_tree "$W/tree" "$n" "$size"
  TREE_BYTES=$((n * size))
  files_per_s() { python3 -c 'import sys; print("%.0f" % (int(sys.argv[1]) / float(sys.argv[2])))' "$n" "$1"; }
  declare -A TTIMES=() TCPUS=() TMED=() TMEDCPU=()
  EVENTS=
  for run in $(seq "$RUNS"); do
    for m in p2p tar; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      t=$("run_${m}_tree")
      c=$(cat "$W/cpu")
      diff -r "$W/tree" "$W/tin/tree" >"$W/tree.diff" 2>&1 || { bad "tree: $m: the copy differs (diff -r)"; head -5 "$W/tree.diff" >&2; }
      rm -rf "$W/tin"
      TTIMES[$m]="${TTIMES[$m]:-} $t"
      TCPUS[$m]="${TCPUS[$m]:-} $c"
      if [ "$m" = p2p ]; then
        sent=$(grep -c '"event":"file-sent"' "$W/tree-send.out"); received=$(grep -c '"event":"file-received"' "$W/tree-recv.out")
        EVENTS="$EVENTS $sent/$received"
        [ "$sent" = "$n" ] && [ "$received" = "$n" ] || bad "tree: p2p printed $sent file-sent and $received file-received events for $n files"
      fi
      say "tree run $run: $m ${t}s ($(files_per_s "$t") files/s), ${c} CPU-s, load average before: $load"
    done
  done
  echo "== tree of $n files x $label (folders of 100), tmpfs -> tmpfs over 127.0.0.1, $RUNS runs each (seconds; median)"
  echo "load average (1/5/15 min) at the start: $tree_load"
  for m in p2p tar; do
    # shellcheck disable=SC2086
    TMED[$m]=$(median ${TTIMES[$m]}); TMEDCPU[$m]=$(median ${TCPUS[$m]})
    printf '%-9s wall:%s   median %ss = %s files/s, %s MiB/s;  CPU-s (both ends):%s   median %s\n' \
      "$([ "$m" = tar ] && echo "tar|socat" || echo p2p)" "${TTIMES[$m]}" "${TMED[$m]}" "$(files_per_s "${TMED[$m]}")" \
      "$(rate "$TREE_BYTES" "${TMED[$m]}")" "${TCPUS[$m]}" "${TMEDCPU[$m]}"
    summary "${key}_${m}_median_s" "${TMED[$m]}"; summary "${key}_${m}_runs_s" "${TTIMES[$m]# }"; summary "${key}_${m}_cpu_s" "${TMEDCPU[$m]}"
  done
  summary "${key}_files" "$n"
  summary "${key}_ratio" "$(ratio "${TMED[p2p]}" "${TMED[tar]}")"
  summary "${key}_events" "${EVENTS# }"
  echo "p2p events (file-sent/file-received per run, of $n):$EVENTS"
  echo "p2p / tar:       $(ratio "${TMED[p2p]}" "${TMED[tar]}")x tar's wall time (target <= 3x); $(ratio "${TMEDCPU[p2p]}" "${TMEDCPU[tar]}" | sed 's/[0-9]$/&x/') its CPU time"
  echo "load average (1/5/15 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$W/tree"
}
[ "$TREE" -gt 0 ] && tree_row "$TREE" 4096 "4 KiB" tree
[ "$EMPTY_TREE" -gt 0 ] && tree_row "$EMPTY_TREE" 0 "0 bytes" empty_tree

# ---------------------------------------------------------------- 3. two receivers
if [ "$MULTI" = 1 ]; then
  echo
  if mdns_ready; then
    multi_load=$(cut -d' ' -f1-3 /proc/loadavg)
    declare -A MTIMES=() MCPUS=() MMED=() MMEDCPU=()
    for run in $(seq "$RUNS"); do
      for how in parallel sequential; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        t=$(run_multi "$how" "$SRC")
        c=$(cat "$W/cpu")
        MTIMES[$how]="${MTIMES[$how]:-} $t"
        MCPUS[$how]="${MCPUS[$how]:-} $c"
        say "two receivers run $run: $how ${t}s ($(rate $((2 * BYTES)) "$t") MiB/s delivered), ${c} CPU-s, load average before: $load"
      done
    done
    echo "== two receivers on 127.0.0.1 (found by DNS-SD), $SIZE_MIB MiB to each, $RUNS runs each (seconds; median)"
    echo "load average (1/5/15 min) at the start: $multi_load"
    for how in parallel sequential; do
      # shellcheck disable=SC2086
      MMED[$how]=$(median ${MTIMES[$how]}); MMEDCPU[$how]=$(median ${MCPUS[$how]})
      printf '%-10s %-30s wall:%s   median %ss = %s MiB/s delivered;  CPU-s (all processes):%s   median %s\n' "$how" \
        "$([ "$how" = parallel ] && echo "(send --to r1 --to r2)" || echo "(send --to r1; send --to r2)")" \
        "${MTIMES[$how]}" "${MMED[$how]}" "$(rate $((2 * BYTES)) "${MMED[$how]}")" "${MCPUS[$how]}" "${MMEDCPU[$how]}"
      summary "multi_${how}_median_s" "${MMED[$how]}"; summary "multi_${how}_runs_s" "${MTIMES[$how]# }"; summary "multi_${how}_cpu_s" "${MMEDCPU[$how]}"
    done
    summary multi_ratio "$(ratio "${MMED[sequential]}" "${MMED[parallel]}")"
    echo "parallel vs sequential: $(ratio "${MMED[sequential]}" "${MMED[parallel]}")x by wall time (> 1: one send to both is faster); $(ratio "${MMEDCPU[sequential]}" "${MMEDCPU[parallel]}")x by CPU time"
    echo "load average (1/5/15 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  else
    echo "== two receivers: skipped (no mDNS daemon; as root this script starts scripts/mdns-loopback.sh itself)"
  fi
fi
rm -f "$SRC"

# ---------------------------------------------------------------- 4. peak RSS
echo
echo "== peak RSS of p2p, tmpfs -> tmpfs (maxrss from getrusage includes ~35 MiB of mapped binary and"
echo "   libraries; RssAnon, sampled every 20 ms, is what the transfer allocates)"
for mib in $RSS_SIZES; do
  say "making a $mib MiB random file on $TMPFS"
  make_file "$SRC" "$mib"
  SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
  t=$(run_p2p "$SRC" "$W/out.bin")
  verify p2p "$W/out.bin"
  s_kib=$(maxrss "$W/p2p-send.time"); r_kib=$(maxrss "$W/p2p-recv.time")
  s_anon=$(cat "$W/p2p-send.anon"); r_anon=$(cat "$W/p2p-recv.anon")
  printf '%5s MiB: maxrss sender %s MiB, receiver %s MiB; peak RssAnon sender %s MiB, receiver %s MiB; %ss, %s MiB/s\n' "$mib" \
    "$(ratio "${s_kib:-0}" 1024)" "$(ratio "${r_kib:-0}" 1024)" "$(ratio "${s_anon:-0}" 1024)" "$(ratio "${r_anon:-0}" 1024)" \
    "$t" "$(rate $((mib << 20)) "$t")"
  summary "rss_${mib}" "${s_kib:-0} ${r_kib:-0} ${s_anon:-0} ${r_anon:-0}"
  rm -f "$SRC"
done
[ ! -s "$W/failures" ] || { echo "FAILED:"; sed 's/^/  /' "$W/failures"; exit 1; }
