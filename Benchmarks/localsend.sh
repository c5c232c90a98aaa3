#!/usr/bin/env bash
# LocalSend benchmark between two lab hosts (namespaces A 10.213.7.1 and B 10.213.7.2 on one veth; scripts/lab.sh;
# LocalSend only ever inside them), every figure beside a baseline measured in the same run, medians of RUNS,
# the load average printed (issue 33, Measure):
#   1. a SIZE MiB (default 1 GiB) LocalSend upload into `p2p receive --localsend` in B from curl in A (the
#      fastest client here: prepare-upload, then upload with `curl -T`), vs p2p's own channel (`p2p send
#      --connect` A → `p2p receive` B: TLS, SHA-256 both ends) and socat (plain TCP copy) over the same link;
#      ratios socat / LocalSend-upload and p2p-channel / LocalSend-upload (>= 1: the upload is as fast);
#   2. p2p → localsendd: `p2p send --localsend FILE --to anna` in B to `localsendd --unattended` in A (the time
#      includes p2p hashing the file for its sha256), vs socat B → A; ratio socat / p2p;
#   3. peak RSS (VmRSS sampled every 20 ms) of `p2p receive --localsend` during the SIZE upload vs the same
#      process idle just before it: the difference (goal: within 16 MiB);
#   4. discovery: from starting `p2p receive --localsend` in B until `localsendctl devices --scan` in A lists
#      it, vs from starting a second localsendd in B until it is listed; ratio localsendd / p2p.
# Every received file is checked with cmp. Build first: swift build -c release --product p2p.
# Run it under the lab lock as the e2e scripts are: flock /tmp/p2p-e2e.lock Benchmarks/localsend.sh
#
# usage: Benchmarks/localsend.sh [--runs N] [--size-mib N]
# env:   P2P_BIN (default .build/release/p2p), BENCH_DIR (default /dev/shm: the files, 2 x SIZE at most)
# needs: root, curl, socat, python3, localsendd + localsendctl (PyPI; scripts/setup.sh --bench)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P2P=${P2P_BIN:-$ROOT/.build/release/p2p}
[[ "$P2P" = /* ]] || P2P=$ROOT/$P2P
LAB=$ROOT/scripts/lab.sh
RUNS=1 SIZE_MIB=1024
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root (network namespaces)" >&2; exit 1; }
for tool in curl socat python3 localsendd localsendctl cmp; do command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }; done
[ -x "$P2P" ] || { echo "bench: no $P2P (swift build -c release --product p2p)" >&2; exit 1; }
export AVAHI_COMPAT_NOWARN=1
export P2P_LAB_PREFIX=p2pbl
A=10.213.7.1 B=10.213.7.2
WORK=$(mktemp -d "${BENCH_DIR:-/dev/shm}/p2p-bench-ls.XXXXXX")
PIDS=()
stop() { pkill -TERM -P "$1" 2>/dev/null; kill "$1" 2>/dev/null; }
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do stop "$pid"; done
  wait 2>/dev/null
  "$LAB" down >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")' "$1" "$2"; }
rate() { python3 -c 'import sys; print(f"{float(sys.argv[1]) * 1048576 / float(sys.argv[2]) * 1000 / 1048576:.1f} MiB/s")' "$SIZE_MIB" "$1"; }
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
wait_until() { local end=$((SECONDS + $1)); shift; until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.05; done; }
in_host() { local host=$1; shift; "$LAB" exec "$host" "$@"; }
p2p_in() { local host=$1 home=$2; shift 2; env P2P_HOME="$WORK/home-$home" "$LAB" exec "$host" "$P2P" "$@"; }
LS_A=(env HOME="$WORK/anna" XDG_RUNTIME_DIR="$WORK/anna" XDG_CONFIG_HOME="$WORK/anna/config" XDG_STATE_HOME="$WORK/anna/state")
LS_B=(env HOME="$WORK/carl" XDG_RUNTIME_DIR="$WORK/carl" XDG_CONFIG_HOME="$WORK/carl/config" XDG_STATE_HOME="$WORK/carl/state")
mkdir -p "$WORK/anna/dl" "$WORK/carl/dl" "$WORK/in"
bg() { "$@" & PIDS+=($!); }
# the process listening on TCP PORT in HOST (p2p under lab.sh exec).
listener_pid() { in_host "$1" ss -ltnpH "sport = :$2" | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2; }
# sample_rss PID FILE: the largest VmRSS (KiB) seen every 20 ms until FILE.stop exists.
sample_rss() {
  local max=0 k v _
  while [ ! -e "$2.stop" ] && [ -r "/proc/$1/status" ]; do
    while read -r k v _; do [ "$k" = VmRSS: ] && [ "$v" -gt "$max" ] && max=$v; done <"/proc/$1/status" 2>/dev/null
    sleep 0.02
  done
  echo "$max" >"$2"
}
lab_up() { "$LAB" down >/dev/null 2>&1; "$LAB" up >"$WORK/lab.log" 2>&1 || { cat "$WORK/lab.log"; exit 1; }
  in_host A ip route add 224.0.0.0/4 dev "${P2P_LAB_PREFIX}vA"; in_host B ip route add 224.0.0.0/4 dev "${P2P_LAB_PREFIX}vB"; }

lab_up
python3 -c 'import os,sys; f=open(sys.argv[1],"wb"); [f.write(os.urandom(1<<20)) for _ in range(int(sys.argv[2]))]' "$WORK/src.bin" "$SIZE_MIB"
echo "p2p LocalSend benchmark: $SIZE_MIB MiB, $RUNS run(s) per figure, $(basename "$P2P") = $P2P; $(load)"

# ---------------------------------------------------------------- 1 + 3. curl upload into p2p receive --localsend
p2p_in B bob receive --localsend --yes --json --name bob --dir "$WORK/in" >"$WORK/bob.out" 2>&1 &
PIDS+=($!)
wait_until 30 grep -q localsend-listening "$WORK/bob.out" || { echo "bench: p2p receive --localsend did not start" >&2; cat "$WORK/bob.out" >&2; exit 1; }
BOB_PID=$(listener_pid B 53317)
python3 - "$WORK/prepare.json" "$((SIZE_MIB << 20))" <<'PY'
import json, sys
info = {"alias": "curl", "version": "2.1", "deviceModel": "curl", "deviceType": "headless", "fingerprint": "bench-curl"}
json.dump({"info": info, "files": {"f": {"id": "f", "fileName": "upload.bin", "size": int(sys.argv[2]), "fileType": "application/octet-stream"}}}, open(sys.argv[1], "w"))
PY
declare -a UPLOAD CHANNEL SOCAT_AB SEND_LS SOCAT_BA
RSS_IDLE=0 RSS_PEAK=0
for run in $(seq "$RUNS"); do
  rm -f "$WORK/in/upload.bin"
  in_host A curl -sk -o "$WORK/session.json" -X POST "https://$B:53317/api/localsend/v2/prepare-upload" --data-binary @"$WORK/prepare.json" \
    || { echo "bench: prepare-upload failed" >&2; exit 1; }
  read -r SID TOKEN < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["sessionId"], d["files"]["f"])' "$WORK/session.json")
  RSS_IDLE=$(awk '/VmRSS/ {print $2}' "/proc/$BOB_PID/status")
  rm -f "$WORK/rss" "$WORK/rss.stop"; sample_rss "$BOB_PID" "$WORK/rss" & SAMPLER=$!
  start=$(now_ms)
  in_host A curl -sk -o /dev/null -X POST "https://$B:53317/api/localsend/v2/upload?sessionId=$SID&fileId=f&token=$TOKEN" -T "$WORK/src.bin" \
    || { echo "bench: upload failed" >&2; exit 1; }
  UPLOAD+=($(( $(now_ms) - start )))
  touch "$WORK/rss.stop"; wait "$SAMPLER"; RSS_PEAK=$(cat "$WORK/rss")
  cmp -s "$WORK/src.bin" "$WORK/in/upload.bin" || { echo "bench: the uploaded file differs" >&2; exit 1; }
  rm -f "$WORK/in/upload.bin"
done
stop "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null; unset 'PIDS[-1]'

# Baselines over the same link: p2p's own channel A → B, socat A → B.
for run in $(seq "$RUNS"); do
  p2p_in B bob2 receive --json --yes --once --port 24300 --dir "$WORK/in" >"$WORK/bob2.out" 2>&1 &
  PIDS+=($!)
  wait_until 30 grep -q '"listening"' "$WORK/bob2.out" || { echo "bench: p2p receive did not start" >&2; exit 1; }
  start=$(now_ms)
  p2p_in A alice send --connect "$B:24300" "$WORK/src.bin" >"$WORK/alice.out" 2>&1 || { cat "$WORK/alice.out" >&2; exit 1; }
  CHANNEL+=($(( $(now_ms) - start )))
  wait "${PIDS[-1]}" 2>/dev/null; unset 'PIDS[-1]'
  cmp -s "$WORK/src.bin" "$WORK/in/src.bin" || { echo "bench: the p2p copy differs" >&2; exit 1; }
  rm -f "$WORK/in/src.bin"
  in_host B socat -u -b 262144 TCP-LISTEN:24301,reuseaddr "OPEN:$WORK/in/socat.bin,creat,trunc" & PIDS+=($!)
  wait_until 10 bash -c "$LAB exec B ss -ltnH 'sport = :24301' | grep -q ." || true
  start=$(now_ms)
  in_host A socat -u -b 262144 "OPEN:$WORK/src.bin" "TCP:$B:24301"
  wait "${PIDS[-1]}" 2>/dev/null; unset 'PIDS[-1]'
  SOCAT_AB+=($(( $(now_ms) - start )))
  cmp -s "$WORK/src.bin" "$WORK/in/socat.bin" || { echo "bench: the socat copy differs" >&2; exit 1; }
  rm -f "$WORK/in/socat.bin"
done
echo "1. ${SIZE_MIB} MiB into p2p receive --localsend from curl: $(median "${UPLOAD[@]}") ms ($(rate "$(median "${UPLOAD[@]}")"))"
echo "   p2p channel (send --connect → receive): $(median "${CHANNEL[@]}") ms ($(rate "$(median "${CHANNEL[@]}")")); socat: $(median "${SOCAT_AB[@]}") ms ($(rate "$(median "${SOCAT_AB[@]}")"))"
echo "   ratio socat / LocalSend upload: $(ratio "$(median "${SOCAT_AB[@]}")" "$(median "${UPLOAD[@]}")"); p2p channel / LocalSend upload: $(ratio "$(median "${CHANNEL[@]}")" "$(median "${UPLOAD[@]}")")  ($(load))"
echo "3. p2p receive --localsend RSS: idle $((RSS_IDLE / 1024)) MiB, peak during the upload $((RSS_PEAK / 1024)) MiB: +$(((RSS_PEAK - RSS_IDLE) / 1024)) MiB (goal: within 16 MiB)"

# ---------------------------------------------------------------- 2. p2p → localsendd
in_host A "${LS_A[@]}" localsendd --alias anna --unattended --download-dir "$WORK/anna/dl" >"$WORK/lsd.log" 2>&1 &
PIDS+=($!)
listed_anna() { p2p_in B bob peers --localsend --json --timeout 2 2>/dev/null | grep -q '"anna"'; }
wait_until 30 listed_anna || { echo "bench: p2p never saw localsendd" >&2; exit 1; }
for run in $(seq "$RUNS"); do
  rm -f "$WORK/anna/dl/"*
  start=$(now_ms)
  p2p_in B bob send --localsend "$WORK/src.bin" --to anna >"$WORK/sendls.out" 2>&1 || { cat "$WORK/sendls.out" >&2; exit 1; }
  SEND_LS+=($(( $(now_ms) - start )))
  wait_until 30 cmp -s "$WORK/src.bin" "$WORK/anna/dl/src.bin" || { echo "bench: localsendd's copy differs" >&2; exit 1; }
  rm -f "$WORK/anna/dl/"*
  in_host A socat -u -b 262144 TCP-LISTEN:24302,reuseaddr "OPEN:$WORK/anna/dl/socat.bin,creat,trunc" & PIDS+=($!)
  wait_until 10 bash -c "$LAB exec A ss -ltnH 'sport = :24302' | grep -q ." || true
  start=$(now_ms)
  in_host B socat -u -b 262144 "OPEN:$WORK/src.bin" "TCP:$A:24302"
  wait "${PIDS[-1]}" 2>/dev/null; unset 'PIDS[-1]'
  SOCAT_BA+=($(( $(now_ms) - start )))
  rm -f "$WORK/anna/dl/"*
done
echo "2. p2p send --localsend → localsendd, ${SIZE_MIB} MiB (hashing included): $(median "${SEND_LS[@]}") ms ($(rate "$(median "${SEND_LS[@]}")")); socat B → A: $(median "${SOCAT_BA[@]}") ms"
echo "   ratio socat / p2p → localsendd: $(ratio "$(median "${SOCAT_BA[@]}")" "$(median "${SEND_LS[@]}")")  ($(load))"

# ---------------------------------------------------------------- 4. discovery: until localsendctl lists it
lists() { in_host A "${LS_A[@]}" localsendctl devices --scan --wait-for 0.3 --json 2>/dev/null | grep -q "\"alias\": *\"$1\""; }
declare -a DISC_P2P DISC_LSD
for run in $(seq "$RUNS"); do
  start=$(now_ms)
  p2p_in B bob receive --localsend --yes --json --name "bob$run" --dir "$WORK/in" >"$WORK/bob3.out" 2>&1 &
  PIDS+=($!)
  wait_until 60 lists "bob$run" || { echo "bench: localsendctl never listed bob$run" >&2; exit 1; }
  DISC_P2P+=($(( $(now_ms) - start )))
  stop "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null; unset 'PIDS[-1]'
  start=$(now_ms)
  in_host B "${LS_B[@]}" localsendd --alias "carl$run" --unattended --download-dir "$WORK/carl/dl" >"$WORK/carl.log" 2>&1 &
  PIDS+=($!)
  wait_until 60 lists "carl$run" || { echo "bench: localsendctl never listed carl$run" >&2; exit 1; }
  DISC_LSD+=($(( $(now_ms) - start )))
  stop "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null; unset 'PIDS[-1]'
done
echo "4. start → listed by localsendctl devices --scan: p2p $(median "${DISC_P2P[@]}") ms, localsendd $(median "${DISC_LSD[@]}") ms; ratio localsendd / p2p: $(ratio "$(median "${DISC_LSD[@]}")" "$(median "${DISC_P2P[@]}")")  ($(load))"
